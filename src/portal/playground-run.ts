import type { ServerResponse } from 'node:http';
import { ownerAsker } from '../problems/feedback.js';
import { findKeyById } from '../accounts/accounts.js';
import { ApiError } from '../api/errors.js';
import { storedResult, waitForRunEnd } from '../api/live.js';
import { MaintenanceFlag } from '../api/maintenance.js';
import { judgedProgram, requestJudging, requestProgram, runAdmitter } from '../api/middleware/admission.js';
import { validate } from '../api/middleware/json-body.js';
import { RunCodeRequest } from '../api/schemas.js';
import { judgedTests, type JudgedTestView } from '../judge/submission-tests.js';
import type { RunResult } from '../result.js';
import { inFormWords, type PlaygroundRequest } from './playground-request.js';
import type { PortalDeps } from './state.js';

// A playground run made by the portal itself, for the form posted without JavaScript
// and for judged runs (tests with expected outputs, a stored problem): the same checks
// and admission as POST /api/v2/run-code-sync/ (the request schema, the program's and
// the judging's rules, the account's limits), through the key the person chose, which
// must be one of their active API keys (their session vouches for it, as for the
// playground's WebSocket). The run counts against that key like any other.

export type PlaygroundOutcome =
  | { ok: true; submissionId: string; result: RunResult; tests: JudgedTestView[] | undefined }
  | { ok: false; status: number; message: string };

export function playgroundRunner(deps: PortalDeps) {
  const admit = runAdmitter(deps);
  const maintenance = new MaintenanceFlag(deps.db, deps.maintenanceCacheMs);
  /** Runs `request`; null when the browser went away before the end (the run is then stopped). */
  return async (res: ServerResponse, accountId: string, keyId: string, request: PlaygroundRequest): Promise<PlaygroundOutcome | null> => {
    const refused = (status: number, message: string) => ({ ok: false as const, status, message });
    const key = /^[1-9][0-9]{0,17}$/.test(keyId) ? await findKeyById(deps.db, keyId) : undefined;
    if (!key || key.accountId !== accountId || key.revoked || key.kind !== 'api') return refused(400, 'Choose one of your API keys.');
    if (await maintenance.isOn()) return refused(503, 'The service is temporarily offline for maintenance.');
    let submission: { id: string; admittedAt: number };
    try {
      const body = validate<RunCodeRequest>(RunCodeRequest, request);
      const program = requestProgram(body, body.compiler, deps.config.RUNBOX_RECIPES_DIR);
      const judging = await requestJudging(deps, accountId, body);
      if (!deps.live) return refused(503, 'Runs are not available on this server process.');
      submission = await admit(key, { compiler: body.compiler, ...judgedProgram(program, judging, body), extraParams: null }, 'sync');
    } catch (err) {
      if (err instanceof ApiError) return refused(err.status, inFormWords(err.message));
      throw err;
    }
    const live = deps.live!;
    if (!(await waitForRunEnd(res, live, submission.id, deps.db, deps.log, submission.admittedAt))) return null;
    const result = await storedResult(deps.db, submission.id, ownerAsker(accountId), live);
    const tests = result.verdict !== undefined ? await judgedTests(deps.db, ownerAsker(accountId), submission.id) : undefined;
    return { ok: true, submissionId: submission.id, result, tests };
  };
}
