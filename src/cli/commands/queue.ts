import { sql } from 'kysely';
import { reapExpired } from '../../queue/index.js';
import type { Command } from '../command.js';

// Looking at the queue and its runners, and reaping by hand.

export const queueCommands: Command[] = [
  {
    name: 'queue status',
    summary: 'Submissions by state, the oldest queued one, and every runner with its running jobs.',
    needsDb: true,
    run: async ({ db }) => {
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
      return {
        submissions: Object.fromEntries(states.map((s) => [s.state, s.n])),
        oldest_queued: oldest[0] ?? null,
        runners,
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
