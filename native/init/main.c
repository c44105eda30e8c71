// runbox-init: the first program inside every sandbox, mounted at /.runbox/init.
// Static, because images carry older C libraries than the host that builds it.
//
// Files: main.c the options and the sandbox's own set-up; stage.c one stage's life;
// archive.c the stage archive in and out; confine.c seccomp, capabilities and CPUs;
// program.c starting the program and waiting for it; pool.c a pooled sandbox.
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
#include "init.h"

void fail(const char *what, const char *detail) {
  int e = errno;
  fprintf(stderr, "runbox-init: %s%s%s%s%s\n", what, detail ? " " : "", detail ? detail : "", e ? ": " : "", e ? strerror(e) : "");
  _exit(INIT_FAILED);
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
