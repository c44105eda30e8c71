import type { Db } from '../db/connect.js';
import type { ClaimedJob } from '../queue/job.js';
import type { RunResult } from '../result.js';
import type { SessionStages } from '../runner/execute.js';
import { cellOutcome, cellWorkspace } from './kernel.js';
import { loadWorkspace, saveWorkspace } from './store.js';

// A session's run on the runner: the job is given the session's workspace (its files
// beside the program, or the file to run as the program), and what the run leaves in
// /box is stored as the workspace before the run's end is recorded, so the caller's next
// request finds it. A kernel's cell is its driver run as a command over the workspace
// (src/sessions/kernel.ts); the cell's result is read from what it left.

/** Statuses of a run the sandbox stopped: it brings nothing back from /box, which is no sign the program emptied it. */
const STOPPED = new Set<RunResult['status']>(['timeout', 'memory_limit', 'output_limit', 'process_limit', 'internal_error', 'cancelled']);

/** What of a run's /box becomes the workspace: undefined (as it was) when the sandbox stopped the run. */
const leftBy = (result: RunResult | undefined, left: SessionStages['left']) => (result && !STOPPED.has(result.status) ? left : undefined);

export async function runInSession(db: Db, job: ClaimedJob, execute: (job: ClaimedJob, session: SessionStages) => Promise<RunResult>): Promise<RunResult> {
  const how = job.run_options!.session!;
  const workspace = await loadWorkspace(db, how.id);
  const session: SessionStages = { workspace, sandboxMs: 0 };
  let toRun = job;
  if (how.run === 'cell') return runCell(db, job, workspace, execute);
  if (how.run !== 'command') {
    // The recipe builds the workspace's sources with the program (every .c of a C program, the module path of Python).
    const others = workspace.filter((f) => f.name !== how.file).map((f) => ({ name: f.name, content_base64: f.content.toString('base64') }));
    const main = how.run === 'file' ? workspace.find((f) => f.name === how.file) : undefined;
    toRun = {
      ...job,
      ...(main ? { code: main.content.toString('utf8') } : {}),
      run_options: { ...job.run_options, ...(main ? { main: main.name } : {}), files: [...(job.run_options?.files ?? []), ...others] },
    };
  }
  let result: RunResult | undefined;
  try {
    result = await execute(toRun, session);
    return result;
  } finally {
    await saveWorkspace(db, how.id, { id: job.id, attempt: job.attempts }, leftBy(result, session.left), session.sandboxMs);
  }
}

async function runCell(db: Db, job: ClaimedJob, workspace: SessionStages['workspace'], execute: (job: ClaimedJob, session: SessionStages) => Promise<RunResult>): Promise<RunResult> {
  const how = job.run_options!.session!;
  const session: SessionStages = { workspace: cellWorkspace(workspace, job.code), sandboxMs: 0 };
  let keep: SessionStages['left'];
  try {
    const result = await execute({ ...job, run_options: { ...job.run_options, session: { ...how, run: 'command' } } }, session);
    const outcome = cellOutcome(session.left, result, workspace);
    keep = leftBy(result, outcome.keep);
    return { ...result, kernel: outcome.kernel };
  } finally {
    await saveWorkspace(db, how.id, { id: job.id, attempt: job.attempts }, keep, session.sandboxMs);
  }
}
