import { expect } from 'chai';
import { readManifest } from '../../src/compilers/availability.js';
import { loadConfig } from '../../src/config.js';
import { JOBE_FILE_CACHE } from '../../src/limits.js';
import { keyFor, postJson, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';

// The Jobe-compatible route (Moodle CodeRunner's server) end to end: real API, runner,
// sandbox and PostgreSQL, driven the way CodeRunner drives Jobe (X-API-KEY, run_spec,
// PUT files then file_list, 404 when a file is gone). The cases follow Jobe's REST API
// document and the behaviour of its language tasks; they are written for runbox.

const BASE = '/jobe/index.php/restapi';
const gccImage = () => readManifest(loadConfig().RUNBOX_IMAGES_DIR, 'gcc');

interface JobeResult {
  run_id: string | null;
  outcome: number;
  cmpinfo: string;
  stdout: string;
  stderr: string;
}

describe('Jobe compatible API', function () {
  this.timeout(120_000);
  let s: ResultsStack;
  let key: string;
  let accountId: string;
  const raw = (path: string, init: RequestInit = {}) => fetch(`${s.url}${BASE}${path}`, init);
  const headers = (k = key) => ({ 'Content-Type': 'application/json', 'X-API-KEY': k });
  const submit = async (runSpec: Record<string, unknown>, k = key) => {
    const res = await raw('/runs', { method: 'POST', headers: headers(k), body: JSON.stringify({ run_spec: runSpec }) });
    return { status: res.status, body: (await res.json()) as unknown };
  };
  const run = async (runSpec: Record<string, unknown>): Promise<JobeResult> => {
    const r = await submit(runSpec);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as JobeResult;
  };
  const putFile = (id: string, content: string, k = key) =>
    raw(`/files/${id}`, { method: 'PUT', headers: headers(k), body: JSON.stringify({ file_contents: Buffer.from(content).toString('base64') }) });

  before(async function () {
    const why = realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    s = await resultsStack('jobe', { RUNBOX_RUNNER_SLOTS: '2' });
    await s.startRunner();
    ({ accountId, key: { key } } = await keyFor(s.db));
  });
  after(async () => s?.close());

  it('languages: each Jobe id an installed compiler serves, with its version; no key needed', async () => {
    const res = await raw('/languages');
    expect(res.status).to.equal(200);
    const list = (await res.json()) as [string, string][];
    // python-3.9.7 at least is installed; the newest installed Python 3 serves python3.
    expect(list.find(([id]) => id === 'python3')?.[1]).to.match(/^3\.\d+\.\d+$/);
    if (gccImage()) {
      expect(list.map(([id]) => id)).to.include.members(['c', 'cpp']);
      expect(list.find(([id]) => id === 'c')![1]).to.match(/^\d+\.\d+/);
    }
    // Sorted by id, one entry an id.
    const ids = list.map(([id]) => id);
    expect(ids).to.deep.equal([...new Set(ids)].sort());
  });

  it('python3: output, stdin, a runtime error (12, the traceback in stderr), counted as a jobe run', async () => {
    expect(await run({ language_id: 'python3', sourcecode: 'print("Hello world!")\n', sourcefilename: 'test.py' })).to.include({ outcome: 15, stdout: 'Hello world!\n', stderr: '', cmpinfo: '' });
    expect(await run({ language_id: 'python3', sourcecode: 'print(input())\nprint(input())\n', input: 'Line1\nLine2\n' })).to.include({ outcome: 15, stdout: 'Line1\nLine2\n' });
    // Checked before it runs, as Jobe compiles it with py_compile: a syntax error is 11.
    const syntax = await run({ language_id: 'python3', sourcecode: 'print("Hello world!"\n', sourcefilename: 'test.py' });
    expect(syntax.outcome).to.equal(11);
    expect(syntax.cmpinfo).to.include('SyntaxError');
    const err = await run({ language_id: 'python3', sourcecode: 'data = [1, 2]\nprint(data[2])\n', sourcefilename: 'test.py' });
    expect(err.outcome).to.equal(12);
    expect(err.stderr).to.include('IndexError');
    const rows = await s.db.db.selectFrom('submissions').select(['mode', 'state']).where('account_id', '=', accountId).execute();
    expect(rows.length).to.be.at.least(3);
    expect(rows.every((r) => r.mode === 'jobe' && r.state === 'finished')).to.equal(true);
  });

  it('python3: a program that writes on stderr is a runtime error, as Jobe judges it; runargs reach the program; UTF-8 output', async () => {
    expect(await run({ language_id: 'python3', sourcecode: 'import sys\nprint("x", file=sys.stderr)\n' })).to.include({ outcome: 12, stderr: 'x\n' });
    expect(await run({ language_id: 'python3', sourcecode: 'import sys\nfor a in sys.argv[1:]: print(a)\n', parameters: { runargs: ['Arg1', 'Arg2'] } })).to.include({ outcome: 15, stdout: 'Arg1\nArg2\n' });
    expect(await run({ language_id: 'python3', sourcecode: 'print("Un rôle délétère")\n' })).to.include({ outcome: 15, stdout: 'Un rôle délétère\n' });
  });

  it('cputime: a loop past it is a time limit (13); a lower limit than the default is honoured', async () => {
    const r = await run({ language_id: 'python3', sourcecode: 'while True: pass\n', parameters: { cputime: 1 } });
    expect(r.outcome).to.equal(13);
  });

  it('C: Jobe\'s default options (warnings are errors, C99), compile errors in cmpinfo, runtime and output limits', async function () {
    if (!gccImage()) return this.skip();
    expect(await run({ language_id: 'c', sourcecode: '#include <stdio.h>\nint main() {\n    printf("Hello world\\nIsn\'t this fun!\\n");\n}\n', sourcefilename: 'prog.c' })).to.include({
      outcome: 15,
      stdout: "Hello world\nIsn't this fun!\n",
    });
    const missing = await run({ language_id: 'c', sourcecode: '#include <stdio.h>\nint main() {\n    printf("x")\n}\n', sourcefilename: 'prog.c' });
    expect(missing.outcome).to.equal(11);
    expect(missing.cmpinfo).to.include('error');
    // An unused variable is only a warning to gcc; Jobe's -Wall -Werror make it an error.
    const warned = await run({ language_id: 'c', sourcecode: 'int main(void) { int unused; return 0; }\n' });
    expect(warned.outcome, warned.cmpinfo).to.equal(11);
    expect(warned.cmpinfo).to.include('unused');
    // The client's own options replace Jobe's defaults.
    expect((await run({ language_id: 'c', sourcecode: 'int main(void) { int unused; return 0; }\n', parameters: { compileargs: ['-Wall'] } })).outcome).to.equal(15);
    // An option the compiler does not take is a compilation error naming it, nothing run.
    const refused = await run({ language_id: 'c', sourcecode: 'int main(void) { return 0; }\n', parameters: { compileargs: ['-B/tmp'] } });
    expect(refused.outcome).to.equal(11);
    expect(refused.cmpinfo).to.include('-B/tmp');
    // Compiled without optimisation, as Jobe's gcc command is: endless recursion is a runtime
    // error, not the -Werror=aggressive-loop-optimizations that -O2 would raise.
    const recursion = '#include <stdio.h>\nvoid silly(int i, int inc) { if (i == 0) puts("never"); else silly(i + inc, inc); }\nint main() { silly(3, 1); }\n';
    expect((await run({ language_id: 'c', sourcecode: recursion })).outcome).to.equal(12);
    expect((await run({ language_id: 'c', sourcecode: '#include <stdio.h>\nint main(void) { char *s = 0; printf("%c", *s); return 0; }\n' })).outcome).to.equal(12);
    expect((await run({ language_id: 'c', sourcecode: '#include <stdio.h>\nint main(void) { for (;;) printf("Hello"); }\n', parameters: { cputime: 2 } })).outcome).to.equal(30);
  });

  it('files: PUT, HEAD, a run that names them; a run naming a missing one is 404, so the client uploads and retries', async () => {
    const a = 'randomid0129798';
    const b = 'randomid0980128';
    const code = "print(open('file1').read())\nprint(open('file2').read())\n";
    const spec = { language_id: 'python3', sourcecode: code, file_list: [[a, 'file1'], [b, 'file2']] };
    const first = await submit(spec);
    expect(first.status).to.equal(404);
    expect(first.body).to.equal('One or more of the specified files is missing/unavailable');
    expect((await raw(`/files/${a}`, { method: 'HEAD', headers: headers() })).status).to.equal(404);
    expect((await putFile(a, 'The first file\nLine 2')).status).to.equal(204);
    expect((await putFile(b, 'Second file')).status).to.equal(204);
    expect((await raw(`/files/${a}`, { method: 'HEAD', headers: headers() })).status).to.equal(204);
    expect(await run(spec)).to.include({ outcome: 15, stdout: 'The first file\nLine 2\nSecond file\n' });
    // Another account's cache is its own.
    const other = (await keyFor(s.db)).key.key;
    expect((await raw(`/files/${a}`, { method: 'HEAD', headers: headers(other) })).status).to.equal(404);
    expect((await submit(spec, other)).status).to.equal(404);
  });

  it('files: refusals in Jobe\'s words, and the cache keeps to its bounds', async () => {
    const bad = await raw('/files/abcdefgh1', { method: 'PUT', headers: headers(), body: JSON.stringify({ file_contents: 'not base64!' }) });
    expect([bad.status, await bad.json()]).to.deep.equal([400, 'put: contents of file abcdefgh1 are not valid base-64']);
    const none = await raw('/files/abcdefgh1', { method: 'PUT', headers: headers(), body: JSON.stringify({}) });
    expect([none.status, await none.json()]).to.deep.equal([400, 'put: missing file_contents parameter']);
    const big = await putFile('abcdefgh2', 'x'.repeat(JOBE_FILE_CACHE.fileMaxBytes + 1));
    expect(big.status).to.equal(400);
    expect((await submit({ language_id: 'python3', sourcecode: 'pass', file_list: [['short', 'f']] })).status).to.equal(400);
    expect((await submit({ language_id: 'python3', sourcecode: 'pass', file_list: [['abcdefgh12', '../f']] })).status).to.equal(400);
    // Past the count bound the least recently used file goes.
    const { accountId: small, key: smallKey } = await keyFor(s.db);
    await s.db.db
      .insertInto('jobe_files')
      .values(Array.from({ length: JOBE_FILE_CACHE.filesPerAccount }, (_, i) => ({ account_id: small, file_id: `bulkfile${String(i).padStart(5, '0')}`, content: Buffer.from('x'), size: 1 })))
      .execute();
    await s.db.db.updateTable('jobe_files').set({ used_at: new Date(Date.now() - 3_600_000) }).where('account_id', '=', small).where('file_id', '=', 'bulkfile00000').execute();
    expect((await putFile('newestfile1', 'new', smallKey.key)).status).to.equal(204);
    const left = await s.db.db.selectFrom('jobe_files').select('file_id').where('account_id', '=', small).execute();
    expect(left).to.have.length(JOBE_FILE_CACHE.filesPerAccount);
    expect(left.map((r) => r.file_id)).to.include('newestfile1').and.not.include('bulkfile00000');
  });

  it("refusals: a missing or unknown key is 403 as Jobe's, a bad run_spec 400 in Jobe's words", async () => {
    const noKey = await raw('/runs', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ run_spec: { language_id: 'python3', sourcecode: 'pass' } }) });
    expect([noKey.status, await noKey.json()]).to.deep.equal([403, 'Missing API key']);
    expect(await submit({ language_id: 'python3', sourcecode: 'pass' }, 'rbx_wrong')).to.deep.equal({ status: 403, body: 'Unknown API key' });
    // Authorization works too.
    const viaAuth = await postJson(`${s.url}${BASE}/runs`, key, { run_spec: { language_id: 'python3', sourcecode: 'print(1)' } });
    expect(viaAuth.status).to.equal(200);
    expect(await submit({ language_id: 'cobolx', sourcecode: 'x' })).to.deep.equal({ status: 400, body: "Language 'cobolx' is not known" });
    expect(await submit({ language_id: 'python3' })).to.deep.equal({ status: 400, body: "run_spec is missing the required attribute 'sourcecode'" });
    const noSpec = await raw('/runs', { method: 'POST', headers: headers(), body: JSON.stringify({}) });
    expect([noSpec.status, await noSpec.json()]).to.deep.equal([400, 'No run_spec attribute found in post data']);
    expect((await submit({ language_id: 'python3', sourcecode: 'pass', sourcefilename: '../x.py' })).body).to.equal('The sourcefilename for the run_spec is illegal');
    const slow = await submit({ language_id: 'python3', sourcecode: 'pass', parameters: { cputime: 100000 } });
    expect(slow.status).to.equal(400);
    expect(slow.body).to.match(/^cputime exceeds maximum allowed on this Jobe server \(\d+ secs\)$/);
    expect((await submit({ language_id: 'python3', sourcecode: 'pass', parameters: { interpreterargs: ['-c', 'print(1)'] } })).status).to.equal(400);
    const wrongMethod = await raw('/runs', { method: 'GET', headers: headers() });
    expect(wrongMethod.status).to.equal(405);
    expect(typeof (await wrongMethod.json())).to.equal('string');
  });

  it("a run with no free slot waits for one as Jobe waits for a free user; past that it is Jobe's server overload (21)", async () => {
    const { key: one } = await keyFor(s.db, { limits: { running: 1 } });
    const long = postJson(`${s.url}/api/v2/run-code-sync/`, one.key, { compiler: 'python-3.9.7', code: 'import time\ntime.sleep(11.5)\n' });
    // Until the long run holds the account's one slot.
    for (let i = 0; i < 200; i++) {
      const running = await s.db.db.selectFrom('submissions').select('id').where('state', '=', 'running').executeTakeFirst();
      if (running) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const refused = await submit({ language_id: 'python3', sourcecode: 'print(1)' }, one.key);
    expect(refused).to.deep.equal({ status: 200, body: { run_id: null, outcome: 21, cmpinfo: '', stdout: '', stderr: '' } });
    // The next one waits out the rest of the long run and then runs.
    const waited = await submit({ language_id: 'python3', sourcecode: 'print(2)' }, one.key);
    expect(waited.body).to.include({ outcome: 15, stdout: '2\n' });
    expect((await long).status).to.equal(200);
  });
});
