import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { readManifest } from '../../src/compilers/availability.js';
import { catalogue } from '../../src/compilers/catalogue.js';
import { loadConfig, type Config } from '../../src/config.js';
import { startRunner, type Runner } from '../../src/runner/daemon.js';
import { executeJob, type JobToRun } from '../../src/runner/execute.js';
import { NotStarted } from '../../src/runner/verdict.js';
import type { RunResult } from '../../src/result.js';
import type { Sandbox } from '../../src/sandbox/spec.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { claim, complete, reapExpired } from '../../src/queue/index.js';
import { accountUsage, enqueue, expectNoDrift, expireLease, makeAccount, maxOverlap, stateOf, waitForStates } from '../helpers/queue-rows.js';
import { successResult } from '../helpers/run-result.js';
import { createSandbox } from '../../src/sandbox/index.js';

const base = loadConfig();

const thiefResult = (id: string) => successResult(id, { output: '', time: null, total: null, memory: null });
const silent = pino({ level: process.env.TEST_LOG ?? 'silent' });

describe('runner (real sandbox)', function () {
  let t: TestDatabase;
  let sandbox: Sandbox | undefined;
  let unavailable: string | undefined;
  const runners: Runner[] = [];

  before(async () => {
    t = await freshDatabase('runner');
    try {
      sandbox = await createSandbox(base);
    } catch (err) {
      unavailable = (err as Error).message;
    }
  });
  afterEach(async () => {
    while (runners.length) await runners.pop()!.stop();
    if (t) await expectNoDrift(t.db);
  });
  after(async () => {
    await t?.drop();
  });

  /** Skips (saying why) unless the sandbox and the images are there. */
  function need(ctx: Mocha.Context, ...images: string[]): Sandbox {
    if (!sandbox) {
      console.log(`      SKIPPED: sandbox not available yet (${unavailable})`);
      ctx.skip();
    }
    for (const image of images) {
      if (!readManifest(base.RUNBOX_IMAGES_DIR, image)) {
        console.log(`      SKIPPED: image ${image} is not installed in ${base.RUNBOX_IMAGES_DIR}`);
        ctx.skip();
      }
    }
    return sandbox!;
  }

  const job = (over: Partial<JobToRun>): JobToRun => ({
    id: '00000000-0000-4000-8000-000000000001',
    compiler: 'python-3.9.7',
    code: 'print("hi")\n',
    input: null,
    tests: null,
    extra_params: null,
    ...over,
  });
  const run = (sb: Sandbox, j: Partial<JobToRun>, imagesDir = base.RUNBOX_IMAGES_DIR) => executeJob(job(j), sb, { imagesDir, slot: 0 });

  function configFor(over: Partial<Config> = {}): Config {
    return {
      ...base,
      RUNBOX_DATABASE_URL: t.url,
      RUNBOX_RUNNER_SLOTS: 3,
      RUNBOX_RUNNER_ID: `test-runner-${runners.length}`,
      RUNBOX_POLL_MS: 250,
      ...over,
    };
  }
  async function runner(over: Partial<Config> = {}, opts: { drainMs?: number } = {}): Promise<Runner> {
    const r = await startRunner({ db: t.db, config: configFor(over), sandbox: sandbox!, log: silent, ...opts });
    runners.push(r);
    return r;
  }

  /** Waits until the runner has started a job (claimed and handed to the sandbox). */
  async function runningIn(r: Runner): Promise<void> {
    while (r.running === 0) await new Promise((res) => setTimeout(res, 20));
  }

  describe('executeJob', () => {
    it('runs a Python program with its input', async function () {
      const sb = need(this, 'python3.9');
      const r = await run(sb, { code: 'import sys\nprint(sys.stdin.read().upper(), end="")\n', input: 'abc\ndef\n', extra_params: { tag: 7 } });
      expect(r).to.include({ status: 'success', output: 'ABC\nDEF\n', error: '', exit_code: 0, signal: null, truncated: false });
      expect(r).to.include({ compile_output: null, compiler: 'python-3.9.7', stdout_truncated: false, stderr_truncated: false });
      expect(r.extra_params).to.deep.equal({ tag: 7 });
      expect(r.total).to.be.a('number');
      expect(r.tests).to.equal(undefined);
    });

    it('reports a non-zero exit as runtime_error with stderr', async function () {
      const sb = need(this, 'python3.9');
      const r = await run(sb, { code: 'import sys\nsys.stderr.write("boom\\n")\nsys.exit(3)\n' });
      expect(r).to.include({ status: 'runtime_error', exit_code: 3, error: 'boom\n' });
    });

    it('a program that exits 137 by itself is a runtime_error, not a memory or time verdict', async function () {
      const sb = need(this, 'python3.9');
      const r = await run(sb, { code: 'import sys\nsys.exit(137)\n' });
      expect(r).to.include({ status: 'runtime_error', exit_code: 137 });
    });

    it('delivers invalid UTF-8 and NUL output safely', async function () {
      const sb = need(this, 'python3.9');
      const r = await run(sb, { code: 'import sys\nsys.stdout.buffer.write(b"a\\xffb\\x00c")\n' });
      expect(r.output).to.equal('a\uFFFDb\uFFFDc');
    });

    it('runs every test in a fresh sandbox and reports the first failing one on top', async function () {
      const sb = need(this, 'python3.9');
      const code = 'import os\nn = int(input())\nopen("mark", "a").write("x")\nprint(n * 2, len(open("mark").read()))\n';
      const r = await run(sb, { code, tests: [{ input: '1' }, { input: 'x' }, { input: '3' }] });
      expect(r.tests).to.have.length(3);
      // "1" in the mark count: each test starts from a clean workspace.
      expect(r.tests![0]).to.include({ status: 'success', output: '2 1\n' });
      expect(r.tests![1]).to.include({ status: 'runtime_error', exit_code: 1 });
      expect(r.tests![1]!.error).to.contain('ValueError');
      expect(r.tests![2]).to.include({ status: 'success', output: '6 1\n' });
      expect(r).to.include({ status: 'runtime_error', exit_code: 1 });
      expect(r.error).to.contain('ValueError');
    });

    it('reports the last test on top when all pass', async function () {
      const sb = need(this, 'python3.9');
      const r = await run(sb, { code: 'print(int(input()) + 1)\n', tests: [{ input: '1' }, { input: '41' }] });
      expect(r.tests!.map((x) => x.output)).to.deep.equal(['2\n', '42\n']);
      expect(r).to.include({ status: 'success', output: '42\n' });
    });

    it('passes forced stops through from the sandbox: output flood, process limit, memory', async function () {
      const sb = need(this, 'python3.9');
      const flood = await run(sb, { code: 'import sys\nwhile True:\n    sys.stdout.write("x" * 65536)\n' });
      expect(flood).to.include({ status: 'output_limit', exit_code: 153, signal: 25, truncated: true, stdout_truncated: true });
      expect(flood.output).to.have.length(64 * 1024);
      const forks = await run(sb, {
        code: 'import os, time\nfor i in range(40):\n    if os.fork() == 0:\n        time.sleep(5)\n        os._exit(0)\ntime.sleep(5)\n',
      });
      expect(forks).to.include({ status: 'process_limit', exit_code: 71 });
      const hog = await run(sb, { code: 'blocks = []\nwhile True:\n    blocks.append(bytearray(16 * 1024 * 1024))\n' });
      expect(hog).to.include({ status: 'memory_limit', exit_code: 137, signal: 9 });
    });

    it('compiles C once and runs the artifact', async function () {
      const sb = need(this, 'gcc');
      const code = '#include <stdio.h>\nint main(void) { int n; if (scanf("%d", &n) != 1) return 2; printf("%d\\n", n * n); return 0; }\n';
      const r = await run(sb, { compiler: 'gcc-4.9', code, tests: [{ input: '3' }, { input: '12' }] });
      expect(r.tests!.map((x) => x.output)).to.deep.equal(['9\n', '144\n']);
      expect(r.status).to.equal('success');
      expect(r.compile_output).to.be.a('string');
    });

    it('reports a compiler error as compile_error with the messages', async function () {
      const sb = need(this, 'gcc');
      const r = await run(sb, { compiler: 'gcc-4.9', code: 'int main(void) { return undefined_name; }\n' });
      expect(r.status).to.equal('compile_error');
      expect(r.output).to.equal('');
      expect(r.error).to.contain('undefined_name');
      expect(r.compile_output).to.equal(r.error);
      expect(r.exit_code).to.not.equal(0);
    });

    it('compiles Java named after its public class and runs it with nested and anonymous classes', async function () {
      const sb = need(this, 'openjdk-11');
      const code = [
        'import java.util.*;',
        'public class Solution {',
        '  static class Pair { final int a, b; Pair(int a, int b) { this.a = a; this.b = b; } }',
        '  public static void main(String[] args) {',
        '    Scanner in = new Scanner(System.in);',
        '    Pair p = new Pair(in.nextInt(), in.nextInt());',
        '    Comparator<Integer> rev = new Comparator<Integer>() { public int compare(Integer x, Integer y) { return y - x; } };',
        '    List<Integer> l = new ArrayList<>(Arrays.asList(p.a, p.b));',
        '    l.sort(rev);',
        '    System.out.println(l + " " + (p.a + p.b));',
        '  }',
        '}',
      ].join('\n');
      const r = await run(sb, { compiler: 'openjdk-11', code, input: '3 9\n' });
      expect(r.status, r.error).to.equal('success');
      expect(r.output).to.equal('[9, 3] 12\n');
    });

    // The recipe's own hello program through the whole path, for every installed image:
    // source naming, compile stage, artifacts and run argv together.
    for (const [compiler, entry] of catalogue().entries) {
      if (entry.retired) continue;
      for (const [which, program] of [['hello', entry.hello], ['level', entry.level]] as const) {
        it(`runs the ${compiler} ${which} program`, async function () {
          const sb = need(this, entry.image);
          const r = await run(sb, { compiler, code: program.code });
          expect(r.status, `${r.error}\n${r.compile_output ?? ''}`).to.equal('success');
          expect(r.output).to.equal(program.output);
        });
      }
    }

    it('refuses to start without the image', async function () {
      const sb = need(this);
      const empty = mkdtempSync(join(tmpdir(), 'runbox-noimages-'));
      try {
        let caught: unknown;
        await run(sb, {}, empty).catch((e: unknown) => (caught = e));
        expect(caught).to.be.instanceOf(NotStarted);
        expect((caught as Error).message).to.contain('python3.9');
      } finally {
        rmSync(empty, { recursive: true, force: true });
      }
    });
  });

  describe('daemon', () => {
    it('runs queued jobs to completion and records itself', async function () {
      need(this, 'python3.9');
      const acct = await makeAccount(t.db, { running: 5 });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await enqueue(t.db, acct, { code: `import os\nprint(${i}, os.getuid())\n` }));
      const cfg = configFor();
      const r = await runner();
      await waitForStates(t.db, ids, ['finished']);
      for (const [i, id] of ids.entries()) {
        const row = await stateOf(t.db, id);
        const result = row.result as RunResult;
        expect(result.status, result.error).to.equal('success');
        expect(result.id).to.equal(id);
        const [n, uid] = result.output.trim().split(' ').map(Number);
        expect(n).to.equal(i);
        // Each run had a slot of this runner: its uid is base + slot.
        expect(uid).to.be.within(cfg.RUNBOX_SANDBOX_UID_BASE, cfg.RUNBOX_SANDBOX_UID_BASE + cfg.RUNBOX_RUNNER_SLOTS - 1);
        expect(row).to.include({ attempts: 1, locked_by: r.id, refunded: false });
      }
      const me = await t.db.selectFrom('runners').selectAll().where('id', '=', r.id).executeTakeFirstOrThrow();
      expect(me).to.include({ slots: 3, launcher: sandbox!.launcher, stopped_at: null });
      await r.stop();
      runners.pop();
      const after = await t.db.selectFrom('runners').select('stopped_at').where('id', '=', r.id).executeTakeFirstOrThrow();
      expect(after.stopped_at).to.be.instanceOf(Date);
    });

    it('fails and refunds a job whose image is missing', async function () {
      need(this);
      const empty = mkdtempSync(join(tmpdir(), 'runbox-noimages-'));
      try {
        const acct = await makeAccount(t.db);
        const id = await enqueue(t.db, acct, { billed: true, units: 2 });
        expect(await accountUsage(t.db, acct)).to.equal(2);
        await runner({ RUNBOX_IMAGES_DIR: empty });
        await waitForStates(t.db, [id], ['failed']);
        const row = await stateOf(t.db, id);
        expect(row.refunded).to.equal(true);
        expect(row.last_error).to.contain('not installed');
        expect((row.result as RunResult).status).to.equal('internal_error');
        expect(await accountUsage(t.db, acct)).to.equal(0);
      } finally {
        rmSync(empty, { recursive: true, force: true });
      }
    });

    it("respects an account's runs-at-once limit while other accounts use the free slots", async function () {
      need(this, 'python3.9');
      const one = await makeAccount(t.db, { running: 1 });
      const other = await makeAccount(t.db, { running: 5 });
      const sleepy = 'import time\ntime.sleep(0.3)\nprint("ok")\n';
      const limited: string[] = [];
      const free: string[] = [];
      for (let i = 0; i < 4; i++) limited.push(await enqueue(t.db, one, { code: sleepy }));
      for (let i = 0; i < 4; i++) free.push(await enqueue(t.db, other, { code: sleepy }));
      await runner({ RUNBOX_RUNNER_SLOTS: 4 });
      await waitForStates(t.db, [...limited, ...free], ['finished']);
      const rows = await t.db.selectFrom('submissions').select(['account_id', 'started_at', 'finished_at']).execute();
      const intervals = (acct: string) =>
        rows.filter((r) => String(r.account_id) === acct).map((r) => [r.started_at!.getTime(), r.finished_at!.getTime()] as const);
      expect(maxOverlap(intervals(one))).to.equal(1);
      expect(maxOverlap(intervals(other))).to.be.at.most(4);
    });

    it('abandons a run whose lease was taken away, leaving the job to its new holder', async function () {
      need(this, 'python3.9');
      const acct = await makeAccount(t.db);
      const id = await enqueue(t.db, acct, { code: 'import time\ntime.sleep(25)\n' });
      // The shortest lease, so the runner heart-beats (and notices) often.
      const r = await runner({ RUNBOX_LEASE_SECONDS: 5 });
      await runningIn(r);
      // As if the runner had missed its heart-beats: requeued and claimed elsewhere, in
      // one transaction so the runner cannot take it back first.
      await t.db.transaction().execute(async (trx) => {
        await expireLease(trx, id);
        expect((await reapExpired(trx)).requeued).to.deep.equal([id]);
        expect(await claim(trx, 'thief', 1, 60)).to.have.length(1);
      });
      while (r.running > 0) await new Promise((res) => setTimeout(res, 50));
      const row = await stateOf(t.db, id);
      expect(row).to.include({ state: 'running', locked_by: 'thief', attempts: 2 });
      expect(await complete(t.db, 'thief', id, thiefResult(id))).to.equal(true);
    });

    it('on stop, lets a running job finish', async function () {
      need(this, 'python3.9');
      const acct = await makeAccount(t.db);
      const id = await enqueue(t.db, acct, { code: 'import time\ntime.sleep(1)\nprint("done")\n' });
      const r = await runner();
      await runningIn(r);
      await r.stop();
      runners.pop();
      const row = await stateOf(t.db, id);
      expect(row.state).to.equal('finished');
      expect((row.result as RunResult).output).to.equal('done\n');
    });

    it('on stop, hands back a job that outlasts the drain bound', async function () {
      need(this, 'python3.9');
      const acct = await makeAccount(t.db);
      const id = await enqueue(t.db, acct, { code: 'import time\ntime.sleep(25)\n', billed: true });
      const r = await runner({}, { drainMs: 300 });
      await runningIn(r);
      await r.stop();
      runners.pop();
      const row = await stateOf(t.db, id);
      expect(row).to.include({ state: 'queued', attempts: 0, locked_by: null, refunded: false });
      expect(await accountUsage(t.db, acct)).to.equal(1);
    });
  });
});
