import { parentPort } from 'node:worker_threads';
import { checkBuiltin, type BuiltinChecker } from '../judge/checkers/index.js';

// The worker thread of src/runner/check-off-loop.ts: built-in comparisons of large
// outputs, away from the runner's event loop.

interface Request {
  id: number;
  checker: BuiltinChecker;
  input: Uint8Array;
  output: Uint8Array;
  answer: Uint8Array;
}

const buf = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

parentPort?.on('message', (r: Request) => {
  try {
    const result = checkBuiltin(r.checker, { input: buf(r.input), output: buf(r.output), answer: buf(r.answer) });
    parentPort!.postMessage({ id: r.id, result });
  } catch (err) {
    parentPort!.postMessage({ id: r.id, error: (err as Error).message });
  }
});
