import { expect } from 'chai';
import { sql } from 'kysely';
import type { RunResult } from '../../src/result.js';
import { billedSubmissions, keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { imageRootfs, TEST_SLOT_BASE } from '../helpers/sandbox.js';

// Sessions end to end: the real API, a real runner, real sandboxed runs. A session's
// workspace outlives its runs; nothing of it reaches another account or another session.

const C = 'gcc-9';
const PY = 'python-3.9.7';

type Cell = RunResult & { kernel: NonNullable<RunResult['kernel']> };

interface View {
  id: string;
  state: string;
  ending: string | null;
  runs: number;
  busy: boolean;
  sandbox_seconds: number;
}

describe('sessions', function () {
  let s: ResultsStack;
  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${s.url}${path}`, {
      method,
      headers: { Authorization: key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? null : (JSON.parse(text) as Record<string, unknown>) };
  };
  const open = async (key: string, body: Record<string, unknown>): Promise<View> => {
    const res = await call(key, 'POST', '/api/v2/sessions', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as unknown as View;
  };
  const run = async (key: string, id: string, body: Record<string, unknown>): Promise<RunResult> => {
    const res = await call(key, 'POST', `/api/v2/sessions/${id}/runs`, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as unknown as RunResult;
  };
  const put = async (key: string, id: string, path: string, content: string, extra: Record<string, unknown> = {}) => {
    const res = await call(key, 'PUT', `/api/v2/sessions/${id}/files/${path}`, { content, ...extra });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  };
  const files = async (key: string, id: string) => {
    const res = await call(key, 'GET', `/api/v2/sessions/${id}/files`);
    expect(res.status).to.equal(200);
    return (res.body as { files: { path: string; size: number; mode: number }[] }).files;
  };

  before(async function () {
    const why = realRunsUnavailable(['gcc', 'python3.9']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    s = await resultsStack('sessions', { RUNBOX_RUNNER_SLOTS: '2', RUNBOX_SANDBOX_UID_BASE: String(TEST_SLOT_BASE + 64000) });
    await s.startRunner();
  });
  after(async () => s?.close());

  it('compiles and reruns a C program after a file of the workspace is changed', async () => {
    const { key } = await keyFor(s.db);
    const session = await open(key.key, { compiler: C });
    expect(session).to.include({ state: 'open', ending: null, runs: 0 });
    await put(key.key, session.id, 'src/main.c', '#include <stdio.h>\nint main(void) { puts("first"); return 0; }\n');
    const built = await run(key.key, session.id, { command: ['gcc-9', '-o', 'prog', 'src/main.c'] });
    expect(built).to.include({ status: 'success' });
    // The program the compiler left is there, executable, for the next run.
    const listed = await files(key.key, session.id);
    expect(listed.map((f) => f.path)).to.deep.equal(['prog', 'src/main.c']);
    expect(listed.find((f) => f.path === 'prog')!.mode & 0o100).to.equal(0o100);
    expect(await run(key.key, session.id, { command: ['./prog'] })).to.include({ status: 'success', output: 'first\n' });

    await put(key.key, session.id, 'src/main.c', '#include <stdio.h>\nint main(void) { puts("second"); return 0; }\n');
    // Unchanged until it is built again: the workspace is what the last run left.
    expect(await run(key.key, session.id, { command: ['./prog'] })).to.include({ output: 'first\n' });
    expect(await run(key.key, session.id, { command: ['gcc-9', '-o', 'prog', 'src/main.c'] })).to.include({ status: 'success' });
    expect(await run(key.key, session.id, { command: ['./prog'] })).to.include({ status: 'success', output: 'second\n' });
    // A file of the workspace run as the program, by the compiler's recipe.
    expect(await run(key.key, session.id, { file: 'src/main.c' })).to.include({ status: 'success', output: 'second\n' });
    const file = await call(key.key, 'GET', `/api/v2/sessions/${session.id}/files/src/main.c`);
    expect(file.body).to.include({ path: 'src/main.c', encoding: 'utf-8' });
    expect(String(file.body!['content'])).to.contain('second');
  });

  it('keeps what a program writes for the next run, and bills each run as a run and the sandbox time held', async () => {
    const { accountId, key } = await keyFor(s.db);
    const session = await open(key.key, { compiler: PY });
    const before = await billedSubmissions(s, accountId);
    await run(key.key, session.id, { code: 'open("state.txt", "w").write("41")' });
    const second = await run(key.key, session.id, { code: 'n = int(open("state.txt").read()) + 1\nopen("state.txt", "w").write(str(n))\nprint(n)' });
    expect(second).to.include({ status: 'success', output: '42\n' });
    expect(await billedSubmissions(s, accountId)).to.equal(before + 2);
    const view = (await call(key.key, 'GET', `/api/v2/sessions/${session.id}`)).body as unknown as View;
    expect(view.runs).to.equal(2);
    expect(view.sandbox_seconds).to.be.greaterThan(0);
    const closed = await call(key.key, 'DELETE', `/api/v2/sessions/${session.id}`);
    expect(closed.body).to.include({ state: 'ended', ending: 'closed' });
    const after = await call(key.key, 'POST', `/api/v2/sessions/${session.id}/runs`, { code: 'print(1)' });
    expect(after.status).to.equal(410);
    expect((after.body!['error'] as { code: string }).code).to.equal('session_ended');
    // Its files went with it.
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM run_session_files WHERE session_id = ${session.id}`.execute(s.db.db);
    expect(rows[0]!.n).to.equal(0);
  });

  it('leaves the workspace as it was when the sandbox stops a run (its time limit), rather than empty', async () => {
    const { key } = await keyFor(s.db);
    const session = await open(key.key, { compiler: PY, limits: { time: 1, wall_time: 2 } });
    await put(key.key, session.id, 'keep.txt', 'kept');
    const stopped = await run(key.key, session.id, { code: 'open("made.txt", "w").write("x")\nwhile True:\n    pass' });
    expect(stopped.status).to.equal('timeout');
    // A stopped run brings nothing back from /box: what it wrote is lost, the workspace before it is not.
    expect((await files(key.key, session.id)).map((f) => f.path)).to.deep.equal(['keep.txt']);
  });

  it('keeps no symlink a program plants, and refuses paths outside the workspace', async () => {
    const { key } = await keyFor(s.db);
    const session = await open(key.key, { compiler: PY });
    await run(key.key, session.id, { code: 'import os\nos.symlink("/etc/passwd", "leak")\nos.symlink("/", "root")\nopen("kept", "w").write("x")' });
    // The code run is kept as main.py, the recipe's name for it.
    expect((await files(key.key, session.id)).map((f) => f.path)).to.deep.equal(['kept', 'main.py']);
    expect((await call(key.key, 'GET', `/api/v2/sessions/${session.id}/files/leak`)).status).to.equal(404);
    for (const path of ['a%2F..%2F..%2Fetc%2Fpasswd', '%2Fetc%2Fpasswd', 'x%2F..', 'out/x']) {
      const res = await call(key.key, 'GET', `/api/v2/sessions/${session.id}/files/${path}`);
      expect(res.status, path).to.equal(400);
      const put = await call(key.key, 'PUT', `/api/v2/sessions/${session.id}/files/${path}`, { content: 'x' });
      expect(put.status, path).to.equal(400);
    }
    // The next run's sandbox starts from the kept files only.
    expect(await run(key.key, session.id, { code: 'import os\nprint(sorted(os.listdir(".")))' })).to.include({ output: "['kept', 'main.py', 'out']\n" });
  });

  it("keeps a workspace within its bounds: the first files by name, none whose name a caller could not write", async () => {
    const { key } = await keyFor(s.db);
    const session = await open(key.key, { compiler: PY });
    await run(key.key, session.id, { code: 'for i in range(300):\n    open(f"f{i:03}", "w").write("x")\nopen("a b", "w").write("y")\nopen("out/r.txt", "w").write("z")' });
    // The first 256 by name come back ('a b', f000 … f254); 'a b' is not a name the file routes take, so it is not kept.
    const kept = (await files(key.key, session.id)).map((f) => f.path);
    expect(kept).to.deep.equal(Array.from({ length: 255 }, (_, i) => `f${String(i).padStart(3, '0')}`));
  });

  it("shows nothing of a session to another account, or to the account's later session", async () => {
    const a = await keyFor(s.db);
    const b = await keyFor(s.db);
    const first = await open(a.key.key, { compiler: PY });
    await put(a.key.key, first.id, 'secret.txt', 'hunter2');
    await run(a.key.key, first.id, { code: 'open("made.txt", "w").write("by a run")' });
    for (const [method, path] of [
      ['GET', `/api/v2/sessions/${first.id}`],
      ['GET', `/api/v2/sessions/${first.id}/files`],
      ['GET', `/api/v2/sessions/${first.id}/files/secret.txt`],
      ['DELETE', `/api/v2/sessions/${first.id}`],
    ] as const) {
      expect((await call(b.key.key, method, path)).status, `${method} ${path}`).to.equal(404);
    }
    expect((await call(b.key.key, 'POST', `/api/v2/sessions/${first.id}/runs`, { code: 'print(1)' })).status).to.equal(404);
    expect((await call(b.key.key, 'PUT', `/api/v2/sessions/${first.id}/files/x`, { content: 'x' })).status).to.equal(404);
    await call(a.key.key, 'DELETE', `/api/v2/sessions/${first.id}`);
    // A later session of the same account, in the same runner slots: an empty workspace.
    const later = await open(a.key.key, { compiler: PY });
    const seen = await run(a.key.key, later.id, { code: 'import os\nfor root, dirs, names in os.walk("/box"):\n  print(root, sorted(names))\nprint(os.listdir("/tmp"))' });
    expect(seen.output).to.equal("/box ['main.py']\n/box/out []\n[]\n");
  });

  it('ends an idle session at its idle_timeout, and holds the plan to its sessions at once', async () => {
    const { key } = await keyFor(s.db);
    const idle = await open(key.key, { compiler: PY, idle_timeout: 1 });
    const kept = await open(key.key, { compiler: PY });
    // The plan's default: two at once.
    const third = await call(key.key, 'POST', '/api/v2/sessions', { compiler: PY });
    expect(third.status).to.equal(429);
    expect((third.body!['error'] as { code: string }).code).to.equal('too_many_sessions');
    await new Promise((r) => setTimeout(r, 1500));
    const view = (await call(key.key, 'GET', `/api/v2/sessions/${idle.id}`)).body as unknown as View;
    expect(view).to.include({ state: 'ended', ending: 'idle_timeout' });
    const refused = await call(key.key, 'POST', `/api/v2/sessions/${idle.id}/runs`, { code: 'print(1)' });
    expect(refused.status).to.equal(410);
    // Its place is free again.
    await open(key.key, { compiler: PY });
    expect(((await call(key.key, 'GET', `/api/v2/sessions/${kept.id}`)).body as unknown as View).state).to.equal('open');
  });

  it('runs one run of a session at a time, and refuses bad requests with a clear error', async () => {
    const { key } = await keyFor(s.db);
    const session = await open(key.key, { compiler: PY });
    const answers = await Promise.all([0, 1].map(() => call(key.key, 'POST', `/api/v2/sessions/${session.id}/runs`, { code: 'import time\ntime.sleep(1)\nprint("done")' })));
    expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 409]);
    expect(answers.map((a) => (a.body!['error'] as { code?: string } | undefined)?.code).filter(Boolean)).to.deep.equal(['session_busy']);
    for (const body of [{}, { code: 'print(1)', command: ['ls'] }, { command: [] }, { command: ['ls'], shell: 'ls' }, { file: 'missing.py' }]) {
      const res = await call(key.key, 'POST', `/api/v2/sessions/${session.id}/runs`, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body!['error']).to.have.keys('code', 'message');
    }
    expect((await call(key.key, 'POST', '/api/v2/sessions', { compiler: PY, max_lifetime: 10 ** 7 })).status).to.equal(400);
    expect((await call(key.key, 'GET', '/api/v2/sessions/not-a-uuid')).status).to.equal(404);
  });

  // Kernel sessions: variables, imports and definitions outlive their cell; a cell that
  // fails or runs too long leaves the state from before it.
  describe('kernel', () => {
    const openKernel = async (key: string, body: Record<string, unknown> = {}): Promise<string> => {
      const res = await call(key, 'POST', '/api/v2/sessions', { compiler: PY, kind: 'kernel', ...body });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body).to.include({ kind: 'kernel', state: 'open' });
      return res.body!['id'] as string;
    };
    const cell = async (key: string, id: string, source: string): Promise<Cell> => {
      const res = await call(key, 'POST', `/api/v2/sessions/${id}/runs`, { cell: source });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const result = res.body as unknown as Cell;
      expect(result.kernel, JSON.stringify(result)).to.be.an('object');
      return result;
    };

    it('keeps a variable, a dict, an import and a function across three cells, and shows the last value as a notebook does', async () => {
      const { key } = await keyFor(s.db);
      const id = await openKernel(key.key);
      const first = await cell(key.key, id, 'import math\nx = 41\ntable = {"name": ["a", "b"], "n": [1, 2]}\ndef grow(v):\n    return v + 1\nprint("loaded")\nx');
      expect(first).to.include({ status: 'success', output: 'loaded\n' });
      expect(first.kernel).to.deep.equal({ value: '41', images: [], error: null, not_kept: [] });
      const second = await cell(key.key, id, 'x = grow(x)\ntable["n"].append(int(math.sqrt(9)))\nprint(x)');
      expect(second).to.include({ status: 'success', output: '42\n' });
      // No last expression (print returns None): nothing is shown.
      expect(second.kernel.value).to.equal(null);
      const third = await cell(key.key, id, 'table');
      expect(third.kernel.value).to.equal("{'name': ['a', 'b'], 'n': [1, 2, 3]}");
      expect((await cell(key.key, id, 'None')).kernel.value).to.equal(null);
      // The state is a file of the workspace; the driver and the result file are not kept.
      const files = (await call(key.key, 'GET', `/api/v2/sessions/${id}/files`)).body as { files: { path: string }[] };
      expect(files.files.map((f) => f.path)).to.deep.equal(['.kernel/state.pickle']);
    });

    it('names what it cannot keep, and a cell that raises keeps the state from before it', async () => {
      const { key } = await keyFor(s.db);
      const id = await openKernel(key.key);
      const made = await cell(key.key, id, 'kept = [1, 2]\ngen = (i for i in range(3))\nfh = open("/etc/hostname")\nsq = lambda v: v * v\nbase = 10\ndef add(v, b=base):\n    return v + b');
      expect(made.kernel.not_kept.map((n) => n.name).sort()).to.deep.equal(['fh', 'gen', 'sq']);
      expect(made.kernel.not_kept[0]!.reason).to.contain('not picklable');
      const failed = await cell(key.key, id, 'kept.append(3)\n1 / 0');
      expect(failed.status).to.equal('runtime_error');
      expect(failed.kernel.error).to.deep.equal({ name: 'ZeroDivisionError', message: 'division by zero' });
      expect(failed.error).to.contain('ZeroDivisionError').and.to.contain('File "<cell>", line 2');
      // As in a notebook, what ran before the exception stays.
      expect((await cell(key.key, id, 'kept, "gen" in dir(), add(1)')).kernel.value).to.equal('([1, 2, 3], False, 11)');
      const syntax = await cell(key.key, id, 'def broken(:');
      expect(syntax.kernel.error!.name).to.equal('SyntaxError');
      expect((await cell(key.key, id, 'kept')).kernel.value).to.equal('[1, 2, 3]');
    });

    it('ends a cell that runs too long, or that takes the interpreter down, and keeps the state from before it', async () => {
      const { key } = await keyFor(s.db);
      const id = await openKernel(key.key, { limits: { time: 1, wall_time: 2 } });
      await cell(key.key, id, 'n = 1');
      const long = await cell(key.key, id, 'n = 2\nwhile True:\n    pass');
      expect(long.status).to.equal('timeout');
      expect(long.kernel.error!.name).to.equal('Timeout');
      expect((await cell(key.key, id, 'n')).kernel.value).to.equal('1');
      const died = await cell(key.key, id, 'import os\nn = 3\nos._exit(7)');
      expect(died.kernel.error!.name).to.equal('KernelDied');
      expect(died.kernel.error!.message).to.contain('exit code 7');
      expect((await cell(key.key, id, 'n')).kernel.value).to.equal('1');
    });

    it('does not take a result the cell forged that fails its shape', async () => {
      const { key } = await keyFor(s.db);
      const id = await openKernel(key.key);
      const forged = await cell(key.key, id, 'import json, os\nopen(".kernel/result.json", "w").write(json.dumps({"value": 1, "images": "x"}))\nos._exit(0)');
      expect(forged.kernel.error!.name).to.equal('KernelDied');
      expect(forged.kernel.value).to.equal(null);
    });

    it('restarts: the state goes, the other files stay', async () => {
      const { key } = await keyFor(s.db);
      const id = await openKernel(key.key);
      await cell(key.key, id, 'secret = "kept"\nopen("notes.txt", "w").write("n")');
      const restarted = await call(key.key, 'POST', `/api/v2/sessions/${id}/restart`);
      expect(restarted.status, JSON.stringify(restarted.body)).to.equal(200);
      const after = await cell(key.key, id, '"secret" in dir(), open("notes.txt").read()');
      expect(after.kernel.value).to.equal("(False, 'n')");
      // A files session has no kernel to restart, and its runs take no cell.
      const files = await call(key.key, 'POST', '/api/v2/sessions', { compiler: PY });
      const fid = files.body!['id'] as string;
      expect((await call(key.key, 'POST', `/api/v2/sessions/${fid}/restart`)).status).to.equal(400);
      expect((await call(key.key, 'POST', `/api/v2/sessions/${fid}/runs`, { cell: '1' })).status).to.equal(400);
      expect((await call(key.key, 'POST', `/api/v2/sessions/${id}/runs`, { code: '1' })).status).to.equal(400);
      const c = await call(key.key, 'POST', '/api/v2/sessions', { compiler: 'gcc-9', kind: 'kernel' });
      expect(c.status).to.equal(400);
      expect((c.body!['error'] as { code: string }).code).to.equal('invalid_request');
    });

    it("lets no other account run, read or restart a kernel session", async () => {
      const a = await keyFor(s.db);
      const b = await keyFor(s.db);
      const id = await openKernel(a.key.key);
      await cell(a.key.key, id, 'token = "a-only"');
      expect((await call(b.key.key, 'POST', `/api/v2/sessions/${id}/runs`, { cell: 'token' })).status).to.equal(404);
      expect((await call(b.key.key, 'POST', `/api/v2/sessions/${id}/restart`)).status).to.equal(404);
      expect((await call(b.key.key, 'GET', `/api/v2/sessions/${id}/files/.kernel/state.pickle`)).status).to.equal(404);
      // B's own kernel starts empty.
      const other = await openKernel(b.key.key);
      expect((await cell(b.key.key, other, '"token" in dir()')).kernel.value).to.equal('False');
      expect((await cell(a.key.key, id, 'token')).kernel.value).to.equal("'a-only'");
    });

    it('returns the figures a cell leaves open as PNG, without savefig (a stand-in pyplot in the workspace)', async () => {
      // The python3.9 image has no matplotlib; a pyplot of the same calls checks the capture itself.
      const { key } = await keyFor(s.db);
      const id = await openKernel(key.key);
      const stub = [
        'import sys',
        '_open = {}',
        'class Figure:',
        '    def __init__(self, n): self.n = n',
        '    def savefig(self, buf, format=None):',
        `        buf.write(b"\\x89PNG\\r\\n\\x1a\\n" + bytes([self.n]))`,
        'def plot(*a):',
        '    n = len(_open) + 1',
        '    _open[n] = Figure(n)',
        'def get_fignums(): return sorted(_open)',
        'def figure(n): return _open[n]',
        'def close(which): _open.clear()',
      ].join('\n');
      for (const [path, content] of [['matplotlib/__init__.py', ''], ['matplotlib/pyplot.py', stub]] as const) {
        expect((await call(key.key, 'PUT', `/api/v2/sessions/${id}/files/${path}`, { content })).status).to.equal(200);
      }
      const drawn = await cell(key.key, id, 'import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.plot([3])');
      expect(drawn.kernel.images.map((i) => i.name)).to.deep.equal(['figure-1.png', 'figure-2.png']);
      expect(Buffer.from(drawn.kernel.images[0]!.content_base64, 'base64').subarray(0, 4).toString('latin1')).to.equal('\x89PNG');
      // Shown figures are closed: the next cell returns only its own.
      expect((await cell(key.key, id, 'plt.get_fignums()')).kernel).to.include({ value: '[]' });
    });

    it('keeps a pandas DataFrame across three cells and returns a Matplotlib plot as PNG without savefig (python-3.13, the image with both)', async function () {
      // The default python3.9 image has neither; the trixie interpreters' image has both.
      const image = imageRootfs('trixie-interpreters');
      if (!('rootfs' in image)) {
        console.log('      PENDING: the trixie-interpreters image (python-3.13, with pandas and Matplotlib) is not installed: runbox-admin image build trixie-interpreters');
        this.skip();
      }
      const { key } = await keyFor(s.db);
      const id = await openKernel(key.key, { compiler: 'python-3.13' });
      await cell(key.key, id, 'import pandas as pd\ndf = pd.DataFrame({"x": [1, 2, 3]})');
      expect((await cell(key.key, id, 'df["y"] = df.x * 2\nint(df.y.sum())')).kernel).to.include({ value: '12' });
      const plotted = await cell(key.key, id, 'import matplotlib.pyplot as plt\nplt.plot(df.x, df.y)\nlen(df)');
      expect(plotted.kernel).to.include({ value: '3' });
      expect(plotted.kernel.images).to.have.length(1);
      expect(Buffer.from(plotted.kernel.images[0]!.content_base64, 'base64').subarray(1, 4).toString()).to.equal('PNG');
    });
  });
});
