// runbox-forkserver: starts the runner's shims, so that the runner's Node process does
// not fork itself (and its whole heap's page tables) for every stage. One per runner
// process, started once; it exits when the runner closes its stdin or dies.
//
// Requests on stdin, each a 4-byte little-endian length and then NUL-terminated fields:
//   spawn ID PATH NFILES FILE... ARGV0 ARGV...   start PATH with 7 fresh pipes on fds
//                                                0-6 and FILE... (opened write-only, as
//                                                root, here) on fds 7..., empty env
//   release ID                                   close this server's ends of ID's pipes
// Replies on stdout, one line each (no field of a request is ever echoed but ID, digits):
//   spawned ID PID FD0 ... FD6   this server's ends of the pipes: the runner opens them
//                                as /proc/<this pid>/fd/<n>, then releases them
//   failed ID ERRNO              nothing was started
//   exit PID CODE SIGNAL         a child ended (CODE -1 when killed by SIGNAL)
// Pipe directions, as the child sees them: 0 read (stdin), 1-2 write, 3 read (stage-in),
// 4-5 write (stage-out, launcher log), 6 read (the rest of the shim's command line).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PIPES 7
#define MAX_FILES 8
#define MAX_ARGS 4096
#define MAX_REQUEST (1 << 20)
#define MAX_PENDING 256
// Where the child parks its descriptors before moving them to 0..: above any it needs.
#define PARK_FD 64

static const int child_reads[PIPES] = {1, 0, 0, 1, 0, 0, 1};

struct pending {
  char id[32];
  int fds[PIPES];  // this server's ends, -1 when free
  int used;
};
static struct pending pending[MAX_PENDING];

static void die(const char *what) {
  fprintf(stderr, "runbox-forkserver: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void reply(const char *fmt, ...) {
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0 || n >= (int)sizeof line) return;
  for (int off = 0; off < n;) {
    ssize_t w = write(1, line + off, (size_t)(n - off));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) exit(0);  // the runner is gone
    off += (int)w;
  }
}

static int digits_only(const char *s) {
  if (!*s || strlen(s) >= sizeof pending[0].id) return 0;
  for (; *s; s++)
    if (*s < '0' || *s > '9') return 0;
  return 1;
}

static void close_all_from(int lowest) {
  if (syscall(SYS_close_range, (unsigned)lowest, ~0U, 0) == 0) return;
  for (int fd = lowest; fd < 65536; fd++) close(fd);
}

// In the child: pipes to 0..6, files to 7..., nothing else open, default signals.
static void child(int ends[PIPES], int files[], int nfiles, char **argv, int err_fd) {
  int total = PIPES + nfiles;
  int parked[PIPES + MAX_FILES];
  for (int i = 0; i < total; i++) {
    int src = i < PIPES ? ends[i] : files[i - PIPES];
    parked[i] = fcntl(src, F_DUPFD, PARK_FD + 1 + total);
    if (parked[i] < 0) goto failed;
  }
  if (dup2(err_fd, PARK_FD) < 0) goto failed;
  err_fd = PARK_FD;
  fcntl(err_fd, F_SETFD, FD_CLOEXEC);
  for (int i = 0; i < total; i++)
    if (dup2(parked[i], i) < 0) goto failed;
  for (int i = total; i < PARK_FD; i++) close(i);
  close_all_from(PARK_FD + 1);
  sigset_t none;
  sigemptyset(&none);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGCHLD, SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, NULL);
  char *envp[] = {NULL};
  execve(argv[0], argv, envp);
failed: {
  int e = errno;
  ssize_t ignored = write(err_fd, &e, sizeof e);
  (void)ignored;
  _exit(127);
}
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
    reply("failed %s %d\n", id, EINVAL);
    return;
  }
  char **argv = f + 4 + nfiles;
  int slot = -1;
  for (int k = 0; k < MAX_PENDING; k++)
    if (!pending[k].used) {
      slot = k;
      break;
    }
  if (slot < 0) {
    reply("failed %s %d\n", id, EAGAIN);
    return;
  }
  int mine[PIPES], theirs[PIPES], files[MAX_FILES], err[2] = {-1, -1};
  int made = 0, opened = 0, e = 0;
  for (; made < PIPES; made++) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
      e = errno;
      goto cleanup;
    }
    theirs[made] = child_reads[made] ? p[0] : p[1];
    mine[made] = child_reads[made] ? p[1] : p[0];
  }
  for (; opened < nfiles; opened++) {
    files[opened] = open(f[4 + opened], O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (files[opened] < 0) {
      e = errno;
      goto cleanup;
    }
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    e = errno;
    goto cleanup;
  }
  pid_t pid = fork();
  if (pid < 0) {
    e = errno;
    goto cleanup;
  }
  if (pid == 0) child(theirs, files, (int)nfiles, argv, err[1]);
  close(err[1]);
  err[1] = -1;
  int child_errno = 0;
  ssize_t r;
  do r = read(err[0], &child_errno, sizeof child_errno);
  while (r < 0 && errno == EINTR);
  if (r == (ssize_t)sizeof child_errno) {
    // exec failed: the child exits 127 and is reaped (and reported) like any other.
    e = child_errno;
    goto cleanup;
  }
  for (int k = 0; k < PIPES; k++) close(theirs[k]);
  for (int k = 0; k < opened; k++) close(files[k]);
  close(err[0]);
  pending[slot].used = 1;
  snprintf(pending[slot].id, sizeof pending[slot].id, "%s", id);
  memcpy(pending[slot].fds, mine, sizeof mine);
  reply("spawned %s %d %d %d %d %d %d %d %d\n", id, (int)pid, mine[0], mine[1], mine[2], mine[3], mine[4], mine[5], mine[6]);
  return;
cleanup:
  for (int k = 0; k < made; k++) {
    close(mine[k]);
    close(theirs[k]);
  }
  for (int k = 0; k < opened; k++) close(files[k]);
  if (err[0] >= 0) close(err[0]);
  if (err[1] >= 0) close(err[1]);
  reply("failed %s %d\n", id, e);
}

static void release(char **f, int nf) {
  if (nf != 2) return;
  for (int k = 0; k < MAX_PENDING; k++) {
    if (!pending[k].used || strcmp(pending[k].id, f[1]) != 0) continue;
    for (int j = 0; j < PIPES; j++) close(pending[k].fds[j]);
    pending[k].used = 0;
    return;
  }
}

static char request[MAX_REQUEST + 1];
static size_t have;
static uint32_t want;  // body length of the request being read; 0 while reading its header
static char *fields[MAX_ARGS + 1];

static void handle(char *body, size_t len) {
  if (len == 0 || body[len - 1] != 0) {
    fprintf(stderr, "runbox-forkserver: malformed request\n");
    return;
  }
  int nf = 0;
  for (size_t k = 0; k < len && nf < MAX_ARGS; k += strlen(body + k) + 1) fields[nf++] = body + k;
  fields[nf] = NULL;
  if (!strcmp(fields[0], "spawn")) spawn(fields, nf);
  else if (!strcmp(fields[0], "release")) release(fields, nf);
  else fprintf(stderr, "runbox-forkserver: unknown request\n");
}

// Reads what stdin has and handles every whole request in it; 0 at EOF.
static int read_requests(void) {
  ssize_t r = read(0, request + have, sizeof request - 1 - have);
  if (r < 0) return errno == EINTR || errno == EAGAIN;
  if (r == 0) return 0;
  have += (size_t)r;
  for (;;) {
    if (want == 0) {
      if (have < 4) break;
      want = (uint32_t)(unsigned char)request[0] | (uint32_t)(unsigned char)request[1] << 8 |
             (uint32_t)(unsigned char)request[2] << 16 | (uint32_t)(unsigned char)request[3] << 24;
      if (want == 0 || want > MAX_REQUEST - 4) {
        fprintf(stderr, "runbox-forkserver: request of %u bytes refused\n", want);
        exit(1);
      }
    }
    if (have < 4 + (size_t)want) break;
    handle(request + 4, want);
    memmove(request, request + 4 + want, have - 4 - want);
    have -= 4 + want;
    want = 0;
  }
  return 1;
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    if (WIFEXITED(status)) reply("exit %d %d 0\n", (int)pid, WEXITSTATUS(status));
    else if (WIFSIGNALED(status)) reply("exit %d -1 %d\n", (int)pid, WTERMSIG(status));
  }
}

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
    struct pollfd p[2] = {{.fd = 0, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (p[1].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
      }
      reap();
    }
    if (p[0].revents && !read_requests()) return 0;
  }
}
