import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { RUN_LIMITS, SANDBOX_OVERHEAD } from '../../src/limits.js';
import { detectCgroups, parseMountInfo, parseProcCgroup } from '../../src/sandbox/cgroups/detect.js';
import { CgroupV1 } from '../../src/sandbox/cgroups/v1.js';
import { CgroupV2 } from '../../src/sandbox/cgroups/v2.js';

// Path and limit logic of both cgroup back ends, checked as file writes in a directory
// tree laid out like the kernel's. These do not exercise the kernel: the v1 back end
// runs for real in the sandbox integration suites on this (v1) host, while real runs
// of the v2 back end need a cgroup v2 host.

const limits = { memoryBytes: RUN_LIMITS.memoryBytes, cpuCores: RUN_LIMITS.cpuCores, maxTasks: RUN_LIMITS.maxTasks };
const read = (p: string) => readFileSync(p, 'utf8');

const HYBRID_MOUNTINFO = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw`;

describe('sandbox cgroup detection', () => {
  it('parses cgroup mounts and the process cgroup paths', () => {
    const m = parseMountInfo(HYBRID_MOUNTINFO);
    expect(m.map((x) => [x.fsType, x.mountPoint, x.controllers.join(',')])).to.deep.equal([
      ['cgroup', '/sys/fs/cgroup/cpu', 'rw,cpu'],
      ['cgroup', '/sys/fs/cgroup/cpuacct', 'rw,cpuacct'],
      ['cgroup', '/sys/fs/cgroup/cpuset', 'rw,cpuset'],
      ['cgroup', '/sys/fs/cgroup/memory', 'rw,memory'],
      ['cgroup', '/sys/fs/cgroup/pids', 'rw,pids'],
      ['cgroup2', '/sys/fs/cgroup/unified', ''],
    ]);
    const own = parseProcCgroup('8:pids:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/x\n0::/\n');
    expect(Object.fromEntries(own)).to.deep.equal({ pids: '/', memory: '/process_api/abc', cpu: '/x', cpuacct: '/x', '': '/' });
  });
});

describe('sandbox cgroup v1 back end (file writes in a fake tree)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'runbox-cg1-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('creates jobs only below the own cgroup of each hierarchy, with the limits', async () => {
    const mountInfo = ['memory', 'pids', 'cpu', 'cpuacct']
      .map((c, i) => `${40 + i} 31 0:${50 + i} / ${root}/${c} rw - cgroup cgroup rw,${c}`)
      .join('\n');
    mkdirSync(join(root, 'memory/process_api/abc'), { recursive: true });
    for (const c of ['pids', 'cpu', 'cpuacct']) mkdirSync(join(root, c), { recursive: true });
    const backend = await detectCgroups({ mountInfo, procCgroup: '8:pids:/\n4:memory:/process_api/abc\n2:cpuacct:/\n1:cpu:/\n0::/\n', pid: 77 });
    expect(backend).to.be.instanceOf(CgroupV1);
    const job = await backend.createJob(limits);
    // Job names carry the runner's pid and a sequence number.
    const name = /job-77-\d+/.exec(job.procsFiles[0]!)![0];
    const mem = join(root, 'memory/process_api/abc', name);
    expect(job.procsFiles).to.deep.equal(['memory/process_api/abc', 'pids', 'cpu', 'cpuacct'].map((d) => join(root, d, name, 'cgroup.procs')));
    // The job holds the launcher too; the program's own cgroup is held to the program's limit.
    expect(read(join(mem, 'memory.limit_in_bytes'))).to.equal(String(RUN_LIMITS.memoryBytes + SANDBOX_OVERHEAD.memoryBytes));
    expect(read(join(mem, 'program/memory.limit_in_bytes'))).to.equal(String(RUN_LIMITS.memoryBytes));
    expect(read(join(root, `pids/${name}/pids.max`))).to.equal(String(RUN_LIMITS.maxTasks));
    expect(read(join(root, `cpu/${name}/cpu.cfs_quota_us`))).to.equal('200000');
    expect(read(join(root, `cpu/${name}/cpu.cfs_period_us`))).to.equal('100000');

    // The program's own cgroups below the job, in the memory and cpuacct hierarchies only:
    // the launcher stays in the job, limited with the program but not counted.
    expect(job.programProcsFiles).to.deep.equal([join(mem, 'program/cgroup.procs'), join(root, 'cpuacct', name, 'program/cgroup.procs')]);
    expect(existsSync(join(root, 'pids', name, 'program'))).to.equal(false);

    writeFileSync(join(mem, 'memory.oom_control'), 'oom_kill_disable 0\nunder_oom 0\noom_kill 2\n');
    writeFileSync(join(mem, 'program/memory.oom_control'), 'oom_kill_disable 0\nunder_oom 0\noom_kill 1\n');
    writeFileSync(join(mem, 'memory.max_usage_in_bytes'), '9999\n');
    writeFileSync(join(mem, 'program/memory.max_usage_in_bytes'), '4096\n');
    writeFileSync(join(root, `pids/${name}/pids.events`), 'max 5\n');
    writeFileSync(join(root, `cpuacct/${name}/cpuacct.usage`), '999999999\n');
    writeFileSync(join(root, `cpuacct/${name}/program/cpuacct.usage`), '123456789\n');
    expect(await job.counters()).to.deep.equal({ oomKills: 3, taskLimitHits: 5, cpuNs: 123456789, memoryPeakBytes: 4096 });
  });
});

describe('sandbox cgroup v1 stages of a pooled sandbox (fake tree)', () => {
  it('makes each stage a memory cgroup of its own, joins the job program cgroup in cpuacct, and counts the stage on its own', async () => {
    const root = mkdtempSync(join(tmpdir(), 'runbox-cg1s-'));
    try {
      const mountInfo = ['memory', 'pids', 'cpu', 'cpuacct'].map((c, i) => `${40 + i} 31 0:${50 + i} / ${root}/${c} rw - cgroup cgroup rw,${c}`).join('\n');
      for (const c of ['memory', 'pids', 'cpu', 'cpuacct']) mkdirSync(join(root, c), { recursive: true });
      writeFileSync(join(root, 'memory/memory.kmem.tcp.limit_in_bytes'), '0\n');
      const backend = await detectCgroups({ mountInfo, procCgroup: '8:pids:/\n4:memory:/\n2:cpuacct:/\n1:cpu:/\n0::/\n', pid: 78 });
      const job = await backend.createJob(limits, { pooled: true });
      const stage = job.createStage!();
      const name = /stage-\d+/.exec(stage.dirs[0]!)![0];
      expect(stage.dirs.map((d) => d.slice(root.length + 1).split('/')[0])).to.deep.equal(['memory']);
      // CPU time: the difference over the stage in a cgroup that outlives it.
      const program = join(root, 'cpuacct', /job-[\d-]+/.exec(job.procsFiles[3]!)![0], 'program');
      expect(stage.joins).to.deep.equal([join(program, 'cgroup.procs')]);
      expect(stage.counterFiles[3]).to.equal(join(program, 'cpuacct.usage'));
      // The process limit counts the stage's own memory cgroup (the fork server reads it).
      expect(stage.procsFile).to.equal(join(stage.dirs[0]!, 'cgroup.procs'));
      // Held to the program's limit below the job's (an OOM kill lands on the stage), socket
      // buffers included: they are charged where a socket is made.
      expect(stage.writes).to.deep.equal([
        [join(stage.dirs[0]!, 'memory.limit_in_bytes'), String(RUN_LIMITS.memoryBytes)],
        [join(stage.dirs[0]!, 'memory.kmem.tcp.limit_in_bytes'), String(RUN_LIMITS.memoryBytes)],
      ]);
      // What the stage leaves charged is reclaimed at its end; the job's use is read once it is gone.
      expect(stage.drains).to.deep.equal([[join(stage.dirs[0]!, 'memory.force_empty'), '0']]);
      expect(stage.usageFile).to.equal(join(stage.dirs[0]!, 'memory.usage_in_bytes'));
      expect(stage.settleFile).to.equal(join(root, 'memory', /job-[\d-]+/.exec(job.procsFiles[0]!)![0], 'memory.usage_in_bytes'));
      mkdirSync(stage.dirs[0]!);
      writeFileSync(join(stage.dirs[0]!, 'memory.oom_control'), 'oom_kill_disable 0\noom_kill 1\n');
      expect(stage.oomKills()).to.equal(1);
      expect(name).to.match(/^stage-\d+$/);
      const before = ['oom_kill_disable 0\noom_kill 4\n', 'max 1\n', '', '7000000\n', '', ''];
      const after = ['oom_kill_disable 0\noom_kill 5\n', 'max 3\n', 'oom_kill 1\n', '9500000\n', '40960\n', '4096\n'];
      expect(stage.counters(before, after)).to.deep.equal({ oomKills: 2, taskLimitHits: 2, cpuNs: 2_500_000, memoryPeakBytes: 45056 });
      expect(stage.counters(before, ['', '', '', '', '', ''])).to.deep.include({ cpuNs: null, memoryPeakBytes: null });
      // While a stage runs (the CPU watchdog), its CPU time is the shared counter's rise since it was made.
      writeFileSync(join(program, 'cpuacct.usage'), '7000000\n');
      const next = job.createStage!();
      writeFileSync(join(program, 'cpuacct.usage'), '9500000\n');
      expect(next.cpuNs()).to.equal(2_500_000);
      expect(job.cpuNs()).to.equal(9_500_000);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('sandbox cgroup v2 back end (file writes in a fake tree; real v2 runs need a cgroup v2 host)', () => {
  let mnt: string;
  let own: string;
  const mountInfo = () => `41 31 0:38 / ${mnt} rw,relatime - cgroup2 cgroup2 rw`;

  beforeEach(() => {
    mnt = mkdtempSync(join(tmpdir(), 'runbox-cg2-'));
    own = join(mnt, 'system.slice/runbox.service');
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'cgroup.controllers'), 'cpuset cpu io memory hugetlb pids rdma misc\n');
    writeFileSync(join(own, 'cgroup.procs'), '4242\n');
    writeFileSync(join(own, 'cgroup.subtree_control'), '');
  });
  afterEach(() => rmSync(mnt, { recursive: true, force: true }));

  it('moves the runner into a leaf and enables the controllers in its own cgroup', async () => {
    const backend = await detectCgroups({ mountInfo: mountInfo(), procCgroup: '0::/system.slice/runbox.service\n', pid: 4242 });
    expect(backend).to.be.instanceOf(CgroupV2);
    expect((backend as CgroupV2).own).to.equal(own);
    expect(read(join(own, 'runner/cgroup.procs'))).to.equal('4242');
    expect(read(join(own, 'cgroup.subtree_control'))).to.equal('+memory +pids +cpu');
  });

  it('after set-up, finds the same own cgroup from inside the leaf', async () => {
    mkdirSync(join(own, 'runner'));
    writeFileSync(join(own, 'runner/cgroup.controllers'), '');
    const backend = await detectCgroups({ mountInfo: mountInfo(), procCgroup: '0::/system.slice/runbox.service/runner\n', pid: 4242 });
    expect((backend as CgroupV2).own).to.equal(own);
  });

  it('creates jobs beside the leaf with memory, swap, task and CPU limits, and reads counters', async () => {
    const backend = await CgroupV2.setUp(own, 9);
    const job = await backend.createJob(limits);
    const dir = join(job.procsFiles[0]!, '..');
    expect(dir.startsWith(join(own, 'job-9-'))).to.equal(true);
    expect(read(join(dir, 'memory.max'))).to.equal(String(RUN_LIMITS.memoryBytes));
    expect(read(join(dir, 'pids.max'))).to.equal(String(RUN_LIMITS.maxTasks));
    expect(read(join(dir, 'cpu.max'))).to.equal('200000 100000');

    writeFileSync(join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\noom_group_kill 0\n');
    writeFileSync(join(dir, 'pids.events'), 'max 3\n');
    writeFileSync(join(dir, 'cpu.stat'), 'usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n');
    expect(await job.counters()).to.deep.equal({ oomKills: 1, taskLimitHits: 3, cpuNs: 1_500_000, memoryPeakBytes: null });
    writeFileSync(join(dir, 'memory.peak'), '8192\n');
    expect((await job.counters()).memoryPeakBytes).to.equal(8192);

    writeFileSync(join(dir, 'cgroup.procs'), '');
    writeFileSync(join(dir, 'cgroup.kill'), '');
    await job.killAll();
    expect(read(join(dir, 'cgroup.kill'))).to.equal('1');
  });

  it('gives a pooled sandbox a leaf of its own and each stage a fresh cgroup beside it, counted on its own', async () => {
    const backend = await CgroupV2.setUp(own, 9);
    const job = await backend.createJob(limits, { pooled: true });
    const dir = join(job.procsFiles[0]!, '../..');
    // The launcher and init go to the leaf: the job hands its controllers to the stages.
    expect(job.procsFiles).to.deep.equal([join(dir, 'sandbox/cgroup.procs')]);
    expect(read(join(dir, 'cgroup.subtree_control'))).to.equal('+memory +pids +cpu');
    expect(read(join(dir, 'memory.max'))).to.equal(String(RUN_LIMITS.memoryBytes + SANDBOX_OVERHEAD.memoryBytes));
    const stage = job.createStage!();
    // Each stage is held to the program's limit below the job's, and reclaimed at its end.
    expect(stage.writes).to.deep.equal([[join(stage.dirs[0]!, 'memory.max'), String(RUN_LIMITS.memoryBytes)]]);
    expect(stage.drains).to.deep.equal([[join(stage.dirs[0]!, 'memory.reclaim'), String(RUN_LIMITS.memoryBytes + SANDBOX_OVERHEAD.memoryBytes)]]);
    expect([stage.usageFile, stage.settleFile]).to.deep.equal([join(stage.dirs[0]!, 'memory.current'), join(dir, 'memory.current')]);
    expect(stage.dirs).to.have.length(1);
    expect(stage.joins).to.deep.equal([]);
    expect(stage.dirs[0]!.startsWith(join(dir, 'stage-'))).to.equal(true);
    expect(stage.procsFile).to.equal(join(stage.dirs[0]!, 'cgroup.procs'));
    // The job's counters move across stages: a stage's are the difference; its time and peak its own.
    const before = ['oom 1\noom_kill 1\n', 'max 2\n', '', ''];
    const after = ['oom 2\noom_kill 3\n', 'max 2\n', 'usage_usec 1500\nuser_usec 1000\n', '8192\n'];
    expect(stage.counterFiles).to.deep.equal(['memory.events', 'pids.events', 'stage', 'stage'].map((f, i) => (i < 2 ? join(dir, f) : join(stage.dirs[0]!, i === 2 ? 'cpu.stat' : 'memory.peak'))));
    expect(stage.counters(before, after)).to.deep.equal({ oomKills: 2, taskLimitHits: 0, cpuNs: 1_500_000, memoryPeakBytes: 8192 });
    expect(stage.counters(before, ['', '', '', ''])).to.deep.include({ cpuNs: null, memoryPeakBytes: null });
    // While it runs (the CPU watchdog): its own cpu.stat, null before the fork server has made it.
    expect(stage.cpuNs()).to.equal(null);
    mkdirSync(stage.dirs[0]!);
    writeFileSync(join(stage.dirs[0]!, 'cpu.stat'), 'usage_usec 2500\nuser_usec 2000\n');
    expect(stage.cpuNs()).to.equal(2_500_000);
  });

  it('sets swap to zero when the kernel accounts swap, and leaves it alone when it does not', async () => {
    const dirOf = (j: { procsFiles: readonly string[] }) => join(j.procsFiles[0]!, '..');
    const without = dirOf(await (await CgroupV2.setUp(own, 5)).createJob(limits));
    expect(without.startsWith(join(own, 'job-5-'))).to.equal(true);
    expect(existsSync(join(without, 'memory.max'))).to.equal(true);
    expect(existsSync(join(without, 'memory.swap.max'))).to.equal(false);
    // The kernel gives memory-enabled children a memory.swap.max when swap is accounted.
    writeFileSync(join(own, 'runner', 'memory.swap.max'), 'max\n');
    const withSwap = dirOf(await (await CgroupV2.setUp(own, 6)).createJob(limits));
    expect(read(join(withSwap, 'memory.swap.max'))).to.equal('0');
  });

  it('sweeps job cgroups of runner processes that are gone, and only those', async () => {
    const backend = await CgroupV2.setUp(own, process.pid);
    const deadPid = 2 ** 22 + 1; // above the kernel's pid_max limit: never a live process
    for (const name of [`job-${deadPid}-1`, `job-${process.pid}-99`, `job-${process.ppid}-1`, 'runner-notes']) mkdirSync(join(own, name));
    expect(await backend.sweepStale()).to.deep.equal([join(own, `job-${deadPid}-1`)]);
    expect(existsSync(join(own, `job-${deadPid}-1`))).to.equal(false);
    for (const kept of [`job-${process.pid}-99`, `job-${process.ppid}-1`, 'runner-notes', 'runner']) expect(existsSync(join(own, kept)), kept).to.equal(true);
  });

  it('falls back to v1, and fails clearly, when v2 lacks the controllers', async () => {
    writeFileSync(join(own, 'cgroup.controllers'), 'cpuset io\n');
    let err: Error | null = null;
    await detectCgroups({ mountInfo: mountInfo(), procCgroup: '0::/system.slice/runbox.service\n', pid: 1 }).catch((e: Error) => (err = e));
    expect(err).to.match(/no usable cgroups/);
  });
});
