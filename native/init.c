// runbox-init: the first program inside every sandbox, mounted at /.runbox/init.
// Static, because images carry older C libraries than the host that builds it.
//
// Usage: /.runbox/init [--cgroup-fd N]... [--cpus LIST] [--devpts OPTIONS] [--no-user-namespaces]
//  0. joins the cgroups whose cgroup.procs files the runner opened on the --cgroup-fd
//     descriptors: the program's own cgroups below the job, so that its time and memory
//     are measured without the launcher's; with --devpts OPTIONS (a launcher that cannot
//     mount devpts with options itself), mounts the sandbox's own devpts at /dev/pts with
//     those options (its cap on terminals among them), which needs CAP_SYS_ADMIN in the
//     sandbox's user namespace;
//     with --no-user-namespaces (needs CAP_SYS_RESOURCE there) no user namespace can be
//     made below the sandbox's own; then it drops every capability, whatever the
//     launcher left it, so neither can be undone; with --cpus it
//     keeps the program to those CPUs (the sandbox's share of the host, as /sys shows it);
//  1. reads the stage archive (archive.h) from fd 3: first the program (argv,
//     environment, the names to collect), then its files, which it creates in the
//     working directory (the workspace), never following or replacing anything. The
//     program comes this way, not on the command line, so that a runner can start the
//     launcher and init ahead of the run they are for: until the record arrives the
//     sandbox is empty and waits. An end of fd 3 before any record means the run was
//     called off: init exits 0 and nothing runs;
//  2. loads /.runbox/seccomp.bpf, so every launcher enforces the same filter;
//  3. starts the program (which then holds only fds 0-2) and waits for it, so the
//     program is never PID 1 (PID 1 ignores default-action signals);
//  3b. gives the program its own fds 0-2: the fork server's pipes (open("/dev/stdin")
//     and friends work on a pipe; they fail on a socket), which the server never
//     blocks on;
//  4. when it ends, kills whatever it left behind, sends the collected files that are
//     regular files and the program's end on fd 4, and exits with the same code
//     (128 + signal when killed).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <net/if.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "archive.h"

#define SECCOMP_FILE "/.runbox/seccomp.bpf"
#define SANDBOX_WORKSPACE "/box"
#define STAGE_IN_FD 3
#define STAGE_OUT_FD 4
// Exit code when the sandbox itself cannot be set up (not the program's doing).
#define INIT_FAILED 126
#define EXEC_FAILED 127

static void fail(const char *what, const char *detail) {
  int e = errno;
  fprintf(stderr, "runbox-init: %s%s%s%s%s\n", what, detail ? " " : "", detail ? detail : "", e ? ": " : "", e ? strerror(e) : "");
  _exit(INIT_FAILED);
}

static int valid_name(const char *name, size_t len) {
  if (len == 0 || len > ARCHIVE_NAME_MAX) return 0;
  if (memchr(name, '/', len) || memchr(name, 0, len)) return 0;
  if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.')) return 0;
  return 1;
}

// Reads exactly n bytes; 0 at a clean end of stream before the first byte.
static int read_full(int fd, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail("reading the stage archive", NULL);
    if (r == 0) {
      if (got == 0) return 0;
      errno = 0;
      fail("truncated stage archive", NULL);
    }
    got += (size_t)r;
  }
  return 1;
}

static void write_full(int fd, const void *buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = write(fd, (const char *)buf + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // the runner went away: nothing more to report
    done += (size_t)w;
  }
}

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put32(unsigned char *p, uint32_t v) {
  p[0] = v >> 24;
  p[1] = v >> 16;
  p[2] = v >> 8;
  p[3] = v;
}

// The program, from the stage archive's first record.
struct program {
  char *record;  // the strings below point into it
  char **argv, **env, **collect;
  int collect_count;
  unsigned long long collect_max;
};

static void bad_program(void) {
  errno = 0;
  fail("malformed program record in stage archive", NULL);
}

// Points `out` at the next `n` NUL-terminated strings of buf[*at..len).
static void take_strings(char *buf, size_t len, size_t *at, uint32_t n, char **out) {
  for (uint32_t k = 0; k < n; k++) {
    char *end = *at < len ? memchr(buf + *at, 0, len - *at) : NULL;
    if (!end) bad_program();
    out[k] = buf + *at;
    *at = (size_t)(end - buf) + 1;
  }
  out[n] = NULL;
}

static void read_program(struct program *p) {
  unsigned char type;
  if (!read_full(STAGE_IN_FD, &type, 1)) _exit(0);  // called off before it began
  if (type != ARCHIVE_PROGRAM) bad_program();
  unsigned char hdr[4];
  read_full(STAGE_IN_FD, hdr, 4);
  uint32_t size = be32(hdr);
  if (size < 16 || size > ARCHIVE_PROGRAM_MAX) bad_program();
  char *buf = malloc(size);
  if (!buf) fail("out of memory", NULL);
  p->record = buf;
  read_full(STAGE_IN_FD, buf, size);
  uint32_t argc = be32((unsigned char *)buf), envc = be32((unsigned char *)buf + 4), collectc = be32((unsigned char *)buf + 8);
  p->collect_max = be32((unsigned char *)buf + 12);
  // Each string takes at least its NUL: counts past the record's size are malformed.
  if (argc == 0 || argc > size || envc > size || collectc > size || argc + envc + collectc > size - 16) bad_program();
  p->argv = calloc(argc + 1, sizeof *p->argv);
  p->env = calloc(envc + 1, sizeof *p->env);
  p->collect = calloc(collectc + 1, sizeof *p->collect);
  if (!p->argv || !p->env || !p->collect) fail("out of memory", NULL);
  size_t at = 16;
  take_strings(buf, size, &at, argc, p->argv);
  take_strings(buf, size, &at, envc, p->env);
  take_strings(buf, size, &at, collectc, p->collect);
  if (at != size) bad_program();
  p->collect_count = (int)collectc;
}

// A pooled stage's child shares init's memory (see serve): what it allocates is freed.
static void free_program(struct program *p) {
  free(p->argv);
  free(p->env);
  free(p->collect);
  free(p->record);
}

// The workspace files: the rest of the stage archive.
static void stage_in(void) {
  for (;;) {
    unsigned char type;
    if (!read_full(STAGE_IN_FD, &type, 1)) break;
    if (type != ARCHIVE_FILE) {
      errno = 0;
      fail("unknown record in stage archive", NULL);
    }
    unsigned char hdr[2];
    read_full(STAGE_IN_FD, hdr, 2);
    size_t len = (size_t)hdr[0] << 8 | hdr[1];
    char name[ARCHIVE_NAME_MAX + 1];
    if (len > ARCHIVE_NAME_MAX) {
      errno = 0;
      fail("file name too long in stage archive", NULL);
    }
    read_full(STAGE_IN_FD, name, len);
    name[len] = 0;
    if (!valid_name(name, len)) {
      errno = 0;
      fail("bad file name in stage archive", name);
    }
    unsigned char ms[8];
    read_full(STAGE_IN_FD, ms, 8);
    mode_t mode = be32(ms) & 0777;
    uint32_t size = be32(ms + 4);
    int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) fail("cannot create", name);
    char buf[65536];
    while (size > 0) {
      size_t n = size < sizeof buf ? size : sizeof buf;
      read_full(STAGE_IN_FD, buf, n);
      size_t done = 0;
      while (done < n) {
        ssize_t w = write(fd, buf + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fail("cannot write", name);
        done += (size_t)w;
      }
      size -= n;
    }
    if (fchmod(fd, mode) != 0) fail("cannot chmod", name);
    close(fd);
  }
  close(STAGE_IN_FD);
}

// The filter, read once (a pooled init reads it before its first stage).
static struct sock_filter seccomp_insns[BPF_MAXINSNS];
static unsigned short seccomp_len;

static void read_seccomp(void) {
  int fd = open(SECCOMP_FILE, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open", SECCOMP_FILE);
  ssize_t n = read(fd, seccomp_insns, sizeof seccomp_insns);
  close(fd);
  if (n <= 0 || n % sizeof(struct sock_filter) != 0) {
    errno = 0;
    fail("bad seccomp program", SECCOMP_FILE);
  }
  seccomp_len = (unsigned short)(n / sizeof(struct sock_filter));
}

static void load_seccomp(void) {
  if (!seccomp_len) read_seccomp();
  struct sock_fprog prog = {.len = seccomp_len, .filter = seccomp_insns};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs", NULL);
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) fail("cannot load seccomp filter", NULL);
}

static void collect(char **names, int count, unsigned long long max_total) {
  unsigned long long total = 0;
  for (int i = 0; i < count; i++) {
    const char *name = names[i];
    size_t len = strlen(name);
    if (!valid_name(name, len)) continue;
    int fd = open(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (unsigned long long)st.st_size > max_total - total) {
      close(fd);
      continue;
    }
    size_t size = (size_t)st.st_size;
    char *data = malloc(size ? size : 1);
    size_t got = 0;
    while (data && got < size) {
      ssize_t r = read(fd, data + got, size - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += (size_t)r;
    }
    close(fd);
    if (!data) continue;
    total += got;
    unsigned char hdr[3 + ARCHIVE_NAME_MAX + 8];
    hdr[0] = ARCHIVE_FILE;
    hdr[1] = (unsigned char)(len >> 8);
    hdr[2] = (unsigned char)len;
    memcpy(hdr + 3, name, len);
    put32(hdr + 3 + len, st.st_mode & 0777);
    put32(hdr + 7 + len, (uint32_t)got);
    write_full(STAGE_OUT_FD, hdr, 11 + len);
    write_full(STAGE_OUT_FD, data, got);
    free(data);
  }
}

// One direction of the stdio relay: bytes read from `from` wait in buf until `to` takes them.
struct pipe_relay {
  int from, to;
  char buf[65536];
  size_t off, len;
};

static void set_nonblocking(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void close_relay(struct pipe_relay *r) {
  if (r->from >= 0) close(r->from);
  if (r->to >= 0) close(r->to);
  r->from = r->to = -1;
  r->off = r->len = 0;
}

// Moves what can move without blocking. Returns 0 once the relay is finished (its
// source ended and everything read was delivered, or its destination is gone).
static int pump(struct pipe_relay *r, short from_events, short to_events) {
  if (r->from < 0 && r->len == r->off) return 0;
  if (r->len == r->off && r->from >= 0 && (from_events & (POLLIN | POLLHUP | POLLERR))) {
    ssize_t n = read(r->from, r->buf, sizeof r->buf);
    if (n > 0) {
      r->off = 0;
      r->len = (size_t)n;
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      close(r->from);
      r->from = -1;
    }
  }
  if (r->len > r->off && (to_events & (POLLOUT | POLLERR | POLLHUP))) {
    ssize_t w = write(r->to, r->buf + r->off, r->len - r->off);
    if (w > 0) r->off += (size_t)w;
    else if (w < 0 && errno != EINTR && errno != EAGAIN) {
      close_relay(r);  // the reader is gone: drop the rest
      return 0;
    }
  }
  if (r->from < 0 && r->len == r->off) {
    if (r->to >= 0) close(r->to);
    r->to = -1;
    return 0;
  }
  return 1;
}

// Relays stdio until the program has ended and its output pipes are drained; returns
// the program's wait status (`status` when there is no program: child 0). SIGCHLD is
// blocked and read from `sigfd`.
static int relay_until_end(pid_t child, int status, int sigfd, struct pipe_relay *rel, int nrel) {
  int child_done = child == 0;
  if (child_done) close_relay(&rel[0]);
  for (;;) {
    struct pollfd fds[1 + 2 * 3];
    int nfds = 0;
    fds[nfds++] = (struct pollfd){.fd = child_done ? -1 : sigfd, .events = POLLIN};
    int live = 0;
    for (int k = 0; k < nrel; k++) {
      struct pipe_relay *r = &rel[k];
      int want_in = r->from >= 0 && r->len == r->off;
      int want_out = r->to >= 0 && r->len > r->off;
      live |= r->from >= 0 || r->len > r->off;
      fds[nfds++] = (struct pollfd){.fd = want_in ? r->from : -1, .events = POLLIN};
      fds[nfds++] = (struct pollfd){.fd = want_out ? r->to : -1, .events = POLLOUT};
    }
    if (child_done && !live) return status;
    if (poll(fds, (nfds_t)nfds, -1) < 0) {
      if (errno == EINTR) continue;
      fail("poll", NULL);
    }
    for (int k = 0; k < nrel; k++) pump(&rel[k], fds[1 + 2 * k].revents, fds[2 + 2 * k].revents);
    if (!child_done && fds[0].revents) {
      struct signalfd_siginfo si;
      while (read(sigfd, &si, sizeof si) > 0) {
      }
      for (;;) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG | __WALL);
        if (p <= 0) break;
        if (p == child) {
          status = st;
          child_done = 1;
        }
      }
      if (child_done) {
        // The program's end is the stage's end: nothing it started outlives it (and
        // keeps an output pipe open), and its stdin is no longer wanted.
        kill(-1, SIGKILL);
        while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR) {
        }
        close_relay(&rel[0]);
      }
    }
  }
}

// "0,1" or "2-3,5": the CPUs to keep the program to.
static void parse_cpus(const char *list, cpu_set_t *set) {
  CPU_ZERO(set);
  const char *p = list;
  while (*p) {
    char *end;
    long a = strtol(p, &end, 10), b = a;
    if (end == p || a < 0 || a >= CPU_SETSIZE) goto bad;
    if (*end == '-') {
      p = end + 1;
      b = strtol(p, &end, 10);
      if (end == p || b < a || b >= CPU_SETSIZE) goto bad;
    }
    for (long c = a; c <= b; c++) CPU_SET((int)c, set);
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') goto bad;
  }
  if (CPU_COUNT(set) > 0) return;
bad:
  errno = 0;
  fail("bad --cpus list", list);
}

// Every capability goes: effective, permitted, inheritable, ambient and the bounding
// set. A launcher that runs unprivileged (bubblewrap) grants init CAP_SYS_ADMIN in the
// sandbox's user namespace for the devpts mount only.
// A pooled init empties its bounding set once (it limits only what an exec could gain,
// not what init holds), so that its stages' children start with it empty.
static int bounding_set_empty;

static void drop_bounding_set(void) {
  // Dropping from the bounding set needs CAP_SETPCAP; without it (nsjail drops every
  // capability itself) nothing could be regained anyway: no_new_privs, nosuid mounts.
  for (int cap = 0; cap <= 63; cap++)
    if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
}

static void drop_capabilities(void) {
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (!bounding_set_empty) drop_bounding_set();
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &hdr, data) != 0) fail("cannot drop capabilities", NULL);
}

// Speculative-execution mitigations for the program, where the CPU and kernel offer
// them (ENXIO/EINVAL elsewhere): no speculative store bypass, no indirect branch
// speculation shared with other programs. FORCE: the program cannot undo them.
static void mitigate_speculation(void) {
  prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, PR_SPEC_FORCE_DISABLE, 0, 0);
  prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_INDIRECT_BRANCH, PR_SPEC_FORCE_DISABLE, 0, 0);
}

// A stack for a child that shares this process's memory (clone with CLONE_VM), with an
// inaccessible page below it: an overflow faults instead of writing over init's memory.
// Returns its top.
static char *guarded_stack(size_t size, const char *what) {
  long page = sysconf(_SC_PAGESIZE);
  char *m = mmap(NULL, size + (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (m == MAP_FAILED) fail("cannot map a stack for", what);
  if (mprotect(m, (size_t)page, PROT_NONE) != 0) fail("cannot guard the stack of", what);
  return m + page + size;
}

// What the program's starting child is given, and the error of its exec.
struct spawn_args {
  struct program *p;
  const int *stdio;
  const sigset_t *mask;
  volatile int err;
};

static void close_from_3(void) {
  if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0) return;
  // Kernels before 5.9 have no close_range.
  long max = sysconf(_SC_OPEN_MAX);
  for (long fd = 3; fd < (max > 0 ? max : 1024); fd++) close((int)fd);
}

// execve, looking a name without a slash up in the program's own PATH as posix_spawnp
// does: the first match that can be executed; EACCES when only unexecutable ones were
// found. A file that is not a program is not handed to /bin/sh (execvp would).
static void exec_path(char *const argv[], char *const env[]) {
  const char *name = argv[0];
  if (strchr(name, '/')) {
    execve(name, argv, env);
    return;
  }
  const char *path = "/bin:/usr/bin";  // glibc's default when PATH is unset
  for (char *const *e = env; *e; e++)
    if (!strncmp(*e, "PATH=", 5)) path = *e + 5;
  size_t len = strlen(name);
  int denied = 0;
  for (const char *dir = path;; dir++) {
    const char *end = strchrnul(dir, ':');
    char full[4096];
    size_t dlen = (size_t)(end - dir);
    if (dlen + 1 + len < sizeof full) {
      // An empty entry is the working directory.
      memcpy(full, dir, dlen);
      size_t at = dlen;
      if (dlen > 0) full[at++] = '/';
      memcpy(full + at, name, len + 1);
      execve(full, argv, env);
      if (errno == EACCES) denied = 1;
      else if (errno != ENOENT && errno != ENOTDIR) return;
    }
    if (!*end) break;
    dir = end;
  }
  errno = denied ? EACCES : ENOENT;
}

static int spawn_entry(void *arg) {
  struct spawn_args *a = arg;
  for (int k = 0; a->stdio && k < 3; k++) {
    // dup2 onto itself would keep close-on-exec.
    if ((a->stdio[k] == k ? fcntl(k, F_SETFD, 0) : dup2(a->stdio[k], k)) < 0) goto failed;
  }
  close_from_3();
  // init ignores SIGPIPE and has no signal handlers (it takes SIGCHLD through a
  // signalfd): every other disposition is already what the program should get.
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  if (sigaction(SIGPIPE, &dfl, NULL) != 0 || sigprocmask(SIG_SETMASK, a->mask, NULL) != 0) goto failed;
  exec_path(a->p->argv, a->p->env);
failed:
  a->err = errno ? errno : EINVAL;
  _exit(EXEC_FAILED);
}

// Starts the program with `mask` as its signal mask and SIGPIPE at its default, its
// stdio `stdio` (NULL: init's own 0-2) and nothing else open. The child shares init's
// memory until its exec (CLONE_VM | CLONE_VFORK) instead of copying its page tables,
// which costs about half a millisecond of CPU here. It is posix_spawn without what its
// generality costs per start: reading and resetting all 64 signal dispositions (128
// system calls; init has no handlers to reset) and a stack mapped and unmapped each
// time (this one is made once). Every signal stays blocked until the child has its own
// mask. Returns 0 or the error of the exec, which it reports on `errfd` as a shell says
// it (the stage's status is then exit code 127).
#define SPAWN_STACK (256 * 1024)
static int spawn_program(struct program *p, const int *stdio, const sigset_t *mask, int errfd, pid_t *child) {
  static char *stack;
  if (!stack) stack = guarded_stack(SPAWN_STACK, "the program's start");
  struct spawn_args a = {.p = p, .stdio = stdio, .mask = mask, .err = 0};
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old);
  pid_t pid = clone(spawn_entry, stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
  int e = pid < 0 ? errno : a.err;
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (pid > 0 && e) {
    // Its exec failed: it has exited; it is not the program.
    while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR) {
    }
  }
  if (e) {
    char msg[512];
    int n = snprintf(msg, sizeof msg, "runbox-init: cannot execute %s: %s\n", p->argv[0], strerror(e));
    if (n > (int)sizeof msg - 1) n = (int)sizeof msg - 1;
    if (n > 0 && write(errfd, msg, (size_t)n) < 0) {
      // nobody to tell
    }
    return e;
  }
  *child = pid;
  return 0;
}

// The program with init's own fds 0-2: the fork server's pipes of a pooled stage, which
// it made the slot user's (so that /dev/stdin and friends, which open them anew, work).
static int spawn_direct(struct program *p) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);

  // Its stdio are init's: the fork server's pipes (real pipes, which /dev/stdin and
  // friends open), never blocking the server.
  pid_t child = 0;
  int status = 0;
  if (spawn_program(p, NULL, &none, 2, &child) != 0) {
    status = W_EXITCODE(EXEC_FAILED, 0);
  } else {
    // Orphans of the program become init's children too (it is PID 1): only the
    // program's own end is the stage's.
    while (waitpid(child, &status, __WALL) < 0)
      if (errno != EINTR) fail("waitpid", NULL);
  }
  // The program's end is the stage's end: nothing it started outlives it (and keeps an
  // output pipe open), and its stdin is no longer wanted.
  kill(-1, SIGKILL);
  while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR) {
  }
  close(0);
  close(1);
  close(2);

  return status;
}

// The program with pipes of init's own, relayed to and from init's fds 0-2: a
// launcher's pipes belong to the host's root, and /dev/stdin could not open them.
static int spawn_relayed(struct program *p) {
  // The program's stdio: in[0] is its stdin, out[1] and err[1] its stdout and stderr.
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) fail("pipe", NULL);
  sigset_t chld, old;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &chld, &old) != 0) fail("sigprocmask", NULL);
  int sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0) fail("signalfd", NULL);

  pid_t child = 0;
  int status = 0;
  const int stdio[3] = {in[0], out[1], err[1]};
  if (spawn_program(p, stdio, &old, err[1], &child) != 0) {
    child = 0;
    status = W_EXITCODE(EXEC_FAILED, 0);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  // The runner's ends: stdin arrives on 0, output leaves on 1 and 2. Init must never
  // block on a program that does not read its stdin.
  // Fields set one by one: assigning a whole struct would zero its 64 KiB buffer,
  // touching (and faulting in) every page of it before a byte has been written.
  static struct pipe_relay rel[3];
  const int ends[3][2] = {{dup(0), in[1]}, {out[0], dup(1)}, {err[0], dup(2)}};
  for (int k = 0; k < 3; k++) {
    rel[k].from = ends[k][0];
    rel[k].to = ends[k][1];
    rel[k].off = rel[k].len = 0;
    if (rel[k].from < 0 || rel[k].to < 0) fail("dup", NULL);
    set_nonblocking(rel[k].from);
    set_nonblocking(rel[k].to);
  }
  status = relay_until_end(child, status, sigfd, rel, 3);
  close(sigfd);

  return status;
}

// One stage: the program from fd 3, its files, the filter, the program itself with its
// stdio relayed, the collected files and its end on fd 4. Returns the exit code.
static int stage(int direct) {
  // The program (same uid) must not reach fd 4 through /proc/<init>/fd.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  signal(SIGPIPE, SIG_IGN);
  struct program prog;
  read_program(&prog);
  stage_in();
  mitigate_speculation();
  load_seccomp();

  int status = direct ? spawn_direct(&prog) : spawn_relayed(&prog);
  collect(prog.collect, prog.collect_count, prog.collect_max);
  unsigned char rec[5];
  int code;
  if (WIFSIGNALED(status)) {
    rec[0] = ARCHIVE_SIGNALED;
    put32(rec + 1, (uint32_t)WTERMSIG(status));
    code = 128 + WTERMSIG(status);
  } else {
    rec[0] = ARCHIVE_EXITED;
    put32(rec + 1, (uint32_t)WEXITSTATUS(status));
    code = WEXITSTATUS(status);
  }
  write_full(STAGE_OUT_FD, rec, sizeof rec);
  free_program(&prog);
  return code;
}

// ---- a pooled sandbox ----------------------------------------------------------------
// With --pool, init stays: the launcher's namespaces and mounts are made once, and each
// stage runs in a child of its own that init starts with new PID, mount, IPC and network
// namespaces (clone), ahead of the stage: as soon as the previous stage has ended. The
// child (PID 1 of its PID namespace) mounts a fresh /proc (the launcher's masks re-made
// on it), empty tmpfs on the writable places and its own devpts, brings its loopback up
// and waits for the stage's request; then it joins the stage's cgroups, drops every
// capability and runs the stage as above. Whatever the stage leaves dies with it: its PID
// namespace ends when its PID 1 does (the kernel kills and reaps the rest before init's
// wait returns), its mounts, tmpfs contents, IPC objects, sockets and network state with
// its namespaces.
//
// The runner talks to init over fd 3, a SOCK_SEQPACKET socket:
//   runner -> init  "R" with descriptors: stdin, stdout, stderr, stage-in, stage-out
//                   (the stage's own pipes), then the stage's cgroup.procs files (read
//                   by the waiting child)
//   init -> runner  "D" u32 wait status (big-endian): the stage and everything in its
//                   PID namespace are gone
// An end of fd 3 ends init (once a stage under way has ended: the runner kills a stage
// it gives up on through its cgroup). Anything unexpected (a malformed request, a child
// other than the stage's, a failed clone or set-up) ends init too: the runner then
// discards the sandbox and never reuses it.

#define POOL_MAX_FDS 16
#define PROC_MOUNTS_MAX 96

static unsigned long long pool_workspace, pool_tmp, pool_shm;
static const char *pool_devpts;

static void mount_tmpfs(const char *where, unsigned long long size) {
  char opts[64];
  snprintf(opts, sizeof opts, "size=%llu,mode=755", size);
  if (mount("tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0) fail("cannot mount tmpfs on", where);
}

// The mounts the launcher put below /proc (masks, the machine's view, read-only
// covers), opened before the stage's own /proc hides them and bound again on top of it.
struct proc_mount {
  int fd;
  char path[128];
};

// Read once, by init before its first stage (the launcher's mounts do not change).
static struct proc_mount proc_masks[PROC_MOUNTS_MAX];
static int proc_mask_count;

static int launcher_proc_mounts(struct proc_mount *out, int max) {
  static char text[256 * 1024];
  int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot read", "/proc/self/mountinfo");
  size_t len = 0;
  for (;;) {
    ssize_t r = read(fd, text + len, sizeof text - 1 - len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
  }
  close(fd);
  text[len] = 0;
  int n = 0;
  for (char *line = text; line && *line;) {
    char *next = strchr(line, '\n');
    if (next) *next++ = 0;
    // id parent major:minor root mountpoint ...
    char *f = line;
    for (int k = 0; k < 4 && f; k++) {
      f = strchr(f, ' ');
      if (f) f++;
    }
    char *end = f ? strchr(f, ' ') : NULL;
    if (end) *end = 0;
    if (f && !strncmp(f, "/proc/", 6) && !strchr(f, '\\') && strlen(f) < sizeof out[0].path) {
      int seen = 0;
      for (int k = 0; k < n; k++) seen |= !strcmp(out[k].path, f);
      if (!seen) {
        if (n == max) {
          errno = 0;
          fail("too many mounts below /proc", NULL);
        }
        out[n].fd = -1;
        snprintf(out[n].path, sizeof out[n].path, "%s", f);
        n++;
      }
    }
    line = next;
  }
  return n;
}

static void stage_mounts(void) {
  // Nothing mounted here reaches the sandbox's own namespace, nor the other way.
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) fail("cannot make mounts private", NULL);
  // Opened here, in the stage's mount namespace: a bind takes its source from the
  // caller's own namespace.
  struct proc_mount *pm = proc_masks;
  int n = proc_mask_count;
  for (int k = 0; k < n; k++)
    if ((pm[k].fd = open(pm[k].path, O_PATH | O_CLOEXEC | O_NOFOLLOW)) < 0) fail("cannot open", pm[k].path);
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) fail("cannot mount /proc", NULL);
  for (int k = 0; k < n; k++) {
    char src[32];
    snprintf(src, sizeof src, "/proc/self/fd/%d", pm[k].fd);
    if (mount(src, pm[k].path, NULL, MS_BIND, NULL) != 0) fail("cannot mask", pm[k].path);
    close(pm[k].fd);
  }
  mount_tmpfs(SANDBOX_WORKSPACE, pool_workspace);
  mount_tmpfs("/tmp", pool_tmp);
  mount_tmpfs("/dev/shm", pool_shm);
  if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, pool_devpts) != 0) fail("cannot mount /dev/pts", pool_devpts);
}

// A new network namespace has its loopback down; the launcher's had it up.
static void loopback_up(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
  if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) != 0) fail("cannot read the loopback's flags", NULL);
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) fail("cannot bring the loopback up", NULL);
  close(s);
}

static void write_status(int ctl, int status) {
  unsigned char msg[5] = {'D'};
  put32(msg + 1, (uint32_t)status);
  if (send(ctl, msg, sizeof msg, MSG_NOSIGNAL) != (ssize_t)sizeof msg) _exit(0);  // the runner is gone
}

// The next stage's child, made ahead of its request (PID 1 of its new PID namespace):
// its mounts, loopback and working directory are ready before the request comes, so a
// stage's start holds only what is its own. The request's descriptors: its stdio and
// stage pipes at 0..4, then cgroup.procs files, which it joins (charging the stage from
// there on, not the set-up before).
static int stage_ctl;
// Set by the child (which shares init's memory) once it has taken a stage's request.
static volatile int stage_taken;

static void stage_child(void) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  stage_mounts();
  loopback_up();
  if (chdir(SANDBOX_WORKSPACE) != 0) fail("cannot enter", SANDBOX_WORKSPACE);

  char byte;
  int fds[POOL_MAX_FDS];
  char cbuf[CMSG_SPACE(sizeof fds)];
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  ssize_t r;
  while ((r = recvmsg(stage_ctl, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (r <= 0) _exit(0);  // called off: this sandbox is no longer wanted
  int n = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int got = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (int k = 0; k < got && n < POOL_MAX_FDS; k++) memcpy(&fds[n++], CMSG_DATA(c) + k * sizeof(int), sizeof(int));
  }
  if (byte != 'R' || n < 5 || (mh.msg_flags & MSG_CTRUNC)) {
    errno = 0;
    fail("malformed stage request", NULL);
  }
  stage_taken = 1;
  // Placed at 0..n-1 by way of descriptors above all of them; the rest (the control
  // socket among them) is closed.
  int high[POOL_MAX_FDS];
  for (int k = 0; k < n; k++)
    if ((high[k] = fcntl(fds[k], F_DUPFD, n)) < 0) fail("placing descriptors", NULL);
  for (int k = 0; k < n; k++)
    if (dup2(high[k], k) != k) fail("placing descriptors", NULL);
  if (syscall(SYS_close_range, (unsigned)n, ~0U, 0) != 0) fail("closing descriptors", NULL);
  for (int k = 5; k < n; k++) {
    if (write(k, "0", 1) != 1) fail("cannot join the stage's cgroup", NULL);
    close(k);
  }
  drop_capabilities();
  _exit(stage(1));
}

static int stage_entry(void *arg) {
  (void)arg;
  stage_child();
  return INIT_FAILED;  // not reached: stage_child exits
}

#define STAGE_STACK (512 * 1024)

static int serve(void) {
  char *stack = guarded_stack(STAGE_STACK, "the stage");
  proc_mask_count = launcher_proc_mounts(proc_masks, PROC_MOUNTS_MAX);
  read_seccomp();
  drop_bounding_set();
  bounding_set_empty = 1;
  int ctl = fcntl(STAGE_IN_FD, F_DUPFD_CLOEXEC, 64);
  if (ctl < 0) fail("control socket", NULL);
  close(STAGE_IN_FD);
  close(STAGE_OUT_FD);
  stage_ctl = ctl;
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  signal(SIGPIPE, SIG_IGN);
  for (;;) {
    // The child shares init's memory (CLONE_VM) and init waits until it has exited
    // (CLONE_VFORK): no copy of init's page tables and no teardown of a copy, which cost
    // about 2 ms of CPU per stage here. Init runs nothing meanwhile, so the child may use
    // its heap and globals; the child has its own descriptors, signal handlers,
    // credentials and namespaces. The program is neither: it is started by exec, with
    // memory of its own, and can reach neither this memory (both processes are
    // non-dumpable, so no ptrace or /proc/<pid>/mem, and seccomp refuses ptrace and
    // process_vm_*) nor init, which is outside the stage's PID namespace.
    stage_taken = 0;
    pid_t pid = clone(stage_entry, stack, CLONE_VM | CLONE_VFORK | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | SIGCHLD, NULL);
    if (pid < 0) fail("cannot start the stage", NULL);
    int status;
    pid_t w;
    while ((w = waitpid(pid, &status, __WALL)) < 0 && errno == EINTR) {
    }
    if (w != pid) fail("lost the stage's process", NULL);
    if (!stage_taken) {
      // The socket ended before a request (exit 0), or the stage's set-up failed: either
      // way the sandbox goes, and the runner sees its launcher exit.
      return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : INIT_FAILED;
    }
    // Anything else still here is not the stage's: this sandbox is not clean.
    if (waitpid(-1, NULL, WNOHANG | __WALL) != -1 || errno != ECHILD) {
      errno = 0;
      fail("a process outlived its stage", NULL);
    }
    write_status(ctl, status);
  }
}

static unsigned long long size_arg(const char *s) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || !*s || v == 0) {
    errno = 0;
    fail("bad size", s);
  }
  return v;
}

int main(int argc, char **argv) {
  const char *cpus = NULL;
  const char *devpts = NULL;
  int no_userns = 0, pool = 0;
  for (int i = 1; i < argc; i++) {
    int flag = !strcmp(argv[i], "--no-user-namespaces");
    if (i + 1 >= argc && !flag) {
      errno = 0;
      fail("missing value for", argv[i]);
    }
    if (!strcmp(argv[i], "--cgroup-fd")) {
      int fd = atoi(argv[++i]);
      if (fd < 5 || write(fd, "0", 1) != 1) fail("cannot join the program's cgroup", argv[i]);
      close(fd);
    } else if (!strcmp(argv[i], "--cpus")) {
      cpus = argv[++i];
    } else if (flag) {
      no_userns = 1;  // a flag: no value follows
    } else if (!strcmp(argv[i], "--devpts")) {
      devpts = argv[++i];
    } else if (!strcmp(argv[i], "--pool")) {
      // --pool WORKSPACE,TMP,SHM: the sizes of each stage's tmpfs mounts, in bytes
      char sizes[96];
      snprintf(sizes, sizeof sizes, "%s", argv[++i]);
      char *a = strtok(sizes, ","), *b = strtok(NULL, ","), *c = strtok(NULL, ",");
      if (!a || !b || !c) {
        errno = 0;
        fail("bad --pool sizes", argv[i]);
      }
      pool_workspace = size_arg(a);
      pool_tmp = size_arg(b);
      pool_shm = size_arg(c);
      pool = 1;
    } else {
      errno = 0;
      fail("unknown option", argv[i]);
    }
  }
  if (pool && !devpts) {
    errno = 0;
    fail("--pool needs --devpts", NULL);
  }
  if (devpts && !pool) {
    // Each devpts instance's terminals count toward the host's kernel.pty.max: the
    // sandbox's own instance is capped (max=) so that one run cannot take them all.
    if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, devpts) != 0) fail("cannot mount /dev/pts", devpts);
  }
  pool_devpts = devpts;
  if (no_userns) {
    // The sandbox's user namespace allows no user namespace below it (seccomp refuses
    // the calls too): the limit is this namespace's own, the host's is untouched.
    int fd = open("/proc/sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0", 1) != 1) fail("cannot forbid user namespaces", NULL);
    close(fd);
  }
  if (cpus) {
    cpu_set_t set;
    parse_cpus(cpus, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) fail("cannot set the CPUs", cpus);
  }
  // A pooled init keeps its capabilities (in the sandbox's user namespace) for each
  // stage's mounts; each stage's child drops them all before anything of the program runs.
  if (pool) return serve();
  drop_capabilities();
  return stage(0);
}
