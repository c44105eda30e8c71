// The floor of a run: the program exec'd directly in its image, nothing else. Started by
// bench/floor.ts as root. Once: a private mount namespace and an optional bind of a host
// directory into the image (the C hello's binary). Then N runs, PAR at a time, each a
// fork of this small process, chroot into the image and exec: the least any sandbox can
// cost. Prints one JSON line: wall of the whole, each run's wall (from fork to reaped),
// and the CPU of the children (user + system), all in milliseconds.
// Usage: floor ROOTFS N PAR BIND_SRC|- BIND_DST|- PROGRAM [ARGS...]
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double children_cpu_ms(void) {
  struct rusage u;
  getrusage(RUSAGE_CHILDREN, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: floor ROOTFS N PAR BIND_SRC|- BIND_DST|- PROGRAM [ARGS...]\n");
    return 2;
  }
  const char *root = argv[1];
  int n = atoi(argv[2]), par = atoi(argv[3]);
  if (n <= 0 || par <= 0 || par > 64) return 2;
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
    perror("floor: private mount namespace");
    return 1;
  }
  if (strcmp(argv[4], "-")) {
    char dst[4096];
    snprintf(dst, sizeof dst, "%s%s", root, argv[5]);
    if (mount(argv[4], dst, NULL, MS_BIND, NULL) != 0) {
      perror("floor: bind");
      return 1;
    }
  }
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp", NULL};
  double *took = calloc((size_t)n, sizeof *took);
  pid_t *pids = calloc((size_t)par, sizeof *pids);
  double *began = calloc((size_t)par, sizeof *began);
  int started = 0, done = 0, failed = 0;
  double c0 = children_cpu_ms(), t0 = now_ms();
  while (done < n) {
    while (started < n && started - done < par) {
      int slot = 0;
      while (pids[slot]) slot++;
      began[slot] = now_ms();
      pid_t p = fork();
      if (p == 0) {
        if (chroot(root) != 0 || chdir("/tmp") != 0) _exit(126);
        dup2(devnull, 0);
        dup2(devnull, 1);
        execve(argv[6], argv + 6, envp);
        _exit(127);
      }
      if (p < 0) {
        perror("fork");
        return 1;
      }
      pids[slot] = p;
      started++;
    }
    int st;
    pid_t p = wait(&st);
    if (p < 0) break;
    for (int k = 0; k < par; k++)
      if (pids[k] == p) {
        took[done] = now_ms() - began[k];
        pids[k] = 0;
      }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) failed++;
    done++;
  }
  double wall = now_ms() - t0, cpu = children_cpu_ms() - c0;
  printf("{\"runs\":%d,\"par\":%d,\"failed\":%d,\"wallMs\":%.3f,\"cpuMs\":%.3f,\"tookMs\":[", n, par, failed, wall, cpu);
  for (int i = 0; i < done; i++) printf("%s%.3f", i ? "," : "", took[i]);
  printf("]}\n");
  return failed ? 1 : 0;
}
