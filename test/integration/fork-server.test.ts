import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { ForkServer, type StageProcess, type StageIo, type StageStreams, type StartRequest } from '../../src/sandbox/fork-server.js';
import { runnerCgroups } from '../../src/sandbox/index.js';
import { NATIVE_BUILD_DIR } from '../../src/util/paths.js';
import { TEST_SLOT_BASE } from '../helpers/sandbox.js';

// The fork server (native/forkserver/) starts every launcher and carries every stage's
// bytes: what its child sets up before the exec is what a sandbox starts from, and what
// it keeps, counts and reports is what a result shows. Driven here with plain shell
// children, no sandbox.

const SH = '/bin/sh';

function io(over: Partial<StageIo> = {}): StageIo {
  return {
    stdin: Buffer.alloc(0), stageIn: Buffer.alloc(0),
    keepBytes: 64 * 1024, floodBytes: 8 << 20, stageOutBytes: 1 << 20, logBytes: 4096,
    onFlood: () => {}, ...over,
  };
}

async function exitOf(p: StageProcess): Promise<[number | null, NodeJS.Signals | null]> {
  if (!p.exited) await once(p, 'exit');
  return [p.exitCode, p.signalCode];
}

describe('fork server', function () {
  this.timeout(30_000);
  let server: ForkServer;
  before(() => {
    server = new ForkServer(join(NATIVE_BUILD_DIR, 'runbox-forkserver'));
  });
  after(() => server.close());

  const sh = (script: string, over: Omit<StartRequest, 'argv'> = {}) => server.start({ argv: [SH, '-c', script], ...over });
  const run = async (script: string, over: Partial<StageIo> = {}, start: Omit<StartRequest, 'argv'> = {}): Promise<{ s: StageStreams; exit: [number | null, NodeJS.Signals | null] }> => {
    const p = await sh(script, start);
    const s = await p.run(io(over));
    return { s, exit: await exitOf(p) };
  };
  /** The fork server's children now (none once every stage has ended). */
  const serverChildren = () =>
    readdirSync(`/proc/${server.pid}/task`).flatMap((t) => readFileSync(`/proc/${server.pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean));

  it('hands each pipe to the child: stdin on 0, stage-in on 3, files on 6...; stdout, stderr, stage-out on 4 and the log on 5 come back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runbox-fs-'));
    try {
      const file = join(dir, 'opened-for-it');
      writeFileSync(file, '');
      const { s, exit } = await run('cat; echo err >&2; cat <&3 >&4; echo log >&5; echo six >&6; exit 7', {
        stdin: Buffer.from('in\n'), stageIn: Buffer.from('stage'),
      }, { files: [file] });
      expect(readFileSync(file, 'utf8')).to.equal('six\n');
      expect(s.stdout.toString()).to.equal('in\n');
    expect(s.stderr.toString()).to.equal('err\n');
    expect(s.stageOut.toString()).to.equal('stage');
      expect(s.log.toString()).to.equal('log\n');
      expect(exit).to.deep.equal([7, null]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('before the exec, joins the cgroups, sets the rlimits and nice 0, drops to the ids with no groups and no_new_privs', async () => {
    const cgroups = await runnerCgroups();
    const job = await cgroups.createJob({ memoryBytes: 64 << 20, cpuCores: 1, maxTasks: 16 });
    const uid = loadConfig().RUNBOX_SANDBOX_UID_BASE + TEST_SLOT_BASE + 98;
    // A runner started with a lower priority: its launchers still start at nice 0.
    setPriority(server.pid!, 10);
    try {
      const { s, exit } = await run(
        'cat /proc/self/cgroup; ulimit -n; ulimit -f; ulimit -t; echo "$(id -u) $(id -g) [$(id -G)]"; grep NoNewPrivs /proc/self/status; cut -d" " -f19 /proc/self/stat',
        {},
        {
          join: job.procsFiles,
          rlimits: [{ resource: 'nofile', soft: 20, hard: 20 }, { resource: 'fsize', soft: 1024 * 1024, hard: 1024 * 1024 }, { resource: 'cpu', soft: 3, hard: 'inf' }],
          user: { uid, gid: uid },
        },
      );
      expect(exit).to.deep.equal([0, null]);
      const lines = s.stdout.toString().trim().split('\n');
      const joined = lines.filter((l) => /^\d+:/.test(l)).map((l) => l.split(':')[2]);
      const jobName = job.procsFiles[0]!.split('/').at(-2)!;
      // Every hierarchy the job has, and only those, name the job's directory.
      expect(joined.filter((path) => path!.endsWith(`/${jobName}`))).to.have.length(job.procsFiles.length);
      expect(lines.slice(-6)).to.deep.equal(['20', '2048', '3', `${uid} ${uid} [${uid}]`, 'NoNewPrivs:\t1', '0']);
    } finally {
      setPriority(server.pid!, 0);
      await job.killAll();
      await job.remove();
    }
  });

  it('keeps the first keepBytes of each output stream, counts the rest, and streams only what it keeps', async () => {
    const chunks: string[] = [];
    const { s } = await run('printf 1234567890; printf abcdef >&2', { keepBytes: 4, onChunk: (name, b) => chunks.push(`${name}:${b.toString()}`) });
    expect(s.stdout.toString()).to.equal('1234');
    expect(s.stderr.toString()).to.equal('abcd');
    expect([s.stdoutTotal, s.stderrTotal]).to.deep.equal([10, 6]);
    expect(chunks.join('').replace(/stdout:|stderr:/g, '')).to.have.length(8);
    expect(chunks.filter((c) => c.startsWith('stdout:')).map((c) => c.slice(7)).join('')).to.equal('1234');
  });

  it('reports a flood once, past floodBytes across both streams, and reads on so the child is never blocked', async () => {
    let floods = 0;
    const { s, exit } = await run('head -c 300000 /dev/zero; head -c 300000 /dev/zero >&2', { floodBytes: 500_000, onFlood: () => floods++ });
    expect(floods).to.equal(1);
    expect(s.stdoutTotal + s.stderrTotal).to.equal(600_000);
    expect(exit).to.deep.equal([0, null]);
  });

  it('flags stage-out past its bound and keeps none of the excess', async () => {
    const { s } = await run('head -c 5000 /dev/zero >&4', { stageOutBytes: 4096 });
    expect(s.stageOutOverflow).to.equal(true);
    expect(s.stageOut.length).to.be.at.most(4096);
  });

  it('does not wait on a child that never reads its stdin', async () => {
    const { s, exit } = await run('echo done', { stdin: Buffer.alloc(4 << 20, 1), stageIn: Buffer.alloc(1 << 20, 2) });
    expect(s.stdout.toString()).to.equal('done\n');
    expect(exit).to.deep.equal([0, null]);
  });

  it('carries large stage-in and stage-out archives intact, both ways', async () => {
    const stageIn = Buffer.alloc(24 << 20);
    for (let i = 0; i < stageIn.length; i += 4096) stageIn.writeUInt32LE(i, i);
    const { s } = await run('cat <&3 >&4', { stageIn, stageOutBytes: 64 << 20 });
    expect(s.stageOutOverflow).to.equal(false);
    expect(s.stageOut.equals(stageIn)).to.equal(true);
  });

  it('reports a child killed by a signal', async () => {
    const { exit } = await run('kill -KILL $$');
    expect(exit).to.deep.equal([null, 'SIGKILL']);
  });

  it('refuses what cannot start, with its errno and the step, leaves no process and keeps serving', async () => {
    const refusal = (req: StartRequest) => server.start(req).then(() => null, (x: NodeJS.ErrnoException) => [x.code, x.message]);
    expect(await refusal({ argv: ['/nonexistent/program'] })).to.deep.equal(['ENOENT', 'cannot start the launcher (exec): ENOENT']);
    expect(await refusal({ argv: ['sh', '-c', 'true'] })).to.deep.equal(['EINVAL', 'cannot start the launcher (request): EINVAL']);
    expect(await refusal({ argv: [SH], join: ['/nonexistent/cgroup.procs'] })).to.deep.equal(['ENOENT', 'cannot start the launcher (/nonexistent/cgroup.procs): ENOENT']);
    expect(await refusal({ argv: [SH], rlimits: [{ resource: 'nofile', soft: 10, hard: 5 }] })).to.deep.equal(['EINVAL', 'cannot start the launcher (nofile=10:5): EINVAL']);
    expect(await refusal({ argv: [SH], user: { uid: 0, gid: 0 } })).to.deep.equal(['EINVAL', 'cannot start the launcher (request): EINVAL']);
    expect(await refusal({ argv: [SH], files: ['/nonexistent/file'] })).to.deep.equal(['ENOENT', 'cannot start the launcher (/nonexistent/file): ENOENT']);
    expect(serverChildren()).to.deep.equal([]);
    const { s } = await run('echo still');
    expect(s.stdout.toString()).to.equal('still\n');
  });

  it('starts the child at once, before its run, which then sends stdin and stage-in', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runbox-fs-'));
    try {
      const mark = join(dir, 'started');
      const p = await sh(`touch ${mark}; cat; cat <&3 >&2`);
      for (let i = 0; i < 500 && !existsSync(mark); i++) await sleep(10);
      expect(existsSync(mark), 'the child ran before any run was asked for').to.equal(true);
      const s = await p.run(io({ stdin: Buffer.from('in'), stageIn: Buffer.from('stage') }));
      expect([s.stdout.toString(), s.stderr.toString()]).to.deep.equal(['in', 'stage']);
      expect(await exitOf(p)).to.deep.equal([0, null]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a discarded stage reads an empty stage-in', async () => {
    const p = await sh('n=$(wc -c <&3); exit $n');
    p.discard();
    expect(await exitOf(p)).to.deep.equal([0, null]);
  });

  it('runs stages side by side without mixing their streams', async () => {
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => run(`head -c ${1000 * (i + 1)} /dev/zero | tr '\\0' ${i}`)));
    all.forEach(({ s }, i) => expect(s.stdout.toString()).to.equal(String(i).repeat(1000 * (i + 1))));
  });
});
