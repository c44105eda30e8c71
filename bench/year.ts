import { sql } from 'kysely';
import { lookupSubmission } from '../src/api/submission-view.js';
import { ownerAsker } from '../src/problems/feedback.js';
import type { Db } from '../src/db/connect.js';
import { ensureOnlineIndexes } from '../src/db/online-indexes.js';
import { listGraded } from '../src/grading/list.js';
import { GRADING_LIMITS } from '../src/limits.js';
import { admitSubmission } from '../src/quota/admit.js';
import { runsPerDay } from '../src/quota/usage.js';
import { pauseAfter, PURGE_BATCH_ROWS, PURGE_PAUSE_MS, purgeBatch, retentionCutoff } from '../src/retention/purge.js';
import { freshDatabase } from '../test/helpers/db.js';
import { loadAverage, QUICK, row, runIfMain, stats, writeResult, type BenchOutcome, type Stats } from './common.js';

// A year of data: the database filled with a year's worth of synthetic submissions at a
// stated rate (RUNBOX_BENCH_YEAR_ROWS, default 4 million: about 11,000 a day, 0.13 runs/s
// on average), each with code, input and a result, one in five asynchronous with its
// delivered callback, spread over 200 accounts. The retention's index on created_at is
// built on them as an upgrade builds it (concurrently). Then, before and after the retention
// purge at the default 90 days (src/retention/purge.ts, batches of 1,000, each followed by
// a pause as long as it took):
// - admission latency (the real runbox_admit, one request at a time), lookup latency
//   (GET /api/v2/submissions/:id's reads), the portal's first page of a busy account and
//   its dashboard's runs per day;
// - table and index sizes.
// During the purge: each batch's time (the longest a batch holds its rows' locks) and
// admission latency alongside. After it: VACUUM, and another month of submissions, to
// see the freed space reused rather than the table grown.
//
// The alternative, monthly partitions of submissions, is measured on a copy of the same
// rows partitioned by created_at month (id, account, time, state): a lookup by id (which
// is not the partition key, so every partition's index is probed) against the plain
// table's, the copy's time (what converting the table would cost), and dropping the
// months past the retention against the batched delete.
//
// The database is its own and is dropped at the end.

const ROWS = Number(process.env.RUNBOX_BENCH_YEAR_ROWS ?? (QUICK ? 200_000 : 4_000_000));
const ACCOUNTS = 200;
const RETENTION_DAYS = 90;
const CHUNK = 50_000;
const SAMPLES = QUICK ? 100 : 400;
const DAY_MS = 24 * 3600 * 1000;

const CODE = [
  'import sys',
  'def solve(line):',
  '    words = line.split()',
  '    counts = {}',
  '    for w in words:',
  '        counts[w] = counts.get(w, 0) + 1',
  '    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))',
  'for line in sys.stdin:',
  '    for word, n in solve(line)[:3]:',
  "        print(word, n)",
  '',
].join('\n');

interface Sizes {
  submissionsHeapMB: number;
  submissionsToastMB: number;
  submissionsIndexesMB: number;
  callbackDeliveriesMB: number;
  tombstonesMB: number;
  usageDaysMB: number;
  /** Every table above with its indexes and TOAST. */
  totalMB: number;
  rows: number;
}

const mb = (bytes: number | string) => +(Number(bytes) / 2 ** 20).toFixed(1);

async function sizes(db: Db): Promise<Sizes> {
  const { rows } = await sql<Record<string, string>>`
    SELECT pg_relation_size('submissions') AS heap,
           coalesce(pg_total_relation_size((SELECT reltoastrelid FROM pg_class WHERE relname = 'submissions' AND reltoastrelid <> 0)), 0) AS toast,
           pg_indexes_size('submissions') AS indexes,
           pg_total_relation_size('callback_deliveries') AS deliveries,
           pg_total_relation_size('submissions_expired') AS tombstones,
           pg_total_relation_size('usage_days') AS days,
           pg_total_relation_size('submissions') + pg_total_relation_size('callback_deliveries')
             + pg_total_relation_size('submissions_expired') + pg_total_relation_size('usage_days') AS total,
           (SELECT count(*) FROM submissions) AS n
  `.execute(db);
  const r = rows[0]!;
  return {
    submissionsHeapMB: mb(r.heap!),
    submissionsToastMB: mb(r.toast!),
    submissionsIndexesMB: mb(r.indexes!),
    callbackDeliveriesMB: mb(r.deliveries!),
    tombstonesMB: mb(r.tombstones!),
    usageDaysMB: mb(r.days!),
    totalMB: mb(r.total!),
    rows: Number(r.n),
  };
}

/** Inserts `count` submissions spread evenly over [from, from + spanMs), with their callbacks. */
async function fill(db: Db, accounts: string[], keys: string[], from: Date, spanMs: number, count: number, say: (s: string) => void): Promise<number> {
  const t0 = performance.now();
  for (let done = 0; done < count; done += CHUNK) {
    const n = Math.min(CHUNK, count - done);
    await sql`
      WITH made AS (
        SELECT gen_random_uuid() AS id, g,
               ${from}::timestamptz + make_interval(secs => (g::float8 * ${spanMs / 1000} / ${count})) AS at,
               (g * 7919) % ${accounts.length} AS who
        FROM generate_series(${done}::bigint, ${done + n - 1}::bigint) g
      ),
      ins AS (
        INSERT INTO submissions (id, account_id, key_id, compiler, code, input, mode, priority, state, units, month, attempts,
                                 run_at, created_at, started_at, finished_at, result)
        SELECT m.id, (${accounts}::bigint[])[m.who + 1], (${keys}::bigint[])[m.who + 1], 'python-3.9.7', ${CODE} || '# ' || m.g,
               'the quick brown fox ' || m.g, CASE WHEN m.g % 5 = 0 THEN 'async' ELSE 'sync' END, 0, 'finished', 1,
               to_char(m.at AT TIME ZONE 'UTC', 'YYYY-MM'), 1, m.at, m.at, m.at + interval '5 ms', m.at + interval '60 ms',
               jsonb_build_object('id', m.id::text, 'compiler', 'python-3.9.7', 'status', 'success',
                 'output', 'the 1' || E'\\n' || 'brown 1' || E'\\n' || 'fox ' || m.g || E'\\n', 'error', '', 'exit_code', 0, 'signal', NULL,
                 'time', 0.021, 'total', 0.034, 'memory', 9120, 'truncated', false, 'stdout_truncated', false,
                 'stderr_truncated', false, 'compile_output', NULL, 'extra_params', NULL)
        FROM made m
        RETURNING id, key_id, mode, result, finished_at
      )
      INSERT INTO callback_deliveries (submission_id, key_id, url, payload, state, attempts, last_status, created_at, updated_at, delivered_at, run_at)
      SELECT id, key_id, 'https://hooks.example.com/runbox', result, 'delivered', 1, 200, finished_at, finished_at, finished_at, finished_at
      FROM ins WHERE mode = 'async'
    `.execute(db);
    if ((done / CHUNK) % 10 === 9) say(`  ${(done + n).toLocaleString('en-US')} rows, ${Math.round((done + n) / ((performance.now() - t0) / 1000))} rows/s`);
  }
  // The monthly counters admission would have moved.
  await sql`
    INSERT INTO account_usage (account_id, month, submissions)
    SELECT account_id, month, count(*) FROM submissions WHERE created_at >= ${from} AND created_at < ${new Date(from.getTime() + spanMs)} GROUP BY 1, 2
    ON CONFLICT (account_id, month) DO UPDATE SET submissions = account_usage.submissions + excluded.submissions
  `.execute(db);
  return (performance.now() - t0) / 1000;
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const out = await fn();
  return [performance.now() - t0, out];
}

interface Latencies {
  admissionMs: Stats;
  lookupMs: Stats;
  portalFirstPageMs: Stats;
  dashboardPerDayMs: Stats;
}

interface Side {
  db: Db;
  accounts: string[];
  keys: string[];
  /** An account with room for every admission the benchmark makes. */
  admitter: string;
}

/** The accounts of the year, each with a key; and one account the benchmark admits with. */
async function prepare(db: Db): Promise<Side> {
  const { rows: made } = await sql<{ id: string; key: string }>`
    WITH a AS (
      INSERT INTO accounts (email, plan) SELECT 'year-' || g || '@example.com', 'free' FROM generate_series(1, ${ACCOUNTS}) g RETURNING id
    )
    INSERT INTO api_keys (account_id, key_hash, key_prefix, app_name, redirect_url, kind, signing_secret)
    SELECT a.id, sha256(a.id::text::bytea), 'rbx_year', 'year', 'https://hooks.example.com/runbox', 'api', 'secret' FROM a
    RETURNING account_id::text AS id, id::text AS key
  `.execute(db);
  const admitter = (await sql<{ id: string }>`
    INSERT INTO accounts (email, plan, monthly_limit, per_minute, pending) VALUES ('admitter@example.com', 'free', 4000000, 1000000, 1000000) RETURNING id::text AS id
  `.execute(db)).rows[0]!.id;
  return { db, accounts: made.map((m) => m.id), keys: made.map((m) => m.key), admitter };
}

const admitOne = (side: Side) =>
  admitSubmission(side.db, { accountId: side.admitter, keyId: null, compiler: 'python-3.9.7', code: CODE, input: 'x', tests: null, extraParams: null, maxAttempts: 3, now: new Date() });

/** Ended submissions picked at random pages of the table, about SAMPLES of them. */
async function sampleIds(db: Db): Promise<{ id: string; account_id: string }[]> {
  const { rows: n } = await sql<{ n: number }>`SELECT greatest(reltuples, 1)::float8 AS n FROM pg_class WHERE relname = 'submissions'`.execute(db);
  const percent = Math.min(100, (100 * SAMPLES * 20) / n[0]!.n);
  const { rows } = await sql<{ id: string; account_id: string }>`
    SELECT id, account_id::text AS account_id FROM submissions TABLESAMPLE SYSTEM (${percent}) WHERE state = 'finished' LIMIT ${SAMPLES}
  `.execute(db);
  if (rows.length === 0) throw new Error('no submissions to look up');
  return rows;
}

/** The same operations on both sides, one after the other in turn, so both see the same load. */
async function measurePair(a: Side, b: Side, month: string): Promise<{ year: Latencies; baseline: Latencies }> {
  const out = [a, b].map(() => ({ admission: [] as number[], lookup: [] as number[], page: [] as number[], perDay: [] as number[] }));
  const samples = await Promise.all([sampleIds(a.db), sampleIds(b.db)]);
  for (let i = 0; i < SAMPLES; i++) {
    for (const [n, side] of [a, b].entries()) {
      const [ms, admitted] = await timed(() => admitOne(side));
      if (!admitted.admitted) throw new Error(`admission refused: ${admitted.reason}`);
      out[n]!.admission.push(ms);
      const s = samples[n]![i % samples[n]!.length]!;
      const [lookupMs, found] = await timed(() => lookupSubmission(side.db, ownerAsker(s.account_id), s.id));
      if (!found || !('json' in found)) throw new Error(`lookup of ${s.id} found nothing`);
      out[n]!.lookup.push(lookupMs);
      if (i < 50) {
        // A busy account's portal page and dashboard chart.
        out[n]!.page.push((await timed(() => listGraded(side.db, side.accounts[0]!, {}, { limit: GRADING_LIMITS.portalPage })))[0]);
        out[n]!.perDay.push((await timed(() => runsPerDay(side.db, side.accounts[0]!, month)))[0]);
      }
    }
  }
  const latencies = (o: (typeof out)[number]): Latencies => ({
    admissionMs: stats(o.admission),
    lookupMs: stats(o.lookup),
    portalFirstPageMs: stats(o.page),
    dashboardPerDayMs: stats(o.perDay),
  });
  return { year: latencies(out[0]!), baseline: latencies(out[1]!) };
}

export async function benchYear(): Promise<BenchOutcome> {
  const say = (s: string) => console.error(`year: ${s}`);
  const loadBefore = loadAverage();
  const t = await freshDatabase('bench_year');
  // The baseline: the same schema and accounts with one day of submissions, measured
  // interleaved with the year's database so both see the same load.
  const b = await freshDatabase('bench_year_base');
  try {
    const db = t.db;
    const now = Date.now();
    const yearStart = new Date(now - 365 * DAY_MS);
    const year = await prepare(db);
    const base = await prepare(b.db);
    say(`filling ${ROWS.toLocaleString('en-US')} submissions over a year (${Math.round(ROWS / 365).toLocaleString('en-US')} a day)`);
    const fillSeconds = await fill(db, year.accounts, year.keys, yearStart, 365 * DAY_MS, ROWS, say);
    await fill(b.db, base.accounts, base.keys, new Date(now - DAY_MS), DAY_MS, Math.round(ROWS / 365), () => {});
    await sql`ANALYZE`.execute(db);
    await sql`ANALYZE`.execute(b.db);
    // The retention's index as an upgrade builds it on a year of rows: concurrently, writes going on.
    await sql`DROP INDEX submissions_created`.execute(db);
    const [indexMs, built] = await timed(() => ensureOnlineIndexes(db));
    if (!built.includes('submissions_created')) throw new Error('the index was not rebuilt');
    const before = await sizes(db);
    say(`filled in ${fillSeconds.toFixed(0)} s: ${JSON.stringify(before)}`);
    const month = new Date(now).toISOString().slice(0, 7);

    const latencyBefore = await measurePair(year, base, month);
    say(`with a year: ${JSON.stringify(latencyBefore)}`);

    // The alternative: the same rows in monthly partitions (narrow copy).
    say('copying the rows into monthly partitions (the alternative)');
    await sql`CREATE TABLE bench_parts (id uuid NOT NULL, account_id bigint NOT NULL, created_at timestamptz NOT NULL, state text NOT NULL) PARTITION BY RANGE (created_at)`.execute(db);
    const monthStarts: Date[] = [];
    for (let d = new Date(Date.UTC(yearStart.getUTCFullYear(), yearStart.getUTCMonth(), 1)); d.getTime() <= now; d = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1))) monthStarts.push(d);
    for (const [i, start] of monthStarts.entries()) {
      const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
      await sql.raw(`CREATE TABLE bench_parts_${i} PARTITION OF bench_parts FOR VALUES FROM ('${start.toISOString()}') TO ('${end.toISOString()}')`).execute(db);
    }
    const [copyMs] = await timed(async () => {
      await sql`INSERT INTO bench_parts SELECT id, account_id, created_at, state FROM submissions`.execute(db);
      await sql`CREATE INDEX ON bench_parts (id)`.execute(db);
      await sql`CREATE INDEX ON bench_parts (account_id, created_at)`.execute(db);
      await sql`ANALYZE bench_parts`.execute(db);
    });
    const ids = await sampleIds(db);
    const plainLookup: number[] = [];
    const partLookup: number[] = [];
    for (const s of ids) {
      plainLookup.push((await timed(() => sql`SELECT id, state FROM submissions WHERE id = ${s.id}`.execute(db)))[0]);
      partLookup.push((await timed(() => sql`SELECT id, state FROM bench_parts WHERE id = ${s.id}`.execute(db)))[0]);
    }

    // The purge at the default retention, batch by batch, with admissions alongside (and
    // on the baseline in turn, which sees the same load but no purge).
    const cutoff = await retentionCutoff(db, RETENTION_DAYS);
    const batchMs: number[] = [];
    const during: number[] = [];
    const duringBase: number[] = [];
    let purging = true;
    const admitting = (async () => {
      while (purging) {
        during.push((await timed(() => admitOne(year)))[0]);
        duringBase.push((await timed(() => admitOne(base)))[0]);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    let purged = 0;
    let deliveries = 0;
    const [purgeMs] = await timed(async () => {
      for (;;) {
        const [ms, batch] = await timed(() => purgeBatch(db, cutoff));
        if (batch.submissions > 0) batchMs.push(ms);
        purged += batch.submissions;
        deliveries += batch.deliveries;
        if (purged > 0 && purged % 200_000 < PURGE_BATCH_ROWS) say(`  purged ${purged.toLocaleString('en-US')}`);
        if (batch.submissions < PURGE_BATCH_ROWS) break;
        await new Promise((r) => setTimeout(r, pauseAfter(ms)));
      }
    });
    purging = false;
    await admitting;
    const afterPurge = await sizes(db);
    const [vacuumMs] = await timed(() => sql`VACUUM (ANALYZE) submissions, callback_deliveries`.execute(db));
    const afterVacuum = await sizes(db);
    const latencyAfter = await measurePair(year, base, month);
    say(`after the purge: ${JSON.stringify(latencyAfter)}`);

    // Dropping the months past the retention instead: whole months only.
    const oldMonths = monthStarts.map((s, i) => ({ i, end: new Date(Date.UTC(s.getUTCFullYear(), s.getUTCMonth() + 1, 1)) })).filter((m) => m.end.getTime() <= cutoff.getTime());
    const [dropMs] = await timed(async () => {
      for (const m of oldMonths) {
        await sql.raw(`ALTER TABLE bench_parts DETACH PARTITION bench_parts_${m.i}`).execute(db);
        await sql.raw(`DROP TABLE bench_parts_${m.i}`).execute(db);
      }
    });

    await sql`DROP TABLE bench_parts`.execute(db);

    // Another month of submissions: the space the purge freed is reused.
    const [refillMs] = await timed(() => fill(db, year.accounts, year.keys, new Date(now), 30 * DAY_MS, Math.round(ROWS / 12), say));
    const afterRefill = await sizes(db);

    const batches = stats(batchMs);
    const result = {
      rows: ROWS,
      perDay: Math.round(ROWS / 365),
      averageRunsPerSecond: +(ROWS / (365 * 86400)).toFixed(3),
      accounts: ACCOUNTS,
      retentionDays: RETENTION_DAYS,
      fillSeconds: +fillSeconds.toFixed(0),
      createdAtIndexConcurrentlySeconds: +(indexMs / 1000).toFixed(1),
      sizes: { before, afterPurge, afterVacuum, afterRefillOfAMonth: afterRefill },
      latency: { withAYear: latencyBefore, afterThePurge: latencyAfter, admissionDuringPurgeMs: stats(during), baselineAdmissionDuringPurgeMs: stats(duringBase) },
      purge: {
        submissions: purged,
        deliveries,
        seconds: +(purgeMs / 1000).toFixed(1),
        rowsPerSecond: Math.round(purged / (purgeMs / 1000)),
        batchRows: PURGE_BATCH_ROWS,
        pauseMs: PURGE_PAUSE_MS,
        batchMs: batches,
        vacuumSeconds: +(vacuumMs / 1000).toFixed(1),
      },
      partitions: {
        months: monthStarts.length,
        copySeconds: +(copyMs / 1000).toFixed(1),
        lookupByIdMs: stats(partLookup),
        plainLookupByIdMs: stats(plainLookup),
        droppedMonths: oldMonths.length,
        dropMs: +dropMs.toFixed(1),
      },
      refillSeconds: +(refillMs / 1000).toFixed(0),
      loadAverage: { before: loadBefore, after: loadAverage() },
    };
    console.error(`year: written to ${writeResult(QUICK ? 'year-quick' : 'year', result)}`);
    const growth = afterRefill.totalMB - afterVacuum.totalMB;
    return {
      result,
      rows: [
        row({ benchmark: 'year', figure: `admission p50, a year (${(ROWS / 1e6).toFixed(1)} M rows) vs one day`, unit: 'ms', value: latencyBefore.year.admissionMs.median, baseline: latencyBefore.baseline.admissionMs.median, baselineIs: 'one day of rows', target: 'report', met: null }),
        row({ benchmark: 'year', figure: 'lookup p50, a year vs one day', unit: 'ms', value: latencyBefore.year.lookupMs.median, baseline: latencyBefore.baseline.lookupMs.median, baselineIs: 'one day of rows', target: 'report', met: null }),
        row({ benchmark: 'year', figure: "portal's first page of submissions p50, a year vs one day", unit: 'ms', value: latencyBefore.year.portalFirstPageMs.median, baseline: latencyBefore.baseline.portalFirstPageMs.median, baselineIs: 'one day of rows', target: 'report', met: null }),
        row({ benchmark: 'year', figure: 'dashboard runs per day p50, a year vs one day', unit: 'ms', value: latencyBefore.year.dashboardPerDayMs.median, baseline: latencyBefore.baseline.dashboardPerDayMs.median, baselineIs: 'one day of rows', target: 'report', met: null }),
        row({ benchmark: 'year', figure: `admission p99 during the ${RETENTION_DAYS}-day purge vs one day's database meanwhile`, unit: 'ms', value: stats(during).p99, baseline: stats(duringBase).p99, baselineIs: 'one day, no purge', target: 'report', met: null }),
        row({ benchmark: 'year', figure: `purge batch of ${PURGE_BATCH_ROWS} rows (its locks held), p99; p50 ${batches.median.toFixed(0)} ms`, unit: 'ms', value: batches.p99, baseline: null, baselineIs: '', target: 'report', met: null }),
        row({ benchmark: 'year', figure: `purge of ${(purged / 1e6).toFixed(1)} M rows in batches vs dropping ${oldMonths.length} monthly partitions`, unit: 's', value: purgeMs / 1000, baseline: dropMs / 1000, baselineIs: 'partitions dropped', target: 'report', met: null }),
        row({ benchmark: 'year', figure: 'admission p50 after the purge vs one day', unit: 'ms', value: latencyAfter.year.admissionMs.median, baseline: latencyAfter.baseline.admissionMs.median, baselineIs: 'one day of rows', target: 'report', met: null }),
        row({ benchmark: 'year', figure: 'lookup p50 after the purge vs one day', unit: 'ms', value: latencyAfter.year.lookupMs.median, baseline: latencyAfter.baseline.lookupMs.median, baselineIs: 'one day of rows', target: 'report', met: null }),
        row({ benchmark: 'year', figure: 'submissions, callbacks, tombstones: a year vs after purge, VACUUM and a new month', unit: 'MB', value: before.totalMB, baseline: afterRefill.totalMB, baselineIs: `after (the new month grew it ${growth.toFixed(0)} MB)`, target: 'report', met: null }),
        row({ benchmark: 'year', figure: `lookup by id p50, ${monthStarts.length} monthly partitions vs one table`, unit: 'ms', value: stats(partLookup).median, baseline: stats(plainLookup).median, baselineIs: 'one table', target: 'report', met: null }),
      ],
    };
  } finally {
    await t.drop();
    await b.drop();
  }
}

runIfMain(import.meta.url, benchYear);
