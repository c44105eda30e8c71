import { expect } from 'chai';
import { fakeImagesDir, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { Client } from '../helpers/portal-client.js';
import { makeZip } from '../helpers/zip.js';

// Problems made and kept in the portal, over plain HTTP: the form (statement in Markdown,
// limits, comparison, typed tests), the owner's view of every test, editing (the next
// version), a test added and one replaced by an uploaded file, a new version from a
// package, a package already stored, statements from packages (Markdown shown escaped,
// LaTeX offered as a download), and the playground's tests filled into the form.

const PASSWORD = 'a long enough password';
const unescape = (html: string) => html.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#39;/g, "'").replace(/&amp;/g, '&');

describe('problems made in the portal', function () {
  this.timeout(60_000);
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;
  let seq = 0;

  const signUp = async () => {
    const c = new Client(api.url);
    const email = `forms-${process.pid}-${++seq}@example.com`;
    expect((await c.post('/signup', { email, password: PASSWORD })).res.status).to.equal(302);
    const accountId = String((await t.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id);
    return { c, accountId };
  };
  const pkg = (entries: Record<string, string>) => new Blob([new Uint8Array(makeZip(Object.entries(entries).map(([name, content]) => ({ name, content }))))], { type: 'application/zip' });
  const multipart = async (c: Client, path: string, from: string, parts: Record<string, string | { blob: Blob; name: string }>) => {
    const form = new FormData();
    form.append('_csrf', await c.token(from));
    for (const [k, v] of Object.entries(parts)) typeof v === 'string' ? form.append(k, v) : form.append(k, v.blob, v.name);
    return c.request(path, { method: 'POST', body: form });
  };
  const idOf = (location: string | null) => /^\/problems\/([0-9a-f-]{36})\?/.exec(location ?? '')?.[1];

  before(async () => {
    t = await freshDatabase('problem_forms');
    images = fakeImagesDir(['python-3.9.7']);
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock: new TestClock() });
  });
  after(async () => {
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  it('makes a problem from the form: its statement shown as Markdown with nothing of it run as markup, every test shown to its owner, its id to copy', async () => {
    const { c } = await signUp();
    const form = await c.request('/problems/new');
    expect(form.res.status).to.equal(200);
    expect(form.body).to.include('<label for="f-test-1-input">Test 1 input</label>');
    const statement = '# Sum\n\nAdd **two** numbers `a` and `b`.\n\n<script>alert(1)</script>\n\n- one\n- two\n\n[docs](https://example.com/x) [bad](javascript:alert(1))\n';
    const made = await c.post(
      '/problems/new',
      {
        name: 'Sum <two>',
        statement,
        time: '2',
        memory: '64',
        checker: 'floats',
        absolute: '0.001',
        test_count: '3',
        test_1_name: 'sample-1',
        test_1_input: '1 2\n',
        test_1_output: '3\n',
        test_1_sample: 'on',
        test_2_input: '10 20\n',
        test_2_output: '30\n',
        test_3_input: '',
        test_3_output: '',
      },
      '/problems/new',
    );
    expect(made.res.status).to.equal(303);
    const id = idOf(made.res.headers.get('location'))!;
    expect(id).to.be.a('string');
    const page = await c.follow(made);
    expect(page.res.status).to.equal(200);
    expect(page.res.headers.get('content-security-policy')).to.include("script-src 'self'").and.not.include('unsafe-inline');
    expect(page.body).to.include('<h1>Sum &lt;two></h1>');
    // Markdown as markup, raw HTML as text, a javascript: link as text.
    expect(page.body).to.include('<h3>Sum</h3>');
    expect(page.body).to.include('Add <strong>two</strong> numbers <code>a</code> and <code>b</code>.');
    expect(page.body).to.include('<li>one</li><li>two</li>');
    expect(page.body).to.include('<a href="https://example.com/x" rel="nofollow noopener noreferrer">docs</a>');
    expect(page.body).not.to.include('<script>alert(1)</script>').and.not.include('href="javascript:');
    expect(page.body).to.include('<p>&lt;script>alert(1)&lt;/script></p>');
    // The id with a copy button; the second (not a sample) test's data folded, with its sizes.
    expect(page.body).to.match(new RegExp(`<input id="problem-id" type="text" readonly value="${id}"`, 'i'));
    expect(page.body).to.include('data-copy="problem-id"');
    const hidden = /<details class="test-data" data-test-data="2"><summary>([\s\S]*?)<\/summary>([\s\S]*?)<\/details>/.exec(page.body);
    expect(hidden, 'test 2 folded').not.to.equal(null);
    expect(unescape(hidden![1]!)).to.include('input 6 bytes, expected output 3 bytes');
    expect(hidden![2]).to.include('10 20').and.include('30');
    // Stored as the API would: the same problem through GET /api/v2/problems/:id's store.
    const row = await t.db.selectFrom('problem_versions').select(['limits', 'checker', 'statement', 'statement_format']).where('problem_id', '=', id).executeTakeFirstOrThrow();
    expect(row.limits).to.deep.equal({ time: 2, memory: 65536 });
    expect(row.checker).to.deep.equal({ type: 'floats', absolute: 0.001 });
    expect(row.statement_format).to.equal('markdown');
    expect(row.statement).to.equal(statement);
  });

  it('refuses a form without tests, saying why and keeping what was typed; adds a test slot without JavaScript', async () => {
    const { c } = await signUp();
    const refused = await c.post('/problems/new', { name: 'Kept name', statement: 'kept statement', test_count: '3' }, '/problems/new');
    expect(refused.res.status).to.equal(400);
    expect(refused.body).to.match(/role="alert">The problem was not stored: give at least one test/);
    expect(refused.body).to.include('value="Kept name"').and.include('kept statement');
    const bad = await c.post('/problems/new', { name: 'x', time: '999', test_count: '1', test_1_input: 'a', test_1_output: 'b' }, '/problems/new');
    expect(bad.res.status).to.equal(400);
    expect(bad.body).to.include('The problem was not stored:');
    const more = await c.post('/problems/new', { name: 'Growing', test_count: '3', test_1_input: 'typed', more: '1' }, '/problems/new');
    expect(more.res.status).to.equal(200);
    expect(more.body).to.include('Test 4 input').and.include('typed').and.include('value="Growing"');
    expect(await t.db.selectFrom('problems').select('id').where('name', 'in', ['Kept name', 'x', 'Growing']).execute()).to.deep.equal([]);
  });

  it('renames and edits (the next version, same tests), adds a typed test, replaces one with an uploaded file, and lists the versions', async () => {
    const { c } = await signUp();
    const made = await c.post('/problems/new', { name: 'First name', test_count: '1', test_1_name: 'a', test_1_input: '1\n', test_1_output: '1\n' }, '/problems/new');
    const id = idOf(made.res.headers.get('location'))!;
    const edit = await c.request(`/problems/${id}/edit`);
    expect(edit.body).to.include('value="First name"');
    const edited = await c.post(`/problems/${id}/edit`, { name: 'Second name', statement: 'Now with a statement.', checker: 'tokens', time: '', memory: '' }, `/problems/${id}/edit`);
    expect(edited.res.status).to.equal(303);
    expect((await c.follow(edited)).body).to.include('<h1>Second name</h1>').and.include('Now with a statement.').and.include('Saved as the next version.');

    const added = await multipart(c, `/problems/${id}/tests`, `/problems/${id}`, { name: 'b', input: '2\n', output: '2\n' });
    expect(added.res.status).to.equal(303);
    expect(added.res.headers.get('location')).to.equal(`/problems/${id}?added=b`);
    const replaced = await multipart(c, `/problems/${id}/tests`, `/problems/${id}`, {
      name: 'a',
      input_file: { blob: new Blob(['uploaded input\n']), name: 'a.in' },
      output_file: { blob: new Blob(['uploaded answer\n']), name: 'a.ans' },
    });
    expect(replaced.res.status).to.equal(303);
    const page = await c.follow(replaced);
    expect(page.body).to.include('Test a is replaced');
    expect(page.body).to.include('uploaded input').and.include('uploaded answer');
    const versions = [...page.body.matchAll(/<tr data-version="(\d+)"><th scope="row" class="num">([^<]+)<\/th>/g)].map((m) => m[2]);
    expect(versions).to.deep.equal(['4 (current)', '3', '2', '1']);
    const tests = await t.db.selectFrom('problem_tests').select(['name', 'input_size']).where('problem_id', '=', id).where('version', '=', 4).orderBy('ordinal').execute();
    expect(tests).to.deep.equal([
      { name: 'a', input_size: 15 },
      { name: 'b', input_size: 2 },
    ]);
    const v4 = await t.db.selectFrom('problem_versions').select(['checker', 'statement']).where('problem_id', '=', id).where('version', '=', 4).executeTakeFirstOrThrow();
    expect(v4).to.deep.equal({ checker: { type: 'tokens' }, statement: 'Now with a statement.' });
  });

  it('shows a package\'s Markdown statement, offers a LaTeX one as a download, and says when a package is already stored', async () => {
    const { c } = await signUp();
    const files = { 'problem.yaml': 'name: Echo\n', 'problem_statement/problem.md': 'Echo *the* line.\n\n<img src=x onerror=alert(1)>\n', 'data/sample/1.in': 'hi\n', 'data/sample/1.ans': 'hi\n' };
    const first = await multipart(c, '/problems', '/problems', { package: { blob: pkg(files), name: 'echo.zip' } });
    expect(first.res.status).to.equal(303);
    const id = idOf(first.res.headers.get('location'))!;
    const page = await c.follow(first);
    expect(page.body).to.include('Echo <em>the</em> line.');
    expect(page.body).not.to.include('<img src=x');
    const again = await multipart(c, '/problems', '/problems', { package: { blob: pkg(files), name: 'echo-again.zip' } });
    expect(again.res.status).to.equal(200);
    expect(again.body).to.match(new RegExp(`data-field="already-stored">This package is already stored, as <a href="/problems/${id}">Echo</a>`));
    expect(await t.db.selectFrom('problems').select('id').where('name', '=', 'Echo').execute()).to.have.length(1);

    const tex = await multipart(c, '/problems', '/problems', {
      package: { blob: pkg({ 'problem.yaml': 'name: Tex\n', 'problem_statement/problem.en.tex': '\\problemname{Tex}\nSay $x^2$.\n', 'data/sample/1.in': '1\n', 'data/sample/1.ans': '1\n' }), name: 'tex.zip' },
    });
    const texId = idOf(tex.res.headers.get('location'))!;
    const texPage = await c.follow(tex);
    expect(texPage.body).to.include(`<a href="/problems/${texId}/statement.tex" download="problem.tex">download problem.tex</a>`);
    const download = await c.request(`/problems/${texId}/statement.tex`);
    expect(download.res.status).to.equal(200);
    expect(download.res.headers.get('content-disposition')).to.include('problem.tex');
    expect(download.body).to.equal('\\problemname{Tex}\nSay $x^2$.\n');

    // A new version from a package on the problem's page.
    const next = await multipart(c, `/problems/${id}/version`, `/problems/${id}`, {
      package: { blob: pkg({ ...files, 'data/secret/2.in': 'more\n', 'data/secret/2.ans': 'more\n' }), name: 'echo-2.zip' },
    });
    expect(next.res.status).to.equal(303);
    expect((await c.follow(next)).body).to.include('The package is stored as the next version.');
    expect((await t.db.selectFrom('problems').select('version').where('id', '=', id).executeTakeFirstOrThrow()).version).to.equal(2);
  });

  it("fills the form with the playground's tests (Save as problem), and another account's problem is a 404 to every form", async () => {
    const { c } = await signUp();
    await c.follow(await c.post('/keys', { app_name: 'class', kind: 'api' }, '/keys/new'));
    const play = await c.request('/playground');
    expect(play.body).to.match(/<button type="submit" name="from" value="playground"[^>]*formaction="\/problems\/new"/i);
    const token = /name="_csrf" value="([^"]+)"/.exec(play.body)![1]!;
    const body = new URLSearchParams([
      ['_csrf', token],
      ['from', 'playground'],
      ['test_input', '3 4\n'],
      ['test_expected', '7\n'],
      ['test_input', '5 6\n'],
      ['test_expected', '11\n'],
    ]);
    const filled = await c.request('/problems/new', { method: 'POST', body, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(filled.res.status).to.equal(200);
    expect(filled.body).to.include("The playground's tests are filled in below");
    expect(filled.body).to.match(/id="f-test-2-input" name="test_2_input"[^>]*>5 6\n<\/textarea>/);
    expect(filled.body).to.match(/id="f-test-2-output" name="test_2_output"[^>]*>11\n<\/textarea>/);
    expect(filled.body).not.to.include('f-test-3-input');

    const made = await c.post('/problems/new', { name: 'Mine', test_count: '1', test_1_input: '1', test_1_output: '1' }, '/problems/new');
    const id = idOf(made.res.headers.get('location'))!;
    const { c: other } = await signUp();
    expect((await other.request(`/problems/${id}/edit`)).res.status).to.equal(404);
    expect((await other.post(`/problems/${id}/edit`, { name: 'Theirs' }, '/problems/new')).res.status).to.equal(404);
    expect((await multipart(other, `/problems/${id}/tests`, '/problems/new', { name: 'x', input: '1', output: '1' })).res.status).to.equal(404);
    expect((await t.db.selectFrom('problems').select('name').where('id', '=', id).executeTakeFirstOrThrow()).name).to.equal('Mine');
  });
});
