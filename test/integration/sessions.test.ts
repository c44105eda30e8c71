import { expect } from 'chai';
import { sql } from 'kysely';
import type { RunResult } from '../../src/result.js';
import { billedSubmissions, keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { TEST_SLOT_BASE } from '../helpers/sandbox.js';

// Sessions end to end: the real API, a real runner, real sandboxed runs. A session's
// workspace outlives its runs; nothing of it reaches another account or another session.

const C = 'gcc-9';
const PY = 'python-3.9.7';

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
});
