#include "init.h"

// A pooled sandbox. With --pool, init stays: the launcher's namespaces and mounts are made once, and each
// stage runs in a child of its own that init starts with new PID, mount, IPC and network
// namespaces (clone), ahead of the stage: as soon as the previous stage has ended. The
// child (PID 1 of its PID namespace) mounts a fresh /proc (the launcher's masks re-made
// on it), empty tmpfs on the writable places and its own devpts, brings its loopback up
// and waits for the stage's request; then it joins the stage's cgroups, drops every
// capability and runs the stage (stage.c). Whatever the stage leaves dies with it: its PID
// namespace ends when its PID 1 does (the kernel kills and reaps the rest before init's
// wait returns), its mounts, tmpfs contents, IPC objects, sockets and network state with
// its namespaces.
//
// The runner talks to init over fd 3, a SOCK_SEQPACKET socket:
//   runner -> init  "R" with descriptors: stdin, stdout, stderr, stage-in, stage-out
//                   (the stage's own pipes), then the stage's cgroup.procs files (read
//                   by the waiting child)
//   init -> runner  "D" u32 wait status (big-endian): the stage and everything in its
//                   PID namespace are gone
// An end of fd 3 ends init (once a stage under way has ended: the runner kills a stage
// it gives up on through its cgroup). Anything unexpected (a malformed request, a child
// other than the stage's, a failed clone or set-up) ends init too: the runner then
// discards the sandbox and never reuses it.

#define POOL_MAX_FDS 16
#define PROC_MOUNTS_MAX 96

unsigned long long pool_workspace, pool_tmp, pool_shm;
const char *pool_devpts;

static void mount_tmpfs(const char *where, unsigned long long size) {
  char opts[64];
  snprintf(opts, sizeof opts, "size=%llu,mode=755", size);
  if (mount("tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0) fail("cannot mount tmpfs on", where);
}

// The mounts the launcher put below /proc (masks, the machine's view, read-only
// covers), opened before the stage's own /proc hides them and bound again on top of it.
struct proc_mount {
  int fd;
  char path[128];
};

// Read once, by init before its first stage (the launcher's mounts do not change).
static struct proc_mount proc_masks[PROC_MOUNTS_MAX];
static int proc_mask_count;

static int launcher_proc_mounts(struct proc_mount *out, int max) {
  static char text[256 * 1024];
  int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot read", "/proc/self/mountinfo");
  size_t len = 0;
  for (;;) {
    ssize_t r = read(fd, text + len, sizeof text - 1 - len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
  }
  close(fd);
  text[len] = 0;
  int n = 0;
  for (char *line = text; line && *line;) {
    char *next = strchr(line, '\n');
    if (next) *next++ = 0;
    // id parent major:minor root mountpoint ...
    char *f = line;
    for (int k = 0; k < 4 && f; k++) {
      f = strchr(f, ' ');
      if (f) f++;
    }
    char *end = f ? strchr(f, ' ') : NULL;
    if (end) *end = 0;
    if (f && !strncmp(f, "/proc/", 6) && !strchr(f, '\\') && strlen(f) < sizeof out[0].path) {
      int seen = 0;
      for (int k = 0; k < n; k++) seen |= !strcmp(out[k].path, f);
      if (!seen) {
        if (n == max) {
          errno = 0;
          fail("too many mounts below /proc", NULL);
        }
        out[n].fd = -1;
        snprintf(out[n].path, sizeof out[n].path, "%s", f);
        n++;
      }
    }
    line = next;
  }
  return n;
}

static void stage_mounts(void) {
  // Nothing mounted here reaches the sandbox's own namespace, nor the other way.
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) fail("cannot make mounts private", NULL);
  // Opened here, in the stage's mount namespace: a bind takes its source from the
  // caller's own namespace.
  struct proc_mount *pm = proc_masks;
  int n = proc_mask_count;
  for (int k = 0; k < n; k++)
    if ((pm[k].fd = open(pm[k].path, O_PATH | O_CLOEXEC | O_NOFOLLOW)) < 0) fail("cannot open", pm[k].path);
  // hidepid=2: a process the program may not ptrace is not listed. The stage's PID 1 (this
  // child, not dumpable) is made when the previous stage ends and shares init's memory,
  // so its /proc/1/stat start time and /proc/1/status figures would tell of earlier runs.
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2") != 0) fail("cannot mount /proc", NULL);
  for (int k = 0; k < n; k++) {
    char src[32];
    snprintf(src, sizeof src, "/proc/self/fd/%d", pm[k].fd);
    if (mount(src, pm[k].path, NULL, MS_BIND, NULL) != 0) fail("cannot mask", pm[k].path);
    close(pm[k].fd);
  }
  mount_tmpfs(SANDBOX_WORKSPACE, pool_workspace);
  mount_tmpfs("/tmp", pool_tmp);
  mount_tmpfs("/dev/shm", pool_shm);
  // A launcher that mounted a devpts of its own there (nsjail) would leave it listed
  // under the stage's, which bubblewrap does not: the stage's is the only one.
  if (umount2("/dev/pts", MNT_DETACH) != 0 && errno != EINVAL) fail("cannot unmount the launcher's /dev/pts", NULL);
  if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, pool_devpts) != 0) fail("cannot mount /dev/pts", pool_devpts);
}

// A new network namespace has its loopback down; the launcher's had it up.
static void loopback_up(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
  if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) != 0) fail("cannot read the loopback's flags", NULL);
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) fail("cannot bring the loopback up", NULL);
  close(s);
}

static void write_status(int ctl, int status) {
  unsigned char msg[5] = {'D'};
  put32(msg + 1, (uint32_t)status);
  if (send(ctl, msg, sizeof msg, MSG_NOSIGNAL) != (ssize_t)sizeof msg) _exit(0);  // the runner is gone
}

// The next stage's child, made ahead of its request (PID 1 of its new PID namespace):
// its mounts, loopback and working directory are ready before the request comes, so a
// stage's start holds only what is its own. The request's descriptors: its stdio and
// stage pipes at 0..4, then cgroup.procs files, which it joins (charging the stage from
// there on, not the set-up before).
static int stage_ctl;
// Set by the child (which shares init's memory) once it has taken a stage's request.
static volatile int stage_taken;

static void stage_child(void) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  stage_mounts();
  loopback_up();
  if (chdir(SANDBOX_WORKSPACE) != 0) fail("cannot enter", SANDBOX_WORKSPACE);

  char byte;
  int fds[POOL_MAX_FDS];
  char cbuf[CMSG_SPACE(sizeof fds)];
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  ssize_t r;
  while ((r = recvmsg(stage_ctl, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (r <= 0) _exit(0);  // called off: this sandbox is no longer wanted
  int n = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int got = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (int k = 0; k < got && n < POOL_MAX_FDS; k++) memcpy(&fds[n++], CMSG_DATA(c) + k * sizeof(int), sizeof(int));
  }
  if (byte != 'R' || n < 5 || (mh.msg_flags & MSG_CTRUNC)) {
    errno = 0;
    fail("malformed stage request", NULL);
  }
  stage_taken = 1;
  // Placed at 0..n-1 by way of descriptors above all of them; the rest (the control
  // socket among them) is closed.
  int high[POOL_MAX_FDS];
  for (int k = 0; k < n; k++)
    if ((high[k] = fcntl(fds[k], F_DUPFD, n)) < 0) fail("placing descriptors", NULL);
  for (int k = 0; k < n; k++)
    if (dup2(high[k], k) != k) fail("placing descriptors", NULL);
  if (syscall(SYS_close_range, (unsigned)n, ~0U, 0) != 0) fail("closing descriptors", NULL);
  for (int k = 5; k < n; k++) {
    if (write(k, "0", 1) != 1) fail("cannot join the stage's cgroup", NULL);
    close(k);
  }
  // A cgroup namespace rooted at the stage's own cgroups: /proc/self/cgroup reads "/" in
  // every stage, not the runner's count of them.
  if (unshare(CLONE_NEWCGROUP) != 0) fail("cannot make the stage's cgroup namespace", NULL);
  drop_capabilities();
  _exit(stage(1));
}

static int stage_entry(void *arg) {
  (void)arg;
  stage_child();
  return INIT_FAILED;  // not reached: stage_child exits
}

#define STAGE_STACK (512 * 1024)

int serve(void) {
  char *stack = guarded_stack(STAGE_STACK, "the stage");
  proc_mask_count = launcher_proc_mounts(proc_masks, PROC_MOUNTS_MAX);
  read_seccomp();
  drop_bounding_set();
  bounding_set_empty = 1;
  int ctl = fcntl(STAGE_IN_FD, F_DUPFD_CLOEXEC, 64);
  if (ctl < 0) fail("control socket", NULL);
  close(STAGE_IN_FD);
  close(STAGE_OUT_FD);
  stage_ctl = ctl;
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  signal(SIGPIPE, SIG_IGN);
  for (;;) {
    // The child shares init's memory (CLONE_VM) and init waits until it has exited
    // (CLONE_VFORK): no copy of init's page tables and no teardown of a copy, which cost
    // about 2 ms of CPU per stage here. Init runs nothing meanwhile, so the child may use
    // its heap and globals; the child has its own descriptors, signal handlers,
    // credentials and namespaces. The program is neither: it is started by exec, with
    // memory of its own, and can reach neither this memory (both processes are
    // non-dumpable, so no ptrace or /proc/<pid>/mem, and seccomp refuses ptrace and
    // process_vm_*) nor init, which is outside the stage's PID namespace.
    stage_taken = 0;
    pid_t pid = clone(stage_entry, stack, CLONE_VM | CLONE_VFORK | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | SIGCHLD, NULL);
    if (pid < 0) fail("cannot start the stage", NULL);
    int status;
    pid_t w;
    while ((w = waitpid(pid, &status, __WALL)) < 0 && errno == EINTR) {
    }
    if (w != pid) fail("lost the stage's process", NULL);
    if (!stage_taken) {
      // The socket ended before a request (exit 0), or the stage's set-up failed: either
      // way the sandbox goes, and the runner sees its launcher exit.
      return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : INIT_FAILED;
    }
    // Anything else still here is not the stage's: this sandbox is not clean.
    if (waitpid(-1, NULL, WNOHANG | __WALL) != -1 || errno != ECHILD) {
      errno = 0;
      fail("a process outlived its stage", NULL);
    }
    write_status(ctl, status);
  }
}
