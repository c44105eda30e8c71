import type Router from '@koa/router';
import { newestFirst } from '../../compilers/order.js';
import { listKeys } from '../../accounts/keys.js';
import { deploymentAvailability } from '../../compilers/deployment.js';
import { problemSummaries } from '../../problems/store.js';
import { PROGRAM_LIMITS } from '../../limits.js';
import { playgroundRequest, newFileName } from '../playground-request.js';
import { playgroundRunner, type PlaygroundOutcome } from '../playground-run.js';
import { sendPage } from '../render.js';
import { baseUrl, field, fieldList, pageContext, type PortalContext, type PortalDeps, type PortalState } from '../state.js';
import { PlaygroundPage, type PlaygroundForm } from '../views/playground.js';

// GET shows the playground with the first compiler's sample. POST is the form itself:
// its buttons add or remove a file or a test (the browser's script does those without
// a round trip), and Run runs it through the chosen key and answers with the page and
// the result (the browser's script posts judged runs so, and shows the result section).

/** Tests a form may carry (a plan bounds a run's tests anyway). */
const TESTS_MAX = 100;

export function playgroundRoutes(router: Router<PortalState>, deps: PortalDeps): void {
  const { db, config } = deps;
  const run = playgroundRunner(deps);

  const load = async (c: PortalContext) => {
    const accountId = c.state.session!.accountId;
    const [compilers, keys, problems] = await Promise.all([deploymentAvailability(db, config), listKeys(db, accountId), problemSummaries(db, accountId)]);
    return { compilers: newestFirst(compilers), keys: keys.filter((k) => k.revoked_at === null && k.kind === 'api'), problems };
  };

  router.get('/playground', async (ctx) => {
    const c = ctx as PortalContext;
    const data = await load(c);
    const first = data.compilers.find((x) => x.available);
    const form: PlaygroundForm | null = first
      ? { keyId: data.keys[0]?.id ?? '', compiler: first.id, source: first.entry.source, files: [{ name: first.entry.source, content: first.entry.hello.code }], main: 0, args: '', options: '', input: '', tests: [], problem: '' }
      : null;
    sendPage(ctx, <PlaygroundPage page={pageContext(c)} {...data} base={baseUrl(ctx, config)} form={form} />);
  });

  router.post('/playground', async (ctx) => {
    const c = ctx as PortalContext;
    const data = await load(c);
    const compiler = data.compilers.find((x) => x.available && x.id === field(c, 'compiler')) ?? data.compilers.find((x) => x.available);
    const names = fieldList(c, 'file_name').slice(0, PROGRAM_LIMITS.filesMax);
    const contents = fieldList(c, 'file_content');
    const inputs = fieldList(c, 'test_input').slice(0, TESTS_MAX);
    const expected = fieldList(c, 'test_expected');
    const form: PlaygroundForm = {
      keyId: field(c, 'key_id'),
      compiler: compiler?.id ?? field(c, 'compiler'),
      source: compiler?.entry.source ?? '',
      files: names.map((name, i) => ({ name, content: contents[i] ?? '' })),
      main: Math.max(0, Math.min(Number.parseInt(field(c, 'main'), 10) || 0, names.length - 1)),
      args: field(c, 'args'),
      options: field(c, 'compiler_options'),
      input: field(c, 'input'),
      tests: inputs.map((input, i) => ({ input, expected: expected[i] ?? '' })),
      problem: field(c, 'problem'),
    };
    if (form.files.length === 0) form.files.push({ name: form.source, content: '' });
    const op = field(c, 'op') || 'run';
    const at = Number.parseInt(op.slice(op.indexOf(':') + 1), 10);
    let outcome: PlaygroundOutcome | undefined;
    if (op === 'add-file' && form.files.length < PROGRAM_LIMITS.filesMax) {
      form.files.push({ name: newFileName(form.files.map((f) => f.name), form.files[form.main]?.name ?? form.source), content: '' });
    } else if (op.startsWith('remove-file:') && form.files.length > 1 && at >= 0 && at < form.files.length) {
      form.files.splice(at, 1);
      if (form.main > at || form.main >= form.files.length) form.main = Math.max(0, form.main - 1);
    } else if (op === 'add-test' && form.tests.length < TESTS_MAX) {
      form.tests.push({ input: '', expected: '' });
    } else if (op.startsWith('remove-test:') && at >= 0 && at < form.tests.length) {
      form.tests.splice(at, 1);
    } else if (op === 'run') {
      const done = await run(ctx.res, c.state.session!.accountId, form.keyId, playgroundRequest(form));
      // The browser went away: nobody to answer (the run was stopped).
      if (done === null) {
        ctx.respond = false;
        return;
      }
      outcome = done;
    }
    sendPage(ctx, <PlaygroundPage page={pageContext(c)} {...data} base={baseUrl(ctx, config)} form={form} outcome={outcome} posted />, outcome && !outcome.ok ? outcome.status : 200);
  });
}
