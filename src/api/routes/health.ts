import Type from 'typebox';
import { sql } from 'kysely';
import type { RouteDef } from '../route.js';

// GET /api/health, for load balancers: 200 while this API host can reach the database
// (it can then take and queue work), 503 when it cannot. Runners are reported, not
// required: with no live runner the answer is still 200 with "status": "degraded",
// since every API host is equally affected and taking them all out of the balancer
// would only turn queued work into refused connections.

/** A database that does not answer within this is as good as down for a load balancer. */
const DB_TIMEOUT_MS = 2000;

export const HealthDocument = Type.Object({
  status: Type.Enum(['ok', 'degraded', 'unavailable']),
  database: Type.Object({ ok: Type.Boolean(), error: Type.Optional(Type.String()) }),
  runners: Type.Optional(Type.Object({ live: Type.Integer(), slots: Type.Integer() })),
  queue: Type.Optional(Type.Object({ queued: Type.Integer(), running: Type.Integer() })),
});

export const healthRoute: RouteDef = {
  method: 'GET',
  path: '/api/health',
  operationId: 'getHealth',
  summary: 'Health for load balancers: database reachable (else 503), live runners and queue depth.',
  description: 'A runner is live when it has heart-beaten within RUNBOX_LEASE_SECONDS and has not stopped. No live runner: 200 with status "degraded".',
  auth: 'none',
  responses: {
    200: { description: 'The database is reachable.', schema: HealthDocument },
    503: { description: 'The database is unreachable.', schema: HealthDocument },
  },
  errors: [405, 406],
  handler:
    ({ db, config }) =>
    async (ctx) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const query = sql<{ live: number; slots: number; queued: number; running: number }>`
          SELECT (SELECT count(*) FROM runners r WHERE r.stopped_at IS NULL
                    AND r.last_seen > now() - make_interval(secs => ${config.RUNBOX_LEASE_SECONDS}))::int AS live,
                 (SELECT coalesce(sum(slots), 0) FROM runners r WHERE r.stopped_at IS NULL
                    AND r.last_seen > now() - make_interval(secs => ${config.RUNBOX_LEASE_SECONDS}))::int AS slots,
                 (SELECT count(*) FROM submissions WHERE state = 'queued')::int AS queued,
                 (SELECT count(*) FROM submissions WHERE state = 'running')::int AS running
        `.execute(db);
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${DB_TIMEOUT_MS} ms`)), DB_TIMEOUT_MS);
        });
        const { rows } = await Promise.race([query, timeout]);
        const r = rows[0]!;
        ctx.body = {
          status: r.live > 0 ? 'ok' : 'degraded',
          database: { ok: true },
          runners: { live: r.live, slots: r.slots },
          queue: { queued: r.queued, running: r.running },
        };
      } catch (err) {
        ctx.status = 503;
        ctx.set('Retry-After', '5');
        ctx.body = { status: 'unavailable', database: { ok: false, error: (err as Error).message || String(err) } };
      } finally {
        clearTimeout(timer);
      }
    },
};
