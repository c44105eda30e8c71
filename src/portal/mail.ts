import type { Config } from '../config.js';
import { smtpSender, type SendMail } from '../email/mailer.js';

// The portal's own emails (address verification, password reset), sent at once over
// the same SMTP transport as the usage emails. Only used when RUNBOX_SMTP_URL is set.

const senders = new Map<string, SendMail>();

export function mailConfigured(config: Config): boolean {
  return config.RUNBOX_SMTP_URL !== '';
}

export async function sendPortalMail(config: Config, to: string, subject: string, text: string): Promise<void> {
  let send = senders.get(config.RUNBOX_SMTP_URL);
  if (!send) {
    send = smtpSender(config.RUNBOX_SMTP_URL);
    senders.set(config.RUNBOX_SMTP_URL, send);
  }
  await send({ from: config.RUNBOX_MAIL_FROM, to, subject, text });
}

export function verifyMessage(link: string): { subject: string; text: string } {
  return {
    subject: 'runbox: confirm your email address',
    text: `Hello,\n\nOpen this link to confirm your address and start creating API keys:\n\n${link}\n\nThe link works once and expires in 7 days. If you did not sign up, ignore this email.\n\nrunbox\n`,
  };
}

export function resetMessage(link: string): { subject: string; text: string } {
  return {
    subject: 'runbox: set a new password',
    text: `Hello,\n\nOpen this link to choose a new password:\n\n${link}\n\nThe link works once and expires in 24 hours. If you did not ask for it, ignore this email; your password stays as it is.\n\nrunbox\n`,
  };
}

/** To the owner of an address someone tried to sign up with again (sent instead of saying so on the page). */
export function signupExistsMessage(loginLink: string, forgotLink: string): { subject: string; text: string } {
  return {
    subject: 'runbox: you already have an account',
    text: `Hello,\n\nSomeone, perhaps you, tried to sign up for runbox with this address, which already has an account. Nothing was changed.\n\nLog in here:\n\n${loginLink}\n\nForgot your password? Ask for a new one here:\n\n${forgotLink}\n\nIf it was not you, ignore this email.\n\nrunbox\n`,
  };
}
