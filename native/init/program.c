// Starting the program (a vfork-style clone and exec) and waiting for its end, with its
// stdio given directly (a pooled stage) or relayed through pipes of init's own.
#include "init.h"
#include <time.h>

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
uint64_t program_ended_ns;

// Stamps the program's end, as soon as it is reaped (before its output pipes close, so
// a partner that reads their end always ends later).
static void mark_program_end(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  program_ended_ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int relay_until_end(pid_t child, int status, int sigfd, struct pipe_relay *rel, int nrel) {
  int child_done = child == 0;
  if (child_done) {
    mark_program_end();
    close_relay(&rel[0]);
  }
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
          mark_program_end();
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

// A stack for a child that shares this process's memory (clone with CLONE_VM), with an
// inaccessible page below it: an overflow faults instead of writing over init's memory.
// Returns its top.
char *guarded_stack(size_t size, const char *what) {
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
int spawn_direct(struct program *p) {
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
  mark_program_end();
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
int spawn_relayed(struct program *p) {
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
