import { purgeOnce } from '../../retention/purger.js';
import { optionalInt, UsageError, type Command } from '../command.js';

// Retention at once: the background purge's pass (src/retention), run now.

export const submissionCommands: Command[] = [
  {
    name: 'submissions purge',
    summary: 'Delete now, in small batches, the submissions older than the retention (code, input, result, callback deliveries); usage counts stay.',
    help: [
      '  --days N   older than N days (default RUNBOX_RETENTION_DAYS; required when that is 0, which keeps everything)',
      '  Queued and running submissions, and ones whose callback is still pending, are kept. Lookups of a purged',
      '  submission answer 410 submission_expired. One purge runs at a time across the deployment.',
    ].join('\n'),
    options: { days: { type: 'string' } },
    needsDb: true,
    run: async (ctx) => {
      const days = optionalInt(ctx, 'days') ?? ctx.config.RUNBOX_RETENTION_DAYS;
      if (days === 0) {
        throw new UsageError(ctx.values.days === undefined ? 'RUNBOX_RETENTION_DAYS is 0 (keep everything): give --days N to purge anyway' : '--days must be at least 1');
      }
      const t0 = performance.now();
      let batches = 0;
      const counts = await purgeOnce(ctx.db, days, undefined, undefined, () => {
        if (++batches % 100 === 0) process.stderr.write('.');
      });
      if (batches >= 100) process.stderr.write('\n');
      if (counts === null) throw new Error('another process is purging right now (the background purge of an API host); try again when it is done');
      return { older_than_days: days, ...counts, seconds: +((performance.now() - t0) / 1000).toFixed(1) };
    },
  },
];
