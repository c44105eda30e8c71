import { EMAIL_STATES, listEmails, resendEmail, type EmailState } from '../../email/outbox.js';
import { Listed, optionalInt, pageHelp, pageOptions, pageRequest, requireString, UsageError, type Command } from '../command.js';

// The usage email outbox: what was sent, what waits, what died, and sending one again.

export const emailCommands: Command[] = [
  {
    name: 'email list',
    summary: 'Usage emails, newest first: state (pending, sent, dead), attempts, last error, next attempt.',
    help: [
      '  --state STATE     only pending, sent or dead ones',
      '  --account ID      only those of one account',
      pageHelp('emails', 50),
    ].join('\n'),
    options: { state: { type: 'string' }, account: { type: 'string' }, ...pageOptions },
    needsDb: true,
    run: async (ctx) => {
      const state = ctx.values.state;
      if (state !== undefined && !EMAIL_STATES.includes(state as EmailState)) throw new UsageError(`--state must be one of ${EMAIL_STATES.join(', ')}`);
      const account = optionalInt(ctx, 'account');
      const filter = { state: state as EmailState | undefined, accountId: account === undefined ? undefined : String(account) };
      return new Listed(await listEmails(ctx.db, filter, pageRequest(ctx, 50)), 'emails');
    },
  },
  {
    name: 'email resend',
    summary: 'Send one usage email again (a dead one, or a sent one that got lost): back in the outbox, due now, attempts from zero.',
    help: '  --id ID   the email (see email list)',
    options: { id: { type: 'string' } },
    needsDb: true,
    run: async (ctx) => {
      const id = requireString(ctx, 'id');
      if (!/^\d{1,18}$/.test(id)) throw new UsageError('--id must be a usage email id (a whole number)');
      const outcome = await resendEmail(ctx.db, id);
      if ('refused' in outcome) throw new Error(outcome.refused);
      return outcome.resent;
    },
  },
];
