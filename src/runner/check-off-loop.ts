import { Worker } from 'node:worker_threads';
import { checkBuiltin, type BuiltinChecker, type CheckData, type CheckResult } from '../judge/checkers/index.js';

// Built-in comparisons of large outputs run in a worker thread: comparing megabytes line
// by line (or hashing 8 MB of lines for unordered_lines) takes tens to hundreds of
// milliseconds, which on the runner's event loop would delay every other slot's timers
// and the leases' heart-beats. Small ones (most) run inline: a message to a thread costs
// more than they do. The data is copied to the thread (it is a view into a larger buffer)
// and the copies handed over, not cloned again. An output identical to its answer (most
// accepted tests) is decided here: those checkers' own first step is a byte comparison
// (memcmp: about 2 ms for 16 MiB), while the copies and the thread's turn took 0.4-0.6 s
// for 16 MiB each way on a loaded two-core host.

/** Output and answer together past which a comparison leaves the event loop. */
const OFF_LOOP_BYTES = 1024 * 1024;

let worker: Worker | null = null;
let seq = 0;
const waiting = new Map<number, { resolve: (r: CheckResult) => void; reject: (e: Error) => void }>();

function thread(): Worker {
  if (worker) return worker;
  const w = new Worker(new URL('./check-thread.js', import.meta.url));
  w.unref();
  w.on('message', (m: { id: number; result?: CheckResult; error?: string }) => {
    const p = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.result) p?.resolve(m.result);
    else p?.reject(new Error(m.error ?? 'the comparison failed'));
  });
  const gone = (err: Error) => {
    worker = null;
    for (const p of waiting.values()) p.reject(err);
    waiting.clear();
  };
  w.on('error', gone);
  w.on('exit', () => gone(new Error('the comparison thread exited')));
  worker = w;
  return w;
}

/** Checkers for which an output identical to the answer is settled by their first byte comparison. */
const DECIDED_BY_BYTES = new Set<BuiltinChecker['type']>(['exact', 'lines', 'tokens', 'unordered_lines']);

export async function compare(checker: BuiltinChecker, data: CheckData): Promise<CheckResult> {
  if (data.output.length + data.answer.length < OFF_LOOP_BYTES) return checkBuiltin(checker, data);
  if (DECIDED_BY_BYTES.has(checker.type) && data.output.equals(data.answer)) return checkBuiltin(checker, data);
  const w = thread();
  const id = ++seq;
  const copy = (b: Buffer) => new Uint8Array(b);
  const done = new Promise<CheckResult>((resolve, reject) => waiting.set(id, { resolve, reject }));
  w.ref();
  // The built-in comparisons do not read the input: it stays here.
  const output = copy(data.output);
  const answer = copy(data.answer);
  w.postMessage({ id, checker, input: new Uint8Array(0), output, answer }, [output.buffer, answer.buffer]);
  try {
    return await done;
  } finally {
    if (waiting.size === 0) worker?.unref();
  }
}
