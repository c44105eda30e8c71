// runbox-forkserver: starts the runner's launchers and moves the bytes of their streams,
// so that the runner's Node process neither forks itself (copying its whole heap's page
// tables) for every stage nor handles six pipes per stage. One per runner process,
// started once; it exits when the runner closes its stdin or dies. Policy (timers,
// limits, kills, verdicts) stays in the runner: this is plumbing with counters (output
// bytes, a pooled stage's processes), each reported once past the bound it was given.
//
// Files: main.c the loop, the requests' framing and the children's exits; launch.c
// starting a launcher; stage.c a stage in a pooled sandbox; streams.c the bytes of every
// job; jobs.c the job table; replies.c the replies' framing.
//
// Messages both ways are frames: u32 length, u32 field count, then each field as u32
// length + bytes (little-endian). Requests (runner -> server):
//   start ID NJOIN CGROUP... NFILES FILE... NRLIMITS RLIMIT... UID GID ARGV0 ARGV...
//       start ARGV0 (an absolute path) with fresh pipes on 0-5 and FILE... (opened
//       write-only, as root, here) on 6..., an empty environment, default signals. Before
//       its exec the child, as root, joins each CGROUP (a cgroup.procs file), sets each
//       RLIMIT (RES=SOFT:HARD, RES one of cpu fsize nofile core nproc stack as, "inf" for
//       unlimited) and nice 0, then, when UID and GID are not empty, drops to them (no
//       supplementary groups, no_new_privs); it dies with this server. Pipes, as the
//       child sees them: 0 stdin, 1 stdout, 2 stderr, 3 stage-in, 4 stage-out, 5 launcher log.
//   run ID KEEP FLOOD OUTMAX DIAGMAX STREAM STDIN STAGEIN [HOLD]
//       write STDIN and STAGEIN to pipes 0 and 3 (without ever blocking on them) and read
//       1, 2, 4 and 5 until each ends: KEEP bytes of stdout and of stderr are kept, OUTMAX
//       of stage-out, DIAGMAX of the launcher log; the rest is counted and dropped, so the
//       child never blocks on a full pipe. With HOLD "1", pipe 0 stays open once STDIN is
//       written, for more input (an interactive run):
//   stdin ID BYTES   more input for a held pipe 0 (dropped once the program's stdin is gone)
//   eof ID           pipe 0 closes once what it has is written
//   discard ID   close ID's pipes (a launched runbox-init whose stage archive is empty leaves)
//   link A B     join two running jobs (an interactive test: the program and its
//       interactor, each run with HOLD): A's stdout is written to B's stdin and B's stdout
//       to A's, as they come (what either wrote before is passed on first), each still
//       kept up to KEEP but not counted toward FLOOD; the end of one's stdout ends the
//       other's stdin; a job whose partner's stdin is gone has its stdout closed (its next
//       write fails, as into a pipe without a reader). No more than 1 MiB waits for a
//       partner that does not read: the writer is then left to block on its full pipe
//   startenv ...  as start, but descriptor 3 is a SOCK_SEQPACKET socket: the control
//       socket of a pooled sandbox (runbox-init --pool, native/init/pool.c)
//   enter ENV ID UID GID NDIR DIR... NJOIN PROCS... NWRITE FILE VALUE... NCOUNT FILE...
//         NDRAIN FILE VALUE... USAGE OVER SETTLE
//         WATCH MAXPROCS EVERYMS KEEP FLOOD OUTMAX DIAGMAX STREAM STDIN STAGEIN HOLD
//       a stage in the pooled sandbox ENV, in one request: make the stage's cgroup
//       directories DIR..., write each VALUE to its FILE (the stage's limits), read each
//       counter FILE (but those in DIR..., new), then pass fresh pipes for the stage's
//       stdin, stdout, stderr, stage-in and stage-out, each DIR's cgroup.procs and each
//       PROCS (cgroup.procs files of existing cgroups), opened write-only here as root, to
//       ENV's runbox-init, and run the stage as `run` does (it has no launcher
//       log); stdin and eof apply to ID. Its stdio pipes belong to UID and GID (the
//       program is given them: runbox-init relays nothing). While it runs, WATCH (a
//       cgroup.procs file; empty for none) is read every EVERYMS ms: more than MAXPROCS
//       processes listed is reported once (crowd), without waking the runner otherwise.
//       At its end, when USAGE (empty: always) reads more than OVER bytes, each drain
//       VALUE is written to its FILE (what the stage left charged is reclaimed), before its
//       directories are removed; then SETTLE (empty: none) is read
// Replies (server -> runner):
//   started ID PID | failed ID ERRNO STEP
//   done ID STATUS REMOVED SETTLED BEFORE... AFTER...
//                               the stage ID of a pooled sandbox has ended, and everything
//                               in its PID namespace (STATUS: its wait status); its
//                               counter files as read at its start and at its end; REMOVED
//                               "1" when its cgroup directories are gone ("0": still busy;
//                               "2": being reclaimed, a `settled` reply follows); SETTLED
//                               the SETTLE file's text once they are gone
//   settled ID REMOVED SETTLED  the reclaim of stage ID has ended, as done would have said
//   exit PID CODE SIGNAL        a child ended (CODE -1 when killed by SIGNAL)
//   chunk ID STREAM BYTES       kept output as it comes (STREAM 1 or 2), when asked
//   flood ID                    stdout + stderr passed FLOOD bytes (once)
//   crowd ID                    a stage's WATCH listed more than MAXPROCS processes (once)
//   streams ID OUTTOTAL ERRTOTAL OVERFLOW STDOUT STDERR STAGEOUT LOG
//                               every stream of ID has ended; ID is forgotten
// Numbers travel as decimal text fields.
#include "forkserver.h"

static void die(const char *what) {
  fprintf(stderr, "runbox-forkserver: %s: %s\n", what, strerror(errno));
  exit(1);
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
  if (!strcmp(fields[0], "start")) start(fields, (int)nf, 0);
  else if (!strcmp(fields[0], "startenv")) start(fields, (int)nf, 1);
  else if (!strcmp(fields[0], "enter")) enter(fields, lengths, (int)nf);
  else if (!strcmp(fields[0], "run")) run(fields, lengths, (int)nf);
  else if (!strcmp(fields[0], "discard")) discard(fields, (int)nf);
  else if (!strcmp(fields[0], "stdin")) more_stdin(fields, lengths, (int)nf);
  else if (!strcmp(fields[0], "eof")) end_stdin(fields, (int)nf);
  else if (!strcmp(fields[0], "link")) link_jobs(fields, (int)nf);
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

static struct pollfd pfds[3 + MAX_JOBS * PIPES];
static struct {
  int job, pipe;
} owner[3 + MAX_JOBS * PIPES];

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
    pfds[n++] = (struct pollfd){.fd = reclaim_fd(), .events = POLLIN};
    for (int k = 0; k < MAX_JOBS; k++) {
      struct job *j = &jobs[k];
      if (j->used && j->env && j->fd[STAGE_IN] >= 0) {
        owner[n].job = k;
        owner[n].pipe = STAGE_IN;
        pfds[n++] = (struct pollfd){.fd = j->fd[STAGE_IN], .events = POLLIN};
      }
      // Until its run, a started job's launcher sets up and waits: nothing to move.
      if (!j->used || !j->running) continue;
      for (int i = 0; i < PIPES; i++) {
        if (j->fd[i] < 0) continue;
        // A held stdin with nothing to write is left alone until more comes.
        if (i == IN && j->hold_in && j->w[IN].off == j->w[IN].len) continue;
        // A linked stdout whose partner has not taken what it was given waits.
        if (i == OUT && relay_blocked(j)) continue;
        owner[n].job = k;
        owner[n].pipe = i;
        pfds[n++] = (struct pollfd){.fd = j->fd[i], .events = child_reads[i] ? POLLOUT : POLLIN};
      }
    }
    int wait_ms = watch_processes();
    flush_replies();
    if (poll(pfds, (nfds_t)n, wait_ms) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (pfds[2].revents) on_reclaimed();
    for (int k = 3; k < n; k++) {
      if (!pfds[k].revents) continue;
      struct job *j = &jobs[owner[k].job];
      int i = owner[k].pipe;
      if (!j->used || j->fd[i] != pfds[k].fd) continue;
      if (j->env) on_control(j);
      else if (child_reads[i]) on_writable(j, i);
      else on_readable(j, i);
    }
    for (int k = 0; k < MAX_JOBS; k++) {
      struct job *j = &jobs[k];
      if (j->used && j->running && !reading(j) && !awaiting_end(j)) finish(j);
    }
    // Exits after stream data: a stage's output is in before its exit is reported.
    if (pfds[1].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
      }
      reap();
    }
    if (pfds[0].revents && !read_requests()) {
      flush_replies();
      return 0;
    }
  }
}
