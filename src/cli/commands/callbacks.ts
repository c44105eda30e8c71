import { deliveriesOf, queueRedelivery } from '../../callbacks/redeliver.js';
import { requireString, UsageError, type Command } from '../command.js';

// Callback deliveries of one submission: what happened to them, and sending again.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function submissionId(ctx: Parameters<Command['run']>[0]): string {
  const id = requireString(ctx, 'submission');
  if (!UUID.test(id)) throw new UsageError('--submission must be a submission id (a UUID)');
  return id;
}

export const callbackCommands: Command[] = [
  {
    name: 'callback list',
    summary: "A submission's callback deliveries: state, attempts, last answer, next attempt.",
    help: '  --submission ID   the submission',
    options: { submission: { type: 'string' } },
    needsDb: true,
    run: async (ctx) => deliveriesOf(ctx.db, submissionId(ctx)),
  },
  {
    name: 'callback redeliver',
    summary: "Send a submission's result again, as a new delivery to the key's current redirect URL (unless one is still pending).",
    help:
      '  --submission ID   the submission\n' +
      "  A delivery still pending is not queued twice (already_queued: true names it). Not limited per account, unlike the portal's Redeliver:\n" +
      "  the operator acts for any account, e.g. for every submission a receiver missed during its outage.",
    options: { submission: { type: 'string' } },
    needsDb: true,
    run: async (ctx) => {
      const id = submissionId(ctx);
      const r = await queueRedelivery(ctx.db, id, 'operator');
      if (!r || 'limited' in r) throw new UsageError(`submission ${id} has no callback delivery to repeat (or its key has no redirect URL now)`);
      return 'queued' in r ? { submission: id, delivery: r.queued, already_queued: false } : { submission: id, delivery: r.already, already_queued: true };
    },
  },
];
