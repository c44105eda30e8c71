import type { ClaimedEmail } from './claim.js';

// The text of a usage email: plain, naming the allowance (the account's or one key's),
// the figures and when it resets.

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export function usageMessage(e: ClaimedEmail): MailMessage {
  const [y, m] = e.month.split('-').map(Number) as [number, number];
  const resets = new Date(Date.UTC(y, m, 1)).toISOString();
  const whose = e.key_id === null ? 'your account' : `your key "${e.app_name ?? ''}" (${e.key_prefix ?? ''}…, id ${e.key_id})`;
  const what = e.key_id === null ? "your account's monthly allowance" : `the monthly limit of key "${e.app_name ?? ''}"`;
  const subject =
    e.threshold >= 100
      ? `runbox: ${what} is used up (${e.month})`
      : `runbox: ${e.threshold}% of ${what} used (${e.month})`;
  const lines = [
    `Hello,`,
    '',
    `${whose[0]!.toUpperCase()}${whose.slice(1)} has used ${e.used} of its ${e.monthly_limit} submissions for ${e.month} (UTC), ${e.threshold}% or more.`,
    e.threshold >= 100
      ? e.key_id === null
        ? 'Further runs answer 429 until the allowance resets.'
        : 'Further runs through this key answer 429 until the limit resets; your other keys keep working.'
      : 'Runs continue normally until the allowance is used up.',
    `It resets at ${resets}.`,
    '',
    'runbox',
  ];
  return { to: e.to_address, subject, text: lines.join('\n') + '\n' };
}
