import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { executeJob } from '../../src/runner/execute.js';
import type { Sandbox, StageFile } from '../../src/sandbox/spec.js';
import { expectHostClean, imageRootfs, imageSandboxOrSkip, LAUNCHERS, staticBinary, TEST_SLOT_BASE } from '../helpers/sandbox.js';

// A pooled sandbox runs stage after stage in one set of launcher namespaces: nothing a
// run leaves behind may reach any later run, in its slot or another. One program both
// leaves everything it can (input "leave") and looks for all of it (always): files in
// every writable place, processes that try to outlive the run (a double-forked, setsid
// daemon ignoring SIGTERM and SIGHUP, a stopped child), SysV IPC, a POSIX message queue,
// an abstract Unix socket and a listening TCP socket (held by the daemon), a port in
// TIME_WAIT, the working directory, the umask and the environment. The run that leaves
// them sees each one (so the probe can see them); every later run sees exactly what a
// run in a fresh sandbox sees.

const PROGRAM = `#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#define KEY 0x52554e
extern char **environ;
static const char *e(long r) {
  static char b[16];
  if (r >= 0) return "ok";
  switch (errno) {
    case ENOENT: return "ENOENT";
    case ECONNREFUSED: return "ECONNREFUSED";
    case EADDRINUSE: return "EADDRINUSE";
    case EPERM: return "EPERM";
    default: snprintf(b, sizeof b, "E%d", errno); return b;
  }
}
static struct sockaddr_in at(int port) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}
static struct sockaddr_un abstract(socklen_t *len) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  memcpy(a.sun_path, "\\0runbox-left", 12);
  *len = offsetof(struct sockaddr_un, sun_path) + 12;
  return a;
}
static void probe(void) {
  const char *files[] = {"/box/left", "/tmp/left", "/dev/shm/left", "/box/.cache/left"};
  int i;
  char **v;
  printf("files");
  for (i = 0; i < 4; i++) if (access(files[i], F_OK) == 0) printf(" %s", files[i]);
  printf("\\nprocesses");
  DIR *d = opendir("/proc");
  struct dirent *de;
  while ((de = readdir(d))) {
    int pid = atoi(de->d_name);
    if (pid > 1 && pid != getpid()) printf(" %d", pid);
  }
  printf("\\nshm %s\\nsem %s\\nmsg %s\\n", e(shmget(KEY, 0, 0)), e(semget(KEY, 0, 0)), e(msgget(KEY, 0)));
  printf("mq %s\\n", e(syscall(SYS_mq_open, "runbox-left", O_RDONLY, 0, NULL)));
  socklen_t len;
  struct sockaddr_un u = abstract(&len);
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  printf("abstract %s\\n", e(connect(s, (struct sockaddr *)&u, len)));
  struct sockaddr_in a = at(47001), b = at(47002);
  s = socket(AF_INET, SOCK_STREAM, 0);
  printf("tcp %s\\n", e(connect(s, (struct sockaddr *)&a, sizeof a)));
  s = socket(AF_INET, SOCK_STREAM, 0);
  printf("time_wait %s\\n", e(bind(s, (struct sockaddr *)&b, sizeof b)));
  char cwd[256];
  printf("cwd %s\\n", getcwd(cwd, sizeof cwd) ? cwd : "?");
  mode_t m = umask(022);
  printf("umask %03o\\n", (unsigned)m);
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  printf("nofile %llu %llu\\n", (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
  printf("env");
  for (v = environ; *v; v++) printf(" %.*s", (int)strcspn(*v, "="), *v);
  printf("\\n");
}
static void leave(void) {
  mkdir("/box/.cache", 0755);
  const char *files[] = {"/box/left", "/tmp/left", "/dev/shm/left", "/box/.cache/left"};
  int i;
  for (i = 0; i < 4; i++) close(open(files[i], O_CREAT | O_WRONLY, 0644));
  shmget(KEY, 4096, IPC_CREAT | 0600);
  semget(KEY, 1, IPC_CREAT | 0600);
  msgget(KEY, IPC_CREAT | 0600);
  syscall(SYS_mq_open, "runbox-left", O_CREAT | O_RDWR, 0600, NULL);
  socklen_t len;
  struct sockaddr_un u = abstract(&len);
  int un = socket(AF_UNIX, SOCK_STREAM, 0);
  bind(un, (struct sockaddr *)&u, len);
  listen(un, 1);
  int one = 1;
  struct sockaddr_in a = at(47001), b = at(47002);
  int tcp = socket(AF_INET, SOCK_STREAM, 0);
  setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  bind(tcp, (struct sockaddr *)&a, sizeof a);
  listen(tcp, 1);
  // The side that closes first keeps its port in TIME_WAIT.
  int srv = socket(AF_INET, SOCK_STREAM, 0);
  bind(srv, (struct sockaddr *)&b, sizeof b);
  listen(srv, 1);
  int c = socket(AF_INET, SOCK_STREAM, 0);
  connect(c, (struct sockaddr *)&b, sizeof b);
  int acc = accept(srv, NULL, NULL);
  close(acc);
  usleep(20000);
  close(c);
  close(srv);
  if (fork() == 0) {
    setsid();
    if (fork() == 0) {
      signal(SIGTERM, SIG_IGN);
      signal(SIGHUP, SIG_IGN);
      for (;;) pause();
    }
    _exit(0);
  }
  close(un);
  close(tcp);
  pid_t stopped = fork();
  if (stopped == 0) for (;;) pause();
  kill(stopped, SIGSTOP);
  usleep(50000);
  setenv("LEFT_BEHIND", "1", 1);
  chdir("/tmp");
  umask(0);
}
int main(void) {
  char word[16] = "";
  if (fgets(word, sizeof word, stdin) && !strncmp(word, "leave", 5)) leave();
  probe();
  fflush(stdout);
  return 0;
}
`;

const lines = (text: string) => text.trim().split('\n');

/** Lines of `leftover` that differ from `fresh`, by their first word. */
function differing(fresh: string, leftover: string): string[] {
  const f = new Map(lines(fresh).map((l) => [l.split(' ')[0]!, l]));
  return lines(leftover).filter((l) => f.get(l.split(' ')[0]!) !== l).map((l) => l.split(' ')[0]!);
}

/** What the leaving run must see of itself: every leftover (nofile is the one thing a run cannot change for others, nor for itself upward). */
const LEFT = ['files', 'processes', 'shm', 'sem', 'msg', 'mq', 'abstract', 'tcp', 'time_wait', 'cwd', 'umask', 'env'];

for (const launcher of LAUNCHERS) {
  describe(`what a run leaves behind never reaches a later one (${launcher})`, function () {
    this.timeout(180_000);
    let sb: Sandbox;
    let rootfs: string;
    const slots = [TEST_SLOT_BASE + 60, TEST_SLOT_BASE + 61];
    const binary: StageFile = { name: 'probe', mode: 0o755, content: Buffer.alloc(0) };

    before(async function () {
      ({ sb, rootfs } = await imageSandboxOrSkip(this, launcher, 'python3.9'));
      binary.content = staticBinary(PROGRAM);
    });

    afterEach(() => expectHostClean(slots));

    const run = async (slot: number, stdin: string) => {
      const r = await sb.run({ rootfs, argv: ['./probe'], files: [binary], stdin, slot });
      expect([r.status, r.exitCode], r.stderr.toString() + (r.diagnostic ?? '')).to.deep.equal(['exited', 0]);
      return r.stdout.toString();
    };

    it('between the runs of a slot and across slots', async () => {
      const fresh = await run(slots[0]!, 'probe');
      expect(fresh, 'a fresh run').to.match(/^files\nprocesses\nshm ENOENT\nsem ENOENT\nmsg ENOENT\nmq ENOENT\nabstract ECONNREFUSED\ntcp ECONNREFUSED\ntime_wait ok\ncwd \/box\n/);
      for (const leaving of slots) {
        const left = await run(leaving, 'leave');
        expect(differing(fresh, left), 'what the leaving run sees of itself').to.deep.equal(LEFT);
        // Runs land on both slots, several times each, one after another and side by side.
        for (let round = 0; round < 3; round++) {
          for (const slot of slots) expect(await run(slot, 'probe'), `slot ${slot}, after slot ${leaving} left its things`).to.equal(fresh);
          const both = await Promise.all(slots.map((slot) => run(slot, 'probe')));
          for (const out of both) expect(out).to.equal(fresh);
        }
      }
    });

    it('between the tests of one multi-test request', async function () {
      const gcc = imageRootfs('gcc');
      if ('skip' in gcc) {
        console.log(`      SKIPPED: ${gcc.skip}`);
        return this.skip();
      }
      const config = loadConfig();
      const inputs = ['probe', 'leave', 'probe', 'probe', 'leave', 'probe', 'probe'];
      const job = { id: 'isolation', compiler: 'gcc-4.9', code: PROGRAM, input: null, tests: inputs.map((input) => ({ input })), extra_params: null };
      const r = await executeJob(job as never, sb, { imagesDir: config.RUNBOX_IMAGES_DIR, slot: slots[0]! });
      expect(r.status, r.compile_output ?? r.error).to.equal('success');
      const outs = (r.tests ?? []).map((t) => t.output);
      expect(outs).to.have.length(inputs.length);
      const fresh = outs[0]!;
      inputs.forEach((input, k) => {
        if (input === 'leave') expect(differing(fresh, outs[k]!), `test ${k + 1} sees what it left`).to.deep.equal(LEFT);
        else expect(outs[k], `test ${k + 1}`).to.equal(fresh);
      });
    });
  });
}
