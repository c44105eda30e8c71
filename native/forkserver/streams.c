// The bytes of each job: stdin and stage-in written without ever blocking, stdout and
// stderr kept up to KEEP and counted (the output counters), stage-out and the log kept
// up to their bounds; a job is finished once every stream has ended.
#include "forkserver.h"

const int child_reads[PIPES] = {1, 0, 0, 1, 0, 0};

// Pipe `i` of a child (see child_reads): this server's end non-blocking (each end is its
// own open file, so the child's stays blocking), stage-in and stage-out larger (staged
// files can be megabytes: fewer wake-ups; best effort). pp: the pipe, read end first.
int stage_pipe(int i, int pp[2], int *mine, int *theirs) {
  if (pipe2(pp, O_CLOEXEC) != 0) return -1;
  *theirs = child_reads[i] ? pp[0] : pp[1];
  *mine = child_reads[i] ? pp[1] : pp[0];
  fcntl(*mine, F_SETFL, O_NONBLOCK);
  if (i == STAGE_IN || i == STAGE_OUT) fcntl(*mine, F_SETPIPE_SZ, 1 << 20);
  return 0;
}

static unsigned long long num_field(const char *s) {
  return strtoull(s, NULL, 10);
}

static void set_write(struct job *j, int i, const char *data, size_t len) {
  // No pipe to write (a stage given a file as its stdin): nothing is sent.
  if (j->fd[i] < 0) return;
  if (len > 0) j->w[i].data = malloc(len);
  if (!j->w[i].data) {
    // Nothing to write (or no memory for it): the reader sees EOF, unless more is to come.
    if (!(i == IN && j->hold_in && len == 0)) close_fd(j, i);
    return;
  }
  memcpy(j->w[i].data, data, len);
  j->w[i].len = len;
}

// Appends to a held stdin: what is still unwritten moves to the front first.
static void append_write(struct job *j, const char *data, size_t len) {
  struct wbuf *w = &j->w[IN];
  if (j->fd[IN] < 0 || len == 0) return;
  size_t left = w->len - w->off;
  char *p = malloc(left + len);
  if (!p) return;
  if (left) memcpy(p, w->data + w->off, left);
  memcpy(p + left, data, len);
  free(w->data);
  w->data = p;
  w->off = 0;
  w->len = left + len;
}

void run(char **f, const size_t *len, int nf) {
  // f: "run" ID KEEP FLOOD OUTMAX DIAGMAX STREAM STDIN STAGEIN [HOLD]
  if (nf != 9 && nf != 10) {
    fprintf(stderr, "runbox-forkserver: malformed run request\n");
    return;
  }
  struct job *j = find(f[1]);
  if (!j || j->running) {
    fprintf(stderr, "runbox-forkserver: run for an unknown or running id\n");
    return;
  }
  if (nf == 9) f[9] = "0";
  set_run(j, f, len);
}

// f[2..9]: KEEP FLOOD OUTMAX DIAGMAX STREAM STDIN STAGEIN HOLD
void set_run(struct job *j, char **f, const size_t *len) {
  j->running = 1;
  j->keep = num_field(f[2]);
  j->flood = num_field(f[3]);
  j->outmax = num_field(f[4]);
  j->diagmax = num_field(f[5]);
  j->stream = f[6][0] == '1';
  j->hold_in = f[9][0] == '1';
  set_write(j, IN, f[7], len[7]);
  set_write(j, STAGE_IN, f[8], len[8]);
}

// ---- linked jobs (an interactive test's program and interactor) -----------------------

// Bytes waiting for a partner's stdin past which its feeder's stdout is not read.
#define RELAY_PENDING_MAX (1u << 20)

static struct job *partner_of(const struct job *j) {
  if (!j->feeds) return NULL;
  struct job *p = &jobs[j->feeds - 1];
  return p->used && !strcmp(p->id, j->feeds_id) ? p : NULL;
}

// `to`'s stdin ends once what it has is written (its feeder's stdout has ended).
static void relay_end(struct job *to) {
  to->hold_in = 0;
  if (to->fd[IN] >= 0 && to->w[IN].off == to->w[IN].len) close_fd(to, IN);
}

// What `from` wrote goes to its partner's stdin; a partner that can take no more input
// closes `from`'s stdout.
static void relay(struct job *from, const char *data, size_t n) {
  struct job *to = partner_of(from);
  if (!to || to->fd[IN] < 0) {
    close_fd(from, OUT);
    return;
  }
  append_write(to, data, n);
}

int relay_blocked(const struct job *j) {
  const struct job *to = partner_of(j);
  return to && to->fd[IN] >= 0 && to->w[IN].len - to->w[IN].off > RELAY_PENDING_MAX;
}

static void feed(struct job *from, struct job *to) {
  from->feeds = (int)(to - jobs) + 1;
  snprintf(from->feeds_id, sizeof from->feeds_id, "%s", to->id);
  // What it wrote before the link is passed on first.
  if (from->r[OUT].len) relay(from, from->r[OUT].data, from->r[OUT].len);
  if (from->fd[OUT] < 0) relay_end(to);
}

void link_jobs(char **f, int nf) {
  // f: "link" A B
  struct job *a = nf == 3 ? find(f[1]) : NULL, *b = nf == 3 ? find(f[2]) : NULL;
  if (!a || !b || a == b || !a->running || !b->running || !a->hold_in || !b->hold_in) {
    fprintf(stderr, "runbox-forkserver: malformed link request\n");
    return;
  }
  feed(a, b);
  feed(b, a);
}

void more_stdin(char **f, const size_t *len, int nf) {
  if (nf != 3) return;
  struct job *j = find(f[1]);
  if (j && j->running && j->hold_in) append_write(j, f[2], len[2]);
}

void end_stdin(char **f, int nf) {
  if (nf != 2) return;
  struct job *j = find(f[1]);
  if (!j || !j->running || !j->hold_in) return;
  j->hold_in = 0;
  if (j->w[IN].off == j->w[IN].len) close_fd(j, IN);  // else once it is written
}

void discard(char **f, int nf) {
  if (nf != 2) return;
  struct job *j = find(f[1]);
  if (j) forget(j);
}

// ---- streams -------------------------------------------------------------------------

int reading(const struct job *j) {
  return j->fd[OUT] >= 0 || j->fd[ERR] >= 0 || j->fd[STAGE_OUT] >= 0 || j->fd[LOG] >= 0;
}

static void keep_bytes(struct rbuf *b, const char *data, size_t n, unsigned long long max) {
  if (b->len >= max) return;
  if (n > max - b->len) n = (size_t)(max - b->len);
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) return;
    b->data = p;
    b->cap = cap;
  }
  memcpy(b->data + b->len, data, n);
  b->len += n;
}

static struct field bytes(const struct rbuf *b) {
  return (struct field){b->data ? b->data : "", b->len};
}

void finish(struct job *j) {
  char out[24], err[24];
  snprintf(out, sizeof out, "%llu", j->r[OUT].total);
  snprintf(err, sizeof err, "%llu", j->r[ERR].total);
  struct field f[] = {
      text("streams"), text(j->id), text(out), text(err), text(j->overflow ? "1" : "0"),
      bytes(&j->r[OUT]), bytes(&j->r[ERR]), bytes(&j->r[STAGE_OUT]), bytes(&j->r[LOG]),
  };
  send_frame(f, (int)(sizeof f / sizeof f[0]));
  forget(j);
}

// A stage of a pooled sandbox whose end its runbox-init has not reported yet: its
// streams are sent with the end (one reply, one wake-up of the runner), which follows
// at once (its streams end when its processes do).
int awaiting_end(const struct job *j) {
  if (!j->stage_of) return 0;
  const struct job *env = &jobs[j->stage_of - 1];
  return env->used && env->env && env->fd[STAGE_IN] >= 0 && !strcmp(env->stage, j->id);
}

static char chunk[65536];

void on_readable(struct job *j, int i) {
  // A bounded number of reads per wake-up, so one noisy stage cannot starve the others.
  for (int rounds = 0; rounds < 16 && j->fd[i] >= 0; rounds++) {
    ssize_t n = read(j->fd[i], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      close_fd(j, i);
      struct job *to = i == OUT ? partner_of(j) : NULL;
      if (to) relay_end(to);
      return;
    }
    struct rbuf *b = &j->r[i];
    if (i == OUT || i == ERR) {
      size_t before = b->len;
      b->total += (unsigned long long)n;
      keep_bytes(b, chunk, (size_t)n, j->keep);
      if (j->stream && b->len > before) {
        struct field f[] = {text("chunk"), text(j->id), text(i == OUT ? "1" : "2"), {b->data + before, b->len - before}};
        send_frame(f, 4);
      }
      if (i == OUT && j->feeds) relay(j, chunk, (size_t)n);
      // A linked stdout is its partner's input, not output: it does not count toward the flood.
      if (!j->flooded && (j->feeds ? 0 : j->r[OUT].total) + j->r[ERR].total > j->flood) {
        j->flooded = 1;
        reply_text(2, "flood", j->id);
      }
    } else if (i == STAGE_OUT) {
      // Read on past the bound so the writer never blocks, but keep nothing more.
      if (j->overflow || b->len + (size_t)n > j->outmax) j->overflow = 1;
      else keep_bytes(b, chunk, (size_t)n, j->outmax);
    } else {
      keep_bytes(b, chunk, (size_t)n, j->diagmax);
    }
  }
}

void on_writable(struct job *j, int i) {
  struct wbuf *w = &j->w[i];
  while (w->off < w->len) {
    ssize_t n = write(j->fd[i], w->data + w->off, w->len - w->off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n < 0) break;  // EPIPE: it stopped reading
    w->off += (size_t)n;
  }
  // A held stdin waits for more (or its end) once what it had is written.
  if (i == IN && j->hold_in && w->off == w->len) return;
  close_fd(j, i);
}
