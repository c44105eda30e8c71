import { Compile } from 'typebox/compile';
import { KERNEL_LIMITS } from '../limits.js';
import { decodeBase64 } from '../program/program.js';
import { KernelResultSchema, type KernelResult, type RunResult } from '../result.js';
import type { StageFile } from '../sandbox/spec.js';
import { KERNEL_CELL, KERNEL_DIR, KERNEL_DRIVER, KERNEL_DRIVER_SOURCE, KERNEL_RESULT, KERNEL_STATE } from './kernel-driver.js';

// A kernel session's cell on the runner's side: each cell is a fresh sandbox (as any
// session run) running the driver (kernel-driver.ts) over the workspace, whose
// .kernel/state.pickle carries the kernel's state from one cell to the next. The result
// file the driver writes is read as untrusted input: the cell's own code could have
// written it, so it is bounded, checked against its schema and otherwise ignored.

/** Whether a compiler can run a kernel: the driver is Python 3. */
export function kernelInterpreter(entry: { language: string; run: string[] }): string | undefined {
  const first = entry.run[0];
  return entry.language === 'python' && first !== undefined && /\/python3(\.\d+)?$/.test(first) ? first : undefined;
}

/** The argv a cell runs as: the interpreter on the driver, with the kernel's bounds. */
export function kernelCommand(interpreter: string): string[] {
  const l = KERNEL_LIMITS;
  return [interpreter, KERNEL_DRIVER, String(l.stateBytes), String(l.valueChars), String(l.imagesMax), String(l.imageBytes)];
}

/** The workspace a cell starts with: the session's files (of .kernel/ only its state), the driver and the cell. */
export function cellWorkspace(workspace: StageFile[], cell: string): StageFile[] {
  return [
    ...workspace.filter((f) => !f.name.startsWith(`${KERNEL_DIR}/`) || f.name === KERNEL_STATE),
    { name: KERNEL_DRIVER, mode: 0o644, content: Buffer.from(KERNEL_DRIVER_SOURCE, 'utf8') },
    { name: KERNEL_CELL, mode: 0o644, content: Buffer.from(cell, 'utf8') },
  ];
}

const checkResult = Compile(KernelResultSchema);

/**
 * What a cell left: the workspace to keep (of .kernel/ only the state the driver wrote
 * once the cell had ended) and the cell's result, or the reason it has none. The driver
 * always leaves a state, so none came back only when it was past the workspace's
 * bounds: the state from before the cell (`before`) is kept then.
 */
export function cellOutcome(
  left: StageFile[] | undefined,
  run: Pick<RunResult, 'status' | 'exit_code' | 'signal'>,
  before?: StageFile[],
): { keep: StageFile[] | undefined; kernel: KernelResult } {
  const kept = left?.filter((f) => !f.name.startsWith(`${KERNEL_DIR}/`) || f.name === KERNEL_STATE);
  const earlier = before?.find((f) => f.name === KERNEL_STATE);
  const keep = kept && earlier && !kept.some((f) => f.name === KERNEL_STATE) ? [earlier, ...kept] : kept;
  const file = left?.find((f) => f.name === KERNEL_RESULT);
  const parsed = file && file.content.length <= KERNEL_LIMITS.resultBytes ? parseResult(file.content) : undefined;
  if (parsed) return { keep, kernel: parsed };
  const ended =
    run.status === 'timeout'
      ? { name: 'Timeout', message: "the cell was ended by the run's time limit; the kernel keeps its state from before the cell" }
      : {
          name: 'KernelDied',
          message: `the interpreter ended before the cell finished (${run.signal ? `signal ${run.signal}` : `status ${run.status}, exit code ${run.exit_code ?? 'none'}`}); the kernel keeps its state from before the cell`,
        };
  return { keep, kernel: { value: null, images: [], error: ended, not_kept: [] } };
}

function parseResult(content: Buffer): KernelResult | undefined {
  let value: unknown;
  try {
    value = JSON.parse(content.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!checkResult.Check(value)) return undefined;
  const r = value as KernelResult;
  const l = KERNEL_LIMITS;
  // Within the driver's own bounds, and figures named as it names them; anything else is not its result.
  if (r.value !== null && r.value.length > l.valueChars + 3) return undefined;
  if (r.images.length > l.imagesMax || r.images.some((i) => !/^figure-\d{1,6}\.png$/.test(i.name) || i.content_base64.length > Math.ceil(l.imageBytes / 3) * 4 || !isPng(i.content_base64))) return undefined;
  if (r.error && (r.error.name.length > 200 || r.error.message.length > 4096 + 3)) return undefined;
  return {
    value: r.value,
    images: r.images.map((i) => ({ name: i.name, content_base64: i.content_base64 })),
    error: r.error ? { name: r.error.name, message: r.error.message } : null,
    not_kept: r.not_kept.slice(0, l.notKeptMax).map((n) => ({ name: n.name.slice(0, 200), reason: n.reason.slice(0, 600) })),
  };
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const isPng = (base64: string) => decodeBase64(base64)?.subarray(0, 8).equals(PNG) === true;
