import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { expect } from 'chai';
import { RUN_LIMITS } from '../../src/limits.js';
import type { LauncherName } from '../../src/sandbox/index.js';
import type { SandboxOutcome } from '../../src/sandbox/spec.js';
import { bareRun, expectHostClean, imageRootfs, LAUNCHERS, sandboxOrSkip, staticBinary, TEST_SLOT_BASE, uidOfSlot } from '../helpers/sandbox.js';

// One probe program prints the world it finds (mounts and their flags, /dev, nice,
// rlimits, ids, capabilities, the answers to a list of syscalls from the main thread
// and from another, /dev/stdin and /dev/fd, what it may write, a thread's foreign-ABI
// call). The world must be the same under every launcher on this host, and right.

const SLOT = TEST_SLOT_BASE + 70;

const PROBE = `import ctypes, errno, os, resource, socket, stat, subprocess, threading
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return 'ok' if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
out = []
def p(*a): out.append(' '.join(str(x) for x in a))
mounts = []
for line in open('/proc/self/mountinfo'):
    f = line.split()
    sep = f.index('-')
    mounts.append((f[4], f[5], f[sep + 1], f[sep + 2], f[sep + 3]))
# Every mount, one hidden below another at the same place included.
for m in sorted(mounts):
    p('mount', *m)
p('setgroups', open('/proc/self/setgroups').read().strip())
p('cgroup', open('/proc/self/cgroup').read().split())
me = os.getuid()
for name in sorted(os.listdir('/dev')):
    st = os.lstat('/dev/' + name)
    kind = 'l' if stat.S_ISLNK(st.st_mode) else 'c' if stat.S_ISCHR(st.st_mode) else 'd' if stat.S_ISDIR(st.st_mode) else 'f'
    # devpts' own root belongs to the mounter (root under nsjail, the namespace under
    # bubblewrap); nothing can be created in it either way.
    owner = '' if name == 'pts' else 'self' if st.st_uid == me else 'other'
    p('dev', name, kind, oct(st.st_mode & 0o7777), owner, os.readlink('/dev/' + name) if kind == 'l' else '')
p('nice', os.nice(0))
for r in sorted(n for n in dir(resource) if n.startswith('RLIMIT_')):
    p('rlimit', r, *resource.getrlimit(getattr(resource, r)))
p('ids', os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups())
for line in open('/proc/self/status'):
    k = line.split(':')[0]
    if k.startswith('Cap') or k in ('NoNewPrivs', 'Seccomp'):
        p('status', line.strip().replace('\\t', ' '))
p('hostname', socket.gethostname(), 'cwd', os.getcwd(), 'umask', oct(os.umask(0o22)))
SYSCALLS = [('getpid', 39), ('mount', 165), ('unshare_user', 272, 0x10000000), ('ptrace', 101), ('keyctl', 250), ('bpf', 321), ('io_uring_setup', 425),
            ('clone3', 435), ('listmount', 458), ('mseal', 462), ('setxattrat', 463), ('gap', 400), ('new', 470), ('far', 1000),
            ('socket_vsock', 41, 40, 1), ('socket_netlink', 41, 16, 3), ('socket_packet', 41, 17, 3), ('socket_alg', 41, 38, 5), ('socketpair_vsock', 53, 40, 1, 0, 0)]
def syscalls(tag):
    for s in SYSCALLS:
        p(tag, s[0], sc(s[1], *s[2:]))
syscalls('syscall')
t = threading.Thread(target=syscalls, args=('thread',))
t.start(); t.join()
p('after thread', 'alive')
import sys
p('stdin', repr(open('/dev/stdin').read()))
# In a fresh process: this one's own descriptors depend on the interpreter's timing.
p('dev/fd', subprocess.run(['ls', '/dev/fd/'], capture_output=True).stdout.split())
with open('/dev/stdout', 'w') as f: pass
p('fifo', [stat.S_ISFIFO(os.fstat(i).st_mode) for i in (0, 1, 2)])
for path in ('/proc/cmdline', '/proc/kallsyms', '/dev/x', '/box/x', '/tmp/x', '/dev/shm/x'):
    try:
        open(path, 'a').close() if not path.startswith('/proc') else open(path).read()
        p('access', path, 'ok')
    except OSError as e:
        p('access', path, errno.errorcode[e.errno])
r = subprocess.run(['./x32thread'], capture_output=True)
p('x32 in a thread', r.returncode, r.stdout)
print('\\n'.join(out))
`;

const X32_IN_THREAD = `#include <pthread.h>
#include <stdio.h>
static void *x32(void *a){ (void)a; long r; __asm__ volatile("syscall" : "=a"(r) : "a"(0x40000027L) : "rcx","r11","memory"); return (void*)r; }
int main(void){ pthread_t t; pthread_create(&t,0,x32,0); pthread_join(t,0); printf("survived\\n"); return 0; }
`;

describe('the same world under every launcher', function () {
  this.timeout(60_000);
  const worlds = new Map<LauncherName, SandboxOutcome>();
  // Pooled sandboxes (the default) give each stage a user namespace that denies setgroups
  // and a cgroup namespace of its own; one-shot ones leave both to the launcher.
  let pooled = true;

  before(async function () {
    const image = imageRootfs('python3.9');
    if ('skip' in image) {
      console.log(`      SKIPPED: ${image.skip}`);
      return this.skip();
    }
    const why: string[] = [];
    for (const launcher of LAUNCHERS) {
      const sb = await sandboxOrSkip(launcher);
      if (typeof sb === 'string') {
        why.push(`${launcher}: ${sb}`);
        continue;
      }
      const r = await sb.run({
        rootfs: image.rootfs,
        argv: ['python3.9', '-c', PROBE],
        files: [{ name: 'x32thread', mode: 0o755, content: staticBinary(X32_IN_THREAD, ['-pthread']) }],
        stdin: 'probe input\n',
        slot: SLOT,
      });
      worlds.set(launcher, r);
      pooled &&= sb.pooled === true;
      await sb.close?.();
    }
    await expectHostClean([SLOT]);
    if (worlds.size === 0) {
      console.log(`      SKIPPED: no launcher (${why.join('; ')})`);
      this.skip();
    }
    for (const w of why) console.log(`      (not compared: ${w})`);
  });

  const lines = (r: SandboxOutcome) => r.stdout.toString().trim().split('\n');
  const each = (check: (l: string[], launcher: LauncherName) => void) => {
    for (const [launcher, r] of worlds) {
      expect([r.status, r.exitCode], `${launcher}: ${r.stderr.toString()}`).to.deep.equal(['exited', 0]);
      check(lines(r), launcher);
    }
  };

  it('is identical under every launcher present', function () {
    if (worlds.size < 2) {
      console.log(`      SKIPPED: only ${[...worlds.keys()].join(', ')} on this host`);
      return this.skip();
    }
    const comparable = (r: SandboxOutcome) => (pooled ? lines(r) : lines(r).filter((l) => !/^(setgroups|cgroup) /.test(l)));
    const [first, ...rest] = [...worlds];
    for (const [other, b] of rest) expect(comparable(b), `${other} against ${first![0]}`).to.deep.equal(comparable(first![1]));
  });

  it('pooled: a user namespace that denies setgroups, a cgroup namespace of the stage\'s own, one devpts', function () {
    if (!pooled) {
      console.log('      SKIPPED: sandboxes are not pooled here (RUNBOX_SANDBOX_POOL=false)');
      return this.skip();
    }
    each((l) => {
      expect(l).to.include('setgroups deny');
      const cgroup = l.find((x) => x.startsWith('cgroup '));
      expect(cgroup, 'cgroup line').to.be.a('string');
      // Each hierarchy's path is the namespace's root: nothing of the runner's cgroups, nor its count of stages.
      for (const entry of cgroup!.slice('cgroup '.length).match(/'[^']*'/g) ?? []) expect(entry, 'a /proc/self/cgroup line').to.match(/:\/'$/);
      expect(l.filter((x) => x.startsWith('mount /dev/pts ')), 'mounts at /dev/pts').to.have.length(1);
    });
  });

  it('mounts: the image, /.runbox and /dev read-only; the writable ones sized; nosuid and nodev everywhere but the devices', () => {
    each((l) => {
      const mounts = new Map(l.filter((x) => x.startsWith('mount ')).map((x) => {
        const [, mp, flags, fstype, , superOpts] = x.split(' ');
        return [mp!, { flags: flags!.split(','), fstype, superOpts: superOpts! }];
      }));
      for (const mp of ['/', '/.runbox', '/dev', '/proc/acpi']) {
        if (mp === '/proc/acpi' && !mounts.has(mp)) continue;
        expect(mounts.get(mp)?.flags, mp).to.include.members(['ro', 'nosuid', 'nodev']);
      }
      for (const [mp, bytes] of [['/box', RUN_LIMITS.workspaceBytes], ['/tmp', RUN_LIMITS.tmpBytes], ['/dev/shm', RUN_LIMITS.shmBytes]] as const) {
        expect(mounts.get(mp)?.flags, mp).to.include.members(['rw', 'nosuid', 'nodev']);
        expect(mounts.get(mp)?.superOpts, mp).to.include(`size=${bytes / 1024}k`);
      }
      expect(mounts.get('/proc')?.flags).to.include.members(['nosuid', 'nodev', 'noexec']);
      expect(mounts.get('/dev/pts')?.fstype).to.equal('devpts');
      for (const [mp, m] of mounts) if (!/^\/dev\/(null|zero|full|random|urandom|tty)$/.test(mp)) expect(m.flags, mp).to.include('nosuid');
    });
  });

  it('/dev: the usual nodes and links, and /dev/stdin, /dev/stdout and /dev/fd work on real pipes', () => {
    each((l) => {
      const dev = l.filter((x) => x.startsWith('dev ')).map((x) => x.split(' ').slice(1, 3).join(' '));
      expect(dev).to.deep.equal([
        'core l', 'fd l', 'full c', 'null c', 'ptmx l', 'pts d', 'random c', 'shm d', 'stderr l', 'stdin l', 'stdout l', 'tty c', 'urandom c', 'zero c',
      ]);
      expect(l).to.include("stdin 'probe input\\n'");
      expect(l).to.include('fifo [True, True, True]');
      expect(l).to.include("dev/fd [b'0', b'1', b'2', b'3']");
    });
  });

  it('nice 0, the runner\'s rlimits, the slot\'s ids, no capabilities, no_new_privs, a seccomp filter', () => {
    const uid = uidOfSlot(SLOT);
    each((l) => {
      expect(l).to.include('nice 0');
      expect(l).to.include(`rlimit RLIMIT_NOFILE ${RUN_LIMITS.openFiles} ${RUN_LIMITS.openFiles}`);
      expect(l).to.include(`rlimit RLIMIT_FSIZE ${RUN_LIMITS.fileSizeBytes} ${RUN_LIMITS.fileSizeBytes}`);
      expect(l).to.include(`rlimit RLIMIT_CPU ${RUN_LIMITS.cpuTimeRlimitSeconds} ${RUN_LIMITS.cpuTimeRlimitSeconds}`);
      expect(l).to.include('rlimit RLIMIT_CORE 0 0');
      expect(l).to.include(`ids ${uid} ${uid} ${uid} ${uid} []`);
      for (const cap of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) expect(l).to.include(`status ${cap}: 0000000000000000`);
      expect(l).to.include('status NoNewPrivs: 1');
      expect(l).to.include('status Seccomp: 2');
      expect(l).to.include('hostname runbox cwd /box umask 0o22');
    });
  });

  it('syscalls: denied ones fail with their errno, unknown numbers with ENOSYS, other socket families with EAFNOSUPPORT, from any thread', () => {
    const expected: Record<string, string> = {
      getpid: 'ok', mount: 'EPERM', unshare_user: 'EPERM', ptrace: 'EPERM', keyctl: 'EPERM', bpf: 'EPERM', io_uring_setup: 'EPERM',
      clone3: 'ENOSYS', listmount: 'ENOSYS', mseal: 'ENOSYS', setxattrat: 'ENOSYS', gap: 'ENOSYS', new: 'ENOSYS', far: 'ENOSYS',
      socket_vsock: 'EAFNOSUPPORT', socket_netlink: 'EAFNOSUPPORT', socket_packet: 'EAFNOSUPPORT', socket_alg: 'EAFNOSUPPORT', socketpair_vsock: 'EAFNOSUPPORT',
    };
    each((l) => {
      for (const tag of ['syscall', 'thread']) {
        const got = Object.fromEntries(l.filter((x) => x.startsWith(`${tag} `)).map((x) => x.split(' ').slice(1)));
        expect(got, tag).to.deep.equal(expected);
      }
      expect(l).to.include('after thread alive');
    });
  });

  it('writes only to the workspace, /tmp and /dev/shm; host /proc files are masked', () => {
    each((l) => {
      expect(l.filter((x) => x.startsWith('access '))).to.deep.equal([
        ...['/proc/cmdline', '/proc/kallsyms'].map((f) => `access ${f} ${existsSync(f) ? 'EACCES' : 'ENOENT'}`),
        'access /dev/x EROFS', 'access /box/x ok', 'access /tmp/x ok', 'access /dev/shm/x ok',
      ]);
    });
  });

  it('a thread\'s foreign-ABI syscall ends the whole program', () => {
    const bare = bareRun(X32_IN_THREAD, ['-pthread']);
    const signal = bare.signal && !bare.stdout.includes('survived') ? bare.signal : 'SIGSYS';
    each((l) => expect(l).to.include(`x32 in a thread -${constants.signals[signal]} b''`));
  });
});
