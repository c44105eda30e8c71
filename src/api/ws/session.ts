import { randomUUID } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import { KEY_REFUSALS, RevokedKeyError } from '../../accounts/errors.js';
import type { KeyContext } from '../../accounts/accounts.js';
import { WEBSOCKET_RUNS_PER_SECOND } from '../../limits.js';
import { cancelSubmission } from '../../queue/cancel.js';
import { admitSubmission } from '../../quota/admit.js';
import { compilerEntry } from '../../compilers/catalogue.js';
import { admissionSettings, judgedProgram, rawExtraParams, requestJudging, requestProgram } from '../middleware/admission.js';
import { ApiError } from '../errors.js';
import type { ApiDeps } from '../route.js';
import { storedResultJson, type LiveResults } from '../live.js';
import { keyAsker, shownTo } from '../../problems/feedback.js';
import type { MaintenanceFlag } from '../maintenance.js';
import { followOutput } from './follow-output.js';
import { RESTARTING_MESSAGE, SERVICE_RESTART, SERVICE_RESTART_REASON, type Draining } from './drain.js';
import { parseClientMessage, type WsProblemMessage, type WsRunMessage, type WsStdinMessage } from './messages.js';
import { problemAnswer } from './problem-message.js';
import { RunInput, StdinPace } from './run-input.js';
import { widgetRefusalText } from './widget-text.js';

// One WebSocket connection: each run message is admitted like any run (mode 'ws'),
// its output is relayed as the runner publishes it, in order, and the result follows.
// A bad message or a refused run is answered with an error message; the connection
// stays open. Closing it stops the runs still going (src/queue/cancel.ts). An
// interactive run also takes stdin messages naming its id while it goes
// (src/api/ws/run-input.ts); a stdin message for anything else is answered with an error.
// When the API process stops, the connection closes with 1012 once its runs have ended
// (src/api/ws/drain.ts).

/** Ids of ended runs remembered per connection, so stdin sent to one is told it ended. */
const REMEMBERED_ENDED = 100;

export interface SessionDeps extends ApiDeps {
  live: LiveResults;
  maintenance: MaintenanceFlag;
  available: () => Promise<Set<string>>;
  /** The API process is stopping: close when no run is going, refuse new runs. */
  draining: Draining;
}

export function startSession(ws: WebSocket, auth: KeyContext, deps: SessionDeps): void {
  const closed = new AbortController();
  let lastRunAt = -Infinity;
  const maxUnread = deps.config.RUNBOX_WS_MAX_UNREAD_BYTES;
  const sendText = (text: string) => {
    if (ws.readyState !== ws.OPEN) return;
    // A client that does not read its output would have it buffered here without end:
    // past the bound nothing more is sent, and the connection is dropped at once
    // (a close frame would only queue behind what it does not read).
    if (ws.bufferedAmount > maxUnread) {
      deps.log?.info?.({ key: auth.keyId, unread: ws.bufferedAmount }, 'WebSocket client does not read its output; connection closed');
      ws.terminate();
      return;
    }
    ws.send(text);
  };
  const send = (m: object) => sendText(JSON.stringify(m));
  const error = (id: string | null, code: string, message: string, extra: object = {}) => send({ type: 'error', id, code, message, ...extra });
  /** The key was revoked while the connection was open: said once, then closed. */
  const revoked = (id: string | null) => {
    error(id, 'invalid_key', KEY_REFUSALS.revoked);
    ws.close(1008, 'key revoked');
  };

  /** Runs started on this connection and not yet answered (admission included). */
  let running = 0;

  // Liveness: each ping must be answered (pong) before the next one, or the peer is
  // gone and the connection is dropped. Idle: no message from the client and no run
  // going for RUNBOX_WS_IDLE_MS, checked at each ping; closed normally (1000).
  let answered = true;
  let lastHeardAt = performance.now();
  ws.on('pong', () => (answered = true));
  const heartbeat = setInterval(() => {
    if (ws.readyState !== ws.OPEN) return;
    if (!answered) return ws.terminate();
    if (running === 0 && performance.now() - lastHeardAt >= deps.config.RUNBOX_WS_IDLE_MS) {
      return ws.close(1000, 'idle');
    }
    answered = false;
    ws.ping();
  }, deps.config.RUNBOX_WS_PING_MS);
  heartbeat.unref();

  // A malformed frame (unmasked, bad UTF-8, reserved bits, over maxPayload) is an
  // 'error' here: ws has already closed this connection with the matching code
  // (1002, 1007, 1009). Without a listener it would be thrown and end the process.
  ws.on('error', (err) => deps.log?.info?.({ err: err.message }, 'WebSocket connection closed on a protocol error'));
  // Runs admitted on this connection and not yet answered.
  const inFlight = new Set<string>();
  // Client run ids of the runs going (admission included), and the interactive ones' stdin.
  const going = new Map<string, number>();
  const inputs = new Map<string, RunInput>();
  const ended = new Set<string>();
  const pace = new StdinPace(deps.config.RUNBOX_WS_STDIN_WRITES_PER_SECOND);
  // A stopping API closes the connection as soon as its runs have ended (at once when idle).
  const restartWhenIdle = () => {
    if (running === 0 && ws.readyState === ws.OPEN) ws.close(SERVICE_RESTART, SERVICE_RESTART_REASON);
  };
  const stopWatchingDrain = deps.draining.whenDraining(restartWhenIdle);
  ws.on('close', () => {
    stopWatchingDrain();
    clearInterval(heartbeat);
    closed.abort(new Error('connection closed'));
    for (const id of inFlight) {
      cancelSubmission(deps.db, id).catch((e: Error) => deps.log?.error({ err: e.message, submission: id }, 'could not cancel a run'));
    }
  });
  ws.on('message', (data, isBinary) => {
    lastHeardAt = performance.now();
    // Whatever goes wrong with one message is said on this connection; an exception
    // thrown out of this listener would end the whole process.
    try {
      onMessage(data, isBinary);
    } catch (err) {
      deps.log?.error({ err: (err as Error).stack ?? String(err) }, 'WebSocket message failed');
      error(null, 'internal_error', 'the message could not be handled; try again later');
    }
  });

  function onMessage(data: RawData, isBinary: boolean): void {
    if (isBinary) return error(null, 'bad_request', 'messages must be text (JSON)');
    const text = data.toString('utf8');
    const parsed = parseClientMessage(text, deps.config.RUNBOX_RECIPES_DIR);
    if (!parsed.ok) return error(parsed.id, 'bad_request', parsed.message);
    if (parsed.message.type === 'stdin') return onStdin(parsed.message);
    if (parsed.message.type === 'problem') return onProblem(parsed.message);
    const msg = parsed.message;
    // Stdin messages name their run by the client's id: it must say which run.
    if (inputs.has(msg.id) || (msg.interactive === true && going.has(msg.id))) {
      return error(msg.id, 'bad_request', `run id ${JSON.stringify(msg.id)} belongs to a run still going on this connection; an interactive run needs an id of its own`);
    }
    if (deps.draining.active) {
      if (auth.kind === 'widget') return error(msg.id, 'codeoutput', RESTARTING_MESSAGE, { reason: 'unavailable' });
      return error(msg.id, 'unavailable', RESTARTING_MESSAGE);
    }
    const successor = compilerEntry(parsed.message.compiler, deps.config.RUNBOX_RECIPES_DIR)?.retired?.successor;
    if (successor) return error(parsed.message.id, 'compiler_unavailable', `compiler ${parsed.message.compiler} is retired; use ${successor} instead`);
    const now = performance.now();
    if (now - lastRunAt < 1000 / WEBSOCKET_RUNS_PER_SECOND) {
      if (auth.kind === 'widget') return error(parsed.message.id, 'codeoutput', widgetRefusalText('connection_rate', 1), { reason: 'rate_limited' });
      return error(parsed.message.id, 'rate_limited', `at most ${WEBSOCKET_RUNS_PER_SECOND} run per second per connection`);
    }
    lastRunAt = now;
    running++;
    going.set(msg.id, (going.get(msg.id) ?? 0) + 1);
    const submissionId = randomUUID();
    // Stdin may follow the run message at once: it waits here until the run is admitted,
    // then is stored for the runner, which reads it back when the program starts.
    let input: RunInput | undefined;
    if (msg.interactive === true) {
      input = new RunInput(
        deps.db,
        submissionId,
        msg.input ?? '',
        (err) => {
          deps.log?.error({ err: err.message, submission: submissionId }, 'could not pass on interactive input');
          error(msg.id, 'internal_error', 'input could not be passed on to the program; try again later');
        },
        pace,
      );
      inputs.set(msg.id, input);
    }
    run(msg, text, submissionId, input)
      .catch((err: Error) => {
        if (err instanceof RevokedKeyError) return revoked(parsed.message.id);
        deps.log?.error({ err: err.stack ?? err.message }, 'WebSocket run failed');
        error(parsed.message.id, 'internal_error', 'the run could not be completed; try again later');
      })
      .finally(() => {
        // A run that never reached admission, or was refused, stores none of its stdin.
        input?.drop();
        running--;
        lastHeardAt = performance.now();
        const left = (going.get(msg.id) ?? 1) - 1;
        if (left > 0) going.set(msg.id, left);
        else going.delete(msg.id);
        inputs.delete(msg.id);
        ended.add(msg.id);
        if (ended.size > REMEMBERED_ENDED) ended.delete(ended.values().next().value as string);
        if (deps.draining.active) restartWhenIdle();
      });
  }

  function onProblem(m: WsProblemMessage): void {
    problemAnswer(deps.db, auth.accountId, m)
      .then((answer) => (answer ? send(answer) : error(m.id, 'not_found', `no problem ${m.problem}`)))
      .catch((err: Error) => {
        deps.log?.error({ err: err.stack ?? err.message }, 'WebSocket problem message failed');
        error(m.id, 'internal_error', 'the problem could not be read; try again later');
      });
  }

  function onStdin(m: WsStdinMessage): void {
    const name = JSON.stringify(m.id);
    const input = inputs.get(m.id);
    if (!input) {
      if (going.has(m.id)) return error(m.id, 'not_interactive', `run ${name} is not interactive: its run message must say "interactive": true to take stdin messages`);
      if (ended.has(m.id)) return error(m.id, 'run_finished', `run ${name} has finished; it takes no more input`);
      return error(m.id, 'unknown_run', `no run ${name} is going on this connection`);
    }
    const refused = input.write(m.data, m.eof === true);
    if (!refused) return;
    if (refused.reason === 'stdin_closed') return error(m.id, 'stdin_closed', `the stdin of run ${name} is closed (its end was sent, or its input reached the limit); it takes no more input`);
    error(
      m.id,
      'input_limit',
      `the stdin of run ${name} may hold at most ${refused.limit} bytes, its input included (with this message: ${refused.wouldBe}); this message was not passed on and its stdin is now closed`,
    );
  }

  async function run(msg: WsRunMessage, raw: string, submissionId: string, input: RunInput | undefined): Promise<void> {
    if (await deps.maintenance.isOn()) return error(msg.id, 'maintenance', 'the service is temporarily offline for maintenance');
    if (!(await deps.available()).has(msg.compiler)) return error(msg.id, 'compiler_unavailable', `compiler ${msg.compiler} is not installed on this service`);

    let program: ReturnType<typeof judgedProgram>;
    try {
      if (msg.interactive === true && (msg.expected_output !== undefined || msg.checker !== undefined || msg.problem !== undefined)) {
        throw new ApiError(400, 'invalid_request', 'an interactive run is not judged: leave out expected_output, checker and problem');
      }
      const judging = await requestJudging(deps, auth.accountId, { input: msg.input, expected_output: msg.expected_output, checker: msg.checker, problem: msg.problem });
      program = judgedProgram(requestProgram(msg, msg.compiler, deps.config.RUNBOX_RECIPES_DIR), judging, msg);
      for (const compiler of program.judgeCompilers ?? []) {
        if (!(await deps.available()).has(compiler)) throw new ApiError(400, 'compiler_unavailable', `compiler ${compiler} (of the checker) is not installed on this service`);
      }
    } catch (err) {
      if (err instanceof ApiError) return error(msg.id, err.code === 'compiler_unavailable' ? err.code : 'bad_request', `invalid run message: ${err.message}`);
      throw err;
    }
    const runOptions = msg.interactive === true ? { ...program.runOptions, interactive: true } : program.runOptions;
    // A stored problem's tests under a withholding feedback: no live output at all (a
    // hidden test's would show what the program made of its input); the result says
    // what the feedback allows.
    const judged = program.runOptions?.judge?.problem;
    const live = !judged || (await shownTo(deps.db, keyAsker(auth), judged)).feedback === 'full';
    // Listening before the submission exists: no output can be missed.
    const output = followOutput(deps.live, submissionId, (c) => (live ? send({ type: 'output', id: msg.id, ...c }) : undefined));
    try {
      const admission = await admitSubmission(deps.db, {
        id: submissionId,
        accountId: auth.accountId,
        keyId: auth.keyId,
        compiler: msg.compiler,
        code: program.code,
        input: msg.input ?? null,
        tests: null,
        extraParams: msg.extra_params ?? null,
        ...(msg.extra_params !== undefined ? rawExtraParams(raw) : {}),
        ...(runOptions ? { runOptions } : {}),
        mode: 'ws',
        ...admissionSettings(deps),
      });
      if (!admission.admitted) {
        // A widget shows any refusal (its key's own limit, any account limit) as a
        // codeoutput error in its output region, in words for the page's reader (spec 6.2).
        if (auth.kind === 'widget') {
          const text = widgetRefusalText(admission.reason, admission.retryAfterSeconds);
          return error(msg.id, 'codeoutput', text, { reason: admission.reason, retry_after: admission.retryAfterSeconds });
        }
        return error(msg.id, admission.reason, admission.message, { retry_after: admission.retryAfterSeconds });
      }
      input?.admitted();
      try {
        inFlight.add(submissionId);
        // Closed while admitting: the close handler did not see this run.
        if (closed.signal.aborted) {
          await cancelSubmission(deps.db, submissionId);
          return;
        }
        await deps.live.done.waitFor(submissionId, closed.signal);
      } catch {
        return; // the connection is gone; its close handler stops the run
      } finally {
        inFlight.delete(submissionId);
      }
      // Whatever notifications missed (the listener reconnected meanwhile) comes from the store.
      await output.drain();
      // The result's own id is the submission's: here it is the client's run id, and submission_id follows.
      const result = await storedResultJson(deps.db, submissionId, keyAsker(auth), {
        first: [
          ['type', 'result'],
          ['id', msg.id],
        ],
        omit: ['id'],
        last: [['submission_id', submissionId]],
      }, deps.live);
      sendText(result);
    } finally {
      output.stop();
    }
  }
}
