// Shared by the fork server's files (see main.c for what it does and its protocol).
#ifndef RUNBOX_FORKSERVER_H
#define RUNBOX_FORKSERVER_H
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PIPES 6
#define MAX_FILES 8
#define MAX_JOIN 16
#define MAX_RLIMITS 8
#define MAX_FIELDS 4096
// Stage-in carries a compile stage's collected files (up to 64 MiB) and more.
#define MAX_REQUEST (256u << 20)
#define MAX_JOBS 256
#define MAX_STAGE_DIRS 4
#define MAX_WRITES 4
#define MAX_COUNTS 8
// The most fields of any reply (done: 5 + 2 * MAX_COUNTS).
#define MAX_FRAME_FIELDS (5 + 2 * MAX_COUNTS)

// Which of a child's pipes it reads (stdin, stage-in): this server writes those.
extern const int child_reads[PIPES];
enum { IN = 0, OUT = 1, ERR = 2, STAGE_IN = 3, STAGE_OUT = 4, LOG = 5 };

struct wbuf {
  char *data;
  size_t len, off;
};
struct rbuf {
  char *data;
  size_t len, cap;
  unsigned long long total;
};

struct job {
  int used, running, stream, flooded, overflow, hold_in;
  // A pooled sandbox: fd[STAGE_IN] is its control socket; `stage` the ID of its stage
  // under way (empty: none), whose job may be gone before the stage's end is reported.
  int env;
  char stage[32];
  // A stage of a pooled sandbox: 1 + the index of the sandbox's job (0: not a stage).
  int stage_of;
  // The stage's cgroup directories (made here, removed at its end) and the counter
  // files read at its start and at its end.
  char *dirs[MAX_STAGE_DIRS];
  int ndirs;
  char *counts[MAX_COUNTS], *before[MAX_COUNTS];
  int ncounts;
  // Written at the stage's end, before its directories go, when `usage` reads more than
  // `drain_over` (what it left charged is reclaimed); and the file read once they have
  // gone (the job's memory then).
  char *drains[2 * MAX_WRITES];
  int ndrains;
  char *usage, *settle;
  unsigned long long drain_over;
  char id[32];
  int fd[PIPES];         // this server's ends; -1 once closed
  struct wbuf w[PIPES];  // used for IN, STAGE_IN
  struct rbuf r[PIPES];  // used for OUT, ERR, STAGE_OUT, LOG
  unsigned long long keep, flood, outmax, diagmax;
  // A stage's process count, read from `watch` every `every_ms` until it passes `max_procs`.
  char *watch;
  long max_procs, every_ms;
  double watch_due;
  int crowded;
  // A linked job (link): its stdout is written to the stdin of `feeds` (1 + its index in
  // the table, named `feeds_id` so that a job made later in the same place is not taken
  // for it), as well as kept like any job's. 0: not linked.
  int feeds;
  char feeds_id[32];
};
extern struct job jobs[MAX_JOBS];

// A field of a frame (replies.c).
struct field {
  const char *p;
  size_t n;
};

// The pipes of a stage in a pooled sandbox, as the stage sees them: 0 stdin, 1 stdout,
// 2 stderr, 3 stage-in, 4 stage-out (runbox-init places them).
#define STAGE_FDS 5

// replies.c: frames to the runner, gathered until the end of the loop's turn
void flush_replies(void);
void send_frame(const struct field *f, int nf);
struct field text(const char *s);
void reply_text(int n, ...);

// jobs.c: the table of jobs (launchers and stages) and request fields
int digits_only(const char *s);
struct job *find(const char *id);
void close_fd(struct job *j, int i);
void free_stage_info(struct job *j);
void forget(struct job *j);
void failed(const char *id, int e, const char *step);
struct job *free_job(const char *id);
int counted(char **f, int nf, int *at, int max);
int parse_id(const char *s, long *out);

// launch.c: starting a launcher (start, startenv)
void start(char **f, int nf, int env);

// stage.c: a stage in a pooled sandbox (enter), its end (on_control), its process count
void enter(char **f, const size_t *len, int nf);
void on_control(struct job *env);
int reclaim_fd(void);
void on_reclaimed(void);
int watch_processes(void);

// streams.c: the bytes of each job's pipes
int stage_pipe(int i, int pp[2], int *mine, int *theirs);
void run(char **f, const size_t *len, int nf);
void set_run(struct job *j, char **f, const size_t *len);
void more_stdin(char **f, const size_t *len, int nf);
void end_stdin(char **f, int nf);
void discard(char **f, int nf);
int reading(const struct job *j);
void link_jobs(char **f, int nf);
int relay_blocked(const struct job *j);
void finish(struct job *j);
int awaiting_end(const struct job *j);
void on_readable(struct job *j, int i);
void on_writable(struct job *j, int i);

#endif
