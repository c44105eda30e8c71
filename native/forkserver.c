// runbox-forkserver: starts the runner's shims and moves the bytes of their streams, so
// that the runner's Node process neither forks itself (copying its whole heap's page
// tables) for every stage nor handles seven pipes per stage. One per runner process,
// started once; it exits when the runner closes its stdin or dies. Policy (timers,
// process counts, kills, verdicts) stays in the runner: this is plumbing with counters.
//
// Messages both ways are frames: u32 length, u32 field count, then each field as u32
// length + bytes (little-endian). Requests (runner -> server):
//   spawn ID PATH NFILES FILE... ARGV0 ARGV...
//       start PATH with fresh pipes on 0-6 and FILE... (opened write-only, as root, here)
//       on 7..., empty environment. Pipes, as the child sees them: 0 stdin, 1 stdout,
//       2 stderr, 3 stage-in, 4 stage-out, 5 launcher log, 6 the rest of its command line.
//   launch ID ARGV
//       write ARGV to pipe 6 now, ahead of the run: the shim starts the launcher, whose
//       runbox-init waits for the stage on pipe 3
//   run ID KEEP FLOOD OUTMAX DIAGMAX STREAM STDIN STAGEIN
//       write STDIN and STAGEIN to pipes 0 and 3 (without ever blocking on them; a job
//       never launched has pipe 6 closed instead, and its shim leaves) and read 1, 2,
//       4 and 5 until each ends: KEEP bytes of stdout and of
//       stderr are kept, OUTMAX of stage-out, DIAGMAX of the launcher log; the rest is
//       counted and dropped, so the child never blocks on a full pipe.
//   discard ID   close ID's pipes (a shim with an empty command line leaves, and so
//                does a launched runbox-init whose stage archive is empty)
// Replies (server -> runner):
//   spawned ID PID | failed ID ERRNO
//   exit PID CODE SIGNAL        a child ended (CODE -1 when killed by SIGNAL)
//   chunk ID STREAM BYTES       kept output as it comes (STREAM 1 or 2), when asked
//   flood ID                    stdout + stderr passed FLOOD bytes (once)
//   streams ID OUTTOTAL ERRTOTAL OVERFLOW STDOUT STDERR STAGEOUT LOG
//                               every stream of ID has ended; ID is forgotten
// Numbers travel as decimal text fields.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define PIPES 7
#define MAX_FILES 8
#define MAX_FIELDS 4096
// Stage-in carries a compile stage's collected files (up to 64 MiB) and more.
#define MAX_REQUEST (256u << 20)
#define MAX_JOBS 256

static const int child_reads[PIPES] = {1, 0, 0, 1, 0, 0, 1};
enum { IN = 0, OUT = 1, ERR = 2, STAGE_IN = 3, STAGE_OUT = 4, LOG = 5, ARGV = 6 };

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
  int used, launched, running, stream, flooded, overflow;
  char id[32];
  int fd[PIPES];         // this server's ends; -1 once closed
  struct wbuf w[PIPES];  // used for IN, STAGE_IN, ARGV
  struct rbuf r[PIPES];  // used for OUT, ERR, STAGE_OUT, LOG
  unsigned long long keep, flood, outmax, diagmax;
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

static void send_frame(const struct field *f, int nf) {
  size_t total = 4;
  for (int i = 0; i < nf; i++) total += 4 + f[i].n;
  unsigned char head[8];
  put32(head, (uint32_t)total);
  put32(head + 4, (uint32_t)nf);
  write_all(head, 8);
  for (int i = 0; i < nf; i++) {
    unsigned char len[4];
    put32(len, (uint32_t)f[i].n);
    write_all(len, 4);
    write_all(f[i].p, f[i].n);
  }
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

// ---- starting a child ----------------------------------------------------------------

// Starts the child with the pipes on 0..6, the files on 7..., nothing else open and
// default signals. posix_spawn: glibc's shares this process's memory until the exec
// (CLONE_VFORK) instead of copying its page tables, and reports a failed exec itself.
static int start_child(pid_t *pid, int ends[PIPES], int files[], int nfiles, char **argv) {
  int total = PIPES + nfiles;
  // Sources first go above every descriptor in play, so that no dup2 onto 0..total-1
  // overwrites a source still to be moved.
  int park = total;
  for (int i = 0; i < total; i++) {
    int src = i < PIPES ? ends[i] : files[i - PIPES];
    if (src >= park) park = src + 1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  int e = posix_spawn_file_actions_init(&fa);
  if (e) return e;
  e = posix_spawnattr_init(&attr);
  if (e) {
    posix_spawn_file_actions_destroy(&fa);
    return e;
  }
  for (int i = 0; i < total && !e; i++) e = posix_spawn_file_actions_adddup2(&fa, i < PIPES ? ends[i] : files[i - PIPES], park + i);
  for (int i = 0; i < total && !e; i++) e = posix_spawn_file_actions_adddup2(&fa, park + i, i);
  if (!e) e = posix_spawn_file_actions_addclosefrom_np(&fa, total);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGCHLD);
  if (!e) e = posix_spawnattr_setsigmask(&attr, &none);
  if (!e) e = posix_spawnattr_setsigdefault(&attr, &defaults);
  if (!e) e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  char *envp[] = {NULL};
  if (!e) e = posix_spawn(pid, argv[0], &fa, &attr, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return e;
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

static void forget(struct job *j) {
  for (int i = 0; i < PIPES; i++) {
    close_fd(j, i);
    free(j->r[i].data);
  }
  memset(j, 0, sizeof *j);
}

static void failed(const char *id, int e) {
  char num[16];
  snprintf(num, sizeof num, "%d", e);
  reply_text(3, "failed", id, num);
}

static void spawn(char **f, int nf) {
  // f: "spawn" ID PATH NFILES FILE... ARGV...
  if (nf < 5 || !digits_only(f[1])) {
    fprintf(stderr, "runbox-forkserver: malformed spawn request\n");
    return;
  }
  const char *id = f[1];
  char *end;
  long nfiles = strtol(f[3], &end, 10);
  if (*end || nfiles < 0 || nfiles > MAX_FILES || 4 + nfiles >= nf) {
    failed(id, EINVAL);
    return;
  }
  char **argv = f + 4 + nfiles;
  struct job *j = NULL;
  for (int k = 0; k < MAX_JOBS && !j; k++)
    if (!jobs[k].used) j = &jobs[k];
  if (!j || find(id)) {
    failed(id, j ? EEXIST : EAGAIN);
    return;
  }
  int mine[PIPES], theirs[PIPES], files[MAX_FILES];
  int made = 0, opened = 0, e = 0;
  for (; made < PIPES; made++) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
      e = errno;
      goto cleanup;
    }
    theirs[made] = child_reads[made] ? p[0] : p[1];
    mine[made] = child_reads[made] ? p[1] : p[0];
    // Only this side is non-blocking: each end is its own open file.
    fcntl(mine[made], F_SETFL, O_NONBLOCK);
    // Staged files can be megabytes: larger pipes, fewer wake-ups (best effort).
    if (made == STAGE_IN || made == STAGE_OUT) fcntl(mine[made], F_SETPIPE_SZ, 1 << 20);
  }
  for (; opened < nfiles; opened++) {
    files[opened] = open(f[4 + opened], O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (files[opened] < 0) {
      e = errno;
      goto cleanup;
    }
  }
  pid_t pid;
  e = start_child(&pid, theirs, files, (int)nfiles, argv);
  if (e) goto cleanup;
  for (int k = 0; k < PIPES; k++) close(theirs[k]);
  for (int k = 0; k < opened; k++) close(files[k]);
  memset(j, 0, sizeof *j);
  j->used = 1;
  snprintf(j->id, sizeof j->id, "%s", id);
  memcpy(j->fd, mine, sizeof mine);
  char num[16];
  snprintf(num, sizeof num, "%d", (int)pid);
  reply_text(3, "spawned", id, num);
  return;
cleanup:
  for (int k = 0; k < made; k++) {
    close(mine[k]);
    close(theirs[k]);
  }
  for (int k = 0; k < opened; k++) close(files[k]);
  failed(id, e);
}

static unsigned long long num_field(const char *s) {
  return strtoull(s, NULL, 10);
}

static void set_write(struct job *j, int i, const char *data, size_t len) {
  if (len > 0) j->w[i].data = malloc(len);
  if (!j->w[i].data) {
    close_fd(j, i);  // nothing to write (or no memory for it): the reader sees EOF
    return;
  }
  memcpy(j->w[i].data, data, len);
  j->w[i].len = len;
}

static void run(char **f, const size_t *len, int nf) {
  // f: "run" ID KEEP FLOOD OUTMAX DIAGMAX STREAM STDIN STAGEIN
  if (nf != 9) {
    fprintf(stderr, "runbox-forkserver: malformed run request\n");
    return;
  }
  struct job *j = find(f[1]);
  if (!j || j->running) {
    fprintf(stderr, "runbox-forkserver: run for an unknown or running id\n");
    return;
  }
  j->running = 1;
  j->keep = num_field(f[2]);
  j->flood = num_field(f[3]);
  j->outmax = num_field(f[4]);
  j->diagmax = num_field(f[5]);
  j->stream = f[6][0] == '1';
  if (!j->launched) close_fd(j, ARGV);
  set_write(j, IN, f[7], len[7]);
  set_write(j, STAGE_IN, f[8], len[8]);
}

static void launch(char **f, const size_t *len, int nf) {
  // f: "launch" ID ARGV
  struct job *j = nf == 3 ? find(f[1]) : NULL;
  if (!j || j->launched || j->running || len[2] == 0) {
    fprintf(stderr, "runbox-forkserver: malformed launch request\n");
    return;
  }
  j->launched = 1;
  set_write(j, ARGV, f[2], len[2]);
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
  if (!strcmp(fields[0], "spawn")) spawn(fields, (int)nf);
  else if (!strcmp(fields[0], "run")) run(fields, lengths, (int)nf);
  else if (!strcmp(fields[0], "launch")) launch(fields, lengths, (int)nf);
  else if (!strcmp(fields[0], "discard")) discard(fields, (int)nf);
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
      if (!j->used) continue;
      for (int i = 0; i < PIPES; i++) {
        // Before its run, a launched job's command line may still be on its way.
        if (j->fd[i] < 0 || (!j->running && !(child_reads[i] && j->w[i].len > j->w[i].off))) continue;
        owner[n].job = k;
        owner[n].pipe = i;
        pfds[n++] = (struct pollfd){.fd = j->fd[i], .events = child_reads[i] ? POLLOUT : POLLIN};
      }
    }
    if (poll(pfds, (nfds_t)n, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    for (int k = 2; k < n; k++) {
      if (!pfds[k].revents) continue;
      struct job *j = &jobs[owner[k].job];
      int i = owner[k].pipe;
      if (!j->used || j->fd[i] != pfds[k].fd) continue;
      if (child_reads[i]) on_writable(j, i);
      else on_readable(j, i);
    }
    for (int k = 0; k < MAX_JOBS; k++) {
      struct job *j = &jobs[k];
      if (j->used && j->running && !reading(j)) finish(j);
    }
    // Exits after stream data: a stage's output is in before its exit is reported.
    if (pfds[1].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
      }
      reap();
    }
    if (pfds[0].revents && !read_requests()) return 0;
  }
}
