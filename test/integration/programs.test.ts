import { expect } from 'chai';
import type { RunResult } from '../../src/result.js';
import { counters } from '../helpers/api.js';
import { billedSubmissions, keyFor, postJson, resultsStack, type ResultsStack, skipUnlessRealRuns, syncRun } from '../helpers/results-stack.js';
import { imageRootfs } from '../helpers/sandbox.js';
import { SPECS_ATTACK } from '../helpers/specs-attack.js';
import { WsClient } from '../helpers/ws-client.js';

// Programs, not snippets, through runbox's own API end to end (real API, runner,
// sandbox, Postgres) on the default images: files in directories, main, args, compiler
// options, lower limits, and the files a run writes under /box/out/ coming back.

const PY = 'python-3.9.7';
const C = 'gcc-9';
type Result = RunResult & { files?: { name: string; size: number; mime: string; content: string }[]; files_truncated?: boolean; files_dropped?: { name: string; size: number; reason: string }[] };
const f = (name: string, content: string) => ({ name, content });

describe('programs: files, args, options, limits and files out', function () {
  let s: ResultsStack;
  let key: string;
  let accountId: string;
  const sync = (body: unknown) => syncRun(s, key, body) as Promise<Result>;
  const refused = async (body: unknown, message: RegExp) => {
    const before = await counters(s.db.db, accountId);
    for (const path of ['/api/v2/run-code/', '/api/v2/run-code-sync/']) {
      const res = await postJson(`${s.url}${path}`, key, body);
      expect(res.status, path).to.equal(400);
      const err = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(err.code).to.equal('invalid_request');
      expect(err.message).to.match(message);
    }
    // Nothing ran and nothing was billed.
    expect(await counters(s.db.db, accountId)).to.deep.equal(before);
  };

  before(async function () {
    skipUnlessRealRuns(this, ['python3.9', 'gcc']);
    s = await resultsStack('programs', { RUNBOX_RUNNER_SLOTS: '2' });
    await s.startRunner();
    ({ key: { key }, accountId } = await keyFor(s.db, { limits: { perMinute: 1000, pending: 50 } }));
  });
  after(async () => s?.close());

  it('a C program with a header and two units in directories', async () => {
    const r = await sync({
      compiler: C,
      files: [
        f('src/main.c', '#include <stdio.h>\n#include "lib/list.h"\nint main(void) { int xs[] = {1, 2, 3}; printf("%d\\n", list_sum(xs, 3)); return 0; }\n'),
        f('lib/list.h', 'int list_sum(const int *xs, int n);\n'),
        f('lib/list.c', '#include "lib/list.h"\nint list_sum(const int *xs, int n) { int s = 0; for (int i = 0; i < n; i++) s += xs[i]; return s; }\n'),
      ],
    });
    expect(r, r.error).to.include({ status: 'success', output: '6\n' });
  });

  it('a Python package and a module; main names the file that is the program', async () => {
    const r = await sync({
      compiler: PY,
      main: 'app/main.py',
      files: [f('pkg/__init__.py', 'NAME = "pkg"\n'), f('pkg/mod.py', 'def twice(x):\n    return 2 * x\n'), f('app/main.py', 'import pkg\nfrom pkg.mod import twice\nprint(pkg.NAME, twice(21))\n')],
    });
    expect(r, r.error).to.include({ status: 'success', output: 'pkg 42\n' });
  });

  it('args are argv, never split or expanded by a shell, in every test of a multi-test request', async () => {
    const args = ['a b', '$HOME', '*', '', "it's"];
    const r = await sync({ compiler: PY, code: 'import json, sys\nprint(json.dumps(sys.argv[1:], separators=(",", ":")), input())', args, tests: [{ input: '1' }, { input: '2' }] });
    expect(r.tests!.map((t) => t.output)).to.deep.equal([`${JSON.stringify(args)} 1\n`, `${JSON.stringify(args)} 2\n`]);
  });

  it('an allowed compiler option reaches the compiler; a refused one is a 400 naming it and the allowed forms', async () => {
    const code = '#include <stdio.h>\nint main(void) { printf("%d\\n", N); return 0; }\n';
    const r = await sync({ compiler: C, code, compiler_options: ['-DN=7', '-O0'] });
    expect(r, r.error).to.include({ status: 'success', output: '7\n' });
    await refused({ compiler: C, code, compiler_options: ['-O2', '-frobnicate'] }, /^compiler_options\.1: "-frobnicate" is not allowed; gcc-9 allows -std=… \(c or gnu, then 89, /);
    await refused({ compiler: C, code, compiler_options: ['-o/tmp/x'] }, /^compiler_options\.0: "-o\/tmp\/x" is never allowed: it names a path/);
    await refused({ compiler: C, code, compiler_options: ['-fplugin=evil'] }, /^compiler_options\.0: "-fplugin=evil" is never allowed: it names a plugin/);
    await refused({ compiler: PY, code: 'print(1)', compiler_options: ['-O'] }, /^compiler_options\.0: python-3\.9\.7 has no compile stage/);
    const list = (await (await fetch(`${s.url}/api/compilers/`)).json()) as { id: string; compiler_options: string[] }[];
    expect(list.find((c) => c.id === C)!.compiler_options).to.include('-O[0-3sg]?');
    expect(list.find((c) => c.id === PY)!.compiler_options).to.deep.equal([]);
  });

  it('lowered limits give timeout (CPU and wall) and memory_limit far earlier than the service\'s', async () => {
    const cpu = await sync({ compiler: PY, code: 'while True:\n    pass\n', limits: { time: 0.5 } });
    expect(cpu.status).to.equal('timeout');
    expect(cpu.total).to.be.below(5);
    const wall = await sync({ compiler: PY, code: 'import time\ntime.sleep(10)\n', limits: { wall_time: 0.5 } });
    expect(wall.status).to.equal('timeout');
    expect(wall.total).to.be.below(5);
    const mem = await sync({ compiler: PY, code: 'x = bytearray(200 * 1024 * 1024)\nprint(len(x))\n', limits: { memory: 65536 } });
    expect(mem.status).to.equal('memory_limit');
    // The same program fits the service's own limit.
    expect((await sync({ compiler: PY, code: 'x = bytearray(200 * 1024 * 1024)\nprint(len(x))\n' })).status).to.equal('success');
  });

  it('limits beyond the service\'s (or under the floors) are 400s naming the bound', async () => {
    await refused({ compiler: PY, code: 'print(1)', limits: { time: 31 } }, /^limits\.time: at most 30 seconds \(the service's limit\); got 31$/);
    await refused({ compiler: PY, code: 'print(1)', limits: { memory: 600000 } }, /^limits\.memory: at most 524,288 KB/);
    await refused({ compiler: PY, code: 'print(1)', limits: { wall_time: 0 } }, /^limits\.wall_time: at least 0\.1 seconds/);
  });

  it("a file named -B.c is compiled as a file, never gcc's -B: a .c/specs beside it runs nothing", async () => {
    const r = await sync({ compiler: C, main: 'main.c', files: Object.entries(SPECS_ATTACK).map(([name, content]) => f(name, content)) });
    expect(r, r.error).to.include({ status: 'success', output: 'compiled\n' });
    expect(`${r.output}${r.error}${r.compile_output ?? ''}`).to.not.include('PWNED');
  });

  it('bad files are 400s naming what is wrong; nothing runs or is billed', async () => {
    const main = f('main.py', 'print(1)');
    await refused({ compiler: PY, files: [main, f('../x', '')] }, /^files\.1\.name: "\.\.\/x" must not contain \.\.$/);
    await refused({ compiler: PY, files: [main, f('/etc/x', '')] }, /^files\.1\.name: "\/etc\/x" must be a relative path/);
    await refused({ compiler: PY, files: [main, f('a.py', ''), f('a.py', '')] }, /^files\.2\.name: a\.py is given to files\.1 too$/);
    await refused({ compiler: PY, files: [main, f('out/x', '')] }, /^files\.1\.name: "out\/x" must not be out or in out\//);
    await refused({ compiler: PY, files: Array.from({ length: 101 }, (_, i) => f(`m${i}.py`, '')) }, /^files: at most 100 files \(got 101\)$/);
    const bulk = { name: 'data.bin', content: Buffer.alloc(1_000_001 - 8).toString('base64'), encoding: 'base64' };
    await refused({ compiler: PY, files: [main, bulk] }, /^files: the files hold 1,000,001 bytes together; at most 1,000,000$/);
    await refused({ compiler: PY, code: 'print(1)', files: [main] }, /^files: give either code or files, not both$/);
    await refused({ compiler: PY, files: [main], main: 'other.py' }, /^main: no file of files is named "other\.py"$/);
    await refused({ compiler: PY, code: 'print(1)', args: Array.from({ length: 65 }, () => 'a') }, /^args: at most 64 arguments \(got 65\)$/);
  });

  it('/box/out exists, empty, in every run; without return_files nothing comes back', async () => {
    const r = await sync({ compiler: PY, code: 'import os\nprint(os.listdir("/box/out"))\nopen("/box/out/x.txt", "w").write("x")\n' });
    expect(r, r.error).to.include({ status: 'success', output: '[]\n' });
    expect(r).to.not.have.any.keys('files', 'files_truncated', 'files_dropped');
  });

  it('files written under /box/out come back with their bytes, name-sorted, on the answer, the lookup and the WebSocket', async () => {
    const code = [
      'import os',
      'os.makedirs("/box/out/sub", exist_ok=True)',
      'open("/box/out/data.bin", "wb").write(bytes(range(256)))',
      'open("/box/out/sub/note.txt", "w").write("hé")',
      'os.symlink("/etc/passwd", "/box/out/link")',
      'os.mkfifo("/box/out/fifo")',
      'print("ok")',
    ].join('\n');
    const body = { compiler: PY, code, return_files: true };
    const check = (r: Result) => {
      expect(r.status, r.error).to.equal('success');
      expect(r.files!.map((x) => [x.name, x.size, x.mime])).to.deep.equal([
        ['data.bin', 256, 'application/octet-stream'],
        ['sub/note.txt', 3, 'text/plain'],
      ]);
      expect(Buffer.from(r.files![0]!.content, 'base64').equals(Buffer.from(Array.from({ length: 256 }, (_, i) => i)))).to.equal(true);
      expect(Buffer.from(r.files![1]!.content, 'base64').toString('utf8')).to.equal('hé');
      expect(r.files_truncated).to.equal(false);
      expect(r.files_dropped).to.deep.equal([]);
    };
    const res = await postJson(`${s.url}/api/v2/run-code-sync/`, key, body);
    const answered = (await res.json()) as Result;
    check(answered);
    const looked = (await (await fetch(`${s.url}/api/v2/submissions/${answered.id}`, { headers: { Authorization: key } })).json()) as { result: Result };
    check(looked.result);
    const ws = await WsClient.open(`${s.url.replace('http', 'ws')}/api/v2/ws/`, { Authorization: key });
    ws.send({ type: 'run', id: 'w', ...body });
    const msg = (await ws.until((m) => m.type === 'result')) as unknown as Result;
    ws.close();
    check(msg);
  });

  it('past 16 files or 1 MiB the first ones by name come back, the rest are listed (files_truncated); each test gets its own', async () => {
    const many = await sync({ compiler: PY, code: 'for i in range(20):\n    open(f"/box/out/f{i:02}.txt", "w").write(str(i))\n', return_files: true });
    expect(many.files!.map((x) => x.name)).to.deep.equal(Array.from({ length: 16 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`));
    expect(many.files_truncated).to.equal(true);
    expect(many.files_dropped).to.deep.equal([16, 17, 18, 19].map((i) => ({ name: `f${i}.txt`, size: String(i).length, reason: 'limits' })));
    const big = await sync({ compiler: PY, code: 'open("/box/out/a.bin", "wb").write(bytes(700_000))\nopen("/box/out/b.bin", "wb").write(bytes(700_000))\n', return_files: true });
    expect(big.files!.map((x) => x.name)).to.deep.equal(['a.bin']);
    expect(big.files_dropped).to.deep.equal([{ name: 'b.bin', size: 700_000, reason: 'limits' }]);
    const tests = await sync({ compiler: PY, code: 'n = input()\nopen(f"/box/out/{n}.txt", "w").write(n)\n', return_files: true, tests: [{ input: 'a' }, { input: 'b' }] });
    expect(tests.tests!.map((t) => (t as Result).files!.map((x) => x.name))).to.deep.equal([['a.txt'], ['b.txt']]);
  });

  it('a file under /box/out whose name is not UTF-8 is listed in files_dropped, escaped; the run succeeds and is billed, on the answer and the WebSocket', async () => {
    const { key: own, accountId: account } = await keyFor(s.db, { limits: { perMinute: 1000, pending: 50 } });
    const code = 'open(b"/box/out/\\xff\\xfe", "wb").write(b"xy")\nopen("/box/out/ok.txt", "w").write("ok")\nprint("done")\n';
    const body = { compiler: PY, code, return_files: true };
    const check = (r: Result) => {
      expect(r.status, r.error).to.equal('success');
      expect(r.output).to.equal('done\n');
      expect(r.files!.map((x) => x.name)).to.deep.equal(['ok.txt']);
      expect(r.files_truncated).to.equal(true);
      expect(r.files_dropped).to.deep.equal([{ name: '\\xff\\xfe', size: 2, reason: 'name' }]);
    };
    check((await syncRun(s, own.key, body)) as Result);
    const ws = await WsClient.open(`${s.url.replace('http', 'ws')}/api/v2/ws/`, { Authorization: own.key });
    ws.send({ type: 'run', id: 'w', ...body });
    const msg = (await ws.until((m) => m.type === 'result')) as unknown as Result;
    ws.close();
    check(msg);
    expect(await billedSubmissions(s, account)).to.equal(2);
  });

  it('a multi-file build whose compile script leaves a name that is not UTF-8 in its workspace still builds and runs', async function () {
    const image = imageRootfs('multi-file');
    if ('skip' in image) {
      console.log(`      PENDING: ${image.skip}`);
      this.skip();
    }
    const r = await sync({
      compiler: 'multi-file',
      main: 'run',
      files: [f('compile', 'printf x > "$(printf \'\\377\')"\necho built > note.txt\n'), f('run', 'cat note.txt\n')],
    });
    expect(r, r.error).to.include({ status: 'success', output: 'built\n' });
  });
});
