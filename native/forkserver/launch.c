// Starting a launcher (start, startenv): a CLONE_VFORK child that joins the job's
// cgroups, sets rlimits and drops to the slot's ids before its exec.
#include "forkserver.h"

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

void start(char **f, int nf, int env) {
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
