import { createServer, type Server } from 'node:net';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { RUN_LIMITS, VERDICT_CODES } from '../../src/limits.js';
import type { Sandbox, SandboxOutcome, SandboxSpec } from '../../src/sandbox/spec.js';
import { bareRun, expectHostClean, fileDigest, imageSandboxOrSkip, LAUNCHERS, staticBinary, TEST_SLOT_BASE } from '../helpers/sandbox.js';

// Programs that try to break out, starve the host or fake a verdict. Each must get the
// exact verdict and leave the host as it was: no process of a sandbox uid, no job
// cgroup, no host file changed. Runs under every launcher on this host.

const C = {
  forkBomb: '#include <unistd.h>\nint main(void){ for(;;) fork(); }\n',
  threads: `#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *nap(void *a){ (void)a; sleep(1); return 0; }
int main(void){ pthread_t t[40]; int n=0;
  for(int i=0;i<40;i++) if(pthread_create(&t[i],0,nap,0)==0) n++;
  for(int i=0;i<n;i++) pthread_join(t[i],0);
  printf("%d threads\\n", n); return n==40 ? 0 : 1; }
`,
  // Each denied syscall reports its errno name; success would print "ok".
  syscalls: `#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/io_uring.h>
static void report(const char *name, long rc){ printf("%s=%s\\n", name, rc < 0 ? strerrorname_np(errno) : "ok"); }
int main(void){
  report("mount", mount("none", "/box", "tmpfs", 0, 0));
  report("ptrace", ptrace(PTRACE_ATTACH, 1, 0, 0));
  report("unshare", unshare(CLONE_NEWUSER));
  report("unshare_ns", unshare(CLONE_NEWNS));
  report("clone_newuser", syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0));
  report("clone3", syscall(SYS_clone3, 0, 0));
  report("keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
  report("add_key", syscall(SYS_add_key, "user", "k", "v", 1, -3));
  struct io_uring_params p; memset(&p, 0, sizeof p);
  report("io_uring", syscall(SYS_io_uring_setup, 8, &p));
  report("bpf", syscall(SYS_bpf, 0, 0, 0));
  report("perf_event_open", syscall(SYS_perf_event_open, 0, 0, -1, -1, 0));
  return 0; }
`,
  // Syscall numbers libseccomp does not name (gaps, newer than it, nonsense), made from a
  // second thread: each answers ENOSYS, and the thread and the program carry on.
  unknownInThread: `#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
static const long nrs[] = {337, 400, 457, 462, 469, 470, 511, 1000, 100000};
static int errs[sizeof nrs / sizeof nrs[0]];
static void *probe(void *a){ (void)a; for(unsigned i=0;i<sizeof nrs/sizeof nrs[0];i++){ errno=0; long r=syscall(nrs[i]); errs[i]= r<0 ? errno : 0; } return 0; }
int main(void){ pthread_t t; pthread_create(&t,0,probe,0); pthread_join(t,0);
  for(unsigned i=0;i<sizeof nrs/sizeof nrs[0];i++) printf("%ld=%s\\n", nrs[i], errs[i] ? strerrorname_np(errs[i]) : "ok");
  return 0; }
`,
  // A second thread makes a foreign-ABI (x32) syscall: the whole program ends, not the thread.
  x32InThread: `#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *x32(void *a){ (void)a; long r; __asm__ volatile("syscall" : "=a"(r) : "a"(0x40000027L) : "rcx","r11","memory"); return (void*)r; }
int main(void){ pthread_t t; pthread_create(&t,0,x32,0); pthread_join(t,0); printf("survived\\n"); return 0; }
`,
  int80: '#include <stdio.h>\nint main(void){ long r; __asm__ volatile("int $0x80" : "=a"(r) : "a"(20L)); printf("survived %ld\\n", r); return 0; }\n',
  x32: '#include <stdio.h>\nint main(void){ long r; __asm__ volatile("syscall" : "=a"(r) : "a"(0x40000027L) : "rcx","r11","memory"); printf("survived %ld\\n", r); return 0; }\n',
};

const PY = {
  sleepers: 'import os,time\nfor i in range(16):\n  if os.fork()==0:\n    time.sleep(30); os._exit(0)\ntime.sleep(30)',
  memoryHog: 'a=[]\nwhile True: a.append(b"\\x01" * (1 << 24))',
  // 64 MiB files: a single file would stop at the file-size rlimit (EFBIG) first.
  fill: (dir: string) =>
    `import errno\nn=0\ntry:\n  while True:\n    if n % 64 == 0: f=open("${dir}/fill%d" % n,"wb",buffering=0)\n    f.write(b"x"*(1<<20)); n+=1\nexcept OSError as e:\n  print(errno.errorcode[e.errno], n)`,
  flood: (streams: string) =>
    `import sys\nouts=[${streams}]\nb=b"y"*65536\nwhile True:\n  for o in outs: o.write(b)`,
  exactly: (n: number) => `import sys; sys.stdout.write("z"*${n})`,
  connect: (ports: number[]) =>
    `import socket\nfor p in ${JSON.stringify(ports)}:\n  s=socket.socket()\n  s.settimeout(3)\n  try:\n    s.connect(("127.0.0.1",p)); print(p,"connected")\n  except OSError as e:\n    print(p,type(e).__name__)`,
  // socket() and socketpair() of every family number: the errno name, or "ok".
  families: 'import errno,socket\nfor f in range(0, 48):\n  for name, make in (("socket", lambda: socket.socket(f, socket.SOCK_DGRAM)), ("socketpair", lambda: socket.socketpair(f, socket.SOCK_DGRAM))):\n    try:\n      r = make()\n      print(f, name, "ok")\n    except OSError as e:\n      print(f, name, errno.errorcode.get(e.errno, e.errno))',
  vsock: 'import socket\ntry:\n  s = socket.socket(40, socket.SOCK_STREAM)\n  s.settimeout(3)\n  s.connect((2, 22))\n  print("connected")\nexcept OSError as e:\n  print(type(e).__name__, e.errno)',
  writeOutside:
    'import errno\nfor p in ["/etc/runbox-x","/usr/runbox-x","/runbox-x","/.runbox/x","/var/runbox-x","/dev/runbox-x"]:\n  try:\n    open(p,"w"); print(p,"written")\n  except OSError as e:\n    print(p,errno.errorcode[e.errno])',
};

for (const launcher of LAUNCHERS) {
  describe(`hostile programs (${launcher})`, function () {
    this.timeout(150_000);
    let sb: Sandbox;
    let rootfs: string;
    const slot = TEST_SLOT_BASE + 20 + LAUNCHERS.indexOf(launcher) * 20;
    const slots = Array.from({ length: 12 }, (_, i) => slot + i);
    const hostDir = `/tmp/runbox-hostile-${process.pid}`;
    const sentinel = join(hostDir, 'sentinel');
    const watched = ['/etc/passwd', '/etc/shadow', sentinel];
    let digests: string[] = [];

    before(async function () {
      ({ sb, rootfs } = await imageSandboxOrSkip(this, launcher, 'python3.9'));
      mkdirSync(hostDir, { recursive: true, mode: 0o777 });
      writeFileSync(sentinel, 'host file\n', { mode: 0o666 });
      digests = watched.map(fileDigest);
    });

    afterEach(() => expectHostClean(slots));

    after(() => {
      if (digests.length) expect(watched.map(fileDigest), 'host files').to.deep.equal(digests);
      rmSync(hostDir, { recursive: true, force: true });
    });

    const run = (argv: string[], more: Partial<SandboxSpec> = {}) => sb.run({ rootfs, argv, slot, ...more });
    const py = (code: string, more: Partial<SandboxSpec> = {}) => run(['python3.9', '-c', code], more);
    const bin = (source: string, extra: string[] = [], more: Partial<SandboxSpec> = {}) =>
      run(['./prog'], { files: [{ name: 'prog', mode: 0o755, content: staticBinary(source, extra) }], ...more });
    const verdict = (r: SandboxOutcome) => [r.status, r.exitCode, r.signal];

    it('stops a fork bomb: process_limit, exit 71', async () => {
      const r = await bin(C.forkBomb);
      expect(verdict(r)).to.deep.equal(['process_limit', VERDICT_CODES.processLimitExitCode, null]);
    });

    it('stops 17 sleeping processes: process_limit', async () => {
      const r = await py(PY.sleepers);
      expect(verdict(r)).to.deep.equal(['process_limit', VERDICT_CODES.processLimitExitCode, null]);
    });

    it('lets 40 threads run: threads are not processes', async () => {
      const r = await bin(C.threads, ['-pthread']);
      expect(verdict(r)).to.deep.equal(['exited', 0, null]);
      expect(r.stdout.toString()).to.equal('40 threads\n');
    });

    it('stops a memory hog: memory_limit', async () => {
      const r = await py(PY.memoryHog);
      expect(verdict(r)).to.deep.equal(['memory_limit', VERDICT_CODES.killedExitCode, VERDICT_CODES.killedSignal]);
    });

    it('fills the workspace, /tmp and /dev/shm only up to their sizes (ENOSPC, within the memory limit)', async () => {
      const [box, tmp, shm] = await Promise.all([py(PY.fill('/box')), py(PY.fill('/tmp'), { slot: slot + 1 }), py(PY.fill('/dev/shm'), { slot: slot + 2 })]);
      expect(verdict(shm)).to.deep.equal(['exited', 0, null]);
      expect(shm.stdout.toString()).to.equal(`ENOSPC ${RUN_LIMITS.shmBytes >> 20}\n`);
      expect(verdict(box)).to.deep.equal(['exited', 0, null]);
      expect(box.stdout.toString()).to.equal(`ENOSPC ${RUN_LIMITS.workspaceBytes >> 20}\n`);
      expect(verdict(tmp)).to.deep.equal(['exited', 0, null]);
      expect(tmp.stdout.toString()).to.equal(`ENOSPC ${RUN_LIMITS.tmpBytes >> 20}\n`);
    });

    it('stops output floods on stdout, stderr and both: output_limit, 153, signal 25', async () => {
      const runs = await Promise.all(
        ['sys.stdout.buffer', 'sys.stderr.buffer', 'sys.stdout.buffer,sys.stderr.buffer'].map((s, i) => py(PY.flood(s), { slot: slot + i })),
      );
      for (const r of runs) {
        expect(verdict(r)).to.deep.equal(['output_limit', VERDICT_CODES.outputLimitExitCode, VERDICT_CODES.outputLimitSignal]);
        expect(r.stdout.length).to.be.at.most(RUN_LIMITS.outputKeepBytes);
        expect(r.stderr.length).to.be.at.most(RUN_LIMITS.outputKeepBytes);
        expect(r.outputBytes).to.be.greaterThan(RUN_LIMITS.outputFloodBytes);
      }
      expect(runs[0]!.stdoutTruncated).to.equal(true);
      expect(runs[1]!.stderrTruncated).to.equal(true);
    });

    it('keeps exactly 64 KiB untruncated and cuts 64 KiB + 1', async () => {
      const keep = RUN_LIMITS.outputKeepBytes;
      const [exact, over] = await Promise.all([py(PY.exactly(keep)), py(PY.exactly(keep + 1), { slot: slot + 1 })]);
      expect([exact.status, exact.stdout.length, exact.stdoutTruncated]).to.deep.equal(['exited', keep, false]);
      expect([over.status, over.stdout.length, over.stdoutTruncated, over.outputBytes]).to.deep.equal(['exited', keep, true, keep + 1]);
    });

    it('passes binary (invalid UTF-8) output through byte for byte', async () => {
      const r = await py('import sys; sys.stdout.buffer.write(bytes(range(256))*3 + b"\\xff\\xfe\\xc3")');
      expect(r.stdout.equals(Buffer.concat([Buffer.from(Array.from({ length: 768 }, (_, i) => i % 256)), Buffer.from([0xff, 0xfe, 0xc3])]))).to.equal(true);
    });

    it('times out a busy loop and a sleep (run concurrently): timeout, 137, signal 9', async () => {
      const runs = await Promise.all([py('while True: pass'), run(['sleep', '60'], { slot: slot + 1 })]);
      for (const r of runs) expect(verdict(r)).to.deep.equal(['timeout', VERDICT_CODES.killedExitCode, VERDICT_CODES.killedSignal]);
    });

    it('has no network: loopback, Postgres and a host listener are unreachable', async () => {
      let accepted = 0;
      const server: Server = createServer((s) => {
        accepted++;
        s.destroy();
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as { port: number }).port;
      try {
        const r = await py(PY.connect([port, 5432, 80]));
        expect(r.status).to.equal('exited');
        const lines = r.stdout.toString().trim().split('\n');
        expect(lines).to.have.length(3);
        for (const l of lines) expect(l).to.not.match(/connected/);
        expect(accepted).to.equal(0);
      } finally {
        server.close();
      }
    });

    // Network namespaces confine AF_INET/AF_INET6 and AF_UNIX only; AF_VSOCK reaches a
    // VM's host. Every other family is refused by the one seccomp policy.
    const FAMILIES: Record<string, number> = {
      AF_UNSPEC: 0, AF_AX25: 3, AF_IPX: 4, AF_APPLETALK: 5, AF_NETROM: 6, AF_BRIDGE: 7, AF_ATMPVC: 8, AF_X25: 9,
      AF_ROSE: 11, AF_DECnet: 12, AF_NETBEUI: 13, AF_SECURITY: 14, AF_KEY: 15, AF_NETLINK: 16, AF_PACKET: 17,
      AF_ASH: 18, AF_ECONET: 19, AF_ATMSVC: 20, AF_RDS: 21, AF_SNA: 22, AF_IRDA: 23, AF_PPPOX: 24, AF_WANPIPE: 25,
      AF_LLC: 26, AF_IB: 27, AF_MPLS: 28, AF_CAN: 29, AF_TIPC: 30, AF_BLUETOOTH: 31, AF_IUCV: 32, AF_RXRPC: 33,
      AF_ISDN: 34, AF_PHONET: 35, AF_IEEE802154: 36, AF_CAIF: 37, AF_ALG: 38, AF_NFC: 39, AF_VSOCK: 40, AF_KCM: 41,
      AF_QIPCRTR: 42, AF_SMC: 43, AF_XDP: 44, AF_MCTP: 45, '46 (unassigned)': 46, '47 (unassigned)': 47,
    };

    describe('socket families', () => {
      let answers: Map<string, string>;
      before(async () => {
        const r = await py(PY.families);
        expect(r.status, r.stderr.toString()).to.equal('exited');
        answers = new Map(r.stdout.toString().trim().split('\n').map((l) => {
          const [f, call, answer] = l.split(' ');
          return [`${f} ${call}`, answer!] as [string, string];
        }));
        await expectHostClean(slots);
      });

      for (const [name, f] of Object.entries(FAMILIES)) {
        it(`refuses ${name} in socket() and socketpair(): EAFNOSUPPORT`, () => {
          expect([answers.get(`${f} socket`), answers.get(`${f} socketpair`)]).to.deep.equal(['EAFNOSUPPORT', 'EAFNOSUPPORT']);
        });
      }

      it('allows AF_UNIX (socket and socketpair), AF_INET and AF_INET6 (socket)', () => {
        expect(['1 socket', '1 socketpair', '2 socket', '10 socket'].map((k) => answers.get(k))).to.deep.equal(['ok', 'ok', 'ok', 'ok']);
      });

      it('cannot reach a VM host over AF_VSOCK', async () => {
        const r = await py(PY.vsock);
        expect(r.stdout.toString()).to.equal(`OSError ${constants.errno.EAFNOSUPPORT}\n`);
      });
    });

    it('sees only its own processes in /proc', async () => {
      const r = await py('import os; print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))');
      const pids = JSON.parse(r.stdout.toString()) as number[];
      expect(pids.length).to.be.at.most(3);
      expect(pids).to.not.include(process.pid);
    });

    it('cannot read the host /etc/shadow or the runner environment', async () => {
      process.env.RUNBOX_HOSTILE_SECRET = 'hostile-secret-value';
      try {
        const r = await py(
          'import os\ntry:\n  print(open("/etc/shadow").read(), end="")\nexcept OSError as e:\n  print("denied", e.errno)\nprint(repr(dict(os.environ)))',
        );
        const out = r.stdout.toString();
        expect(out).to.not.include(readFileSync('/etc/shadow', 'utf8'));
        expect(out).to.not.include('hostile-secret-value');
        expect(out).to.not.include('RUNBOX_');
      } finally {
        delete process.env.RUNBOX_HOSTILE_SECRET;
      }
    });

    it('cannot write outside the workspace (EROFS), /dev included', async () => {
      const r = await py(PY.writeOutside);
      const lines = r.stdout.toString().trim().split('\n');
      expect(lines).to.deep.equal(['/etc/runbox-x', '/usr/runbox-x', '/runbox-x', '/.runbox/x', '/var/runbox-x', '/dev/runbox-x'].map((p) => `${p} EROFS`));
    });

    it('cannot read the host\'s kernel command line or the other /proc files that describe the host', async () => {
      const r = await py(
        'import os\nfor p in ["/proc/cmdline", "/proc/kallsyms", "/proc/keys", "/proc/timer_list", "/proc/interrupts"]:\n  try:\n    print(p, len(open(p, "rb").read()))\n  except OSError as e:\n    print(p, e.strerror)\nfor d in ["/proc/acpi", "/proc/bus", "/proc/irq", "/proc/fs"]:\n  print(d, os.listdir(d) if os.path.isdir(d) else "absent")',
      );
      const lines = r.stdout.toString().trim().split('\n');
      expect(lines.slice(0, 5), 'files read as nothing at all').to.deep.equal(
        ['/proc/cmdline', '/proc/kallsyms', '/proc/keys', '/proc/timer_list', '/proc/interrupts'].map((p) => (existsSync(p) ? `${p} Permission denied` : `${p} No such file or directory`)),
      );
      expect(lines.slice(5)).to.deep.equal(['/proc/acpi', '/proc/bus', '/proc/irq', '/proc/fs'].map((d) => `${d} ${existsSync(d) ? '[]' : 'absent'}`));
      expect(r.stdout.toString()).to.not.include(readFileSync('/proc/cmdline', 'utf8').trim());
    });

    it('is denied mount, ptrace, unshare, namespaces, keyrings, io_uring, bpf, perf', async () => {
      const r = await bin(C.syscalls);
      expect(r.status, r.stderr.toString()).to.equal('exited');
      expect(r.stdout.toString()).to.equal(
        [
          'mount=EPERM', 'ptrace=EPERM', 'unshare=EPERM', 'unshare_ns=EPERM', 'clone_newuser=EPERM', 'clone3=ENOSYS',
          'keyctl=EPERM', 'add_key=EPERM', 'io_uring=EPERM', 'bpf=EPERM', 'perf_event_open=EPERM', '',
        ].join('\n'),
      );
    });

    it('foreign-ABI syscalls (i386 int 0x80, x32) never take effect: SIGSYS, or the kernel\'s own refusal', async () => {
      const [i386, x32] = await Promise.all([bin(C.int80), bin(C.x32, [], { slot: slot + 1 })]);
      for (const [name, source, r] of [['i386', C.int80, i386], ['x32', C.x32, x32]] as const) {
        // Probed, not assumed: a kernel that refuses the ABI itself kills the program before
        // seccomp sees the call (SIGSEGV for int 0x80 on such hosts); anywhere else the
        // filter must kill it with SIGSYS.
        const bare = bareRun(source);
        const expected = bare.signal && !bare.stdout.includes('survived') ? bare.signal : 'SIGSYS';
        const signo = constants.signals[expected];
        expect(verdict(r), `${name} (bare on this host: ${bare.signal ?? `exit ${bare.status}`})`).to.deep.equal(['signaled', 128 + signo, signo]);
        expect(r.stdout.toString(), `${name}: the marker after the call`).to.equal('');
      }
    });

    it('answers syscall numbers the policy does not name with ENOSYS, from any thread', async () => {
      const r = await bin(C.unknownInThread, ['-pthread']);
      expect(verdict(r), r.stderr.toString()).to.deep.equal(['exited', 0, null]);
      expect(r.stdout.toString()).to.equal(['337', '400', '457', '462', '469', '470', '511', '1000', '100000'].map((n) => `${n}=ENOSYS\n`).join(''));
    });

    it('ends the whole program when one thread makes a foreign-ABI syscall (kill-process, not kill-thread)', async () => {
      const r = await bin(C.x32InThread, ['-pthread']);
      // As for x32 above: a kernel that refuses it itself decides, probed bare.
      const bare = bareRun(C.x32InThread, ['-pthread']);
      const expected = bare.signal && !bare.stdout.includes('survived') ? bare.signal : 'SIGSYS';
      const signo = constants.signals[expected];
      expect(verdict(r), `bare on this host: ${bare.signal ?? `exit ${bare.status}`}`).to.deep.equal(['signaled', 128 + signo, signo]);
      expect(r.stdout.toString()).to.equal('');
    });

    it('planted symlinks lead nowhere: nothing collected through them, host files unchanged', async () => {
      const names = ['main.py', 'a.out', 'prog', 'cgroup.procs', 'seccomp.bpf', 'init', 'output', 'stdout'];
      const plant = names
        .flatMap((n) => [`os.symlink("${sentinel}", "/box/${n}")`, `os.symlink("/etc/passwd", "/tmp/${n}")`])
        .join('\n');
      const r = await py(`import os\n${plant}\nos.symlink("/etc/shadow", "/box/shadow")\nprint("planted")`, {
        collect: [...names, 'shadow'],
      });
      expect(r.status).to.equal('exited');
      expect(r.stdout.toString()).to.equal('planted\n');
      expect(r.collected).to.deep.equal([]);
      expect(watched.map(fileDigest)).to.deep.equal(digests);
      // The next stage in the same slot starts from an empty workspace.
      const next = await py('import os; print(os.listdir("/box"), os.listdir("/tmp"))');
      expect(next.stdout.toString()).to.equal('[] []\n');
    });

    it('keeps /dev/shm private between concurrent runs', async () => {
      const [writer, reader] = await Promise.all([
        py('import time\nopen("/dev/shm/runbox-probe","w").write("x")\nprint("written")\ntime.sleep(2)'),
        py('import os,time\ntime.sleep(1)\nprint(os.path.exists("/dev/shm/runbox-probe"))', { slot: slot + 1 }),
      ]);
      expect(writer.stdout.toString()).to.equal('written\n');
      expect(reader.stdout.toString()).to.equal('False\n');
    });

    it('a program exiting 137 or 153 by itself is just exited, and a self-kill is signaled', async () => {
      const [a, b, c] = await Promise.all([
        run(['sh', '-c', 'exit 137']),
        run(['sh', '-c', 'exit 153'], { slot: slot + 1 }),
        py('import os; os.kill(os.getpid(), 9)', { slot: slot + 2 }),
      ]);
      expect(verdict(a)).to.deep.equal(['exited', 137, null]);
      expect(verdict(b)).to.deep.equal(['exited', 153, null]);
      expect(verdict(c)).to.deep.equal(['signaled', 137, 9]);
    });
  });
}
