import { deliveriesPage, queueRedelivery } from '../../callbacks/redeliver.js';
import { expiredMessage, expiredSubmission } from '../../retention/expired.js';
import { Listed, pageHelp, pageOptions, pageRequest, requireString, UsageError, type Command, type CommandContext } from '../command.js';
import { UUID } from '../../util/uuid.js';

// Callback deliveries of one submission: what happened to them, and sending again. A
// submission the retention purge deleted (its deliveries with it) is said to be so.

function submissionId(ctx: Parameters<Command['run']>[0]): string {
  const id = requireString(ctx, 'submission');
  if (!UUID.test(id)) throw new UsageError('--submission must be a submission id (a UUID)');
  return id;
}

/** Refuses a submission the retention purged, naming when. */
async function refuseExpired(ctx: CommandContext, id: string): Promise<void> {
  const gone = await expiredSubmission(ctx.db, null, id);
  if (gone) throw new Error(expiredMessage(gone, ctx.config.RUNBOX_RETENTION_DAYS));
}

export const callbackCommands: Command[] = [
  {
    name: 'callback list',
    summary: "A submission's callback deliveries, newest first: state, attempts, last answer, next attempt.",
    help: '  --submission ID   the submission\n' + pageHelp('deliveries', 100),
    options: { submission: { type: 'string' }, ...pageOptions },
    needsDb: true,
    run: async (ctx) => {
      const id = submissionId(ctx);
      const deliveries = await deliveriesPage(ctx.db, id, pageRequest(ctx, 100, UUID));
      if (deliveries.items.length === 0 && ctx.values.after === undefined) await refuseExpired(ctx, id);
      return new Listed(deliveries, 'deliveries');
    },
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
      if (!r) await refuseExpired(ctx, id);
      if (!r || 'limited' in r) throw new UsageError(`submission ${id} has no callback delivery to repeat (or its key has no redirect URL now)`);
      return 'queued' in r ? { submission: id, delivery: r.queued, already_queued: false } : { submission: id, delivery: r.already, already_queued: true };
    },
  },
];
