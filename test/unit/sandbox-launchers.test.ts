import { expect } from 'chai';
import { RUN_LIMITS } from '../../src/limits.js';
import { bwrapPlan } from '../../src/sandbox/launchers/bwrap.js';
import type { LaunchRequest } from '../../src/sandbox/launchers/common.js';
import { NSJAIL_LOG_FD, nsjailPlan } from '../../src/sandbox/launchers/nsjail.js';
import { BASE_ENV } from '../../src/sandbox/spec.js';

// The launchers are pure argv builders; these pin the flags that carry the isolation.

const req = (over: Partial<LaunchRequest['spec']> = {}): LaunchRequest => ({
  spec: { rootfs: '/var/lib/runbox/images/python3.9/rootfs', argv: ['python3', 'main.py'], collect: ['a.out'], ...over },
  limits: { ...RUN_LIMITS },
  uid: 61003,
  gid: 61003,
  helpersDir: '/opt/runbox/native/build',
  launcherPath: '/usr/bin/launcher',
});

/** The value after `flag` (first occurrence). */
const after = (argv: string[], flag: string, n = 1) => argv.slice(argv.indexOf(flag) + 1, argv.indexOf(flag) + 1 + n);

describe('bwrap launch plan', () => {
  const plan = bwrapPlan(req());
  const a = plan.argv;
  const opts = a.slice(0, a.indexOf('--'));

  it('runs the launcher unprivileged in every namespace', () => {
    expect(a[0]).to.equal('/usr/bin/launcher');
    expect(plan.dropPrivileges).to.equal(true);
    for (const f of ['--unshare-user', '--unshare-pid', '--as-pid-1', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--disable-userns', '--die-with-parent', '--new-session', '--clearenv']) {
      expect(opts, f).to.include(f);
    }
    expect(after(a, '--uid')).to.deep.equal(['61003']);
    expect(after(a, '--gid')).to.deep.equal(['61003']);
    expect(after(a, '--cap-drop')).to.deep.equal(['ALL']);
    // --disable-userns is only valid together with --unshare-user
    expect(opts.indexOf('--unshare-user')).to.be.lessThan(opts.indexOf('--disable-userns'));
  });

  it('mounts the image read-only and sizes each tmpfs right before it', () => {
    expect(after(a, '--ro-bind', 2)).to.deep.equal(['/var/lib/runbox/images/python3.9/rootfs', '/']);
    const tmpfs = opts.flatMap((x, i) => (x === '--tmpfs' ? [opts.slice(i - 2, i + 2)] : []));
    expect(tmpfs).to.deep.equal([
      ['--size', String(RUN_LIMITS.workspaceBytes), '--tmpfs', '/box'],
      ['--size', String(RUN_LIMITS.tmpBytes), '--tmpfs', '/tmp'],
    ]);
    const helpers = opts.lastIndexOf('/.runbox');
    expect(opts.slice(helpers - 2, helpers)).to.deep.equal(['--ro-bind', '/opt/runbox/native/build']);
    expect(after(a, '--chdir')).to.deep.equal(['/box']);
    expect(after(a, '--proc')).to.deep.equal(['/proc']);
    expect(after(a, '--dev')).to.deep.equal(['/dev']);
  });

  it('passes exactly BASE_ENV plus the spec env', () => {
    const p = bwrapPlan(req({ env: { PYTHONHASHSEED: '0' } }));
    const set: Record<string, string> = {};
    p.argv.forEach((x, i) => {
      if (x === '--setenv') set[p.argv[i + 1]!] = p.argv[i + 2]!;
    });
    expect(set).to.deep.equal({ ...BASE_ENV, PYTHONHASHSEED: '0' });
  });

  it('runs the program under runbox-init with the collect list', () => {
    expect(a.slice(a.indexOf('--') + 1)).to.deep.equal([
      '/.runbox/init', '--collect-max', String(RUN_LIMITS.collectBytes), '--collect', 'a.out', '--', 'python3', 'main.py',
    ]);
    expect(plan.fixedProcesses).to.equal(2);
  });

  it('refuses relative images, odd collect names and bad environment names', () => {
    expect(() => bwrapPlan(req({ rootfs: 'images/x' }))).to.throw(/absolute/);
    expect(() => bwrapPlan(req({ rootfs: '/a/../etc' }))).to.throw(/absolute/);
    expect(() => bwrapPlan(req({ collect: ['../x'] }))).to.throw(/plain/);
    expect(() => bwrapPlan(req({ env: { 'A=B': 'x' } }))).to.throw(/environment/);
    expect(() => bwrapPlan(req({ argv: [] }))).to.throw(/argv/);
  });
});

describe('nsjail launch plan', () => {
  const plan = nsjailPlan(req());
  const a = plan.argv;

  it('runs once, as root that drops to the slot uid, with its log off stderr', () => {
    expect(a[0]).to.equal('/usr/bin/launcher');
    expect(plan.dropPrivileges).to.equal(false);
    expect(after(a, '--mode')).to.deep.equal(['o']);
    expect(after(a, '--user')).to.deep.equal(['61003']);
    expect(after(a, '--group')).to.deep.equal(['61003']);
    expect(after(a, '--log_fd')).to.deep.equal([String(NSJAIL_LOG_FD)]);
    expect(a).to.include('--quiet');
    expect(plan.fixedProcesses).to.equal(2);
  });

  it('overrides nsjail defaults that would cut programs short', () => {
    expect(after(a, '--chroot')).to.deep.equal(['/var/lib/runbox/images/python3.9/rootfs']);
    expect(after(a, '--time_limit')).to.deep.equal(['0']);
    expect(after(a, '--rlimit_as')).to.deep.equal(['inf']);
    expect(after(a, '--rlimit_fsize')).to.deep.equal([String(RUN_LIMITS.fileSizeBytes / 1024 / 1024)]);
    expect(after(a, '--rlimit_nofile')).to.deep.equal([String(RUN_LIMITS.openFiles)]);
    expect(after(a, '--rlimit_cpu')).to.deep.equal([String(RUN_LIMITS.cpuTimeRlimitSeconds)]);
    expect(after(a, '--seccomp_policy')).to.deep.equal(['/opt/runbox/native/build/seccomp.kafel']);
  });

  it('passes the stage fds, sized tmpfs owned by the slot, and the helpers read-only', () => {
    const passed = a.flatMap((x, i) => (x === '--pass_fd' ? [a[i + 1]] : []));
    expect(passed).to.deep.equal(['3', '4']);
    const mounts = a.flatMap((x, i) => (x === '--mount' ? [a[i + 1]] : []));
    expect(mounts).to.include(`none:/box:tmpfs:size=${RUN_LIMITS.workspaceBytes},uid=61003,gid=61003,mode=0700`);
    expect(mounts).to.include(`none:/tmp:tmpfs:size=${RUN_LIMITS.tmpBytes},uid=61003,gid=61003,mode=0700`);
    expect(mounts).to.include(`none:/dev/shm:tmpfs:size=${RUN_LIMITS.tmpBytes},uid=61003,gid=61003,mode=0700`);
    expect(after(a, '--bindmount_ro')).to.deep.equal(['/opt/runbox/native/build:/.runbox']);
    const env = a.flatMap((x, i) => (x === '--env' ? [a[i + 1]] : []));
    expect(env).to.deep.equal(Object.entries(BASE_ENV).map(([k, v]) => `${k}=${v}`));
    expect(a.slice(a.indexOf('--') + 1, a.indexOf('--') + 2)).to.deep.equal(['/.runbox/init']);
  });

  it('refuses a relative chroot', () => {
    expect(() => nsjailPlan(req({ rootfs: 'rootfs' }))).to.throw(/absolute/);
  });
});
