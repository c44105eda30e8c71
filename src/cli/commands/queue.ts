import { sql } from 'kysely';
import { reapExpired } from '../../queue/index.js';
import type { SubmissionState } from '../../db/schema.js';
import type { Command } from '../command.js';

// Looking at the queue and its runners, and reaping by hand.

export const queueCommands: Command[] = [
  {
    name: 'queue status',
    summary: 'Submissions by state, the oldest queued one, and the runners that have not stopped, with their running jobs (--all: the stopped ones too).',
    help: '  --all   list stopped runners too (by default only their number)',
    options: { all: { type: 'boolean' } },
    needsDb: true,
    run: async ({ db, values }) => {
      const { rows: states } = await sql<{ state: string; n: number }>`
        SELECT state, count(*)::int AS n FROM submissions GROUP BY state ORDER BY state
      `.execute(db);
      const { rows: oldest } = await sql<{ id: string; created_at: Date }>`
        SELECT id, created_at FROM submissions WHERE state = 'queued' ORDER BY priority, run_at, created_at LIMIT 1
      `.execute(db);
      const { rows: runners } = await sql<{
        id: string;
        hostname: string;
        slots: number;
        launcher: string;
        last_seen: Date;
        stopped_at: Date | null;
        running: number;
      }>`
        SELECT r.id, r.hostname, r.slots, r.launcher, r.last_seen, r.stopped_at,
               (SELECT count(*)::int FROM submissions s WHERE s.locked_by = r.id AND s.state = 'running') AS running
        FROM runners r ORDER BY r.id
      `.execute(db);
      // Every state, none left out for being empty: "running 0" is an answer too.
      const submissions: Record<SubmissionState, number> = { queued: 0, running: 0, finished: 0, failed: 0 };
      for (const s of states) submissions[s.state as SubmissionState] = s.n;
      const live = runners.filter((r) => r.stopped_at === null);
      return {
        submissions,
        oldest_queued: oldest[0] ?? null,
        runners: values.all ? runners : live,
        stopped_runners: runners.length - live.length,
      };
    },
  },
  {
    name: 'queue reap',
    summary: 'Requeue (or fail and refund, after their last attempt) jobs whose runner stopped heart-beating. Runners do this on their own.',
    needsDb: true,
    run: async ({ db }) => reapExpired(db),
  },
];
