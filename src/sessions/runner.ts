import type { Db } from '../db/connect.js';
import type { ClaimedJob } from '../queue/job.js';
import type { RunResult } from '../result.js';
import type { SessionStages } from '../runner/execute.js';
import { loadWorkspace, saveWorkspace } from './store.js';

// A session's run on the runner: the job is given the session's workspace (its files
// beside the program, or the file to run as the program), and what the run leaves in
// /box is stored as the workspace before the run's end is recorded, so the caller's next
// request finds it.

export async function runInSession(db: Db, job: ClaimedJob, execute: (job: ClaimedJob, session: SessionStages) => Promise<RunResult>): Promise<RunResult> {
  const how = job.run_options!.session!;
  const workspace = await loadWorkspace(db, how.id);
  const session: SessionStages = { workspace, sandboxMs: 0 };
  let toRun = job;
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
  try {
    return await execute(toRun, session);
  } finally {
    await saveWorkspace(db, how.id, { id: job.id, attempt: job.attempts }, session.left, session.sandboxMs);
  }
}
