// The job table: each launcher started and each stage entered is a job, named by the
// runner's ID; and the small parsers of request fields.
#include "forkserver.h"

struct job jobs[MAX_JOBS];

int digits_only(const char *s) {
  if (!*s || strlen(s) >= sizeof jobs[0].id) return 0;
  for (; *s; s++)
    if (*s < '0' || *s > '9') return 0;
  return 1;
}

struct job *find(const char *id) {
  for (int k = 0; k < MAX_JOBS; k++)
    if (jobs[k].used && !strcmp(jobs[k].id, id)) return &jobs[k];
  return NULL;
}

void close_fd(struct job *j, int i) {
  if (j->fd[i] >= 0) close(j->fd[i]);
  j->fd[i] = -1;
  free(j->w[i].data);
  j->w[i].data = NULL;
  j->w[i].len = j->w[i].off = 0;
}

void free_stage_info(struct job *j) {
  for (int k = 0; k < j->ndirs; k++) free(j->dirs[k]);
  for (int k = 0; k < j->ncounts; k++) {
    free(j->counts[k]);
    free(j->before[k]);
  }
  for (int k = 0; k < j->ndrains; k++) free(j->drains[k]);
  free(j->usage);
  free(j->settle);
  j->usage = j->settle = NULL;
  j->ndirs = j->ncounts = j->ndrains = 0;
}

void forget(struct job *j) {
  free_stage_info(j);
  free(j->watch);
  for (int i = 0; i < PIPES; i++) {
    close_fd(j, i);
    free(j->r[i].data);
  }
  memset(j, 0, sizeof *j);
}

void failed(const char *id, int e, const char *step) {
  char num[16];
  snprintf(num, sizeof num, "%d", e);
  reply_text(4, "failed", id, num, step ? step : "");
}

// An unused job for request `id`, or NULL once the failure is answered (none left: EAGAIN;
// `id` already in use: EEXIST).
struct job *free_job(const char *id) {
  struct job *j = NULL;
  for (int k = 0; k < MAX_JOBS && !j; k++)
    if (!jobs[k].used) j = &jobs[k];
  if (!j || find(id)) {
    failed(id, j ? EEXIST : EAGAIN, "request");
    return NULL;
  }
  return j;
}

// A count field followed by that many fields, from f[*at]; -1 when malformed.
int counted(char **f, int nf, int *at, int max) {
  if (*at >= nf) return -1;
  char *end;
  long n = strtol(f[*at], &end, 10);
  if (*end || !*f[*at] || n < 0 || n > max || *at + 1 + n > nf) return -1;
  int first = *at + 1;
  *at = first + (int)n;
  return first;
}

int parse_id(const char *s, long *out) {
  if (!*s) {
    *out = -1;
    return 0;
  }
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  // Never root: the ids are the slot's.
  if (errno || *end || v <= 0 || v > 0x7fffffff) return -1;
  *out = v;
  return 0;
}
