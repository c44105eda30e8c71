import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { installedCompilers } from '../compilers/deployment.js';
import type { Config } from '../config.js';
import { claimSeconds, queueWait, runDuration, runsTotal, sandboxOverhead } from '../metrics/registry.js';
import type { Db } from '../db/connect.js';
import { listenUrl } from '../db/connections.js';
import { accountSlots, claim, runsWaiting, complete, completeAndClaim, dropWakes, fail, heartbeat, markStopped, passWake, reapExpired, registerWakes, release, createWaker, wakeChannelOf, type ClaimedJob, type Waker, type WakeReason, type WakeTokens } from '../queue/index.js';
import { internalErrorResult, type RunResult } from '../result.js';
import type { Sandbox, StdinFeed } from '../sandbox/spec.js';
import { pruneOutput } from '../queue/output-store.js';
import { watchCancellations } from './cancellations.js';
import { watchInput } from './input-feeds.js';
import { pruneInput } from '../queue/input-channel.js';
import { requeueDeadSiblings } from './dead-siblings.js';
import { sweepProblems } from '../problems/sweep.js';
import { versionForRun } from '../problems/store.js';
import { readTestData } from '../problems/test-data.js';
import { BuiltCache } from './built-cache.js';
import { DataCache } from './data-cache.js';
import { executeJob } from './execute.js';
import { runInSession } from '../sessions/runner.js';
import { endDueSessions } from '../sessions/store.js';
import type { JudgeDeps } from './judge.js';
import { createOutputPublisher } from './output-publisher.js';
import { NotStarted } from './verdict.js';
import { LENT_SLOT_STOPPED, watchLentSlot } from './lent-slots.js';
import { recordOutcome } from './record-outcome.js';

// The runner: claims up to RUNBOX_RUNNER_SLOTS jobs, runs each in its own slot,
// heart-beats their leases, and writes results back. Jobs it could not start are
// failed and refunded; on stop it finishes what runs (within a bound) and hands the
// rest back to the queue.

export interface ExecutorContext {
  slot: number;
  signal: AbortSignal;
  /** Present for WebSocket jobs: the program's output as it is written. */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
  /** Present for interactive WebSocket jobs: the input typed while the program runs. */
  stdinFeed?: StdinFeed;
}

export type Executor = (job: ClaimedJob, ctx: ExecutorContext) => Promise<RunResult>;

export interface RunnerOptions {
  db: Db;
  config: Config;
  sandbox: Sandbox;
  log: Logger;
  /** Replaces executeJob (benchmarks of the queue alone). */
  execute?: Executor;
  /** How long stop() lets running jobs finish before handing them back (default RUNBOX_DRAIN_SECONDS). */
  drainMs?: number;
}

export interface Runner {
  readonly id: string;
  /** Jobs running now. */
  readonly running: number;
  stop(): Promise<void>;
}

/** How often a runner sweeps stored problems' versions and data no run needs any more. */
const PROBLEM_SWEEP_MS = 60_000;

type Stop = 'shutdown' | 'lease_lost' | 'cancelled' | 'lent_slot_idle';

/** One claim of a job: a job requeued and claimed again by this runner is a new claim. */
const claimKey = (job: ClaimedJob) => `${job.id}/${job.attempts}`;

interface Active {
  job: ClaimedJob;
  slot: number;
  abort: AbortController;
  done: Promise<void>;
}

export async function startRunner(options: RunnerOptions): Promise<Runner> {
  const { db, config, sandbox, log } = options;
  const id = config.RUNBOX_RUNNER_ID || `${hostname()}-${process.pid}`;
  const slots = config.RUNBOX_RUNNER_SLOTS;
  const leaseSeconds = config.RUNBOX_LEASE_SECONDS;
  // Stored problems' test data comes through the host's cache; checkers are built once.
  const judge: JudgeDeps = {
    version: (id, version) => versionForRun(db, id, version),
    data: new DataCache({ dir: config.RUNBOX_DATA_CACHE_DIR, maxBytes: config.RUNBOX_DATA_CACHE_MB * 1024 * 1024, fetch: (hash) => readTestData(db, hash) }),
    built: new BuiltCache(),
  };
  const execute: Executor =
    options.execute ??
    ((job, ctx) => {
      const deps = {
        imagesDir: config.RUNBOX_IMAGES_DIR,
        recipesDir: config.RUNBOX_RECIPES_DIR,
        judge,
        slot: ctx.slot,
        signal: ctx.signal,
        ...(ctx.onOutput ? { onOutput: ctx.onOutput } : {}),
        ...(ctx.stdinFeed ? { stdinFeed: ctx.stdinFeed } : {}),
      };
      // A session's run starts from its workspace and leaves its files there (src/sessions/runner.ts).
      if (job.run_options?.session) return runInSession(db, job, (toRun, session) => executeJob(toRun, sandbox, { ...deps, session }));
      return executeJob(job, sandbox, deps);
    });
  // What this runner can run, re-read at every heart-beat so an image imported later is offered.
  // One account's runs keep off the slots reserved for the others (src/queue/claim.ts).
  const share = { runnerId: id, accountSlots: accountSlots(slots, config.RUNBOX_RUNNER_RESERVED_SLOTS) };
  const info = { id, hostname: hostname(), pid: process.pid, slots, accountSlots: share.accountSlots, launcher: sandbox.launcher, ...installedCompilers(config.RUNBOX_IMAGES_DIR, config.RUNBOX_RECIPES_DIR) };
  const rlog = log.child({ runner: id });

  const freeSlots = Array.from({ length: slots }, (_, i) => i);
  const active = new Map<string, Active>();
  let stopping = false;

  // Jobs of an earlier runner on this host whose process is gone go back to the queue now.
  const orphans = await requeueDeadSiblings(db, info.hostname).catch((err: Error) => {
    rlog.warn({ err: err.message }, 'checking for dead runners on this host failed');
    return null;
  });
  if (orphans) rlog.info(orphans, 'requeued the jobs of dead runners on this host');
  // Registers the runner before claiming, so its row exists while it holds jobs.
  await heartbeat(db, info, leaseSeconds, []);

  // One LISTEN connection for the process (src/queue/listen.ts), or none: then every watcher polls.
  const listenAt = listenUrl(config);
  // Admissions wake this runner alone on its own channel while it holds wake tokens
  // (src/queue/wake.ts): its claim statements keep them at its free slots while it listens.
  const waker: Waker = createWaker({
    url: listenAt,
    pollMs: config.RUNBOX_POLL_MS,
    ownChannel: wakeChannelOf(id),
    onError: (err) => rlog.warn({ err: err.message }, 'queue listener lost its connection; reconnecting'),
    onConnected: () => rlog.debug('listening for new jobs'),
    onOwnConnected: () => void registerWakes(db, id).then(() => waker.kick(), (err: Error) => rlog.warn({ err: err.message }, 'registering for wake-ups failed')),
    onLost: () => void dropWakes(db, id).catch(() => {}),
  });
  const tokens = (freeBesides: number): WakeTokens | undefined => (waker.listening ? { runnerId: id, freeBesides } : undefined);
  // A caller that went away stops its run (the job is completed as cancelled, so its slot frees).
  const cancellations = watchCancellations({
    url: listenAt,
    pollMs: config.RUNBOX_POLL_MS,
    db,
    running: () => [...active.values()].map((a) => a.job.id),
    onCancel: (subId) => {
      for (const a of active.values()) if (a.job.id === subId) a.abort.abort('cancelled' satisfies Stop);
    },
    onError: (err) => rlog.warn({ err: err.message }, 'checking for cancelled runs failed'),
  });
  // What callers of interactive runs type, forwarded to their programs' stdin.
  const inputs = watchInput({
    url: listenAt,
    db,
    onError: (err) => rlog.warn({ err: err.message }, 'reading interactive input failed'),
  });
  let wakeStopped: () => void = () => {};
  const stopRequested = new Promise<void>((r) => (wakeStopped = r));

  let beating = false;
  let sweptAt = Date.now();
  const beat = async () => {
    if (beating) return;
    beating = true;
    try {
      // Only claims made before the heartbeat are checked against its answer.
      const before = [...active.values()];
      Object.assign(info, installedCompilers(config.RUNBOX_IMAGES_DIR, config.RUNBOX_RECIPES_DIR));
      const held = new Set((await heartbeat(db, info, leaseSeconds, before.map((a) => claimKey(a.job)))).map((c) => `${c.id}/${c.attempt}`));
      for (const a of before) {
        // Requeued behind our back (we missed heart-beats): another runner may run it now.
        if (!held.has(claimKey(a.job))) {
          rlog.warn({ submission: a.job.id }, 'lease lost; abandoning the run');
          a.abort.abort('lease_lost' satisfies Stop);
        }
      }
    } catch (err) {
      rlog.warn({ err: (err as Error).message }, 'heartbeat failed');
    }
    try {
      const reaped = await reapExpired(db);
      if (reaped.requeued.length || reaped.failed.length) rlog.info(reaped, 'reaped jobs of runners that stopped responding');
    } catch (err) {
      rlog.warn({ err: (err as Error).message }, 'reaping expired leases failed');
    }
    // Stored live output of WebSocket runs long over.
    await pruneOutput(db).catch((err: Error) => rlog.warn({ err: err.message }, 'pruning stored output failed'));
    await pruneInput(db).catch((err: Error) => rlog.warn({ err: err.message }, 'pruning stored input failed'));
    // Sessions idle past their idle_timeout, or past their lifetime, end (their files go).
    await endDueSessions(db).catch((err: Error) => rlog.warn({ err: err.message }, 'ending idle sessions failed'));
    // Problem versions and test data no run needs any more (a run that held one has ended).
    if (Date.now() - sweptAt > PROBLEM_SWEEP_MS) {
      sweptAt = Date.now();
      await sweepProblems(db).catch((err: Error) => rlog.warn({ err: err.message }, 'sweeping stored problems failed'));
    }
    beating = false;
  };
  const beatTimer = setInterval(() => void beat(), Math.max(1000, (leaseSeconds * 1000) / 3));

  // Runs the job and records its outcome; `claimed`: the outcome's statement also looked
  // for the slot's next job, and `next` is the one it claimed.
  type Turnover = { claimed: boolean; next: ClaimedJob | null };
  const none: Turnover = { claimed: false, next: null };
  const runJob = async (job: ClaimedJob, slot: number, abort: AbortController): Promise<Turnover> => {
    const jlog = rlog.child({ submission: job.id, slot, attempt: job.attempts });
    const ref = { id: job.id, attempt: job.attempts };
    jlog.info({ compiler: job.compiler }, 'job started');
    const startedAt = performance.now();
    // Each outcome's statement is tried again while the database cannot be reached (src/runner/record-outcome.ts).
    const record = <T>(write: () => Promise<T>) =>
      recordOutcome(write, {
        forMs: 2 * leaseSeconds * 1000,
        onRetry: (err) => jlog.warn({ err: err.message }, 'could not record the outcome of a job yet; trying again'),
      });
    try {
      let result: RunResult | undefined;
      let problem: Error | undefined;
      // WebSocket jobs stream their output to the API host as it is written.
      const publisher =
        job.mode === 'ws'
          ? createOutputPublisher(
              db,
              { runnerId: id, submissionId: job.id, attempt: job.attempts },
              (err) => jlog.warn({ err: err.message }, 'output streaming failed'),
              // The claim is gone (another runner has the job): stop at once, as a lost heart-beat would.
              () => {
                jlog.warn('output refused: the lease is gone; abandoning the run');
                abort.abort('lease_lost' satisfies Stop);
              },
            )
          : undefined;
      const interactive = job.mode === 'ws' && job.run_options?.interactive === true;
      // In a slot lent beyond the account's share, a run idle on its user's input gives it back when another account waits.
      const lent =
        interactive && job.borrowed
          ? watchLentSlot({
              db,
              accountId: job.account_id,
              onGiveBack: () => abort.abort('lent_slot_idle' satisfies Stop),
              onError: (err) => jlog.warn({ err: err.message }, 'checking for runs waiting on a lent slot failed'),
            })
          : undefined;
      try {
        const onOutput = publisher && lent ? (stream: 'stdout' | 'stderr', chunk: Buffer) => (lent.touch(), publisher.push(stream, chunk)) : publisher?.push;
        const feed = interactive ? inputs.feed(job.id, Buffer.byteLength(job.input ?? '', 'utf8')) : undefined;
        result = await execute(job, {
          slot,
          signal: abort.signal,
          ...(onOutput ? { onOutput } : {}),
          ...(feed ? { stdinFeed: lent ? lent.feed(feed) : feed } : {}),
        });
      } catch (err) {
        problem = err as Error;
      } finally {
        lent?.stop();
      }
      // Everything streamed goes out before the job's end is recorded.
      await publisher?.finish(result && { stdout: result.stdout_truncated, stderr: result.stderr_truncated });
      const why = abort.signal.aborted ? (abort.signal.reason as Stop) : undefined;
      if (why === 'lease_lost') return none;
      if (why === 'cancelled') {
        // Counted (it started); the slot frees with the job's end.
        const ok = await record(() => complete(db, id, ref, result ?? internalErrorResult(job, 'the caller went away; the run was stopped', 'cancelled')));
        if (ok) jlog.info('job stopped: its caller went away');
        return none;
      }
      if (why === 'lent_slot_idle') {
        // Counted (it ran); what it wrote was streamed, and the result says why it stopped.
        const stopped: RunResult = { ...(result ?? internalErrorResult(job, LENT_SLOT_STOPPED, 'cancelled')), status: 'cancelled', error: [result?.error, LENT_SLOT_STOPPED].filter(Boolean).join('\n') };
        const ok = await record(() => complete(db, id, ref, stopped));
        if (ok) jlog.info('interactive run idle in a lent slot stopped: another account waits');
        return none;
      }
      if (why === 'shutdown') {
        // Cut short by shutdown: another runner will run it from the start.
        await release(db, id, ref);
        jlog.info('job handed back to the queue (shutdown)');
        return none;
      }
      if (result) {
        // The result and the slot's next job in one statement (none once stopping).
        let claimNext = false;
        const { completed, next, lostRace } = await record(async () => {
          claimNext = !stopping;
          if (!claimNext) return { completed: await complete(db, id, ref, result), next: null, lostRace: false };
          const end = claimSeconds.startTimer();
          const turned = await completeAndClaim(db, id, ref, result, leaseSeconds, share, tokens(freeSlots.length));
          end();
          return turned;
        });
        if (completed) {
          jlog.info({ status: result.status, time: result.time, total: result.total }, 'job finished');
          observeRun(job.compiler, result, (performance.now() - startedAt) / 1000);
        }
        else jlog.warn('job finished but its lease was gone; result dropped');
        // A lost race says nothing about the rest of the queue: the loop claims again.
        return { claimed: claimNext && !lostRace, next };
      }
      const notStarted = problem instanceof NotStarted;
      const message = problem?.message ?? 'unknown error';
      if (notStarted) jlog.warn({ err: message, diagnostic: (problem as NotStarted).diagnostic }, 'job could not be started');
      else jlog.error({ err: problem?.stack ?? message }, 'job failed inside the runner');
      // Either way the user got no run: nothing is billed.
      const failed = internalErrorResult(job, notStarted ? message : 'internal error');
      await record(() => fail(db, id, ref, message, { refund: true, result: failed }));
      runsTotal.inc({ status: 'internal_error', compiler: job.compiler });
    } catch (err) {
      // The database stayed unreachable: the lease runs out and the reaper requeues the job.
      jlog.error({ err: (err as Error).message }, 'could not record the outcome of a job');
    }
    return none;
  };

  // Starts a claimed job at once, in the given slot (the slot its predecessor turned over) or a free one.
  const start = (job: ClaimedJob, slot: number = freeSlots.shift()!) => {
    const abort = new AbortController();
    const a: Active = { job, slot, abort, done: Promise.resolve() };
    active.set(claimKey(job), a);
    if (job.queued_seconds !== undefined) queueWait.observe(job.queued_seconds);
    // Its caller went away before the runner had registered it.
    if (cancellations.has(job.id)) abort.abort('cancelled' satisfies Stop);
    a.done = runJob(job, slot, abort).then(async ({ claimed, next }) => {
      active.delete(claimKey(job));
      if (next && !stopping) return start(next, slot);
      // Claimed as the stop began: hand it back rather than start it.
      if (next) await release(db, id, { id: next.id, attempt: next.attempts }).catch(() => {});
      freeSlots.push(slot);
      freeSlots.sort((x, y) => x - y);
      // The loop claims for the freed slot, unless the outcome's statement just looked and found nothing.
      if (!claimed) waker.kick();
    });
  };

  const loop = (async () => {
    let failures = 0;
    let woken: WakeReason | undefined;
    while (!stopping) {
      // A poll while listening is the safety net (a lost notification, a woken runner that
      // died): it looks whether anything is queued before it claims, which costs far less.
      const look = woken === 'poll' && waker.listening ? await runsWaiting(db).catch(() => true) : true;
      if (freeSlots.length > 0 && look) {
        let jobs: ClaimedJob[] = [];
        try {
          const end = claimSeconds.startTimer();
          jobs = await claim(db, id, freeSlots.length, leaseSeconds, share, tokens(0));
          end();
          failures = 0;
        } catch (err) {
          failures++;
          rlog.warn({ err: (err as Error).message }, 'claiming jobs failed');
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([stopRequested, new Promise((r) => (timer = setTimeout(r, Math.min(100 * 2 ** failures, 10_000))))]);
          clearTimeout(timer);
          continue;
        }
        // Claimed during a stop: hand back at once rather than start.
        if (stopping) {
          for (const job of jobs) await release(db, id, { id: job.id, attempt: job.attempts }).catch(() => {});
          break;
        }
        const wanted = freeSlots.length;
        for (const job of jobs) start(job);
        // A full batch may have left more behind; a short one means the queue had no more.
        if (jobs.length === wanted && freeSlots.length > 0) continue;
      }
      // Woken alone with no slot free (filled since its tokens were written): the wake goes on to another runner.
      woken = await waker.wait();
      if (woken === 'wake' && freeSlots.length === 0 && !stopping) {
        await passWake(db).catch((err: Error) => rlog.warn({ err: err.message }, 'handing on a wake-up failed'));
      }
    }
  })();

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      // Draining: no more claims (the loop ends, a finished run's statement no longer
      // claims the slot's next job, a claim that raced the stop is handed back unstarted);
      // the runs going finish within the bound, heart-beats keeping their leases.
      const t0 = performance.now();
      const drainMs = options.drainMs ?? config.RUNBOX_DRAIN_SECONDS * 1000;
      stopping = true;
      wakeStopped();
      // Admissions wake other runners from now on.
      await dropWakes(db, id).catch(() => {});
      await waker.close();
      await loop;
      rlog.info({ running: active.size, bound_ms: drainMs }, 'draining: no more claims; letting the runs going finish');
      const drained = Promise.all([...active.values()].map((a) => a.done));
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        drained.then(() => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), drainMs))),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        rlog.warn({ jobs: [...active.keys()] }, 'jobs still running at shutdown; handing them back');
        for (const a of active.values()) a.abort.abort('shutdown' satisfies Stop);
        await drained;
      }
      rlog.info({ ms: Math.round(performance.now() - t0), handed_back: timedOut }, 'drained');
      clearInterval(beatTimer);
      await cancellations.close();
      await inputs.close();
      // The slots' prepared stages go, and the job cgroups still being removed are waited for.
      await sandbox.close?.().catch(() => {});
      await markStopped(db, id).catch(() => {});
      rlog.info('runner stopped');
    })());

  rlog.info({ slots, launcher: sandbox.launcher }, 'runner started');
  return {
    id,
    get running() {
      return active.size;
    },
    stop,
  };
}

/** Metrics of one recorded run; the program's own wall time is the run stage's (each test's for multi-test runs). */
function observeRun(compiler: string, result: RunResult, wallSeconds: number): void {
  runsTotal.inc({ status: result.status, compiler });
  runDuration.observe({ compiler }, wallSeconds);
  const programSeconds = result.tests ? result.tests.reduce((sum, t) => sum + (t.total ?? 0), 0) : (result.total ?? 0);
  sandboxOverhead.observe({ compiler }, Math.max(0, wallSeconds - programSeconds));
}

