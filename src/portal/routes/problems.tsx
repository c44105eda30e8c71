import type Router from '@koa/router';
import { availabilityCache } from '../../compilers/deployment.js';
import { listGraded } from '../../grading/list.js';
import { problemVersions, testContents } from '../../problems/edit.js';
import { sha256 } from '../../problems/test-data.js';
import { changeNotices } from '../problem-notices.js';
import type { Notice } from '../views/layout.js';
import { storedPackage } from './problem-edits.js';
import { compilerForPackageFile } from '../../problems/compilers.js';
import { ProblemInputError } from '../../problems/draft.js';
import { openPackage } from '../../problems/package.js';
import { FEEDBACK_SETTINGS, type Feedback } from '../../problems/feedback.js';
import { deleteProblem, getProblem, listProblems, saveProblem, setProblemSettings, type ProblemSettings } from '../../problems/store.js';
import { admitPortalProblemWrite } from '../problem-writes.js';
import { runAdmitter } from '../../api/middleware/admission.js';
import { advanceChecks, checkView, findCheck, startVerification } from '../../api/problem-checks.js';
import { ApiError } from '../../api/errors.js';
import { sendPage } from '../render.js';
import { field, notFound, pageContext, PortalError, type PortalContext, type PortalDeps, type PortalState } from '../state.js';
import { DeleteProblemPage, ProblemPage, ProblemsPage } from '../views/problems.js';

// Stored problems: the list, uploading a package (the same reading and storing as
// POST /api/v2/problems with a zip: src/problems), one problem, and deleting it.
// Another account's problem is a 404.

/** Submissions a problem's page lists (newest first). */
const PROBLEM_PAGE_SUBMISSIONS = 20;

export function problemRoutes(router: Router<PortalState>, deps: PortalDeps): void {
  const { db, config } = deps;
  const offered = availabilityCache(db, config);
  const admit = runAdmitter(deps);

  /** The problem's newest check of `kind`, advanced first; undefined when it has none. */
  const latest = async (c: PortalContext, kind: 'verify' | 'rejudge') => {
    const id = await findCheck(db, c.state.session!.accountId, String(c.params['id']), kind);
    if (!id) return undefined;
    await advanceChecks(db, admit, config.RUNBOX_RECIPES_DIR, id);
    return checkView(db, id);
  };

  const own = async (c: PortalContext) => {
    const problem = await getProblem(db, c.state.session!.accountId, String(c.params['id']));
    if (!problem) throw notFound();
    return problem;
  };

  /** Counts a problem write (as the API does); 429 with Retry-After past the per-minute bound. */
  const admitWrite = (c: PortalContext) => admitPortalProblemWrite(db, c);

  /** The form's feedback and public fields (an upload without them: full, private). */
  const settingsOf = (c: PortalContext): ProblemSettings => {
    const feedback = field(c, 'feedback') || 'full';
    if (!(FEEDBACK_SETTINGS as readonly string[]).includes(feedback)) throw new PortalError(400, 'Choose what others see of a run.');
    return { feedback: feedback as Feedback, public: field(c, 'public') !== '' };
  };

  const list = async (c: PortalContext, error?: string, already?: { id: string; name: string }) => {
    const { problems, storage } = await listProblems(db, c.state.session!.accountId);
    const notices = c.query['deleted'] ? [{ kind: 'ok' as const, text: 'The problem is deleted.' }] : [];
    sendPage(c, <ProblemsPage page={pageContext(c)} problems={problems} storage={storage} error={error} notices={notices} already={already} />, error ? 400 : 200);
  };

  router.get('/problems', async (ctx) => list(ctx as PortalContext));

  router.post('/problems', async (ctx) => {
    const c = ctx as PortalContext;
    const upload = c.state.upload;
    if (!upload || upload.content.length === 0) return list(c, 'Choose a problem package (a zip file) to upload.');
    await admitWrite(c);
    // The same package again: said, and the problem it is offered (nothing stored twice).
    const already = await storedPackage(deps, c.state.session!.accountId, upload.content);
    if (already) return list(c, undefined, already);
    let id: string;
    try {
      const { draft, close } = await openPackage(upload.content, { compilerFor: compilerForPackageFile(await offered(), config.RUNBOX_RECIPES_DIR) });
      try {
        id = (await saveProblem(db, c.state.session!.accountId, { ...draft, packageHash: sha256(upload.content) }, undefined, settingsOf(c)))!.id;
      } finally {
        close();
      }
    } catch (err) {
      if (err instanceof ProblemInputError) return list(c, `The package was not stored: ${err.message}.`);
      throw err;
    }
    ctx.status = 303;
    ctx.redirect(`/problems/${id}?created=1`);
  });

  router.get('/problems/:id', async (ctx) => {
    const c = ctx as PortalContext;
    const notices: Notice[] = [...(ctx.query['created'] ? [{ kind: 'ok' as const, text: 'The problem is stored.' }] : []), ...changeNotices(ctx.query)];
    const problem = await own(c);
    const owner = { tests: await testContents(db, c.state.session!.accountId, problem.id), versions: await problemVersions(db, c.state.session!.accountId, problem.id) };
    // Its newest submissions, as the grading list shows them (the whole list: /submissions?problem=ID).
    const submissions = await listGraded(db, c.state.session!.accountId, { problem: problem.id }, { limit: PROBLEM_PAGE_SUBMISSIONS });
    sendPage(ctx, <ProblemPage page={pageContext(c)} problem={problem} notices={notices} submissions={submissions} owner={owner} verification={await latest(c, 'verify')} rejudge={await latest(c, 'rejudge')} />);
  });

  // Verify: the example submissions judged in the background, as POST /api/v2/problems/{id}/verify does (the account's own runs, no key).
  router.post('/problems/:id/verify', async (ctx) => {
    const c = ctx as PortalContext;
    const problem = await own(c);
    let check: string | undefined;
    try {
      check = await startVerification(db, { accountId: c.state.session!.accountId, keyId: null }, problem.id);
    } catch (err) {
      if (err instanceof ApiError) throw new PortalError(err.status, err.message);
      throw err;
    }
    if (!check) throw notFound();
    await advanceChecks(db, admit, config.RUNBOX_RECIPES_DIR, check);
    ctx.status = 303;
    ctx.redirect(`/problems/${problem.id}?verifying=1#verify`);
  });

  router.post('/problems/:id/settings', async (ctx) => {
    const c = ctx as PortalContext;
    const settings = settingsOf(c);
    await admitWrite(c);
    const view = await setProblemSettings(db, c.state.session!.accountId, String(c.params['id']), settings);
    if (!view) throw notFound();
    ctx.status = 303;
    ctx.redirect(`/problems/${view.id}?saved=1`);
  });

  router.get('/problems/:id/delete', async (ctx) => {
    const c = ctx as PortalContext;
    sendPage(ctx, <DeleteProblemPage page={pageContext(c)} problem={await own(c)} />);
  });

  router.post('/problems/:id/delete', async (ctx) => {
    const c = ctx as PortalContext;
    await admitWrite(c);
    if (!(await deleteProblem(db, c.state.session!.accountId, String(c.params['id'])))) throw notFound();
    ctx.status = 303;
    ctx.redirect('/problems?deleted=1');
  });
}
