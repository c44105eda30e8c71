import { expect } from 'chai';
import piston from 'piston-client';
import { createKey } from '../../src/accounts/keys.js';
import { setMaintenance } from '../../src/api/maintenance.js';
import { pistonApi } from '../../src/compat/piston/routes.js';
import { readManifest } from '../../src/compilers/availability.js';
import { loadConfig } from '../../src/config.js';
import { keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { SPECS_ATTACK } from '../helpers/specs-attack.js';

// The Piston v2 compatible routes end to end, driven by the real npm piston-client
// (which sends no key header and no Content-Type: the key goes in the path) and by
// raw HTTP for every error status. Real API, real runner, real sandbox, real Postgres.

interface Stage {
  stdout: string;
  stderr: string;
  output: string;
  code: number | null;
  signal: string | null;
  message: string | null;
  status: string | null;
}
interface Executed {
  language: string;
  version: string;
  run: Stage;
  compile?: Stage;
  message?: string;
}

const gccImage = () => readManifest(loadConfig().RUNBOX_IMAGES_DIR, 'gcc');

describe('Piston v2 compatible API', function () {
  let s: ResultsStack;
  let key: string;
  let accountId: string;
  const client = (k: string) => piston({ server: `${s.url}/piston/${k}` });
  const raw = (path: string, init: RequestInit = {}) => fetch(`${s.url}${path}`, init);
  const execute = (body: unknown, headers: Record<string, string> = {}) =>
    raw('/piston/api/v2/execute', { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: key, ...headers }, body: JSON.stringify(body) });

  before(async function () {
    const why = realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    const uidBase = process.env['RUNBOX_SANDBOX_UID_BASE'];
    s = await resultsStack('piston', { RUNBOX_RUNNER_SLOTS: '2', ...(uidBase ? { RUNBOX_SANDBOX_UID_BASE: uidBase } : {}) });
    await s.startRunner();
    ({ accountId, key: { key } } = await keyFor(s.db));
  });
  after(async () => s?.close());

  it('runtimes(): one runtime per installed compiler, under Piston\'s names', async () => {
    const runtimes = (await client(key).runtimes()) as { language: string; version: string; aliases: string[]; runtime?: string }[];
    const python = runtimes.find((r) => r.language === 'python' && r.aliases.includes('python3.9'));
    expect(python).to.deep.equal({ language: 'python', version: '3.9.2', aliases: ['py', 'py3', 'python3', 'python3.9'] });
    if (gccImage()) {
      expect(runtimes.find((r) => r.language === 'c')).to.include({ runtime: 'gcc' });
      expect(runtimes.find((r) => r.language === 'c')!.aliases).to.include('gcc');
    }
    // Public, like GET /api/compilers/: no key needed.
    const res = await raw('/piston/api/v2/runtimes');
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal(runtimes);
  });

  it("execute('python', …): output, exit code, Piston's default args reach the program, counted as a piston run", async () => {
    const got = (await client(key).execute('python', 'import sys\nprint("hi", sys.argv[1:])\n')) as Executed;
    expect(got.language).to.equal('python');
    expect(got.version).to.equal('3.9.2');
    expect(got.compile).to.equal(undefined);
    expect(got.run).to.include({ stdout: "hi ['1', '2', '3']\n", stderr: '', code: 0, signal: null, status: null, message: null });
    expect(got.run.output).to.equal("hi ['1', '2', '3']\n");
    const rows = await s.db.db.selectFrom('submissions').select(['mode', 'state']).where('account_id', '=', accountId).execute();
    expect(rows).to.deep.include({ mode: 'piston', state: 'finished' });
  });

  it("execute('c++', …): compiled, then run", async function () {
    if (!gccImage()?.compilers['g++-4.9']) {
      console.log('      SKIPPED: the gcc image (with g++) is not installed');
      this.skip();
    }
    const got = (await client(key).execute('c++', '#include <iostream>\nint main(int c, char** v) { std::cout << "args " << c - 1 << std::endl; }\n')) as Executed;
    expect(got.language).to.equal('c++');
    expect(got.compile).to.include({ code: 0, status: null });
    expect(got.run).to.include({ stdout: 'args 3\n', code: 0, status: null });
  });

  it('a compile error: the compile stage with the compiler\'s messages, and no run stage (as Piston)', async function () {
    if (!gccImage()?.compilers['gcc-4.9']) {
      console.log('      SKIPPED: the gcc image is not installed');
      this.skip();
    }
    const got = (await client(key).execute('c', 'int main( {\n')) as Executed;
    expect(got.compile!.code).to.not.equal(0);
    expect(got.compile!.status).to.equal('RE');
    expect(got.compile!.stderr).to.match(/error/);
    expect(got).to.not.have.property('run');
  });

  it('stdin that does not end in a newline gets one, as Piston appends it (an empty one too)', async () => {
    const code = 'import sys\nprint(repr(sys.stdin.read()))\n';
    for (const [stdin, seen] of [['abc', "'abc\\n'"], ['', "'\\n'"], ['x\n', "'x\\n'"]] as const) {
      const got = (await client(key).execute('python', code, { stdin })) as Executed;
      expect(got.run.stdout, stdin).to.equal(`${seen}\n`);
    }
  });

  it('files of a C program are compiled together (a header and two units, one in a directory)', async function () {
    if (!gccImage()?.compilers['gcc-9']) {
      console.log('      SKIPPED: the gcc image is not installed');
      this.skip();
    }
    const res = await execute({
      language: 'c',
      version: '*',
      files: [
        { name: 'main.c', content: '#include <stdio.h>\n#include "util/twice.h"\nint main(int argc, char **argv) { printf("%d %s\\n", twice(21), argv[1]); return 0; }\n' },
        { name: 'util/twice.h', content: 'int twice(int);\n' },
        { name: 'util/twice.c', content: '#include "util/twice.h"\nint twice(int x) { return 2 * x; }\n' },
      ],
      args: ['hi'],
    });
    const got = (await res.json()) as Executed;
    expect(got.compile!.code).to.equal(0);
    expect(got.run).to.include({ stdout: '42 hi\n', code: 0 });
  });

  it("a file named -B.c is compiled as a file, never gcc's -B; the .c/specs beside it runs nothing", async function () {
    if (!gccImage()?.compilers['gcc-9']) {
      console.log('      SKIPPED: the gcc image is not installed');
      this.skip();
    }
    const res = await execute({ language: 'c', version: '*', files: Object.entries(SPECS_ATTACK).map(([name, content]) => ({ name, content })) });
    const got = (await res.json()) as Executed;
    expect(got.compile!.code).to.equal(0);
    expect(got.run).to.include({ stdout: 'compiled\n', code: 0 });
    expect(JSON.stringify(got)).to.not.include('PWNED');
  });

  it('files of a Java program are compiled together: a class per file, the first file\'s class runs', async function () {
    if (!readManifest(loadConfig().RUNBOX_IMAGES_DIR, 'openjdk-17')) {
      console.log('      SKIPPED: the openjdk-17 image is not installed (runbox-admin image build openjdk-17)');
      this.skip();
    }
    const res = await execute({
      language: 'java',
      version: '*',
      files: [
        { name: 'Main.java', content: 'public class Main {\n  public static void main(String[] a) { System.out.println(new Greeter().greet() + " " + Shapes.area(3)); }\n}\n' },
        { name: 'Greeter.java', content: 'public class Greeter {\n  String greet() { return "hello"; }\n}\n' },
        { name: 'Shapes.java', content: 'class Shapes {\n  static int area(int s) { return s * s; }\n}\n' },
      ],
    });
    const got = (await res.json()) as Executed;
    expect(got.run, JSON.stringify(got)).to.include({ stdout: 'hello 9\n', code: 0 });
  });

  it('every runtime GET /runtimes lists is found by *, by its listed version and by the ranges clients send', async () => {
    const runtimes = (await (await raw('/piston/api/v2/runtimes')).json()) as { language: string; version: string; aliases: string[] }[];
    expect(runtimes.length).to.be.above(0);
    for (const rt of runtimes) {
      const major = rt.version.split('.')[0]!;
      for (const version of ['*', rt.version, `${major}.x`, `^${major}`, `>=${major}`]) {
        for (const language of [rt.language, ...rt.aliases]) {
          // Resolved before the files are looked at: a runtime found answers about the files instead.
          const res = await execute({ language, version, files: [{ content: 'AA==', encoding: 'base64' }] });
          expect(await res.json(), `${language} ${version}`).to.deep.equal({ message: 'files must include at least one utf8 encoded file' });
        }
      }
    }
  });

  it('a timeout: run_timeout is honoured (below runbox\'s own), status TO, SIGKILL, isolate\'s wall-clock message', async () => {
    const got = (await client(key).execute('python', 'while True:\n    pass\n', { runTimeout: 300 })) as Executed;
    expect(got.run).to.include({ status: 'TO', signal: 'SIGKILL', message: 'Time limit exceeded (wall clock)' });
  });

  it('run_cpu_time is the run\'s CPU time: a busy loop past it is TO, SIGKILL, "Time limit exceeded", with its CPU time past the limit', async () => {
    const res = await execute({ language: 'python', version: '*', files: [{ content: 'while True:\n    pass\n' }], run_cpu_time: 1000, run_timeout: 30_000 });
    const got = (await res.json()) as Executed;
    expect(got.run).to.include({ status: 'TO', signal: 'SIGKILL', message: 'Time limit exceeded' });
    expect((got.run as unknown as { cpu_time: number }).cpu_time).to.be.greaterThan(1000);
  });

  it('stdin reaches the program; a runtime error is RE with its exit code', async () => {
    const got = (await client(key).execute('python', 'import sys\nprint(input() * 2)\nsys.exit(3)\n', { stdin: 'ab\n', args: [] })) as Executed;
    expect(got.run).to.include({ stdout: 'abab\n', code: 3, status: 'RE', message: 'Exited with error status 3' });
  });

  it('files: the first is the main source, the others are written beside it; a signal is SG', async () => {
    const res = await execute({
      language: 'python3',
      version: '3.x',
      files: [
        { name: 'main.py', content: 'import helper, os\nprint(helper.greet(), open("data.bin", "rb").read())\nos.kill(os.getpid(), 11)\n' },
        { name: 'helper.py', content: 'def greet():\n    return "hello"\n' },
        { name: 'data.bin', content: Buffer.from([0x00, 0xff]).toString('base64'), encoding: 'base64' },
      ],
    });
    expect(res.status).to.equal(200);
    const got = (await res.json()) as Executed;
    expect(got.run.stdout).to.equal("hello b'\\x00\\xff'\n");
    expect(got.run).to.include({ status: 'SG', signal: 'SIGSEGV' });
  });

  it('a key over its limit: 429 with Retry-After and Piston\'s {"message"}, through the client too', async () => {
    const limited = await keyFor(s.db, { monthlyLimit: 1 });
    const first = (await client(limited.key.key).execute('python', 'print(1)')) as Executed;
    expect(first.run.stdout).to.equal('1\n');
    const refused = (await client(limited.key.key).execute('python', 'print(1)')) as Executed;
    expect(refused.message).to.match(/monthly limit of 1/);
    const res = await raw(`/piston/${limited.key.key}/api/v2/execute`, {
      method: 'POST',
      body: JSON.stringify({ language: 'python', version: '*', files: [{ content: 'print(1)' }] }),
    });
    expect(res.status).to.equal(429);
    expect(res.headers.get('retry-after')).to.match(/^\d+$/);
    expect(Object.keys((await res.json()) as object)).to.deep.equal(['message']);
  });

  describe('error statuses over raw HTTP, in Piston\'s shape', () => {
    const messageOf = async (res: Response) => ((await res.json()) as { message: string }).message;
    const valid = { language: 'python', version: '*', files: [{ content: 'print(1)' }] };

    it('400 for each bad field, named as Piston names it', async () => {
      const cases: [unknown, string][] = [
        [{ version: '*', files: [] }, 'language is required as a string'],
        [{ language: 'python', files: [] }, 'version is required as a string'],
        [{ language: 'python', version: '*' }, 'files is required as an array'],
        [{ language: 'python', version: '*', files: [{ name: 'a.py' }] }, 'files[0].content is required as a string'],
        [{ language: 'no-such-language', version: '*', files: [{ content: '' }] }, 'no-such-language-* runtime is unknown'],
        [{ language: 'python', version: '1.0.0', files: [{ content: '' }] }, 'python-1.0.0 runtime is unknown'],
        [{ ...valid, files: [{ content: 'AA==', encoding: 'base64' }] }, 'files must include at least one utf8 encoded file'],
        [{ ...valid, run_timeout: 'soon' }, 'If specified, run_timeout must be a number'],
        [{ ...valid, compile_timeout: -5 }, 'compile_timeout must be non-negative'],
        [{ ...valid, files: [{ content: 'x' }, { name: '../etc/passwd', content: 'x' }] }, 'files[1].name: "../etc/passwd" must not contain ..'],
        [{ ...valid, files: [{ content: 'x' }, { name: '/etc/passwd', content: 'x' }] }, 'files[1].name: "/etc/passwd" must be a relative path (no leading /)'],
        [{ ...valid, args: [1] }, 'args must be an array of strings'],
        [{ ...valid, files: [{ content: 'x' }, { name: 'a.txt', content: '' }, { name: 'a.txt', content: '' }] }, 'files[2].name: a.txt is given to files[1] too'],
        [{ ...valid, args: Array.from({ length: 65 }, () => 'a') }, 'args: at most 64 arguments (got 65)'],
      ];
      for (const [body, message] of cases) {
        const res = await execute(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(await res.json()).to.deep.equal({ message });
      }
    });

    it('400 for a body that is not JSON; text/plain JSON is accepted; 415 for another type', async () => {
      let res = await raw('/piston/api/v2/execute', { method: 'POST', headers: { Authorization: key, 'Content-Type': 'text/plain' }, body: '{nope' });
      expect(res.status).to.equal(400);
      expect(await messageOf(res)).to.match(/not valid JSON/);
      res = await raw('/piston/api/v2/execute', { method: 'POST', headers: { Authorization: key, 'Content-Type': 'text/plain;charset=UTF-8' }, body: JSON.stringify(valid) });
      expect(res.status).to.equal(200);
      // Another type is Piston's 415.
      res = await raw('/piston/api/v2/execute', { method: 'POST', headers: { Authorization: key, 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'a=1' });
      expect(res.status).to.equal(415);
      expect(await messageOf(res)).to.match(/Content-Type must be application\/json/);
    });

    it('limits above runbox\'s are clamped, not refused', async () => {
      const res = await execute({ ...valid, run_timeout: 10_000_000, run_memory_limit: 1e15, compile_memory_limit: -1 });
      expect(res.status).to.equal(200);
      expect(((await res.json()) as Executed).run.stdout).to.equal('1\n');
    });

    it("the plan's sandbox time counts the lowered run_timeout: over it 400 in Piston's shape, lowered to fit it runs", async () => {
      const small = await keyFor(s.db, { limits: { sandboxSecondsPerRequest: 10 } });
      const send = (body: unknown) =>
        raw('/piston/api/v2/execute', { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: small.key.key }, body: JSON.stringify(body) });
      const over = await send(valid);
      expect(over.status).to.equal(400);
      expect(await messageOf(over)).to.equal('this request may use up to 30 s of sandbox time (1 run × 30 s); this plan allows 10 s per request');
      const fits = await send({ ...valid, run_timeout: 5000 });
      expect(fits.status).to.equal(200);
      expect(((await fits.json()) as Executed).run.stdout).to.equal('1\n');
      const rows = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', small.accountId).execute();
      expect(rows).to.have.length(1);
    });

    it('401 without a key, with a wrong one (header or path)', async () => {
      let res = await raw('/piston/api/v2/execute', { method: 'POST', body: JSON.stringify(valid) });
      expect(res.status).to.equal(401);
      expect(await messageOf(res)).to.equal('the Authorization header (or the key as the path segment after /piston/) with an API key is required');
      res = await raw('/piston/not-a-key/api/v2/execute', { method: 'POST', body: JSON.stringify(valid) });
      expect(res.status).to.equal(401);
      expect(await res.json()).to.deep.equal({ message: 'the API key is wrong' });
    });

    it('403 for a widget key (header or path): it works only in the widget; nothing is stored', async () => {
      const widget = await createKey(s.db.db, { accountId, appName: 'site', kind: 'widget', allowedOrigins: ['https://a.example'] });
      const before = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).execute();
      let res = await execute(valid, { Authorization: widget.key, Origin: 'https://a.example' });
      expect(res.status).to.equal(403);
      expect(await messageOf(res)).to.match(/widget key/);
      res = await raw(`/piston/${widget.key}/api/v2/execute`, { method: 'POST', body: JSON.stringify(valid) });
      expect(res.status).to.equal(403);
      expect(Object.keys((await res.json()) as object)).to.deep.equal(['message']);
      const after = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).execute();
      expect(after).to.have.length(before.length);
    });

    it('404 and 405 in Piston\'s shape; an Accept runbox would refuse is not a 406 here', async () => {
      let res = await raw('/piston/api/v2/packages');
      expect(res.status).to.equal(404);
      expect(Object.keys((await res.json()) as object)).to.deep.equal(['message']);
      res = await raw('/piston/api/v2/execute', { headers: { Accept: 'text/html' } });
      expect(res.status).to.equal(405);
      expect(res.headers.get('allow')).to.match(/POST/);
      expect(Object.keys((await res.json()) as object)).to.deep.equal(['message']);
      res = await raw('/piston/api/v2/runtimes', { headers: { Accept: 'text/html' } });
      expect(res.status).to.equal(200);
    });

    it('429 when the account\'s run slots are all busy (counted like a synchronous run)', async () => {
      const busy = await keyFor(s.db, { limits: { running: 1 } });
      const slow = raw('/piston/api/v2/execute', {
        method: 'POST',
        headers: { Authorization: busy.key.key },
        body: JSON.stringify({ ...valid, files: [{ content: 'import time\ntime.sleep(3)\n' }] }),
      });
      for (;;) {
        const row = await s.db.db.selectFrom('submissions').select('state').where('account_id', '=', busy.accountId).executeTakeFirst();
        if (row?.state === 'running') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const res = await raw('/piston/api/v2/execute', { method: 'POST', headers: { Authorization: busy.key.key }, body: JSON.stringify(valid) });
      expect(res.status).to.equal(429);
      expect(res.headers.get('retry-after')).to.match(/^\d+$/);
      expect(await messageOf(res)).to.match(/run slots are busy/);
      expect((await slow).status).to.equal(200);
    });

    it('503 in maintenance, with Retry-After', async () => {
      await setMaintenance(s.db.db, true);
      try {
        const res = await execute(valid);
        expect(res.status).to.equal(503);
        expect(res.headers.get('retry-after')).to.match(/^\d+$/);
        expect(await messageOf(res)).to.match(/maintenance/);
      } finally {
        await setMaintenance(s.db.db, false);
      }
    });
  });

  it("a key in the path is redacted from the paths runbox logs", () => {
    expect(pistonApi.loggedPath('/piston/rbx_secret123/api/v2/execute')).to.equal('/piston/<key>/api/v2/execute');
    expect(pistonApi.loggedPath('/piston/api/v2/execute')).to.equal('/piston/api/v2/execute');
  });
});
