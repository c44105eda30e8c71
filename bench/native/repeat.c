// A peer sandbox's runs, and the floor's, measured alike: N runs one after another, each
// the commands given (separated by ":::"), each command forked and exec'd from this small
// process and waited for in order (isolate --init, --run, --cleanup is three commands of
// one run). A run fails when any of its commands exits non-zero. Their stdout goes to
// /dev/null, stderr is kept. CPU is the cgroup's this process joins first (PROCS: a
// cgroup.procs; USAGE: its cpuacct.usage, ns, or v2 cpu.stat): a launcher's processes
// reaped by a PID namespace's end, or by no one, never reach this process's rusage.
// With ROOT (the floor): a private mount namespace, BIND_SRC bound at ROOT/BIND_DST
// once, and each command chroot'ed into ROOT before its exec. Prints one JSON line: wall
// of the whole, each run's wall (its first fork to its last reaped), the CPU, ms.
// Usage: repeat PROCS USAGE ROOT|- BIND_SRC|- BIND_DST|- N CMD [ARGS...] [::: CMD [ARGS...]]...
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// The cgroup's CPU so far, ms (-1: unreadable).
static double cgroup_cpu_ms(const char *usage) {
  char buf[4096];
  int fd = open(usage, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t r = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (r <= 0) return -1;
  buf[r] = 0;
  const char *v2 = strstr(buf, "usage_usec ");
  return v2 ? strtod(v2 + 11, NULL) / 1e3 : strtod(buf, NULL) / 1e6;
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr, "usage: repeat PROCS USAGE ROOT|- BIND_SRC|- BIND_DST|- N CMD [ARGS...] [::: CMD [ARGS...]]...\n");
    return 2;
  }
  const char *procs = argv[1], *usage = argv[2], *root = strcmp(argv[3], "-") ? argv[3] : NULL;
  int n = atoi(argv[6]);
  if (n <= 0) return 2;
  int fd = open(procs, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, "0", 1) != 1) {
    perror("repeat: joining the cgroup");
    return 1;
  }
  close(fd);
  if (root) {
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
      perror("repeat: private mount namespace");
      return 1;
    }
    if (strcmp(argv[4], "-")) {
      char dst[4096];
      snprintf(dst, sizeof dst, "%s%s", root, argv[5]);
      if (mount(argv[4], dst, NULL, MS_BIND, NULL) != 0) {
        perror("repeat: bind");
        return 1;
      }
    }
  }
  // The commands: argv entries from 7 on, split at ":::" (each made a NULL-ended vector).
  char **cmds[16];
  int ncmds = 0;
  cmds[ncmds++] = &argv[7];
  for (int k = 7; k < argc; k++) {
    if (strcmp(argv[k], ":::")) continue;
    argv[k] = NULL;
    if (ncmds == 16 || k + 1 >= argc) return 2;
    cmds[ncmds++] = &argv[k + 1];
  }
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  double *took = calloc((size_t)n, sizeof *took);
  int failed = 0;
  double c0 = cgroup_cpu_ms(usage), t0 = now_ms();
  for (int r = 0; r < n; r++) {
    double began = now_ms();
    for (int c = 0; c < ncmds; c++) {
      pid_t pid = vfork();
      if (pid == 0) {
        dup2(devnull, 1);
        if (root && (chroot(root) != 0 || chdir("/") != 0)) _exit(126);
        execv(cmds[c][0], cmds[c]);
        _exit(127);
      }
      int status = 0;
      if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
    }
    took[r] = now_ms() - began;
  }
  double wall = now_ms() - t0, cpu = cgroup_cpu_ms(usage) - c0;
  printf("{\"runs\":%d,\"failed\":%d,\"wallMs\":%.3f,\"cpuMs\":%.3f,\"tookMs\":[", n, failed, wall, cpu);
  for (int r = 0; r < n; r++) printf("%s%.3f", r ? "," : "", took[r]);
  printf("]}\n");
  return 0;
}
