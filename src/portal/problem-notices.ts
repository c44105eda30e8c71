import type { Notice } from './views/layout.js';

// What a problem's page says after a change made from it (the address it was sent back to).
export function changeNotices(query: Record<string, unknown>): Notice[] {
  const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
  const notices: Notice[] = [];
  if (text('edited')) notices.push({ kind: 'ok', text: 'Saved as the next version.' });
  if (text('version')) notices.push({ kind: 'ok', text: 'The package is stored as the next version.' });
  const added = text('added');
  if (added) notices.push({ kind: 'ok', text: `Test ${added} is added (the next version).` });
  const replaced = text('replaced');
  if (replaced) notices.push({ kind: 'ok', text: `Test ${replaced} is replaced (the next version).` });
  if (text('verifying')) notices.push({ kind: 'ok', text: 'The verification has started.' });
  if (text('saved')) notices.push({ kind: 'ok', text: 'Saved.' });
  return notices;
}
