import { randomUUID } from 'node:crypto';
import { keyAsker } from '../../problems/feedback.js';
import type { RawData, WebSocket } from 'ws';
import { RevokedKeyError } from '../../accounts/errors.js';
import type { KeyContext } from '../../accounts/accounts.js';
import { compilerEntry } from '../../compilers/catalogue.js';
import { deploymentAvailability } from '../../compilers/deployment.js';
import { ApiError } from '../../api/errors.js';
import { JsonTextError, parseClientJson } from '../../api/json-text.js';
import { storedResult } from '../../api/live.js';
import { admissionSettings } from '../../api/middleware/admission.js';
import { followOutput, type OutputChunk } from '../../api/ws/follow-output.js';
import { SERVICE_RESTART, SERVICE_RESTART_REASON } from '../../api/ws/drain.js';
import { RunInput, StdinPace } from '../../api/ws/run-input.js';
import type { SessionDeps } from '../../api/ws/session.js';
import { cancelSubmission } from '../../queue/cancel.js';
import { admitSubmission } from '../../quota/admit.js';
import { REQUEST_LIMITS } from '../../limits.js';
import type { RunResult } from '../../result.js';
import { pistonJob } from './request.js';
import { SIGNAL_NAMES } from './response.js';
import { pistonRuntimes } from './runtimes.js';

// Piston's interactive WebSocket (engineer-man/piston api/src/api/v2.js, /api/v2/connect)
// at /piston/api/v2/connect: one run per connection. The client sends
// {"type":"init", ...the execute body}, then {"type":"data","stream":"stdin","data"} and
// {"type":"signal","signal"}; the server answers {"type":"runtime","language","version"},
// {"type":"stage","stage"}, {"type":"data","stream","data"} as the program writes,
// {"type":"exit","stage","code","signal"} at the end of each stage and closes with 4999.
// Piston's close codes: 4000 a second init, 4001 no init within a second, 4002 after an
// {"type":"error","message"}, 4003 data or signal before init, 4004 a stream other than
// stdin, 4005 an unknown signal. The run is a WebSocket run of runbox's (admitted, counted,
// limited and stopped on disconnect like one), interactive: data goes to the program's
// stdin as it comes (src/api/ws/run-input.ts).
//
// Where runbox differs: the init's stdin is written first (Piston drops it); a signal
// stops the program whatever its name (runbox cannot pass signals into the sandbox);
// the compile stage's messages come when it ends, not as the compiler writes them.

/** Piston's: a connection that sends no init within this long is closed (4001). */
const INIT_TIMEOUT_MS = 1000;

const SIGNALS = new Set(Object.values(SIGNAL_NAMES));

export function startPistonConnect(ws: WebSocket, auth: KeyContext, deps: SessionDeps): void {
  const maxUnread = deps.config.RUNBOX_WS_MAX_UNREAD_BYTES;
  const send = (m: object) => {
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > maxUnread) return ws.terminate();
    ws.send(JSON.stringify(m));
  };
  const close = (code: number, reason: string) => {
    if (ws.readyState === ws.OPEN) ws.close(code, reason);
  };
  /** Piston's fatal error: said, then the connection closed (4002). */
  const fail = (message: string) => {
    send({ type: 'error', message });
    close(4002, 'Notified Error');
  };

  let started = false;
  let submissionId: string | undefined;
  let input: RunInput | undefined;
  /** Stdin sent between the init and the run's admission, written once it is admitted. */
  const early: string[] = [];
  let earlyBytes = 0;
  let finished = false;
  const closed = new AbortController();

  const initTimer = setTimeout(() => {
    if (!started) close(4001, 'Initialization Timeout');
  }, INIT_TIMEOUT_MS);
  initTimer.unref();

  ws.on('error', (err) => deps.log?.info?.({ err: err.message }, 'WebSocket connection closed on a protocol error'));
  // A stopping API closes a connection whose run has not begun (1012, src/api/ws/drain.ts);
  // one with a run going ends with it, as Piston's do (4999).
  const stopWatchingDrain = deps.draining.whenDraining(() => {
    if (!started) close(SERVICE_RESTART, SERVICE_RESTART_REASON);
  });
  ws.on('close', () => {
    stopWatchingDrain();
    clearTimeout(initTimer);
    closed.abort(new Error('connection closed'));
    if (submissionId && !finished) {
      cancelSubmission(deps.db, submissionId).catch((e: Error) => deps.log?.error({ err: e.message, submission: submissionId }, 'could not cancel a run'));
    }
  });
  ws.on('message', (data, isBinary) => {
    try {
      onMessage(data, isBinary);
    } catch (err) {
      deps.log?.error({ err: (err as Error).stack ?? String(err) }, 'Piston WebSocket message failed');
      fail('internal error; try again later');
    }
  });

  function onMessage(data: RawData, isBinary: boolean): void {
    let msg: Record<string, unknown>;
    try {
      // The body rules of REST requests (depth first, valid Unicode) before anything walks it.
      const value = parseClientJson(data.toString('utf8'), 'the message');
      if (typeof value !== 'object' || value === null || Array.isArray(value) || isBinary) throw new Error();
      msg = value as Record<string, unknown>;
    } catch (err) {
      return fail(err instanceof JsonTextError && err.code !== 'invalid_json' ? err.message : 'messages must be JSON objects');
    }
    switch (msg['type']) {
      case 'init':
        if (started) return close(4000, 'Already Initialized');
        started = true;
        clearTimeout(initTimer);
        init(msg).catch((err: unknown) => {
          if (err instanceof ApiError) return fail(err.message);
          if (err instanceof RevokedKeyError) return fail(err.message);
          deps.log?.error({ err: (err as Error).stack ?? String(err) }, 'Piston WebSocket run failed');
          fail('the run could not be completed; try again later');
        });
        return;
      case 'data': {
        if (!started) return close(4003, 'Not yet initialized');
        if (msg['stream'] !== 'stdin') return close(4004, 'Can only write to stdin');
        if (typeof msg['data'] !== 'string') return fail('data must be a string');
        if (msg['data'].includes('\u0000')) return fail('data must not contain NUL characters');
        if (input) writeStdin(input, msg['data']);
        else if (earlyBytes <= REQUEST_LIMITS.inputMaxBytes) {
          // The run is still being admitted; past the limit the rest would be refused anyway.
          earlyBytes += Buffer.byteLength(msg['data'], 'utf8');
          early.push(msg['data']);
        }
        return;
      }
      case 'signal':
        if (!started) return close(4003, 'Not yet initialized');
        if (typeof msg['signal'] !== 'string' || !SIGNALS.has(msg['signal'])) return close(4005, 'Invalid signal');
        // runbox cannot pass a signal into the sandbox: any signal stops the program.
        if (submissionId && !finished) {
          cancelSubmission(deps.db, submissionId).catch((e: Error) => deps.log?.error({ err: e.message, submission: submissionId }, 'could not cancel a run'));
        }
        return;
      default:
        // Piston ignores other messages.
        return;
    }
  }

  function writeStdin(to: RunInput, data: string): void {
    const refused = to.write(data, false);
    if (refused?.reason === 'input_limit') {
      send({ type: 'error', message: `stdin may hold at most ${refused.limit} bytes, the init's stdin included; this data was not written and stdin is now closed` });
    }
  }

  async function init(msg: Record<string, unknown>): Promise<void> {
    if (await deps.maintenance.isOn()) throw new ApiError(503, 'maintenance', 'the service is temporarily offline for maintenance');
    const job = pistonJob(msg, pistonRuntimes(await deploymentAvailability(deps.db, deps.config)));
    const compiled = compilerEntry(job.runtime.compiler, deps.config.RUNBOX_RECIPES_DIR)?.compile !== undefined;
    const id = randomUUID();
    let stage: 'compile' | 'run' = compiled ? 'compile' : 'run';
    let announced = false;
    /** The compile stage is over once the program writes: the run stage is announced. */
    const toRun = (compileExit?: { code: number | null; signal: string | null }) => {
      if (stage === 'run') return;
      send({ type: 'exit', stage: 'compile', code: compileExit?.code ?? 0, signal: compileExit?.signal ?? null });
      stage = 'run';
      send({ type: 'stage', stage: 'run' });
    };
    // Output that comes before the runtime and stage messages are out waits for them.
    const held: OutputChunk[] = [];
    const relay = (c: OutputChunk) => {
      toRun();
      send({ type: 'data', stream: c.stream, data: c.data });
    };
    const output = followOutput(deps.live, id, (c) => (announced ? relay(c) : held.push(c)));
    try {
      submissionId = id;
      // Stdin waits in the RunInput until the run is admitted; a refusal drops it.
      const stdin = new RunInput(
        deps.db,
        id,
        job.run.input ?? '',
        (err) => {
          deps.log?.error({ err: err.message, submission: id }, 'could not pass on interactive input');
          send({ type: 'error', message: 'input could not be passed on to the program' });
        },
        new StdinPace(deps.config.RUNBOX_WS_STDIN_WRITES_PER_SECOND),
      );
      input = stdin;
      early.splice(0).forEach((data) => writeStdin(stdin, data));
      const admission = await admitSubmission(deps.db, {
        id,
        accountId: auth.accountId,
        keyId: auth.keyId,
        compiler: job.run.compiler,
        code: job.run.code,
        input: job.run.input,
        tests: null,
        extraParams: null,
        runOptions: { ...(job.run.runOptions ?? {}), interactive: true },
        mode: 'ws',
        ...admissionSettings(deps),
      });
      if (!admission.admitted) {
        stdin.drop();
        finished = true;
        const wait = admission.retryAfterSeconds > 0 ? ` (retry after ${admission.retryAfterSeconds} s)` : '';
        throw new ApiError(429, admission.reason, `${admission.message}${wait}`);
      }
      stdin.admitted();
      send({ type: 'runtime', language: job.runtime.language, version: job.runtime.version });
      send({ type: 'stage', stage });
      announced = true;
      held.splice(0).forEach(relay);
      if (closed.signal.aborted) {
        await cancelSubmission(deps.db, id);
        return;
      }
      try {
        await deps.live.done.waitFor(id, closed.signal);
      } catch {
        return; // the connection is gone; its close handler stopped the run
      }
      finished = true;
      await output.drain();
      const result = await storedResult(deps.db, id, keyAsker(auth), deps.live);
      if (result.status === 'compile_error') {
        const text = result.compile_output ?? result.error;
        if (text) send({ type: 'data', stream: 'stderr', data: text });
        send({ type: 'exit', stage: 'compile', ...exitOf(result) });
      } else {
        toRun();
        send({ type: 'exit', stage: 'run', ...exitOf(result) });
      }
      close(4999, 'Job Completed');
    } finally {
      output.stop();
    }
  }
}

/** How a stage ended, as Piston's exit message says it. */
function exitOf(r: RunResult): { code: number | null; signal: string | null } {
  if (r.status === 'timeout' || r.status === 'memory_limit' || r.status === 'output_limit' || r.status === 'cancelled') {
    return { code: null, signal: 'SIGKILL' };
  }
  const signal = r.signal === null ? null : (SIGNAL_NAMES[r.signal] ?? `SIG${r.signal}`);
  return { code: signal === null ? r.exit_code : null, signal };
}
