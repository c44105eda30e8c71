import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { RUN_LIMITS } from '../../src/limits.js';
import { bwrapPlan } from '../../src/sandbox/launchers/bwrap.js';
import { encodeProgram } from '../../src/sandbox/archive.js';
import { stageProgram, type LaunchRequest } from '../../src/sandbox/launchers/common.js';
import { NSJAIL_LOG_FD, nsjailConfig, nsjailMounts, nsjailPlan, protoString } from '../../src/sandbox/launchers/nsjail.js';
import { DEV_LINKS, DEV_NODES, procMasks } from '../../src/sandbox/launchers/world.js';
import { launchKey, sameLaunchKey } from '../../src/sandbox/run.js';
import { parseCpuList, slotCpus } from '../../src/sandbox/cpus.js';
import { cpuinfo, meminfo, stat } from '../../src/sandbox/launchers/view.js';
import { BASE_ENV } from '../../src/sandbox/spec.js';

// The launchers are pure argv builders; these pin the flags that carry the isolation.

const req = (over: Partial<LaunchRequest['spec']> = {}): LaunchRequest => ({
  spec: { rootfs: '/var/lib/runbox/images/python3.9/rootfs', ...over },
  limits: { ...RUN_LIMITS },
  programCgroupFds: [7, 8],
  uid: 61003,
  gid: 61003,
  helpersDir: '/opt/runbox/native/build',
  launcherPath: '/usr/bin/launcher',
  configPath: '/run/x/run-1.cfg',
});

/** The program record as runbox-init reads it (native/init/archive.c read_program). */
function decodeProgram(b: Buffer) {
  expect(String.fromCharCode(b[0]!)).to.equal('P');
  expect(b.readUInt32BE(1)).to.equal(b.length - 5);
  const counts = [b.readUInt32BE(5), b.readUInt32BE(9), b.readUInt32BE(13)] as const;
  const strings = b.subarray(25).toString().split('\0');
  expect(strings.pop()).to.equal('');
  expect(strings.length).to.equal(counts[0] + counts[1] + counts[2]);
  return {
    argv: strings.slice(0, counts[0]),
    env: strings.slice(counts[0], counts[0] + counts[1]),
    collect: strings.slice(counts[0] + counts[1]),
    collectMax: b.readUInt32BE(17),
    collectFiles: b.readUInt32BE(21),
  };
}

/** The value after `flag` (first occurrence). */
const after = (argv: string[], flag: string, n = 1) => argv.slice(argv.indexOf(flag) + 1, argv.indexOf(flag) + 1 + n);

describe('bwrap launch plan', () => {
  const plan = bwrapPlan(req());
  const a = plan.argv;
  const opts = a.slice(0, a.indexOf('--'));

  it('runs the launcher unprivileged in every namespace', () => {
    expect(a[0]).to.equal('/usr/bin/launcher');
    expect(plan.dropPrivileges).to.equal(true);
    for (const f of ['--unshare-user', '--unshare-pid', '--as-pid-1', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent', '--new-session', '--clearenv']) {
      expect(opts, f).to.include(f);
    }
    expect(after(a, '--uid')).to.deep.equal(['61003']);
    expect(after(a, '--gid')).to.deep.equal(['61003']);
    expect(after(a, '--cap-drop')).to.deep.equal(['ALL']);
    // Only what runbox-init needs for its own duties, which it drops before the program.
    expect(opts.flatMap((x, i) => (x === '--cap-add' ? [opts[i + 1]] : []))).to.deep.equal(['CAP_SYS_ADMIN', 'CAP_SYS_RESOURCE', 'CAP_SETPCAP']);
    // Each would nest the sandbox in a second user namespace, where runbox-init could not do them.
    expect(opts).to.not.include('--disable-userns');
    expect(opts).to.not.include('--dev');
  });

  it('mounts the image read-only and sizes each tmpfs right before it', () => {
    expect(after(a, '--ro-bind', 2)).to.deep.equal(['/var/lib/runbox/images/python3.9/rootfs', '/']);
    const tmpfs = opts.flatMap((x, i) => (x === '--tmpfs' && opts[i - 2] === '--size' ? [opts.slice(i - 2, i + 2)] : []));
    expect(tmpfs).to.deep.equal([
      ['--size', String(RUN_LIMITS.shmBytes), '--tmpfs', '/dev/shm'],
      ['--size', String(RUN_LIMITS.workspaceBytes), '--tmpfs', '/box'],
      ['--size', String(RUN_LIMITS.tmpBytes), '--tmpfs', '/tmp'],
    ]);
    const helpers = opts.lastIndexOf('/.runbox');
    expect(opts.slice(helpers - 2, helpers)).to.deep.equal(['--ro-bind', '/opt/runbox/native/build']);
    expect(after(a, '--chdir')).to.deep.equal(['/box']);
    expect(after(a, '--proc')).to.deep.equal(['/proc']);
    expect(opts.some((x, i) => x === '--tmpfs' && opts[i + 1] === '/dev')).to.equal(true);
    for (const n of DEV_NODES) expect(opts.slice(opts.lastIndexOf(`/dev/${n}`) - 2, opts.lastIndexOf(`/dev/${n}`) + 1)).to.deep.equal(['--dev-bind', `/dev/${n}`, `/dev/${n}`]);
    for (const [n, target] of DEV_LINKS) expect(opts.slice(opts.indexOf(`/dev/${n}`) - 2, opts.indexOf(`/dev/${n}`) + 1)).to.deep.equal(['--symlink', target, `/dev/${n}`]);
    expect(after(a, '--dir')).to.deep.equal(['/dev/pts']);
  });

  it('makes /dev read-only once /dev/shm is mounted, and masks the /proc entries that describe the host', () => {
    const ro = opts.flatMap((x, i) => (x === '--remount-ro' ? [opts[i + 1]] : []));
    expect(ro).to.include('/dev');
    expect(opts.indexOf('/dev/shm')).to.be.lessThan(opts.lastIndexOf('/dev'));
    const masks = procMasks();
    expect(masks.files).to.include('/proc/cmdline');
    for (const f of masks.files) expect(opts.slice(opts.indexOf(f) - 2, opts.indexOf(f) + 1)).to.deep.equal(['--ro-bind', '/dev/null', f]);
    for (const d of masks.dirs) expect(ro).to.include(d);
  });

  it('passes no environment of its own: the program gets its own from runbox-init', () => {
    expect(opts).to.include('--clearenv');
    expect(opts).to.not.include('--setenv');
  });

  it('starts runbox-init, which joins the program cgroups, mounts the capped devpts, forbids user namespaces and waits for its program', () => {
    expect(a.slice(a.indexOf('--') + 1)).to.deep.equal(['/.runbox/init', '--cgroup-fd', '7', '--cgroup-fd', '8', '--devpts', `newinstance,ptmxmode=0666,mode=0620,max=${RUN_LIMITS.terminals}`, '--no-user-namespaces']);
    expect(plan.fixedProcesses).to.equal(2);
  });

  it('keeps the program to the slot\'s CPUs and shows it the machine view', () => {
    const view = { procFiles: [['/proc/meminfo', '/run/v/meminfo'], ['/proc/stat', '/run/v/stat']] as [string, string][], sys: '/run/v/sys' };
    const p = bwrapPlan({ ...req(), cpus: [2, 3], view }).argv;
    expect(after(p, '--cpus')).to.deep.equal(['2,3']);
    expect(p.slice(p.indexOf('/proc/meminfo') - 2, p.indexOf('/proc/meminfo') + 1)).to.deep.equal(['--ro-bind', '/run/v/meminfo', '/proc/meminfo']);
    expect(p.slice(p.indexOf('/sys') - 2, p.indexOf('/sys') + 1)).to.deep.equal(['--ro-bind', '/run/v/sys', '/sys']);
    // Bound over /proc entries once /proc is mounted.
    expect(p.indexOf('--proc')).to.be.lessThan(p.indexOf('/proc/meminfo'));
  });

  it('refuses relative images', () => {
    expect(() => bwrapPlan(req({ rootfs: 'images/x' }))).to.throw(/absolute/);
    expect(() => bwrapPlan(req({ rootfs: '/a/../etc' }))).to.throw(/absolute/);
  });
});

describe('the program record for runbox-init', () => {
  const spec = { argv: ['python3', 'main.py'], collect: ['a.out'], env: { PYTHONHASHSEED: '0' } };

  it('carries argv, exactly BASE_ENV plus the spec env, the collect list and its bound', () => {
    const p = decodeProgram(encodeProgram(stageProgram(spec, RUN_LIMITS)));
    expect(p.argv).to.deep.equal(['python3', 'main.py']);
    expect(p.env).to.deep.equal(Object.entries({ ...BASE_ENV, PYTHONHASHSEED: '0' }).map(([k, v]) => `${k}=${v}`));
    expect(p.collect).to.deep.equal(['a.out']);
    expect(p.collectMax).to.equal(RUN_LIMITS.collectBytes);
    expect(p.collectFiles).to.equal(RUN_LIMITS.collectFiles);
    const bounded = decodeProgram(encodeProgram(stageProgram({ ...spec, collect: ['out/'], collectBounds: { bytes: 1024, files: 2 } }, RUN_LIMITS)));
    expect([bounded.collect, bounded.collectMax, bounded.collectFiles]).to.deep.equal([['out/'], 1024, 2]);
  });

  it('refuses odd collect names, bad environment names, an empty argv and NUL bytes', () => {
    expect(() => stageProgram({ ...spec, collect: ['../x'] }, RUN_LIMITS)).to.throw(/workspace path/);
    expect(() => stageProgram({ ...spec, collect: ['/etc/'] }, RUN_LIMITS)).to.throw(/workspace path/);
    expect(() => stageProgram({ ...spec, env: { 'A=B': 'x' } }, RUN_LIMITS)).to.throw(/environment/);
    expect(() => stageProgram({ ...spec, argv: [] }, RUN_LIMITS)).to.throw(/argv/);
    expect(() => encodeProgram(stageProgram({ ...spec, argv: ['a\0b'] }, RUN_LIMITS))).to.throw(/NUL/);
  });
});

describe('nsjail launch plan', () => {
  const plan = nsjailPlan(req());
  const config = plan.configText!;
  const mounts = nsjailMounts(req());
  const mount = (dst: string) => mounts.filter((m) => m.dst === dst);

  it('runs nsjail on a config file written for the run, as root that drops to the slot uid', () => {
    expect(plan.argv).to.deep.equal(['/usr/bin/launcher', '--config', '/run/x/run-1.cfg']);
    expect(plan.dropPrivileges).to.equal(false);
    expect(plan.fixedProcesses).to.equal(2);
    expect(config).to.include('mode: ONCE\n');
    expect(config).to.include('uidmap {\n  inside_id: "61003"\n}\n');
    expect(config).to.include('gidmap {\n  inside_id: "61003"\n}\n');
    expect(config).to.include('clone_newuser: false\n');
    expect(config).to.include(`log_fd: ${NSJAIL_LOG_FD}\n`);
    expect(() => nsjailPlan({ ...req(), configPath: undefined })).to.throw(/config/);
  });

  it('overrides the nsjail defaults that differ from bubblewrap: nice 19, its rlimits, a time limit', () => {
    expect(config).to.include('nice_level: 0\n');
    expect(config).to.include('disable_rl: true\n');
    expect(config).to.include('time_limit: 0\n');
    expect(config).to.include('seccomp_policy_file: "/opt/runbox/native/build/seccomp.kafel"\n');
    expect(config).to.include('mount_proc: false\n');
  });

  it('mounts what bubblewrap mounts, with the same flags', () => {
    expect(mount('/')).to.deep.equal([{ src: '/var/lib/runbox/images/python3.9/rootfs', dst: '/', is_bind: true, rw: false, nosuid: true, nodev: true, is_dir: true }]);
    expect(mount('/proc')).to.deep.equal([{ src: 'proc', dst: '/proc', fstype: 'proc', rw: true, nosuid: true, nodev: true, noexec: true }]);
    const owner = 'mode=755,uid=61003,gid=61003';
    expect(mount('/dev')).to.deep.equal([{ src: 'tmpfs', dst: '/dev', fstype: 'tmpfs', options: owner, rw: false, nosuid: true, nodev: true }]);
    for (const [dst, bytes] of [['/dev/shm', RUN_LIMITS.shmBytes], ['/box', RUN_LIMITS.workspaceBytes], ['/tmp', RUN_LIMITS.tmpBytes]] as const) {
      expect(mount(dst)).to.deep.equal([{ src: 'tmpfs', dst, fstype: 'tmpfs', options: `size=${bytes},${owner}`, rw: true, nosuid: true, nodev: true }]);
    }
    for (const n of DEV_NODES) expect(mount(`/dev/${n}`)).to.deep.equal([{ src: `/dev/${n}`, dst: `/dev/${n}`, is_bind: true, rw: true, nosuid: true, is_dir: false }]);
    for (const [n, target] of DEV_LINKS) expect(mount(`/dev/${n}`)).to.deep.equal([{ src: target, dst: `/dev/${n}`, is_symlink: true }]);
    expect(mount('/dev/pts')[0]).to.include({ fstype: 'devpts', nosuid: true, noexec: true, options: `newinstance,ptmxmode=0666,mode=0620,max=${RUN_LIMITS.terminals}` });
    expect(mount('/.runbox')).to.deep.equal([{ src: '/opt/runbox/native/build', dst: '/.runbox', is_bind: true, rw: false, nosuid: true, nodev: true, is_dir: true }]);
    for (const f of procMasks().files) expect(mount(f)).to.deep.equal([{ src: '/dev/null', dst: f, is_bind: true, rw: false, nosuid: true, nodev: true, is_dir: false }]);
    for (const d of procMasks().dirs) expect(mount(d)[0]).to.include({ fstype: 'tmpfs', rw: false });
    // A mount point's parent is mounted before it.
    const order = mounts.map((m) => m.dst);
    expect(order.indexOf('/dev')).to.be.lessThan(order.indexOf('/dev/shm'));
    expect(order.indexOf('/proc')).to.be.lessThan(order.indexOf('/proc/cmdline'));
  });

  it('passes the stage fds and the program cgroups, no environment, and runs runbox-init', () => {
    expect(config.match(/^pass_fd: .*$/gm)).to.deep.equal(['pass_fd: 3', 'pass_fd: 4', 'pass_fd: 7', 'pass_fd: 8']);
    expect(config).to.not.match(/^envar:/m);
    expect(config).to.not.match(/^keep_env: true/m);
    expect(config).to.include('exec_bin {\n  path: "/.runbox/init"\n  arg: "--cgroup-fd"\n  arg: "7"\n  arg: "--cgroup-fd"\n  arg: "8"\n}\n');
  });

  it('writes any string as a protobuf string literal', () => {
    expect(protoString('a"b\\c')).to.equal('"a\\"b\\\\c"');
    expect(protoString('é\n')).to.equal('"\\303\\251\\012"');
    const c = nsjailConfig(req({ rootfs: '/images/a "b"\n}' }));
    expect(c).to.include('  src: "/images/a \\"b\\"\\012}"\n');
  });

  it('refuses a relative chroot', () => {
    expect(() => nsjailPlan(req({ rootfs: 'rootfs' }))).to.throw(/absolute/);
  });
});

describe('the launch key of a prepared sandbox', () => {
  it('changes when the image is switched under the same path, or the limits or slot differ', () => {
    const dir = mkdtempSync(join(tmpdir(), 'runbox-key-'));
    try {
      mkdirSync(join(dir, 'v1'));
      mkdirSync(join(dir, 'v2'));
      symlinkSync('v1', join(dir, 'image'));
      const spec = { rootfs: join(dir, 'image'), slot: 3 };
      const before = launchKey(spec);
      expect(sameLaunchKey(before, launchKey(spec))).to.equal(true);
      expect(sameLaunchKey(before, launchKey({ ...spec, limits: { memoryBytes: 64 << 20 } }))).to.equal(false);
      expect(sameLaunchKey(before, launchKey({ ...spec, slot: 4 }))).to.equal(false);
      // An image update renames a new symlink over the old one (src/images/store.ts).
      symlinkSync('v2', join(dir, 'next'));
      renameSync(join(dir, 'next'), join(dir, 'image'));
      expect(sameLaunchKey(before, launchKey(spec))).to.equal(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the CPUs of a slot', () => {
  it('spreads the slots over the runner\'s CPUs, as many CPUs as the limit (rounded up), never more than there are', () => {
    const eight = [0, 1, 2, 3, 4, 5, 6, 7];
    expect(slotCpus(0, 2, eight)).to.deep.equal([0, 1]);
    expect(slotCpus(1, 2, eight)).to.deep.equal([2, 3]);
    expect(slotCpus(4, 2, eight)).to.deep.equal([0, 1]);
    expect(slotCpus(3, 1.5, eight)).to.deep.equal([6, 7]);
    expect(slotCpus(5, 2, [0, 1])).to.deep.equal([0, 1]);
    expect(slotCpus(2, 4, [4, 5, 6])).to.deep.equal([4, 5, 6]);
    expect(parseCpuList('0-2,5,7-8')).to.deep.equal([0, 1, 2, 5, 7, 8]);
  });
});

describe('the machine view', () => {
  it('shows the memory limit as the total and free memory, every other figure zero', () => {
    const text = meminfo(512 << 20);
    expect(text).to.match(/^MemTotal:\s+524288 kB$/m);
    expect(text).to.match(/^MemAvailable:\s+524288 kB$/m);
    expect(text).to.match(/^SwapTotal:\s+0 kB$/m);
  });

  it('shows as many CPUs as given, with no host counters', () => {
    expect(cpuinfo(3).match(/^processor\s*:/gm)).to.have.length(3);
    const s = stat(2).split('\n');
    expect(s.slice(0, 3)).to.deep.equal(['cpu  0 0 0 0 0 0 0 0 0 0', 'cpu0 0 0 0 0 0 0 0 0 0 0', 'cpu1 0 0 0 0 0 0 0 0 0 0']);
    expect(s).to.include('ctxt 0');
  });
});
