// The floor of a judged test: the solution exec'd directly in its image with the test's
// input as its stdin and its stdout to a file, then the comparison done natively: a
// token comparison in C (as the tokens checker), `cmp` (byte for byte), or a checker
// program exec'd in the image as testlib calls it (input output answer). Nothing else.
// Started by bench/judge.ts as root; DIR (tests/<i>.in and tests/<i>.ans, and the
// programs) is bound over the image's /tmp (a private mount, seen by this process and its
// children only), outputs go to DIR/tests/<i>.out.
// Prints one JSON line: each test's wall (solution and comparison) and the CPU of the
// children, in milliseconds.
// Usage: judge-floor ROOTFS DIR N tokens|cmp|checker:PATH PROGRAM [ARGS...]
#define _GNU_SOURCE
#include <ctype.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define INSIDE "/tmp"

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

static const char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp", NULL};

// Runs argv in the image (chroot), stdin and stdout from and to the given host paths; 0 when it exits 0.
static int run_in_image(const char *root, char **argv, const char *in, const char *out) {
  pid_t p = fork();
  if (p == 0) {
    int i = in ? open(in, O_RDONLY) : open("/dev/null", O_RDONLY);
    int o = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : open("/dev/null", O_WRONLY);
    if (i < 0 || o < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0) _exit(125);
    if (chroot(root) != 0 || chdir("/tmp") != 0) _exit(126);
    execve(argv[0], argv, (char **)envp);
    _exit(127);
  }
  int st;
  if (p < 0 || waitpid(p, &st, 0) != p) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *map(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY);
  struct stat s;
  if (fd < 0 || fstat(fd, &s) != 0) return NULL;
  *len = (size_t)s.st_size;
  char *p = *len ? mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0) : "";
  close(fd);
  return p == MAP_FAILED ? NULL : p;
}

// Whitespace-separated tokens equal: the tokens checker's rule.
static int tokens_equal(const char *a, size_t na, const char *b, size_t nb) {
  size_t i = 0, j = 0;
  for (;;) {
    while (i < na && isspace((unsigned char)a[i])) i++;
    while (j < nb && isspace((unsigned char)b[j])) j++;
    if (i == na || j == nb) return i == na && j == nb;
    while (i < na && j < nb && !isspace((unsigned char)a[i]) && a[i] == b[j]) i++, j++;
    int ea = i == na || isspace((unsigned char)a[i]), eb = j == nb || isspace((unsigned char)b[j]);
    if (!ea || !eb) return 0;
  }
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: judge-floor ROOTFS DIR N tokens|cmp|checker:PATH PROGRAM [ARGS...]\n");
    return 2;
  }
  const char *root = argv[1], *dir = argv[2], *mode = argv[4];
  int n = atoi(argv[3]);
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
    perror("judge-floor: private mount namespace");
    return 1;
  }
  char dst[4096];
  snprintf(dst, sizeof dst, "%s" INSIDE, root);
  if (mount(dir, dst, NULL, MS_BIND, NULL) != 0) {
    perror("judge-floor: bind");
    return 1;
  }
  double *took = calloc((size_t)n, sizeof *took);
  int failed = 0;
  double c0 = children_cpu_ms(), t0 = now_ms();
  for (int t = 0; t < n; t++) {
    char in[4096], out[4096], ans[4096];
    snprintf(in, sizeof in, "%s/tests/%d.in", dir, t);
    snprintf(out, sizeof out, "%s/tests/%d.out", dir, t);
    snprintf(ans, sizeof ans, "%s/tests/%d.ans", dir, t);
    double began = now_ms();
    int ok = run_in_image(root, argv + 5, in, out) == 0;
    if (!strcmp(mode, "tokens")) {
      size_t la, lb;
      char *a = map(out, &la), *b = map(ans, &lb);
      ok = ok && a && b && tokens_equal(a, la, b, lb);
      if (a && la) munmap(a, la);
      if (b && lb) munmap(b, lb);
    } else if (!strcmp(mode, "cmp")) {
      pid_t p = fork();
      if (p == 0) {
        execl("/usr/bin/cmp", "cmp", "-s", out, ans, (char *)NULL);
        _exit(127);
      }
      int st;
      ok = ok && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    } else if (!strncmp(mode, "checker:", 8)) {
      char i2[64], o2[64], a2[64];
      snprintf(i2, sizeof i2, INSIDE "/tests/%d.in", t);
      snprintf(o2, sizeof o2, INSIDE "/tests/%d.out", t);
      snprintf(a2, sizeof a2, INSIDE "/tests/%d.ans", t);
      char *cargv[] = {(char *)mode + 8, i2, o2, a2, NULL};
      ok = ok && run_in_image(root, cargv, NULL, NULL) == 0;
    }
    took[t] = now_ms() - began;
    if (!ok) failed++;
  }
  double wall = now_ms() - t0, cpu = children_cpu_ms() - c0;
  printf("{\"runs\":%d,\"failed\":%d,\"wallMs\":%.3f,\"cpuMs\":%.3f,\"tookMs\":[", n, failed, wall, cpu);
  for (int i = 0; i < n; i++) printf("%s%.3f", i ? "," : "", took[i]);
  printf("]}\n");
  return failed ? 1 : 0;
}
