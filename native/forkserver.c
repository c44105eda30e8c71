// runbox-forkserver: starts the runner's launchers and moves the bytes of their streams,
// so that the runner's Node process neither forks itself (copying its whole heap's page
// tables) for every stage nor handles six pipes per stage. One per runner process,
// started once; it exits when the runner closes its stdin or dies. Policy (timers,
// limits, kills, verdicts) stays in the runner: this is plumbing with counters (output
// bytes, a pooled stage's processes), each reported once past the bound it was given.
//
// Messages both ways are frames: u32 length, u32 field count, then each field as u32
// length + bytes (little-endian). Requests (runner -> server):
//   start ID NJOIN CGROUP... NFILES FILE... NRLIMITS RLIMIT... UID GID ARGV0 ARGV...
//       start ARGV0 (an absolute path) with fresh pipes on 0-5 and FILE... (opened
//       write-only, as root, here) on 6..., an empty environment, default signals. Before
//       its exec the child, as root, joins each CGROUP (a cgroup.procs file), sets each
//       RLIMIT (RES=SOFT:HARD, RES one of cpu fsize nofile core nproc stack as, "inf" for
//       unlimited) and nice 0, then, when UID and GID are not empty, drops to them (no
//       supplementary groups, no_new_privs); it dies with this server. Pipes, as the
//       child sees them: 0 stdin, 1 stdout, 2 stderr, 3 stage-in, 4 stage-out, 5 launcher log.
//   run ID KEEP FLOOD OUTMAX DIAGMAX STREAM STDIN STAGEIN [HOLD]
//       write STDIN and STAGEIN to pipes 0 and 3 (without ever blocking on them) and read
//       1, 2, 4 and 5 until each ends: KEEP bytes of stdout and of stderr are kept, OUTMAX
//       of stage-out, DIAGMAX of the launcher log; the rest is counted and dropped, so the
//       child never blocks on a full pipe. With HOLD "1", pipe 0 stays open once STDIN is
//       written, for more input (an interactive run):
//   stdin ID BYTES   more input for a held pipe 0 (dropped once the program's stdin is gone)
//   eof ID           pipe 0 closes once what it has is written
//   discard ID   close ID's pipes (a launched runbox-init whose stage archive is empty leaves)
//   startenv ...  as start, but descriptor 3 is a SOCK_SEQPACKET socket: the control
//       socket of a pooled sandbox (runbox-init --pool, native/init.c)
//   enter ENV ID UID GID NDIR DIR... NJOIN PROCS... NWRITE FILE VALUE... NCOUNT FILE...
//         WATCH MAXPROCS EVERYMS KEEP FLOOD OUTMAX DIAGMAX STREAM STDIN STAGEIN HOLD
//       a stage in the pooled sandbox ENV, in one request: make the stage's cgroup
//       directories DIR..., write each VALUE to its FILE (the stage's limits), read each
//       counter FILE (but those in DIR..., new), then pass fresh pipes for the stage's
//       stdin, stdout, stderr, stage-in and stage-out, each DIR's cgroup.procs and each
//       PROCS (cgroup.procs files of existing cgroups), opened write-only here as root, to
//       ENV's runbox-init, and run the stage as `run` does (it has no launcher
//       log); stdin and eof apply to ID. Its stdio pipes belong to UID and GID (the
//       program is given them: runbox-init relays nothing). While it runs, WATCH (a
//       cgroup.procs file; empty for none) is read every EVERYMS ms: more than MAXPROCS
//       processes listed is reported once (crowd), without waking the runner otherwise
// Replies (server -> runner):
//   started ID PID | failed ID ERRNO STEP
//   done ID STATUS REMOVED BEFORE... AFTER...
//                               the stage ID of a pooled sandbox has ended, and everything
//                               in its PID namespace (STATUS: its wait status); its
//                               counter files as read at its start and now; REMOVED "1"
//                               when its cgroup directories are gone ("0": still busy)
//   exit PID CODE SIGNAL        a child ended (CODE -1 when killed by SIGNAL)
//   chunk ID STREAM BYTES       kept output as it comes (STREAM 1 or 2), when asked
//   flood ID                    stdout + stderr passed FLOOD bytes (once)
//   crowd ID                    a stage's WATCH listed more than MAXPROCS processes (once)
//   streams ID OUTTOTAL ERRTOTAL OVERFLOW STDOUT STDERR STAGEOUT LOG
//                               every stream of ID has ended; ID is forgotten
// Numbers travel as decimal text fields.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PIPES 6
#define MAX_FILES 8
#define MAX_JOIN 16
#define MAX_RLIMITS 8
#define MAX_FIELDS 4096
// Stage-in carries a compile stage's collected files (up to 64 MiB) and more.
#define MAX_REQUEST (256u << 20)
#define MAX_JOBS 256
#define MAX_STAGE_DIRS 4
#define MAX_WRITES 4
#define MAX_COUNTS 8
// The most fields of any reply (done: 4 + 2 * MAX_COUNTS).
#define MAX_FRAME_FIELDS (4 + 2 * MAX_COUNTS)

static const int child_reads[PIPES] = {1, 0, 0, 1, 0, 0};
enum { IN = 0, OUT = 1, ERR = 2, STAGE_IN = 3, STAGE_OUT = 4, LOG = 5 };

struct wbuf {
  char *data;
  size_t len, off;
};
struct rbuf {
  char *data;
  size_t len, cap;
  unsigned long long total;
};

struct job {
  int used, running, stream, flooded, overflow, hold_in;
  // A pooled sandbox: fd[STAGE_IN] is its control socket; `stage` the ID of its stage
  // under way (empty: none), whose job may be gone before the stage's end is reported.
  int env;
  char stage[32];
  // A stage of a pooled sandbox: 1 + the index of the sandbox's job (0: not a stage).
  int stage_of;
  // The stage's cgroup directories (made here, removed at its end) and the counter
  // files read at its start and at its end.
  char *dirs[MAX_STAGE_DIRS];
  int ndirs;
  char *counts[MAX_COUNTS], *before[MAX_COUNTS];
  int ncounts;
  char id[32];
  int fd[PIPES];         // this server's ends; -1 once closed
  struct wbuf w[PIPES];  // used for IN, STAGE_IN
  struct rbuf r[PIPES];  // used for OUT, ERR, STAGE_OUT, LOG
  unsigned long long keep, flood, outmax, diagmax;
  // A stage's process count, read from `watch` every `every_ms` until it passes `max_procs`.
  char *watch;
  long max_procs, every_ms;
  double watch_due;
  int crowded;
};
static struct job jobs[MAX_JOBS];

static void die(const char *what) {
  fprintf(stderr, "runbox-forkserver: %s: %s\n", what, strerror(errno));
  exit(1);
}

// ---- replies -------------------------------------------------------------------------

static void write_all(const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(1, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) exit(0);  // the runner is gone
    c += w;
    n -= (size_t)w;
  }
}

static void put32(unsigned char *b, uint32_t v) {
  b[0] = (unsigned char)v;
  b[1] = (unsigned char)(v >> 8);
  b[2] = (unsigned char)(v >> 16);
  b[3] = (unsigned char)(v >> 24);
}

struct field {
  const char *p;
  size_t n;
};

// Replies wait here until the end of the loop's turn (flush_replies), so that what one
// turn produces (a stage's streams and its end, say) reaches the runner in one write and
// wakes it once. A reply too large to copy is written at once, after what waits.
#define REPLY_BUFFERED (64 * 1024)
static char *replies;
static size_t replies_len, replies_cap;

static void flush_replies(void) {
  if (replies_len) write_all(replies, replies_len);
  replies_len = 0;
}

static void writev_all(struct iovec *iov, int n) {
  while (n > 0) {
    ssize_t w = writev(1, iov, n > IOV_MAX ? IOV_MAX : n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) exit(0);  // the runner is gone
    while (n > 0 && (size_t)w >= iov->iov_len) {
      w -= (ssize_t)iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + w;
      iov->iov_len -= (size_t)w;
    }
  }
}

static void send_frame(const struct field *f, int nf) {
  size_t total = 4;
  for (int i = 0; i < nf; i++) total += 4 + f[i].n;
  if (total + 4 <= REPLY_BUFFERED) {
    if (replies_cap - replies_len < total + 4) {
      size_t cap = replies_cap ? replies_cap : REPLY_BUFFERED;
      while (cap - replies_len < total + 4) cap *= 2;
      char *p = realloc(replies, cap);
      if (!p) {
        flush_replies();
        p = replies;
      } else {
        replies = p;
        replies_cap = cap;
      }
    }
    if (replies_cap - replies_len >= total + 4) {
      unsigned char *b = (unsigned char *)replies + replies_len;
      put32(b, (uint32_t)total);
      put32(b + 4, (uint32_t)nf);
      size_t at = 8;
      for (int i = 0; i < nf; i++) {
        put32(b + at, (uint32_t)f[i].n);
        if (f[i].n) memcpy(b + at + 4, f[i].p, f[i].n);
        at += 4 + f[i].n;
      }
      replies_len += at;
      return;
    }
  }
  flush_replies();
  // Head, then each field's length and bytes: one writev, the bytes not copied.
  unsigned char head[8];
  unsigned char lens[MAX_FRAME_FIELDS][4];
  struct iovec iov[1 + 2 * MAX_FRAME_FIELDS];
  int n = 0;
  put32(head, (uint32_t)total);
  put32(head + 4, (uint32_t)nf);
  iov[n++] = (struct iovec){head, 8};
  for (int i = 0; i < nf && i < MAX_FRAME_FIELDS; i++) {
    put32(lens[i], (uint32_t)f[i].n);
    iov[n++] = (struct iovec){lens[i], 4};
    iov[n++] = (struct iovec){(void *)f[i].p, f[i].n};
  }
  writev_all(iov, n);
}

static struct field text(const char *s) {
  return (struct field){s, strlen(s)};
}

static void reply_text(int n, ...) {
  struct field f[8];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n && i < 8; i++) f[i] = text(va_arg(ap, const char *));
  va_end(ap);
  send_frame(f, n < 8 ? n : 8);
}

// Pipe `i` of a child (see child_reads): this server's end non-blocking (each end is its
// own open file, so the child's stays blocking), stage-in and stage-out larger (staged
// files can be megabytes: fewer wake-ups; best effort). pp: the pipe, read end first.
static int stage_pipe(int i, int pp[2], int *mine, int *theirs) {
  if (pipe2(pp, O_CLOEXEC) != 0) return -1;
  *theirs = child_reads[i] ? pp[0] : pp[1];
  *mine = child_reads[i] ? pp[1] : pp[0];
  fcntl(*mine, F_SETFL, O_NONBLOCK);
  if (i == STAGE_IN || i == STAGE_OUT) fcntl(*mine, F_SETPIPE_SZ, 1 << 20);
  return 0;
}

// ---- starting a child ----------------------------------------------------------------

// What the child does between clone and exec, worked out beforehand: the child only
// makes system calls, on a stack of its own, while this process waits (CLONE_VFORK).
struct plan {
  int nfd;  // descriptors to place at 0..nfd-1, from src[]
  int src[PIPES + MAX_FILES];
  int park;  // above every descriptor in play: sources are moved here first
  const char *join[MAX_JOIN];
  int njoin;
  struct {
    int res;
    struct rlimit rl;
  } rlimit[MAX_RLIMITS];
  int nrlimit;
  long uid, gid;  // -1: stay root
  pid_t server;
  char **argv;
  // Set by the child when a step fails (it then exits); read once clone has returned.
  int err;
  const char *step;
};

static char child_stack[64 * 1024] __attribute__((aligned(16)));

static int child_fail(struct plan *p, const char *step) {
  p->err = errno ? errno : EINVAL;
  p->step = step;
  _exit(125);
}

// Done here rather than by a helper program the child would execute first: one exec
// fewer per stage (an exec of a small static program costs about 1.2 ms of CPU here).
static int child_main(void *arg) {
  struct plan *p = arg;
  // This server ignores SIGPIPE and blocks SIGCHLD; the child starts from defaults.
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  sigaction(SIGPIPE, &dfl, NULL);
  sigset_t none;
  sigemptyset(&none);
  for (int i = 0; i < p->nfd; i++)
    if (dup2(p->src[i], p->park + i) < 0) return child_fail(p, "placing descriptors");
  for (int i = 0; i < p->nfd; i++)
    if (dup2(p->park + i, i) < 0) return child_fail(p, "placing descriptors");
  if (syscall(SYS_close_range, (unsigned)p->nfd, ~0U, 0) != 0) return child_fail(p, "closing descriptors");
  for (int i = 0; i < p->njoin; i++) {
    int fd = open(p->join[i], O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 || write(fd, "0", 1) != 1) return child_fail(p, p->join[i]);
    close(fd);
  }
  for (int i = 0; i < p->nrlimit; i++)
    if (setrlimit(p->rlimit[i].res, &p->rlimit[i].rl) != 0) return child_fail(p, "setrlimit");
  // Programs run at nice 0 whatever priority the runner was started with, as nsjail's
  // nice_level does; lowering a nice value needs root, so before the drop.
  if (setpriority(PRIO_PROCESS, 0, 0) != 0) return child_fail(p, "setpriority");
  if (p->uid >= 0) {
    // Raw calls: the C library's would coordinate the ids of threads of this memory.
    if (syscall(SYS_setgroups, 0, NULL) != 0) return child_fail(p, "setgroups");
    if (syscall(SYS_setresgid, p->gid, p->gid, p->gid) != 0) return child_fail(p, "setresgid");
    if (syscall(SYS_setresuid, p->uid, p->uid, p->uid) != 0) return child_fail(p, "setresuid");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return child_fail(p, "no_new_privs");
  }
  // Dies with this server (set after the uid change, which clears it), which dies with
  // the runner. If the server is already gone, the parent is no longer the one that started us.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return child_fail(p, "pdeathsig");
  if (getppid() != p->server) {
    errno = ESRCH;
    return child_fail(p, "parent-death signal");
  }
  sigprocmask(SIG_SETMASK, &none, NULL);
  char *envp[] = {NULL};
  execve(p->argv[0], p->argv, envp);
  return child_fail(p, "exec");
}

static int start_child(pid_t *pid, struct plan *p, int ends[PIPES], int files[], int nfiles) {
  p->nfd = PIPES + nfiles;
  p->park = p->nfd;
  for (int i = 0; i < p->nfd; i++) {
    p->src[i] = i < PIPES ? ends[i] : files[i - PIPES];
    if (p->src[i] >= p->park) p->park = p->src[i] + 1;
  }
  p->server = getpid();
  p->err = 0;
  p->step = NULL;
  // CLONE_VM | CLONE_VFORK, as posix_spawn: the child shares this memory until its exec
  // instead of copying the page tables, and this process waits until then.
  pid_t child = clone(child_main, child_stack + sizeof child_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, p);
  if (child < 0) {
    p->step = "clone";
    return errno;
  }
  if (p->err) {
    waitpid(child, NULL, 0);  // gone already: not reported as an exit
    return p->err;
  }
  *pid = child;
  return 0;
}

static int digits_only(const char *s) {
  if (!*s || strlen(s) >= sizeof jobs[0].id) return 0;
  for (; *s; s++)
    if (*s < '0' || *s > '9') return 0;
  return 1;
}

static struct job *find(const char *id) {
  for (int k = 0; k < MAX_JOBS; k++)
    if (jobs[k].used && !strcmp(jobs[k].id, id)) return &jobs[k];
  return NULL;
}

static void close_fd(struct job *j, int i) {
  if (j->fd[i] >= 0) close(j->fd[i]);
  j->fd[i] = -1;
  free(j->w[i].data);
  j->w[i].data = NULL;
  j->w[i].len = j->w[i].off = 0;
}

static void free_stage_info(struct job *j) {
  for (int k = 0; k < j->ndirs; k++) free(j->dirs[k]);
  for (int k = 0; k < j->ncounts; k++) {
    free(j->counts[k]);
    free(j->before[k]);
  }
  j->ndirs = j->ncounts = 0;
}

static void forget(struct job *j) {
  free_stage_info(j);
  free(j->watch);
  for (int i = 0; i < PIPES; i++) {
    close_fd(j, i);
    free(j->r[i].data);
  }
  memset(j, 0, sizeof *j);
}

static void failed(const char *id, int e, const char *step) {
  char num[16];
  snprintf(num, sizeof num, "%d", e);
  reply_text(4, "failed", id, num, step ? step : "");
}

// An unused job for request `id`, or NULL once the failure is answered (none left: EAGAIN;
// `id` already in use: EEXIST).
static struct job *free_job(const char *id) {
  struct job *j = NULL;
  for (int k = 0; k < MAX_JOBS && !j; k++)
    if (!jobs[k].used) j = &jobs[k];
  if (!j || find(id)) {
    failed(id, j ? EEXIST : EAGAIN, "request");
    return NULL;
  }
  return j;
}

// A count field followed by that many fields, from f[*at]; -1 when malformed.
static int counted(char **f, int nf, int *at, int max) {
  if (*at >= nf) return -1;
  char *end;
  long n = strtol(f[*at], &end, 10);
  if (*end || !*f[*at] || n < 0 || n > max || *at + 1 + n > nf) return -1;
  int first = *at + 1;
  *at = first + (int)n;
  return first;
}

static int parse_limit(const char *s, const char *stop, rlim_t *out) {
  if ((size_t)(stop - s) == 3 && !strncmp(s, "inf", 3)) {
    *out = RLIM_INFINITY;
    return 0;
  }
  if (s == stop) return -1;
  unsigned long long v = 0;
  for (const char *c = s; c < stop; c++) {
    if (*c < '0' || *c > '9' || v > (~0ULL - 9) / 10) return -1;
    v = v * 10 + (unsigned)(*c - '0');
  }
  *out = (rlim_t)v;
  return 0;
}

// "RES=SOFT:HARD"
static int parse_rlimit(const char *s, int *res, struct rlimit *rl) {
  static const struct {
    const char *name;
    int res;
  } table[] = {
      {"cpu", RLIMIT_CPU},     {"fsize", RLIMIT_FSIZE}, {"nofile", RLIMIT_NOFILE}, {"core", RLIMIT_CORE},
      {"nproc", RLIMIT_NPROC}, {"stack", RLIMIT_STACK}, {"as", RLIMIT_AS},
  };
  const char *eq = strchr(s, '=');
  const char *colon = eq ? strchr(eq, ':') : NULL;
  if (!colon) return -1;
  *res = -1;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strlen(table[i].name) == (size_t)(eq - s) && !strncmp(table[i].name, s, (size_t)(eq - s))) *res = table[i].res;
  if (*res < 0) return -1;
  if (parse_limit(eq + 1, colon, &rl->rlim_cur) || parse_limit(colon + 1, colon + 1 + strlen(colon + 1), &rl->rlim_max)) return -1;
  return rl->rlim_cur <= rl->rlim_max ? 0 : -1;
}

static int parse_id(const char *s, long *out) {
  if (!*s) {
    *out = -1;
    return 0;
  }
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  // Never root: the ids are the slot's.
  if (errno || *end || v <= 0 || v > 0x7fffffff) return -1;
  *out = v;
  return 0;
}

static void start(char **f, int nf, int env) {
  // f: "start" ID NJOIN CGROUP... NFILES FILE... NRLIMITS RLIMIT... UID GID ARGV0 ARGV...
  if (nf < 2 || !digits_only(f[1])) {
    fprintf(stderr, "runbox-forkserver: malformed start request\n");
    return;
  }
  const char *id = f[1];
  static struct plan p;
  memset(&p, 0, sizeof p);
  int at = 2;
  int join = counted(f, nf, &at, MAX_JOIN);
  int file = join < 0 ? -1 : counted(f, nf, &at, MAX_FILES);
  int lim = file < 0 ? -1 : counted(f, nf, &at, MAX_RLIMITS);
  if (lim < 0 || at + 3 > nf || parse_id(f[at], &p.uid) || parse_id(f[at + 1], &p.gid) || (p.uid < 0) != (p.gid < 0) ||
      f[at + 2][0] != '/') {
    failed(id, EINVAL, "request");
    return;
  }
  int nfiles = lim - 1 - file;
  p.njoin = file - 1 - join;
  for (int k = 0; k < p.njoin; k++) p.join[k] = f[join + k];
  p.nrlimit = at - lim;
  for (int k = 0; k < p.nrlimit; k++)
    if (parse_rlimit(f[lim + k], &p.rlimit[k].res, &p.rlimit[k].rl)) {
      failed(id, EINVAL, f[lim + k]);
      return;
    }
  p.argv = f + at + 2;
  struct job *j = free_job(id);
  if (!j) return;
  int mine[PIPES], theirs[PIPES], files[MAX_FILES];
  int made = 0, opened = 0, e = 0;
  const char *step = "pipe";
  for (; made < PIPES; made++) {
    int pp[2];
    if (env && made == STAGE_IN) {
      if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pp) != 0) {
        e = errno;
        goto cleanup;
      }
      theirs[made] = pp[0];
      mine[made] = pp[1];
      fcntl(mine[made], F_SETFL, O_NONBLOCK);
      continue;
    }
    if (stage_pipe(made, pp, &mine[made], &theirs[made]) != 0) {
      e = errno;
      goto cleanup;
    }
  }
  for (; opened < nfiles; opened++) {
    files[opened] = open(f[file + opened], O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (files[opened] < 0) {
      e = errno;
      step = f[file + opened];
      goto cleanup;
    }
  }
  pid_t pid = 0;
  e = start_child(&pid, &p, theirs, files, nfiles);
  step = p.step;
  if (e) goto cleanup;
  for (int k = 0; k < PIPES; k++) close(theirs[k]);
  for (int k = 0; k < opened; k++) close(files[k]);
  memset(j, 0, sizeof *j);
  j->used = 1;
  j->env = env;
  snprintf(j->id, sizeof j->id, "%s", id);
  memcpy(j->fd, mine, sizeof mine);
  char num[16];
  snprintf(num, sizeof num, "%d", (int)pid);
  reply_text(3, "started", id, num);
  return;
cleanup:
  for (int k = 0; k < made; k++) {
    close(mine[k]);
    close(theirs[k]);
  }
  for (int k = 0; k < opened; k++) close(files[k]);
  failed(id, e, step);
}


// The pipes of a stage in a pooled sandbox, as the stage sees them: 0 stdin, 1 stdout,
// 2 stderr, 3 stage-in, 4 stage-out (runbox-init places them).
#define STAGE_FDS 5

// A cgroup counter file's text (up to 4 KiB; empty when unreadable).
static char *read_small(const char *path) {
  char buf[4096];
  size_t got = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    for (;;) {
      ssize_t r = read(fd, buf + got, sizeof buf - 1 - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += (size_t)r;
    }
    close(fd);
  }
  buf[got] = 0;
  return strdup(buf);
}

static int write_small(const char *path, const char *value) {
  int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return -1;
  ssize_t w = write(fd, value, strlen(value));
  close(fd);
  return w == (ssize_t)strlen(value) ? 0 : -1;
}

static void set_run(struct job *j, char **f, const size_t *len);

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

// Lines of a cgroup.procs file: the processes in the cgroup (-1 when unreadable).
static long count_lines(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[4096];
  long lines = 0;
  for (;;) {
    ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    for (ssize_t k = 0; k < r; k++) lines += buf[k] == '\n';
  }
  close(fd);
  return lines;
}

// Reads the watched process counts that are due; returns ms until the next one (-1: none).
static int watch_processes(void) {
  double now = now_ms(), next = -1;
  for (int k = 0; k < MAX_JOBS; k++) {
    struct job *j = &jobs[k];
    if (!j->used || !j->running || !j->watch || j->crowded) continue;
    if (now >= j->watch_due) {
      if (count_lines(j->watch) > j->max_procs) {
        j->crowded = 1;
        reply_text(2, "crowd", j->id);
        continue;
      }
      j->watch_due = now + (double)j->every_ms;
    }
    if (next < 0 || j->watch_due < next) next = j->watch_due;
  }
  return next < 0 ? -1 : (int)(next - now) + 1;
}

// Whether `path` lies below one of `dirs`.
static int in_dirs(const char *path, char **dirs, int n) {
  for (int k = 0; k < n; k++) {
    size_t l = strlen(dirs[k]);
    if (!strncmp(path, dirs[k], l) && path[l] == '/') return 1;
  }
  return 0;
}

static void enter(char **f, const size_t *len, int nf) {
  // f: "enter" ENV ID UID GID NDIR DIR... NJOIN PROCS... NWRITE FILE VALUE... NCOUNT FILE...
  //    KEEP FLOOD OUTMAX DIAGMAX STREAM STDIN STAGEIN HOLD
  if (nf < 6 || !digits_only(f[2])) {
    fprintf(stderr, "runbox-forkserver: malformed enter request\n");
    return;
  }
  const char *id = f[2];
  struct job *env = find(f[1]);
  long uid, gid;
  if (parse_id(f[3], &uid) || parse_id(f[4], &gid) || uid < 0 || gid < 0) {
    failed(id, EINVAL, "request");
    return;
  }
  int at = 5;
  int dir = counted(f, nf, &at, MAX_STAGE_DIRS);
  int jn = dir < 0 ? -1 : counted(f, nf, &at, MAX_STAGE_DIRS);
  int wr = jn < 0 ? -1 : counted(f, nf, &at, 2 * MAX_WRITES);
  int cnt = wr < 0 ? -1 : counted(f, nf, &at, MAX_COUNTS);
  if (cnt < 0 || nf - at != 11 || (cnt - 1 - wr) % 2 != 0) {
    failed(id, EINVAL, "request");
    return;
  }
  if (!env || !env->env || env->stage[0] || env->fd[STAGE_IN] < 0) {
    failed(id, ESRCH, "request");
    return;
  }
  int ndirs = jn - 1 - dir, njoins = wr - 1 - jn, nwrites = (cnt - 1 - wr) / 2, ncounts = at - cnt;
  int ncg = ndirs + njoins;  // cgroup.procs files passed: the new directories', then the joined
  struct job *j = free_job(id);
  if (!j) return;
  int mine[STAGE_FDS], theirs[STAGE_FDS + 2 * MAX_STAGE_DIRS];
  int made = 0, opened = 0, dirs_made = 0, e = 0;
  const char *step = "pipe";
  for (; dirs_made < ndirs; dirs_made++) {
    if (mkdir(f[dir + dirs_made], 0755) != 0) {
      e = errno;
      step = f[dir + dirs_made];
      goto cleanup;
    }
  }
  for (int k = 0; k < nwrites; k++) {
    if (write_small(f[wr + 2 * k], f[wr + 2 * k + 1]) != 0) {
      e = errno;
      step = f[wr + 2 * k];
      goto cleanup;
    }
  }
  for (; made < STAGE_FDS; made++) {
    int pp[2];
    if (stage_pipe(made, pp, &mine[made], &theirs[made]) != 0) {
      e = errno;
      goto cleanup;
    }
    // The program is given the stdio pipes themselves; /dev/stdin and /proc/self/fd/N
    // open them anew, which their owner's mode (0600) allows only to the slot's user.
    if (made <= ERR && fchown(pp[0], (uid_t)uid, (gid_t)gid) != 0) {
      e = errno;
      step = "chown";
      made++;
      goto cleanup;
    }
  }
  for (; opened < ncg; opened++) {
    char path[4096];
    if (opened < ndirs) snprintf(path, sizeof path, "%s/cgroup.procs", f[dir + opened]);
    else snprintf(path, sizeof path, "%s", f[jn + opened - ndirs]);
    theirs[STAGE_FDS + opened] = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (theirs[STAGE_FDS + opened] < 0) {
      e = errno;
      step = opened < ndirs ? f[dir + opened] : f[jn + opened - ndirs];
      goto cleanup;
    }
  }
  // Counters of the job before the stage: its OOM kills and task-cap hits are counted
  // in the job, across stages. Those in the directories just made start at zero and are
  // not read (empty text).
  for (int k = 0; k < ncounts; k++) {
    env->counts[k] = strdup(f[cnt + k]);
    env->before[k] = in_dirs(f[cnt + k], f + dir, ndirs) ? strdup("") : read_small(f[cnt + k]);
  }
  env->ncounts = ncounts;
  {
    char byte = 'R';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
      char buf[CMSG_SPACE(sizeof(int) * (STAGE_FDS + 2 * MAX_STAGE_DIRS))];
      struct cmsghdr align;
    } u;
    size_t n = (size_t)(STAGE_FDS + ncg);
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = CMSG_SPACE(sizeof(int) * n)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * n);
    memcpy(CMSG_DATA(c), theirs, sizeof(int) * n);
    if (sendmsg(env->fd[STAGE_IN], &mh, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) {
      e = errno ? errno : EIO;
      step = "passing the stage's pipes";
      goto cleanup;
    }
  }
  for (int k = 0; k < STAGE_FDS + ncg; k++) close(theirs[k]);
  for (int k = 0; k < ndirs; k++) env->dirs[k] = strdup(f[dir + k]);
  env->ndirs = ndirs;
  memset(j, 0, sizeof *j);
  j->used = 1;
  snprintf(j->id, sizeof j->id, "%s", id);
  for (int k = 0; k < PIPES; k++) j->fd[k] = k < STAGE_FDS ? mine[k] : -1;
  snprintf(env->stage, sizeof env->stage, "%s", id);
  j->stage_of = (int)(env - jobs) + 1;
  if (f[at][0]) {
    j->watch = strdup(f[at]);
    j->max_procs = strtol(f[at + 1], NULL, 10);
    j->every_ms = strtol(f[at + 2], NULL, 10);
    if (j->every_ms < 1) j->every_ms = 1;
    j->watch_due = now_ms() + (double)j->every_ms;
  }
  set_run(j, f + at + 1, len + at + 1);
  return;
cleanup:
  for (int k = 0; k < made; k++) {
    close(mine[k]);
    close(theirs[k]);
  }
  for (int k = 0; k < opened; k++) close(theirs[STAGE_FDS + k]);
  for (int k = dirs_made - 1; k >= 0; k--) rmdir(f[dir + k]);
  free_stage_info(env);
  failed(id, e, step);
}

// A pooled sandbox's runbox-init said something (a stage's end) or went away.
static void on_control(struct job *env) {
  unsigned char msg[8];
  ssize_t n = recv(env->fd[STAGE_IN], msg, sizeof msg, MSG_DONTWAIT);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  char stage[32];
  snprintf(stage, sizeof stage, "%s", env->stage);
  env->stage[0] = 0;
  if (n == 5 && msg[0] == 'D' && stage[0]) {
    char status[16];
    snprintf(status, sizeof status, "%u", (unsigned)msg[1] << 24 | (unsigned)msg[2] << 16 | (unsigned)msg[3] << 8 | msg[4]);
    // Nothing of the stage is left: its counters are final and its cgroups empty.
    struct field fl[4 + 2 * MAX_COUNTS];
    char *after[MAX_COUNTS];
    int nc = env->ncounts;
    for (int k = 0; k < nc; k++) after[k] = read_small(env->counts[k]);
    int removed = 1;
    for (int k = env->ndirs - 1; k >= 0; k--)
      if (rmdir(env->dirs[k]) != 0 && errno != ENOENT) removed = 0;
    fl[0] = text("done");
    fl[1] = text(stage);
    fl[2] = text(status);
    fl[3] = text(removed ? "1" : "0");
    for (int k = 0; k < nc; k++) {
      fl[4 + k] = text(env->before[k]);
      fl[4 + nc + k] = text(after[k]);
    }
    send_frame(fl, 4 + 2 * nc);
    for (int k = 0; k < nc; k++) free(after[k]);
    free_stage_info(env);
    return;
  }
  // Gone, or not speaking the protocol: no more stages; its exit comes as the launcher's.
  close_fd(env, STAGE_IN);
}

static unsigned long long num_field(const char *s) {
  return strtoull(s, NULL, 10);
}

static void set_write(struct job *j, int i, const char *data, size_t len) {
  if (len > 0) j->w[i].data = malloc(len);
  if (!j->w[i].data) {
    // Nothing to write (or no memory for it): the reader sees EOF, unless more is to come.
    if (!(i == IN && j->hold_in && len == 0)) close_fd(j, i);
    return;
  }
  memcpy(j->w[i].data, data, len);
  j->w[i].len = len;
}

// Appends to a held stdin: what is still unwritten moves to the front first.
static void append_write(struct job *j, const char *data, size_t len) {
  struct wbuf *w = &j->w[IN];
  if (j->fd[IN] < 0 || len == 0) return;
  size_t left = w->len - w->off;
  char *p = malloc(left + len);
  if (!p) return;
  if (left) memcpy(p, w->data + w->off, left);
  memcpy(p + left, data, len);
  free(w->data);
  w->data = p;
  w->off = 0;
  w->len = left + len;
}

static void run(char **f, const size_t *len, int nf) {
  // f: "run" ID KEEP FLOOD OUTMAX DIAGMAX STREAM STDIN STAGEIN [HOLD]
  if (nf != 9 && nf != 10) {
    fprintf(stderr, "runbox-forkserver: malformed run request\n");
    return;
  }
  struct job *j = find(f[1]);
  if (!j || j->running) {
    fprintf(stderr, "runbox-forkserver: run for an unknown or running id\n");
    return;
  }
  if (nf == 9) f[9] = "0";
  set_run(j, f, len);
}

// f[2..9]: KEEP FLOOD OUTMAX DIAGMAX STREAM STDIN STAGEIN HOLD
static void set_run(struct job *j, char **f, const size_t *len) {
  j->running = 1;
  j->keep = num_field(f[2]);
  j->flood = num_field(f[3]);
  j->outmax = num_field(f[4]);
  j->diagmax = num_field(f[5]);
  j->stream = f[6][0] == '1';
  j->hold_in = f[9][0] == '1';
  set_write(j, IN, f[7], len[7]);
  set_write(j, STAGE_IN, f[8], len[8]);
}

static void more_stdin(char **f, const size_t *len, int nf) {
  if (nf != 3) return;
  struct job *j = find(f[1]);
  if (j && j->running && j->hold_in) append_write(j, f[2], len[2]);
}

static void end_stdin(char **f, int nf) {
  if (nf != 2) return;
  struct job *j = find(f[1]);
  if (!j || !j->running || !j->hold_in) return;
  j->hold_in = 0;
  if (j->w[IN].off == j->w[IN].len) close_fd(j, IN);  // else once it is written
}

static void discard(char **f, int nf) {
  if (nf != 2) return;
  struct job *j = find(f[1]);
  if (j) forget(j);
}

// ---- streams -------------------------------------------------------------------------

static int reading(const struct job *j) {
  return j->fd[OUT] >= 0 || j->fd[ERR] >= 0 || j->fd[STAGE_OUT] >= 0 || j->fd[LOG] >= 0;
}

static void keep_bytes(struct rbuf *b, const char *data, size_t n, unsigned long long max) {
  if (b->len >= max) return;
  if (n > max - b->len) n = (size_t)(max - b->len);
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) return;
    b->data = p;
    b->cap = cap;
  }
  memcpy(b->data + b->len, data, n);
  b->len += n;
}

static struct field bytes(const struct rbuf *b) {
  return (struct field){b->data ? b->data : "", b->len};
}

static void finish(struct job *j) {
  char out[24], err[24];
  snprintf(out, sizeof out, "%llu", j->r[OUT].total);
  snprintf(err, sizeof err, "%llu", j->r[ERR].total);
  struct field f[] = {
      text("streams"), text(j->id), text(out), text(err), text(j->overflow ? "1" : "0"),
      bytes(&j->r[OUT]), bytes(&j->r[ERR]), bytes(&j->r[STAGE_OUT]), bytes(&j->r[LOG]),
  };
  send_frame(f, (int)(sizeof f / sizeof f[0]));
  forget(j);
}

// A stage of a pooled sandbox whose end its runbox-init has not reported yet: its
// streams are sent with the end (one reply, one wake-up of the runner), which follows
// at once (its streams end when its processes do).
static int awaiting_end(const struct job *j) {
  if (!j->stage_of) return 0;
  const struct job *env = &jobs[j->stage_of - 1];
  return env->used && env->env && env->fd[STAGE_IN] >= 0 && !strcmp(env->stage, j->id);
}

static char chunk[65536];

static void on_readable(struct job *j, int i) {
  // A bounded number of reads per wake-up, so one noisy stage cannot starve the others.
  for (int rounds = 0; rounds < 16 && j->fd[i] >= 0; rounds++) {
    ssize_t n = read(j->fd[i], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      close_fd(j, i);
      return;
    }
    struct rbuf *b = &j->r[i];
    if (i == OUT || i == ERR) {
      size_t before = b->len;
      b->total += (unsigned long long)n;
      keep_bytes(b, chunk, (size_t)n, j->keep);
      if (j->stream && b->len > before) {
        struct field f[] = {text("chunk"), text(j->id), text(i == OUT ? "1" : "2"), {b->data + before, b->len - before}};
        send_frame(f, 4);
      }
      if (!j->flooded && j->r[OUT].total + j->r[ERR].total > j->flood) {
        j->flooded = 1;
        reply_text(2, "flood", j->id);
      }
    } else if (i == STAGE_OUT) {
      // Read on past the bound so the writer never blocks, but keep nothing more.
      if (j->overflow || b->len + (size_t)n > j->outmax) j->overflow = 1;
      else keep_bytes(b, chunk, (size_t)n, j->outmax);
    } else {
      keep_bytes(b, chunk, (size_t)n, j->diagmax);
    }
  }
}

static void on_writable(struct job *j, int i) {
  struct wbuf *w = &j->w[i];
  while (w->off < w->len) {
    ssize_t n = write(j->fd[i], w->data + w->off, w->len - w->off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n < 0) break;  // EPIPE: it stopped reading
    w->off += (size_t)n;
  }
  // A held stdin waits for more (or its end) once what it had is written.
  if (i == IN && j->hold_in && w->off == w->len) return;
  close_fd(j, i);
}

// ---- requests ------------------------------------------------------------------------

static unsigned char *request;
static size_t have, cap;
static char *fields[MAX_FIELDS + 1];
static size_t lengths[MAX_FIELDS + 1];

static uint32_t get32(const unsigned char *b) {
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

// One frame's body. Fields are made NUL-terminated in place: each moves four bytes down
// over its own length word, which is no longer needed once read.
static void handle(unsigned char *body, size_t len) {
  if (len < 4) return;
  uint32_t nf = get32(body);
  if (nf == 0 || nf > MAX_FIELDS) {
    fprintf(stderr, "runbox-forkserver: malformed request\n");
    return;
  }
  size_t at = 4;
  for (uint32_t k = 0; k < nf; k++) {
    if (len - at < 4) return;
    uint32_t n = get32(body + at);
    if (len - at - 4 < n) return;
    memmove(body + at, body + at + 4, n);
    body[at + n] = 0;
    fields[k] = (char *)body + at;
    lengths[k] = n;
    at += 4 + n;
  }
  fields[nf] = NULL;
  if (!strcmp(fields[0], "start")) start(fields, (int)nf, 0);
  else if (!strcmp(fields[0], "startenv")) start(fields, (int)nf, 1);
  else if (!strcmp(fields[0], "enter")) enter(fields, lengths, (int)nf);
  else if (!strcmp(fields[0], "run")) run(fields, lengths, (int)nf);
  else if (!strcmp(fields[0], "discard")) discard(fields, (int)nf);
  else if (!strcmp(fields[0], "stdin")) more_stdin(fields, lengths, (int)nf);
  else if (!strcmp(fields[0], "eof")) end_stdin(fields, (int)nf);
  else fprintf(stderr, "runbox-forkserver: unknown request\n");
}

// Reads what stdin has and handles every whole request in it; 0 at EOF.
static int read_requests(void) {
  if (cap - have < 65536 && cap < MAX_REQUEST + 8) {
    size_t grown = cap ? cap * 2 : 1 << 20;
    if (grown > MAX_REQUEST + 8) grown = MAX_REQUEST + 8;
    unsigned char *p = realloc(request, grown);
    if (!p) die("out of memory");
    request = p;
    cap = grown;
  }
  ssize_t r = read(0, request + have, cap - have);
  if (r < 0) return errno == EINTR || errno == EAGAIN;
  if (r == 0) return 0;
  have += (size_t)r;
  size_t at = 0;
  while (have - at >= 4) {
    uint32_t want = get32(request + at);
    if (want == 0 || want > MAX_REQUEST) {
      fprintf(stderr, "runbox-forkserver: request of %u bytes refused\n", want);
      exit(1);
    }
    if (have - at - 4 < want) break;
    handle(request + at + 4, want);
    at += 4 + want;
  }
  memmove(request, request + at, have - at);
  have -= at;
  return 1;
}

static void reap(void) {
  int status;
  pid_t pid;
  char p[16], c[16], s[16];
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    snprintf(p, sizeof p, "%d", (int)pid);
    if (WIFEXITED(status)) {
      snprintf(c, sizeof c, "%d", WEXITSTATUS(status));
      reply_text(4, "exit", p, c, "0");
    } else if (WIFSIGNALED(status)) {
      snprintf(s, sizeof s, "%d", WTERMSIG(status));
      reply_text(4, "exit", p, "-1", s);
    }
  }
}

static struct pollfd pfds[2 + MAX_JOBS * PIPES];
static struct {
  int job, pipe;
} owner[2 + MAX_JOBS * PIPES];

int main(void) {
  // Dies with the runner; if the runner is already gone, do not start serving.
  pid_t parent = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) die("pdeathsig");
  if (getppid() != parent) return 0;
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &chld, NULL) != 0) die("sigprocmask");
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) die("signalfd");
  fcntl(0, F_SETFD, FD_CLOEXEC);
  fcntl(1, F_SETFD, FD_CLOEXEC);
  for (;;) {
    int n = 0;
    pfds[n++] = (struct pollfd){.fd = 0, .events = POLLIN};
    pfds[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
    for (int k = 0; k < MAX_JOBS; k++) {
      struct job *j = &jobs[k];
      if (j->used && j->env && j->fd[STAGE_IN] >= 0) {
        owner[n].job = k;
        owner[n].pipe = STAGE_IN;
        pfds[n++] = (struct pollfd){.fd = j->fd[STAGE_IN], .events = POLLIN};
      }
      // Until its run, a started job's launcher sets up and waits: nothing to move.
      if (!j->used || !j->running) continue;
      for (int i = 0; i < PIPES; i++) {
        if (j->fd[i] < 0) continue;
        // A held stdin with nothing to write is left alone until more comes.
        if (i == IN && j->hold_in && j->w[IN].off == j->w[IN].len) continue;
        owner[n].job = k;
        owner[n].pipe = i;
        pfds[n++] = (struct pollfd){.fd = j->fd[i], .events = child_reads[i] ? POLLOUT : POLLIN};
      }
    }
    int wait_ms = watch_processes();
    flush_replies();
    if (poll(pfds, (nfds_t)n, wait_ms) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    for (int k = 2; k < n; k++) {
      if (!pfds[k].revents) continue;
      struct job *j = &jobs[owner[k].job];
      int i = owner[k].pipe;
      if (!j->used || j->fd[i] != pfds[k].fd) continue;
      if (j->env) on_control(j);
      else if (child_reads[i]) on_writable(j, i);
      else on_readable(j, i);
    }
    for (int k = 0; k < MAX_JOBS; k++) {
      struct job *j = &jobs[k];
      if (j->used && j->running && !reading(j) && !awaiting_end(j)) finish(j);
    }
    // Exits after stream data: a stage's output is in before its exit is reported.
    if (pfds[1].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
      }
      reap();
    }
    if (pfds[0].revents && !read_requests()) {
      flush_replies();
      return 0;
    }
  }
}
