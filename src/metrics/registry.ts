import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

// Every metric of a runbox process, in one registry per process: the embedded
// `npm start` exposes API, runner and sender figures together; separate hosts each
// expose their own, and Prometheus sums them.

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'runbox_' });

/** Runs that ended on this runner, by result status and compiler. */
export const runsTotal = new Counter({
  name: 'runbox_runs_total',
  help: 'Runs ended on this runner, by result status and compiler.',
  labelNames: ['status', 'compiler'] as const,
  registers: [registry],
});

/** Wall time a runner spends on one job, from its start to its result. */
export const runDuration = new Histogram({
  name: 'runbox_run_duration_seconds',
  help: 'Wall time of one job in the runner (compile and run stages, sandbox set-up included).',
  labelNames: ['compiler'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
  registers: [registry],
});

/** The runner's time around the program: the job's wall time minus the program's own wall time. */
export const sandboxOverhead = new Histogram({
  name: 'runbox_sandbox_overhead_seconds',
  help: "Job wall time minus the program's own wall time: sandbox set-up and tear-down, image mounts, the compile stage.",
  labelNames: ['compiler'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

/** Callback attempts by outcome: delivered, failed (will retry or is out of attempts), refused (address not allowed). */
export const callbackAttempts = new Counter({
  name: 'runbox_callback_attempts_total',
  help: 'Callback delivery attempts by outcome.',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** 429 answers of admission, by reason (monthly_limit, rate_limited, capacity, …). */
export const rejections = new Counter({
  name: 'runbox_rejections_total',
  help: 'Requests answered 429 by admission, by reason.',
  labelNames: ['reason'] as const,
  registers: [registry],
});

/** Usage emails sent by this process's mailer. */
export const emailsSent = new Counter({
  name: 'runbox_usage_emails_sent_total',
  help: 'Usage emails sent.',
  registers: [registry],
});

/** How long each job claimed here had waited in the queue (claim time less its run_at, by the database's clock). */
export const queueWait = new Histogram({
  name: 'runbox_queue_wait_seconds',
  help: 'Time a job waited in the queue before this runner claimed it.',
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
  registers: [registry],
});

/** Round trips of this runner's claim statements (a claim, or a result stored with the slot's next claim). */
export const claimSeconds = new Histogram({
  name: 'runbox_claim_seconds',
  help: "Duration of this runner's claim statements (claim, complete-and-claim), round trip included.",
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

/** Submissions deleted by the retention purge (src/retention) in this process. */
export const purgedSubmissions = new Counter({
  name: 'runbox_purged_submissions_total',
  help: 'Submissions deleted by the retention purge (RUNBOX_RETENTION_DAYS).',
  registers: [registry],
});

let queueDb: Db | undefined;
/** A runner whose last heart-beat is older than this is not counted live (RUNBOX_LEASE_SECONDS). */
let freshSeconds = 60;

/** Read from the database at each scrape: the whole deployment's queue, the same on every host. */
new Gauge({
  name: 'runbox_queue_jobs',
  help: 'Jobs in the queue by state (queued, running), deployment-wide.',
  labelNames: ['state'] as const,
  registers: [registry],
  async collect() {
    if (!queueDb) return;
    this.reset();
    try {
      const { rows } = await sql<{ state: string; n: number }>`
        SELECT s.state, count(x.id)::int AS n FROM (VALUES ('queued'), ('running')) s(state)
        LEFT JOIN submissions x ON x.state = s.state GROUP BY s.state
      `.execute(queueDb);
      for (const r of rows) this.set({ state: r.state }, r.n);
    } catch {
      // The database is down: the gauge is left out of this scrape.
    }
  },
});

/** Read at each scrape, deployment-wide: how long the oldest claimable job has waited. */
new Gauge({
  name: 'runbox_queue_oldest_seconds',
  help: 'Age of the oldest claimable queued job (0 when none), deployment-wide.',
  registers: [registry],
  async collect() {
    if (!queueDb) return;
    try {
      const { rows } = await sql<{ s: number }>`
        SELECT coalesce(extract(epoch FROM now() - min(run_at)), 0)::float8 AS s FROM submissions WHERE state = 'queued' AND run_at <= now()
      `.execute(queueDb);
      this.set(rows[0]!.s);
    } catch {
      // The database is down: left out of this scrape.
    }
  },
});

const slotsLive = new Gauge({
  name: 'runbox_runner_slots_live',
  help: 'Slots of the live runners (runbox_runners_live), deployment-wide.',
  registers: [registry],
});

/** Read at each scrape, deployment-wide: runners heart-beating and their slots. */
new Gauge({
  name: 'runbox_runners_live',
  help: 'Runners that have heart-beaten within RUNBOX_LEASE_SECONDS and not stopped, deployment-wide.',
  registers: [registry],
  async collect() {
    if (!queueDb) return;
    try {
      const { rows } = await sql<{ n: number; slots: number }>`
        SELECT count(*)::int AS n, coalesce(sum(slots), 0)::int AS slots FROM runners
         WHERE stopped_at IS NULL AND last_seen > now() - make_interval(secs => ${freshSeconds})
      `.execute(queueDb);
      this.set(rows[0]!.n);
      slotsLive.set(rows[0]!.slots);
    } catch {
      // The database is down: left out of this scrape.
    }
  },
});

/** The database whose queue the deployment-wide gauges report (the process's own), and the lease that makes a runner live. */
export function watchQueue(db: Db, leaseSeconds?: number): void {
  queueDb = db;
  if (leaseSeconds !== undefined) freshSeconds = leaseSeconds;
}
