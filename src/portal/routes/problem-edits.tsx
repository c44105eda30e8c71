import type Router from '@koa/router';
import { ApiError } from '../../api/errors.js';
import { assertOffered } from '../../api/middleware/admission.js';
import { availabilityCache } from '../../compilers/deployment.js';
import { settingCompilers } from '../../judge/settings.js';
import { compilerForPackageFile } from '../../problems/compilers.js';
import { bufferSource, checkDraft, ProblemInputError, type ProblemDraft } from '../../problems/draft.js';
import { currentDraft, problemOfPackage } from '../../problems/edit.js';
import { openPackage } from '../../problems/package.js';
import { getProblem, saveProblem } from '../../problems/store.js';
import { sha256 } from '../../problems/test-data.js';
import { draftOfForm, FORM_TEST_SLOTS_MAX, testCount, typedText, type ProblemFormValues } from '../problem-form.js';
import { admitPortalProblemWrite } from '../problem-writes.js';
import { sendPage } from '../render.js';
import { field, fieldList, notFound, pageContext, PortalError, type PortalContext, type PortalDeps, type PortalState } from '../state.js';
import { EditProblemPage, NewProblemPage } from '../views/problem-forms.js';

// Problems made and changed in the portal: the new-problem form (also filled in from the
// playground's tests: "Save as problem"), editing one (its next version with the same
// tests), adding or replacing one test (typed or uploaded), uploading a new version, and
// a LaTeX statement's download. Each write is a problem write as the API's (counted
// against PROBLEM_LIMITS.writesPerMinute) and stores through src/problems like it.

export function problemEditRoutes(router: Router<PortalState>, deps: PortalDeps): void {
  const { db, config } = deps;
  const offered = availabilityCache(db, config);
  const compilerIds = async () => [...(await offered())].sort();

  const admitWrite = (c: PortalContext) => admitPortalProblemWrite(db, c);

  /** Stores the draft (a new problem, or the next version of `id`); a refusal in words, or the problem's id. */
  const store = async (c: PortalContext, draft: () => Promise<ProblemDraft>, id?: string): Promise<{ id: string } | { error: string }> => {
    try {
      const d = await draft();
      const available = await offered();
      for (const compiler of settingCompilers(d)) assertOffered(compiler, config.RUNBOX_RECIPES_DIR, available, 'the checker or interactor');
      await admitWrite(c);
      const saved = await saveProblem(db, c.state.session!.accountId, d, id);
      if (!saved) throw notFound();
      return { id: saved.id };
    } catch (err) {
      if (err instanceof ProblemInputError || err instanceof ApiError) return { error: `The problem was not stored: ${err.message}.` };
      throw err;
    }
  };

  const formValues = (c: PortalContext): ProblemFormValues => {
    const body = (c.request as unknown as { body?: Record<string, unknown> }).body ?? {};
    if (field(c, 'from') !== 'playground') return Object.fromEntries(Object.keys(body).map((k) => [k, field(c, k)]));
    // The playground's form: its tests (test_input, test_expected, repeated) as the problem form's slots.
    const inputs = fieldList(c, 'test_input');
    const expected = fieldList(c, 'test_expected');
    const values: ProblemFormValues = { test_count: String(Math.max(1, Math.min(inputs.length, FORM_TEST_SLOTS_MAX))) };
    inputs.slice(0, FORM_TEST_SLOTS_MAX).forEach((input, i) => {
      values[`test_${i + 1}_input`] = input;
      values[`test_${i + 1}_output`] = expected[i] ?? '';
    });
    return values;
  };

  router.get('/problems/new', async (ctx) => {
    const c = ctx as PortalContext;
    sendPage(ctx, <NewProblemPage page={pageContext(c)} values={{}} compilers={await compilerIds()} />);
  });

  router.post('/problems/new', async (ctx) => {
    const c = ctx as PortalContext;
    const values = formValues(c);
    // The playground's "Save as problem" and "Add a test slot" come back to the form, filled in.
    if (field(c, 'from') === 'playground' || field(c, 'more') !== '') {
      const count = testCount(values) + (field(c, 'more') !== '' ? 1 : 0);
      if (count > FORM_TEST_SLOTS_MAX) throw new PortalError(400, `The form takes ${FORM_TEST_SLOTS_MAX} tests; add more on the problem's page once it is saved.`);
      return sendPage(ctx, <NewProblemPage page={pageContext(c)} values={{ ...values, test_count: String(count) }} compilers={await compilerIds()} fromPlayground={field(c, 'from') === 'playground'} />);
    }
    const stored = await store(c, async () => draftOfForm(values));
    if ('error' in stored) return sendPage(ctx, <NewProblemPage page={pageContext(c)} values={values} compilers={await compilerIds()} error={stored.error} />, 400);
    ctx.status = 303;
    ctx.redirect(`/problems/${stored.id}?created=1`);
  });

  const own = async (c: PortalContext) => {
    const d = await currentDraft(db, c.state.session!.accountId, String(c.params['id']));
    if (!d) throw notFound();
    return d;
  };

  /** The form's fields of a stored problem (its name, statement, limits, built-in comparison). */
  const valuesOf = (d: ProblemDraft): ProblemFormValues => {
    const checker = d.checker as { type: string; absolute?: number; relative?: number };
    return {
      name: d.name,
      statement: d.statement?.format === 'markdown' ? d.statement.text : '',
      time: d.limits.time !== undefined ? String(d.limits.time) : '',
      memory: d.limits.memory !== undefined ? String(Math.round(d.limits.memory / 1024)) : '',
      checker: ['lines', 'exact', 'tokens', 'floats', 'unordered_lines'].includes(checker.type) ? checker.type : '',
      ...(checker.absolute !== undefined ? { absolute: String(checker.absolute) } : {}),
      ...(checker.relative !== undefined ? { relative: String(checker.relative) } : {}),
    };
  };
  const keepsProgram = (d: ProblemDraft) => d.checker.type === 'program' || d.interactor !== null || !['lines', 'exact', 'tokens', 'floats', 'unordered_lines'].includes(d.checker.type);

  router.get('/problems/:id/edit', async (ctx) => {
    const c = ctx as PortalContext;
    const d = await own(c);
    sendPage(ctx, <EditProblemPage page={pageContext(c)} id={String(c.params['id'])} values={valuesOf(d)} compilers={await compilerIds()} keepsProgram={keepsProgram(d)} />);
  });

  router.post('/problems/:id/edit', async (ctx) => {
    const c = ctx as PortalContext;
    const id = String(c.params['id']);
    const d = await own(c);
    const values = formValues(c);
    const stored = await store(
      c,
      async () => {
        // The form's settings over the stored tests: a one-test form read for its settings alone.
        const settings = draftOfForm({ ...values, test_count: '1', test_1_input: '', test_1_output: '', test_1_name: 'x' });
        const keep = values['keep_checker'] === '1' && (values['checker'] ?? '') === '';
        const statement = (values['statement'] ?? '').trim() !== '' ? settings.statement : d.statement?.format === 'latex' ? d.statement : undefined;
        return checkDraft({
          ...d,
          name: settings.name,
          statement,
          limits: settings.limits,
          ...(keep ? {} : { checker: settings.checker }),
        });
      },
      id,
    );
    if ('error' in stored) return sendPage(ctx, <EditProblemPage page={pageContext(c)} id={id} values={values} compilers={await compilerIds()} keepsProgram={keepsProgram(d)} error={stored.error} />, 400);
    ctx.status = 303;
    ctx.redirect(`/problems/${id}?edited=1`);
  });

  router.post('/problems/:id/tests', async (ctx) => {
    const c = ctx as PortalContext;
    const id = String(c.params['id']);
    const d = await own(c);
    const file = (name: string) => c.state.uploads?.find((u) => u.field === name && u.filename !== '');
    const content = (typed: string, upload: string) => file(upload)?.content ?? Buffer.from(typedText(field(c, typed)), 'utf8');
    const name = field(c, 'name').trim();
    const stored = await store(
      c,
      async () => {
        if (name === '') throw new ProblemInputError('give the test a name');
        const test = { name, input: bufferSource(content('input', 'input_file')), answer: bufferSource(content('output', 'output_file')), weight: 1, sample: field(c, 'sample') === 'on' };
        const at = d.tests.findIndex((t) => t.name === name);
        const tests = at >= 0 ? d.tests.map((t, i) => (i === at ? { ...test, weight: t.weight, ...(t.validatorArgs ? { validatorArgs: t.validatorArgs } : {}) } : t)) : [...d.tests, test];
        return checkDraft({ ...d, tests });
      },
      id,
    );
    if ('error' in stored) throw new PortalError(400, stored.error);
    ctx.status = 303;
    ctx.redirect(`/problems/${id}?${d.tests.some((t) => t.name === name) ? 'replaced' : 'added'}=${encodeURIComponent(name)}`);
  });

  router.post('/problems/:id/version', async (ctx) => {
    const c = ctx as PortalContext;
    const id = String(c.params['id']);
    await own(c);
    const upload = c.state.upload;
    if (!upload || upload.content.length === 0) throw new PortalError(400, 'Choose a problem package (a zip file) to upload.');
    let close = () => {};
    try {
      const stored = await store(
        c,
        async () => {
          const opened = await openPackage(upload.content, { compilerFor: compilerForPackageFile(await offered(), config.RUNBOX_RECIPES_DIR) });
          close = opened.close;
          return { ...opened.draft, packageHash: sha256(upload.content) };
        },
        id,
      );
      if ('error' in stored) throw new PortalError(400, stored.error);
    } finally {
      close();
    }
    ctx.status = 303;
    ctx.redirect(`/problems/${id}?version=1`);
  });

  router.get('/problems/:id/statement.tex', async (ctx) => {
    const c = ctx as PortalContext;
    const problem = await getProblem(db, c.state.session!.accountId, String(c.params['id']));
    if (!problem?.statement || problem.statement.format !== 'latex') throw notFound();
    ctx.type = 'application/x-tex; charset=utf-8';
    ctx.set('Content-Disposition', 'attachment; filename="problem.tex"');
    ctx.body = problem.statement.text;
  });
}

/** An upload's package already stored as one of the account's problems: that problem, to offer instead. */
export async function storedPackage(deps: PortalDeps, accountId: string, zip: Buffer): Promise<{ id: string; name: string } | undefined> {
  return problemOfPackage(deps.db, accountId, sha256(zip));
}
