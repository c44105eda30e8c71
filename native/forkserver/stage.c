// A stage in a pooled sandbox: its cgroup directories and limits, its pipes passed to
// the sandbox's runbox-init (enter), its process count watched, its end and counters
// reported (on_control).
#include "forkserver.h"

#include <pthread.h>

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
int watch_processes(void) {
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

void enter(char **f, const size_t *len, int nf) {
  // f: "enter" ENV ID UID GID NDIR DIR... NJOIN PROCS... NWRITE FILE VALUE... NCOUNT FILE...
  //    KEEP FLOOD OUTMAX DIAGMAX STREAM STDIN STAGEIN HOLD [STDINFILE]
  // STDINFILE: a file (a cached test's input) opened here read-only and given to the
  // program as its stdin instead of a pipe: no bytes pass through this server.
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
  int dr = cnt < 0 ? -1 : counted(f, nf, &at, 2 * MAX_WRITES);
  if (dr < 0 || (nf - at != 14 && nf - at != 15) || (cnt - 1 - wr) % 2 != 0 || (at - dr) % 2 != 0) {
    failed(id, EINVAL, "request");
    return;
  }
  if (!env || !env->env || env->stage[0] || env->fd[STAGE_IN] < 0) {
    failed(id, ESRCH, "request");
    return;
  }
  int ndirs = jn - 1 - dir, njoins = wr - 1 - jn, nwrites = (cnt - 1 - wr) / 2, ncounts = dr - 1 - cnt, ndrains = at - dr;
  const char *usage = f[at], *over = f[at + 1], *settle = f[at + 2];
  const char *stdin_file = nf - at == 15 && f[nf - 1][0] ? f[nf - 1] : NULL;
  at += 3;
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
    if (made == IN && stdin_file) {
      // Read-only, and only a regular file: no pipe, nothing for this server to write.
      // Its mode (the cache's 0644, in a directory only root can enter) lets
      // /dev/stdin reopen it read-only and nothing more.
      struct stat st;
      mine[IN] = -1;
      theirs[IN] = open(stdin_file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
      if (theirs[IN] < 0 || fstat(theirs[IN], &st) != 0 || !S_ISREG(st.st_mode)) {
        e = theirs[IN] < 0 ? errno : EINVAL;
        if (theirs[IN] >= 0) close(theirs[IN]);
        step = "stdin file";
        goto cleanup;
      }
      // Blocking reads for the program (O_NONBLOCK only kept a FIFO's open from waiting).
      fcntl(theirs[IN], F_SETFL, 0);
      continue;
    }
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
  for (int k = 0; k < ndrains; k++) env->drains[k] = strdup(f[dr + k]);
  env->ndrains = ndrains;
  env->usage = usage[0] ? strdup(usage) : NULL;
  env->drain_over = strtoull(over, NULL, 10);
  env->settle = settle[0] ? strdup(settle) : NULL;
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
    if (mine[k] >= 0) close(mine[k]);
    close(theirs[k]);
  }
  for (int k = 0; k < opened; k++) close(theirs[STAGE_FDS + k]);
  for (int k = dirs_made - 1; k >= 0; k--) rmdir(f[dir + k]);
  free_stage_info(env);
  failed(id, e, step);
}

// Removes a stage's cgroup directories, innermost first; 1 when all are gone.
static int remove_dirs(char **dirs, int n) {
  int removed = 1;
  for (int k = n - 1; k >= 0; k--)
    if (rmdir(dirs[k]) != 0 && errno != ENOENT) removed = 0;
  return removed;
}

// A stage's reclaim, done on a thread of its own: the drain files written, the
// directories removed, the settle file read; then handed back through reclaim_pipe.
struct reclaim {
  char stage[32];
  char *drains[2 * MAX_WRITES];
  int ndrains;
  char *dirs[MAX_STAGE_DIRS];
  int ndirs;
  char *settle;
  int removed;
  char *settled;
};
static int reclaim_pipe[2] = {-1, -1};

static void *reclaim_thread(void *arg) {
  struct reclaim *r = arg;
  for (int k = 0; k + 1 < r->ndrains; k += 2) write_small(r->drains[k], r->drains[k + 1]);
  r->removed = remove_dirs(r->dirs, r->ndirs);
  r->settled = r->settle ? read_small(r->settle) : strdup("");
  // A pointer is written whole to a pipe (PIPE_BUF): the loop reads it back.
  if (write(reclaim_pipe[1], &r, sizeof r) != (ssize_t)sizeof r) abort();
  return NULL;
}

int reclaim_fd(void) {
  if (reclaim_pipe[0] < 0 && pipe2(reclaim_pipe, O_CLOEXEC) == 0) fcntl(reclaim_pipe[0], F_SETFL, O_NONBLOCK);
  return reclaim_pipe[0];
}

// Starts the reclaim of `env`'s finished stage, which takes over its drains, directories
// and settle file; -1 when no thread could be started (the caller does it at once).
static int start_reclaim(struct job *env, const char *stage) {
  if (reclaim_fd() < 0) return -1;
  struct reclaim *r = calloc(1, sizeof *r);
  if (!r) return -1;
  snprintf(r->stage, sizeof r->stage, "%s", stage);
  memcpy(r->drains, env->drains, sizeof r->drains);
  r->ndrains = env->ndrains;
  memcpy(r->dirs, env->dirs, sizeof r->dirs);
  r->ndirs = env->ndirs;
  r->settle = env->settle;
  pthread_attr_t attr;
  pthread_t t;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int e = pthread_create(&t, &attr, reclaim_thread, r);
  pthread_attr_destroy(&attr);
  if (e != 0) {
    free(r);
    return -1;
  }
  // Its strings are the thread's now.
  env->ndrains = env->ndirs = 0;
  env->settle = NULL;
  return 0;
}

// Reclaims that have finished: `settled STAGE REMOVED SETTLED` each.
void on_reclaimed(void) {
  struct reclaim *r;
  while (read(reclaim_pipe[0], &r, sizeof r) == (ssize_t)sizeof r) {
    reply_text(4, "settled", r->stage, r->removed ? "1" : "0", r->settled);
    for (int k = 0; k < r->ndrains; k++) free(r->drains[k]);
    for (int k = 0; k < r->ndirs; k++) free(r->dirs[k]);
    free(r->settle);
    free(r->settled);
    free(r);
  }
}

// A pooled sandbox's runbox-init said something (a stage's end) or went away.
void on_control(struct job *env) {
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
    struct field fl[5 + 2 * MAX_COUNTS];
    char *after[MAX_COUNTS];
    int nc = env->ncounts;
    for (int k = 0; k < nc; k++) after[k] = read_small(env->counts[k]);
    // What the stage left charged (page cache, dentries) is reclaimed before its cgroup
    // goes, on the runner's time, rather than by whatever the next stage allocates. Only
    // past a bound: a reclaim costs 0.2-4 ms even when there is next to nothing to
    // reclaim, and most stages leave a megabyte or two; and then on a thread of its own
    // (it can take a second or more), so the stage's end is reported at once and no other
    // stage waits. The sandbox's next stage waits for its `settled` reply.
    char *left = env->usage ? read_small(env->usage) : NULL;
    int reclaim = env->ndrains > 0 && (!left || strtoull(left, NULL, 10) > env->drain_over);
    free(left);
    int removed = 1;
    char *settled;
    if (reclaim && start_reclaim(env, stage) == 0) {
      removed = 2;
      settled = strdup("");
    } else {
      removed = remove_dirs(env->dirs, env->ndirs);
      settled = env->settle ? read_small(env->settle) : strdup("");
    }
    fl[0] = text("done");
    fl[1] = text(stage);
    fl[2] = text(status);
    fl[3] = text(removed == 2 ? "2" : removed ? "1" : "0");
    fl[4] = text(settled);
    for (int k = 0; k < nc; k++) {
      fl[5 + k] = text(env->before[k]);
      fl[5 + nc + k] = text(after[k]);
    }
    send_frame(fl, 5 + 2 * nc);
    for (int k = 0; k < nc; k++) free(after[k]);
    free(settled);
    free_stage_info(env);
    return;
  }
  // Gone, or not speaking the protocol: no more stages; its exit comes as the launcher's.
  close_fd(env, STAGE_IN);
}
