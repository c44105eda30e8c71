// runbox-shim: the runner's one exec step between Node and the launcher. As root it
// joins the job cgroup, sets rlimits and (for unprivileged launchers) drops to the
// slot's uid/gid with no_new_privs, then execs the launcher. Doing this in one small
// binary instead of a sh + prlimit + setpriv chain saves milliseconds per run.
//
// Usage: runbox-shim [--cgroup FILE]... [--argv-fd N] [--rlimit RES=SOFT:HARD]... [--uid N --gid N] -- PATH ARGV...
//   --cgroup FILE   a cgroup.procs file to write "0" to (joins this process)
//   --argv-fd N     read the rest of the command line from fd N (NUL-separated, up to EOF)
//                   and close it: the runner starts the shim ahead of a run, so joining
//                   the cgroup (a kernel grace period, milliseconds) is off the run's path.
//                   Nothing at all on fd N means the run was called off (or the runner
//                   is gone): leave the job cgroups, remove them, exit 0.
//   --rlimit        RES is one of cpu, fsize, nofile, core, nproc, stack, as; "inf" for unlimited
//   --uid/--gid     drop to these ids (no supplementary groups) and set no_new_privs
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

// Exit code for the shim's own failures: distinct from anything bwrap/nsjail return.
#define SHIM_FAILED 125

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "runbox-shim: %s%s%s: %s\n", what, detail ? " " : "", detail ? detail : "", strerror(errno));
  _exit(SHIM_FAILED);
}

static unsigned long long parse_num(const char *s, const char *opt) {
  if (!strcmp(s, "inf")) return RLIM_INFINITY;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || (*end && *end != ':')) {
    errno = EINVAL;
    fail("bad number for", opt);
  }
  return v;
}

static int resource_of(const char *name) {
  static const struct { const char *name; int res; } table[] = {
      {"cpu", RLIMIT_CPU},     {"fsize", RLIMIT_FSIZE}, {"nofile", RLIMIT_NOFILE}, {"core", RLIMIT_CORE},
      {"nproc", RLIMIT_NPROC}, {"stack", RLIMIT_STACK}, {"as", RLIMIT_AS},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].name, name)) return table[i].res;
  errno = EINVAL;
  fail("unknown rlimit", name);
  return -1;
}

#define MAX_CGROUPS 16
static const char *joined[MAX_CGROUPS];
static int njoined;

static int write_zero(const char *procs) {
  int fd = open(procs, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return -1;
  int ok = write(fd, "0", 1) == 1;
  close(fd);
  return ok ? 0 : -1;
}

static void join_cgroup(const char *procs) {
  if (njoined == MAX_CGROUPS) {
    errno = E2BIG;
    fail("too many cgroups", procs);
  }
  if (write_zero(procs) != 0) fail("cannot join", procs);
  joined[njoined++] = procs;
}

// A run that was called off: move back to each job cgroup's parent and remove the
// job cgroup (and the program's cgroup below it), so that nothing is left behind even if the runner itself is gone.
static void leave_cgroups(void) {
  for (int k = njoined - 1; k >= 0; k--) {
    char job[4096], parent[4096];
    if (snprintf(job, sizeof job, "%s", joined[k]) >= (int)sizeof job) continue;
    char *slash = strrchr(job, '/');
    if (!slash) continue;
    *slash = 0;  // job = the job cgroup directory
    if (snprintf(parent, sizeof parent, "%s", job) >= (int)sizeof parent) continue;
    slash = strrchr(parent, '/');
    if (!slash) continue;
    strcpy(slash, "/cgroup.procs");
    if (write_zero(parent) != 0) continue;
    // The program's own cgroup below the job (cgroups/v1.ts) goes first.
    char program[4096 + 16];
    snprintf(program, sizeof program, "%s/program", job);
    rmdir(program);
    rmdir(job);
  }
}

static void set_rlimit(char *spec) {
  char *eq = strchr(spec, '=');
  char *colon = eq ? strchr(eq, ':') : NULL;
  if (!eq || !colon) {
    errno = EINVAL;
    fail("bad --rlimit", spec);
  }
  *eq = 0;
  struct rlimit rl = {parse_num(eq + 1, spec), parse_num(colon + 1, spec)};
  if (setrlimit(resource_of(spec), &rl) != 0) fail("setrlimit", spec);
}

#define ARGV_FD_MAX_BYTES (1 << 20)

// Reads NUL-separated strings from fd until EOF; returns a new argv made of
// argv[0..at) + those strings + argv[at+2..argc). Exits 0 when fd had nothing.
static char **splice_args_from_fd(int fd, int *argc, char **argv, int at) {
  char *buf = malloc(ARGV_FD_MAX_BYTES + 1);
  if (!buf) fail("out of memory", NULL);
  size_t len = 0;
  for (;;) {
    if (len == ARGV_FD_MAX_BYTES) {
      errno = E2BIG;
      fail("command line on fd too long", NULL);
    }
    ssize_t r = read(fd, buf + len, ARGV_FD_MAX_BYTES - len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail("reading the command line", NULL);
    if (r == 0) break;
    len += (size_t)r;
  }
  close(fd);
  if (len == 0) {
    leave_cgroups();
    _exit(0);
  }
  buf[len] = 0;
  int extra = 0;
  for (size_t k = 0; k < len; k++) extra += buf[k] == 0;
  if (buf[len - 1] != 0) extra++;
  char **out = calloc((size_t)(*argc + extra + 1), sizeof *out);
  if (!out) fail("out of memory", NULL);
  int n = 0;
  for (int k = 0; k < at; k++) out[n++] = argv[k];
  for (size_t k = 0; k < len; k += strlen(buf + k) + 1) out[n++] = buf + k;
  for (int k = at + 2; k < *argc; k++) out[n++] = argv[k];
  out[n] = NULL;
  *argc = n;
  return out;
}

int main(int argc, char **argv) {
  long uid = -1, gid = -1;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {
      i++;
      break;
    }
    if (i + 1 >= argc) {
      errno = EINVAL;
      fail("missing value for", a);
    }
    if (!strcmp(a, "--cgroup")) join_cgroup(argv[++i]);
    else if (!strcmp(a, "--argv-fd")) {
      argv = splice_args_from_fd((int)parse_num(argv[i + 1], a), &argc, argv, i);
      i--;  // continue with the first spliced argument
    }
    else if (!strcmp(a, "--rlimit")) set_rlimit(argv[++i]);
    else if (!strcmp(a, "--uid")) uid = (long)parse_num(argv[++i], a);
    else if (!strcmp(a, "--gid")) gid = (long)parse_num(argv[++i], a);
    else {
      errno = EINVAL;
      fail("unknown option", a);
    }
  }
  if (i >= argc) {
    errno = EINVAL;
    fail("nothing to run", NULL);
  }
  if ((uid < 0) != (gid < 0)) {
    errno = EINVAL;
    fail("--uid and --gid go together", NULL);
  }
  // Programs run at nice 0 whatever priority the runner was started with, as nsjail's
  // nice_level does; lowering a nice value needs root, so before the drop.
  if (setpriority(PRIO_PROCESS, 0, 0) != 0) fail("setpriority", NULL);
  if (uid >= 0) {
    if (uid == 0 || gid == 0) {
      errno = EINVAL;
      fail("refusing to run as root", NULL);
    }
    if (setgroups(0, NULL) != 0) fail("setgroups", NULL);
    if (setresgid(gid, gid, gid) != 0) fail("setresgid", NULL);
    if (setresuid(uid, uid, uid) != 0) fail("setresuid", NULL);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs", NULL);
  }
  // The launcher dies with the runner (set after the uid change, which clears it). If
  // the runner is already gone, the parent is no longer the one that started us.
  pid_t parent = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail("pdeathsig", NULL);
  if (getppid() != parent) {
    errno = ESRCH;
    fail("the runner is gone", NULL);
  }
  execv(argv[i], argv + i);
  fail("cannot execute", argv[i]);
  return SHIM_FAILED;
}
