import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { runnerCgroups } from '../../src/sandbox/index.js';
import { BASE_ENV, type Sandbox, type SandboxSpec } from '../../src/sandbox/spec.js';
import { expectHostClean, hostReportsMemoryPeak, imageRootfs, imageSandboxOrSkip, LAUNCHERS, leftoverJobCgroups, processesOf, TEST_SLOT_BASE, uidOfSlot } from '../helpers/sandbox.js';

// The sandbox's ordinary behaviour, under every launcher on this host: files in and
// out, stdin, exit codes and signals, the environment, streaming, cancellation and
// the counters. Real launchers, real cgroups, the real python3.9 image.

const SLOT = TEST_SLOT_BASE + 10;

const commOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
};

for (const launcher of LAUNCHERS) {
  describe(`sandbox (${launcher})`, function () {
    let sb: Sandbox;
    let rootfs: string;

    before(async function () {
      ({ sb, rootfs } = await imageSandboxOrSkip(this, launcher, 'python3.9'));
    });

    afterEach(() => expectHostClean([SLOT, SLOT + 1]));

    const run = (argv: string[], more: Partial<SandboxSpec> = {}) => sb.run({ rootfs, argv, slot: SLOT, ...more });
    const py = (code: string, more: Partial<SandboxSpec> = {}) => run(['python3.9', '-c', code], more);

    it('stages files in, feeds stdin, and collects regular files only', async () => {
      const r = await run(
        ['python3.9', 'main.py'],
        {
          files: [
            { name: 'main.py', mode: 0o644, content: Buffer.from('import os,sys\nd=sys.stdin.read()\nprint(d.upper(), end="")\nopen("result.txt","w").write(d[::-1])\nos.symlink("/etc/passwd","link")\nos.mkdir("dir")\n') },
          ],
          stdin: 'hello\n',
          collect: ['result.txt', 'link', 'dir', 'missing', 'main.py'],
        },
      );
      expect(r.status, r.diagnostic).to.equal('exited');
      expect(r.exitCode).to.equal(0);
      expect(r.stdout.toString()).to.equal('HELLO\n');
      expect(r.collected.map((f) => [f.name, f.content.toString()])).to.deep.equal([
        ['result.txt', '\nolleh'],
        ['main.py', r.collected[1]?.content.toString()],
      ]);
      expect(r.collected[1]!.content.toString()).to.match(/^import os,sys/);
    });

    it('stages files in directories and empty directories; collects a directory\'s regular files in path order, within the bounds', async () => {
      const r = await run(
        ['python3.9', 'src/app/main.py'],
        {
          files: [
            { name: 'src/app/main.py', mode: 0o644, content: Buffer.from(['import os', 'print(sorted(os.listdir("src")), os.listdir("out"), open("src/lib/data.txt").read())', 'os.makedirs("out/z/deep", exist_ok=True)', 'for n in ["b", "a", "z/deep/c", "d"]:', '    open("out/" + n, "w").write(n * 3)', 'os.symlink("/etc/passwd", "out/aa-link")', 'os.mkfifo("out/ab-fifo")', 'os.symlink("/etc", "out/ac-dir")'].join('\n')) },
            { name: 'src/lib/data.txt', mode: 0o600, content: Buffer.from('data') },
          ],
          dirs: ['out'],
          collect: ['out/'],
          collectBounds: { bytes: 1 << 20, files: 3 },
        },
      );
      expect(r.status, r.diagnostic).to.equal('exited');
      expect(r.stdout.toString()).to.equal("['app', 'lib'] [] data\n");
      // Byte order of the paths; the symlinks and the FIFO are not files; the fourth is left out.
      expect(r.collected.map((f) => [f.name, f.content.toString()])).to.deep.equal([['out/a', 'aaa'], ['out/b', 'bbb'], ['out/d', 'ddd']]);
      expect(r.omitted).to.deep.equal([{ name: 'out/z/deep/c', size: 24, reason: 'limits' }]);
    });

    it('a file named with bytes that are not UTF-8 is listed, escaped, outside the bounds; the stage keeps its end and the other files', async () => {
      const r = await py('import os\nfor n in [b"a", b"\\xff\\xfe", b"d\\xc3(", b"z"]:\n    open(b"out/" + n, "wb").write(n)\nprint("ran")\nraise SystemExit(3)', {
        dirs: ['out'],
        collect: ['out/'],
        collectBounds: { bytes: 1 << 20, files: 2 },
      });
      expect(r.status, r.diagnostic).to.equal('exited');
      expect(r.exitCode).to.equal(3);
      expect(r.stdout.toString()).to.equal('ran\n');
      // Neither bad name takes one of the two files the bounds allow.
      expect(r.collected.map((f) => [f.name, f.content.toString('latin1')])).to.deep.equal([['out/a', 'a'], ['out/z', 'z']]);
      expect(r.omitted).to.deep.equal([
        { name: 'out/d\\xc3(', size: 3, reason: 'name' },
        { name: 'out/\\xff\\xfe', size: 2, reason: 'name' },
      ]);
      expect(r.collectLost).to.equal(undefined);
    });

    it('never follows a symlink the program leaves where a path to collect goes, nor one in a directory it walks', async () => {
      const r = await run(['python3.9', '-c', 'import os\nos.rmdir("out")\nos.symlink("/etc", "out")\nos.symlink("/etc", "cls")\n'], {
        dirs: ['out'],
        collect: ['out/', 'cls/', 'out/passwd', 'cls/passwd', './'],
      });
      expect(r.status, r.diagnostic).to.equal('exited');
      expect(r.collected.map((f) => f.name)).to.deep.equal([]);
    });

    it('gives the program real pipes for stdin, stdout and stderr, which it can open by name', async () => {
      const r = await run(
        ['python3.9', '-c', 'import os,stat,sys\nprint([stat.S_ISFIFO(os.fstat(f).st_mode) for f in (0, 1, 2)], flush=True)\nprint(open("/proc/self/fd/0").read(), end="", flush=True)\nopen("/proc/self/fd/1", "w").write("out\\n")\nopen("/proc/self/fd/2", "w").write("err\\n")'],
        { stdin: 'in\n' },
      );
      expect([r.status, r.stdout.toString(), r.stderr.toString()]).to.deep.equal(['exited', '[True, True, True]\nin\nout\n', 'err\n']);
    });

    it('gives /dev its usual nodes and links: /dev/stdin, /dev/stdout, /dev/fd, a pty', async () => {
      const r = await run(
        ['bash', '-c', 'cat /dev/stdin; echo out > /dev/stdout; echo err > /dev/stderr; cat <(echo fd); python3.9 -c "import os; m, s = os.openpty(); os.write(s, b\\"pty\\\\n\\"); print(os.read(m, 10).decode().strip())"'],
        { stdin: 'in\n' },
      );
      expect([r.status, r.stdout.toString(), r.stderr.toString()]).to.deep.equal(['exited', 'in\nout\nfd\npty\n', 'err\n']);
    });

    it('does not wait for a program that never reads its stdin, nor for what it left running', async () => {
      const big = Buffer.alloc(1 << 20, 'x');
      const r = await run(['sh', '-c', 'sleep 60 & echo started'], { stdin: big });
      expect([r.status, r.exitCode, r.stdout.toString()]).to.deep.equal(['exited', 0, 'started\n']);
    });

    it('keeps the staged file mode', async () => {
      const r = await run(['./tool'], { files: [{ name: 'tool', mode: 0o755, content: Buffer.from('#!/bin/sh\necho tool ran\n') }] });
      expect(r.stdout.toString()).to.equal('tool ran\n');
    });

    it('reports exit codes and signals as the program ended', async () => {
      const exited = await run(['sh', '-c', 'echo out; echo err >&2; exit 3']);
      expect([exited.status, exited.exitCode, exited.signal]).to.deep.equal(['exited', 3, null]);
      expect(exited.stderr.toString()).to.equal('err\n');
      const killed = await run(['sh', '-c', 'kill -TERM $$']);
      expect([killed.status, killed.exitCode, killed.signal]).to.deep.equal(['signaled', 143, 15]);
      const missing = await run(['no-such-program']);
      expect([missing.status, missing.exitCode]).to.deep.equal(['exited', 127]);
      expect(missing.stderr.toString()).to.equal('runbox-init: cannot execute no-such-program: No such file or directory\n');
      const notExecutable = await run(['./data'], { files: [{ name: 'data', mode: 0o644, content: Buffer.from('x') }] });
      expect([notExecutable.exitCode, notExecutable.stderr.toString()]).to.deep.equal([127, 'runbox-init: cannot execute ./data: Permission denied\n']);
      // An executable file that is no program is refused, not handed to a shell.
      const notAProgram = await run(['./script'], { files: [{ name: 'script', mode: 0o755, content: Buffer.from('echo ran by a shell\n') }] });
      expect([notAProgram.exitCode, notAProgram.stdout.toString(), notAProgram.stderr.toString()]).to.deep.equal([127, '', 'runbox-init: cannot execute ./script: Exec format error\n']);
    });

    it('gives the program BASE_ENV plus the spec env and nothing of the runner', async () => {
      process.env.RUNBOX_SANDBOX_TEST_SECRET = 'do-not-leak';
      const r = await py('import os,json; print(json.dumps(dict(os.environ)))', { env: { EXTRA: '1' } });
      delete process.env.RUNBOX_SANDBOX_TEST_SECRET;
      expect(JSON.parse(r.stdout.toString())).to.deep.equal({ ...BASE_ENV, EXTRA: '1' });
    });

    it('runs as the slot uid with the workspace as cwd', async () => {
      const r = await py('import os; print(os.getuid(), os.getgid(), os.getcwd(), os.geteuid())');
      const uid = uidOfSlot(SLOT);
      expect(r.stdout.toString()).to.equal(`${uid} ${uid} /box ${uid}\n`);
    });

    it('streams kept output as it arrives', async () => {
      const seen: string[] = [];
      const r = await py('import sys; print("a", flush=True); print("b", file=sys.stderr, flush=True)', {
        onOutput: (stream, chunk) => seen.push(`${stream}:${chunk.toString()}`),
      });
      expect(r.status).to.equal('exited');
      expect(seen.sort()).to.deep.equal(['stderr:b\n', 'stdout:a\n']);
    });

    it('stops on abort and reports internal_error', async () => {
      const ac = new AbortController();
      const p = run(['sleep', '60'], { signal: ac.signal });
      setTimeout(() => ac.abort(), 300);
      const r = await p;
      expect(r.status).to.equal('internal_error');
      expect(r.diagnostic).to.equal('aborted');
    });

    it('compiles in the gcc image and runs the collected binary in a fresh sandbox', async function () {
      const gcc = imageRootfs('gcc');
      if ('skip' in gcc) {
        console.log(`      SKIPPED: ${gcc.skip}`);
        return this.skip();
      }
      const source = { name: 'main.c', mode: 0o644, content: Buffer.from('#include <stdio.h>\nint main(void){ int c, n = 0; while ((c = getchar()) != EOF) n++; printf("%d bytes\\n", n); return 0; }\n') };
      const compiled = await sb.run({ rootfs: gcc.rootfs, argv: ['/usr/bin/gcc-9', '-O2', '-o', 'main', 'main.c'], files: [source], collect: ['main'], slot: SLOT });
      expect([compiled.status, compiled.exitCode], compiled.stderr.toString()).to.deep.equal(['exited', 0]);
      expect(compiled.collected.map((f) => [f.name, f.mode & 0o111 ? 'x' : '-'])).to.deep.equal([['main', 'x']]);
      const ran = await sb.run({ rootfs: gcc.rootfs, argv: ['./main'], files: compiled.collected, stdin: 'abc', slot: SLOT });
      expect([ran.status, ran.stdout.toString()]).to.deep.equal(['exited', '3 bytes\n']);
    });

    it('dies with a runner that is killed, and the next runner sweeps its job cgroups', async () => {
      const index = new URL('../../src/sandbox/index.js', import.meta.url).href;
      const config = new URL('../../src/config.js', import.meta.url).href;
      const script = `
        const { createSandbox } = await import(${JSON.stringify(index)});
        const { loadConfig } = await import(${JSON.stringify(config)});
        const sb = await createSandbox(loadConfig(), { launcher: ${JSON.stringify(launcher)} });
        await sb.run({ rootfs: ${JSON.stringify(rootfs)}, argv: ['sh', '-c', 'echo ready; sleep 60'], slot: ${SLOT},
          onOutput: () => process.stdout.write('ready\\n') });`;
      const runner = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve, reject) => {
        runner.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
        runner.on('exit', (code) => reject(new Error(`runner exited ${code}`)));
      });
      const gone = new Promise((r) => runner.on('exit', r));
      runner.kill('SIGKILL');
      await gone;
      // The launcher dies with its parent and the sandbox with the launcher.
      for (let i = 0; i < 500 && processesOf([uidOfSlot(SLOT)]).length > 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(processesOf([uidOfSlot(SLOT)])).to.deep.equal([]);
      const swept = await (await runnerCgroups()).sweepStale();
      expect(swept.length).to.be.greaterThan(0);
      for (const dir of swept) expect(dir).to.match(new RegExp(`/job-${runner.pid}-\\d+$`));
    });

    it('keeps the slot\'s next sandbox standing between runs, fresh, and releases it on close', async () => {
      const first = await py('open("/box/mark", "w"); open("/tmp/mark", "w"); print("first")');
      expect(first.stdout.toString()).to.equal('first\n');
      // A fresh job cgroup with a sandbox in it, runbox-init waiting as the slot's user,
      // is ready for the slot's next stage before that stage is asked for.
      const initWaiting = () => processesOf([uidOfSlot(SLOT)]).some((pid) => commOf(pid) === 'init');
      for (let i = 0; i < 300 && !(leftoverJobCgroups().length > 0 && initWaiting()); i++) await new Promise((r) => setTimeout(r, 10));
      expect(leftoverJobCgroups()).to.have.length.greaterThan(0);
      expect(initWaiting(), 'runbox-init waiting in the prepared sandbox').to.equal(true);
      // It is a new sandbox: nothing of the last run's workspace or /tmp.
      const r = await py('import os; print("warm", os.path.exists("/box/mark"), os.path.exists("/tmp/mark"))');
      expect([r.status, r.stdout.toString()]).to.deep.equal(['exited', 'warm False False\n']);
      await sb.close!();
      expect(leftoverJobCgroups()).to.deep.equal([]);
      expect(processesOf([uidOfSlot(SLOT)])).to.deep.equal([]);
    });

    it('calls the prepared sandbox off for a stage of another image, and runs that stage afresh', async () => {
      await py('pass');
      const waiting = () => processesOf([uidOfSlot(SLOT)]).filter((pid) => commOf(pid) === 'init');
      for (let i = 0; i < 300 && waiting().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      const [prepared] = waiting();
      expect(prepared, 'runbox-init waiting in the prepared sandbox').to.be.a('number');
      // Another path is another image as far as the prepared sandbox is concerned.
      const r = await sb.run({ rootfs: `${rootfs}/.`, argv: ['python3.9', '-c', 'print("other")'], slot: SLOT });
      expect([r.status, r.stdout.toString()]).to.deep.equal(['exited', 'other\n']);
      expect(existsSync(`/proc/${prepared}`), 'the prepared sandbox was called off').to.equal(false);
    });

    it('runs a stage with limits of its own in a job cgroup made for them', async () => {
      await py('pass');
      const small = await py('a = b"x" * (96 << 20)', { limits: { memoryBytes: 64 << 20 } });
      expect(small.status).to.equal('memory_limit');
      const normal = await py('a = b"x" * (96 << 20); print("ok")');
      expect([normal.status, normal.stdout.toString()]).to.deep.equal(['exited', 'ok\n']);
    });

    it('reports a launcher that cannot start as internal_error with a diagnostic', async () => {
      const r = await sb.run({ rootfs: '/nonexistent/rootfs', argv: ['true'], slot: SLOT });
      expect(r.status).to.equal('internal_error');
      expect([r.exitCode, r.signal]).to.deep.equal([null, null]);
      // Seen as the stage ends, or (a pooled sandbox whose launcher is gone by then) as it is entered.
      expect(r.diagnostic).to.match(/no end record from runbox-init; launcher exit|cannot enter the pooled sandbox/);
    });

    it('allows 16 processes at once', async () => {
      const r = await py('import os,time\nkids=[]\nfor i in range(15):\n  pid=os.fork()\n  if pid==0:\n    time.sleep(1); os._exit(0)\n  kids.append(pid)\nfor k in kids: os.waitpid(k,0)\nprint("done")');
      expect([r.status, r.stdout.toString()]).to.deep.equal(['exited', 'done\n']);
    });

    it('reports CPU time and peak memory from the job cgroup (peak memory where the kernel gives it)', async () => {
      const r = await py('x = b"a" * (64 << 20); s = sum(range(2_000_000))');
      expect(r.status).to.equal('exited');
      expect(r.cpuMs).to.be.a('number').and.greaterThan(0);
      if (await hostReportsMemoryPeak()) expect(r.memoryPeakBytes).to.be.a('number').and.greaterThan(64 << 20);
      else expect(r.memoryPeakBytes, 'cgroup v2 before Linux 5.19 has no memory.peak').to.equal(null);
      expect(r.wallMs).to.be.greaterThan(0);
    });

    it('measures the program, not the launcher: on cgroup v1 it lives in the job\'s program cgroup', async function () {
      const cgroups = await runnerCgroups();
      const r = await run(['cat', '/proc/self/cgroup']);
      expect(r.status).to.equal('exited');
      if (await hostReportsMemoryPeak()) expect(r.memoryPeakBytes).to.be.a('number').and.greaterThan(0);
      expect(r.cpuMs).to.be.a('number').and.greaterThan(0);
      if (cgroups.version !== 1) {
        console.log('      SKIPPED: cgroup v2 host: the job is measured as a whole');
        return this.skip();
      }
      // The launcher stays in the job, uncounted. A pooled sandbox gives each stage a memory
      // cgroup of its own below the job (a fresh one: its peak is the stage's) and counts its
      // CPU in the job's program cgroup; the stage's cgroup namespace is rooted there, so the
      // program reads "/" (the host shows where it is).
      const inside = r.stdout.toString().trim().split('\n').filter((l) => /:(memory|cpuacct):/.test(l)).map((l) => l.split(':').slice(1).join(':'));
      const marker = `runbox-where-${process.pid}`;
      const running = run(['python3.9', '-c', `import time\n# ${marker}\ntime.sleep(3)`]);
      let host: string[] = [];
      for (let i = 0; i < 100 && host.length === 0; i++) {
        await new Promise((res) => setTimeout(res, 50));
        for (const pid of processesOf([uidOfSlot(SLOT)])) {
          try {
            if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) continue;
            host = readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n').filter((l) => /:(memory|cpuacct):/.test(l)).map((l) => l.split(':').slice(1).join(':'));
          } catch {
            // gone meanwhile
          }
        }
      }
      expect((await running).status).to.equal('exited');
      // controller:path below the runner's own cgroup
      const paths = host.map((l) => `${l.split(':')[0]}:${l.slice(l.indexOf('/job-') + 1)}`);
      expect(paths, `host view ${host}`).to.have.length(2);
      expect(paths[0]).to.match(sb.pooled ? /^memory:job-[\d-]+\/stage-\d+$/ : /^memory:job-[\d-]+\/program$/);
      expect(paths[1]).to.match(/^cpuacct:job-[\d-]+\/program$/);
      if (sb.pooled) expect(inside).to.deep.equal(['memory:/', 'cpuacct:/']);
      // Each stage's CPU is its own, not the sum of the stages before it in that cgroup.
      const busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass";
      const first = await run(['python3.9', '-c', busy]);
      const second = await run(['python3.9', '-c', 'pass']);
      expect(first.cpuMs).to.be.greaterThan(200);
      expect(second.cpuMs).to.be.a('number').and.lessThan(first.cpuMs! - 100);
    });

    it('runs concurrent stages in separate slots as separate users', async () => {
      const [a, b] = await Promise.all([
        py('import os; print(os.getuid())'),
        sb.run({ rootfs, argv: ['python3.9', '-c', 'import os; print(os.getuid())'], slot: SLOT + 1 }),
      ]);
      expect(a.stdout.toString().trim()).to.equal(String(uidOfSlot(SLOT)));
      expect(b.stdout.toString().trim()).to.equal(String(uidOfSlot(SLOT + 1)));
    });
  });
}
