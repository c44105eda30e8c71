// The stage archive (archive.h): the program and its files read from fd 3 and
// created in the workspace, the collected files and the end written to fd 4.
#include "init.h"

int valid_name(const char *name, size_t len) {
  if (len == 0 || len > ARCHIVE_NAME_MAX) return 0;
  if (memchr(name, '/', len) || memchr(name, 0, len)) return 0;
  if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.')) return 0;
  return 1;
}

// Reads exactly n bytes; 0 at a clean end of stream before the first byte.
int read_full(int fd, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail("reading the stage archive", NULL);
    if (r == 0) {
      if (got == 0) return 0;
      errno = 0;
      fail("truncated stage archive", NULL);
    }
    got += (size_t)r;
  }
  return 1;
}

void write_full(int fd, const void *buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = write(fd, (const char *)buf + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // the runner went away: nothing more to report
    done += (size_t)w;
  }
}

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
void put32(unsigned char *p, uint32_t v) {
  p[0] = v >> 24;
  p[1] = v >> 16;
  p[2] = v >> 8;
  p[3] = v;
}

static void bad_program(void) {
  errno = 0;
  fail("malformed program record in stage archive", NULL);
}

// Points `out` at the next `n` NUL-terminated strings of buf[*at..len).
static void take_strings(char *buf, size_t len, size_t *at, uint32_t n, char **out) {
  for (uint32_t k = 0; k < n; k++) {
    char *end = *at < len ? memchr(buf + *at, 0, len - *at) : NULL;
    if (!end) bad_program();
    out[k] = buf + *at;
    *at = (size_t)(end - buf) + 1;
  }
  out[n] = NULL;
}

void read_program(struct program *p) {
  unsigned char type;
  if (!read_full(STAGE_IN_FD, &type, 1)) _exit(0);  // called off before it began
  if (type != ARCHIVE_PROGRAM) bad_program();
  unsigned char hdr[4];
  read_full(STAGE_IN_FD, hdr, 4);
  uint32_t size = be32(hdr);
  if (size < 16 || size > ARCHIVE_PROGRAM_MAX) bad_program();
  char *buf = malloc(size);
  if (!buf) fail("out of memory", NULL);
  p->record = buf;
  read_full(STAGE_IN_FD, buf, size);
  uint32_t argc = be32((unsigned char *)buf), envc = be32((unsigned char *)buf + 4), collectc = be32((unsigned char *)buf + 8);
  p->collect_max = be32((unsigned char *)buf + 12);
  // Each string takes at least its NUL: counts past the record's size are malformed.
  if (argc == 0 || argc > size || envc > size || collectc > size || argc + envc + collectc > size - 16) bad_program();
  p->argv = calloc(argc + 1, sizeof *p->argv);
  p->env = calloc(envc + 1, sizeof *p->env);
  p->collect = calloc(collectc + 1, sizeof *p->collect);
  if (!p->argv || !p->env || !p->collect) fail("out of memory", NULL);
  size_t at = 16;
  take_strings(buf, size, &at, argc, p->argv);
  take_strings(buf, size, &at, envc, p->env);
  take_strings(buf, size, &at, collectc, p->collect);
  if (at != size) bad_program();
  p->collect_count = (int)collectc;
}

// A pooled stage's child shares init's memory (see serve): what it allocates is freed.
void free_program(struct program *p) {
  free(p->argv);
  free(p->env);
  free(p->collect);
  free(p->record);
}

// The workspace files: the rest of the stage archive.
void stage_in(void) {
  for (;;) {
    unsigned char type;
    if (!read_full(STAGE_IN_FD, &type, 1)) break;
    if (type != ARCHIVE_FILE) {
      errno = 0;
      fail("unknown record in stage archive", NULL);
    }
    unsigned char hdr[2];
    read_full(STAGE_IN_FD, hdr, 2);
    size_t len = (size_t)hdr[0] << 8 | hdr[1];
    char name[ARCHIVE_NAME_MAX + 1];
    if (len > ARCHIVE_NAME_MAX) {
      errno = 0;
      fail("file name too long in stage archive", NULL);
    }
    read_full(STAGE_IN_FD, name, len);
    name[len] = 0;
    if (!valid_name(name, len)) {
      errno = 0;
      fail("bad file name in stage archive", name);
    }
    unsigned char ms[8];
    read_full(STAGE_IN_FD, ms, 8);
    mode_t mode = be32(ms) & 0777;
    uint32_t size = be32(ms + 4);
    int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) fail("cannot create", name);
    char buf[65536];
    while (size > 0) {
      size_t n = size < sizeof buf ? size : sizeof buf;
      read_full(STAGE_IN_FD, buf, n);
      size_t done = 0;
      while (done < n) {
        ssize_t w = write(fd, buf + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fail("cannot write", name);
        done += (size_t)w;
      }
      size -= n;
    }
    if (fchmod(fd, mode) != 0) fail("cannot chmod", name);
    close(fd);
  }
  close(STAGE_IN_FD);
}

void collect(char **names, int count, unsigned long long max_total) {
  unsigned long long total = 0;
  for (int i = 0; i < count; i++) {
    const char *name = names[i];
    size_t len = strlen(name);
    if (!valid_name(name, len)) continue;
    int fd = open(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (unsigned long long)st.st_size > max_total - total) {
      close(fd);
      continue;
    }
    // Copied through a buffer made once, never read whole into memory: a pooled stage's
    // child shares init's memory, where a file's size would stay as init's high-water
    // mark and in the job's charge after the stage.
    static char buf[65536];
    uint32_t size = (uint32_t)st.st_size;
    unsigned char hdr[3 + ARCHIVE_NAME_MAX + 8];
    hdr[0] = ARCHIVE_FILE;
    hdr[1] = (unsigned char)(len >> 8);
    hdr[2] = (unsigned char)len;
    memcpy(hdr + 3, name, len);
    put32(hdr + 3 + len, st.st_mode & 0777);
    put32(hdr + 7 + len, size);
    write_full(STAGE_OUT_FD, hdr, 11 + len);
    // Nothing of the stage runs any more, so the file keeps its size; were it shorter
    // now, zeros keep the archive whole.
    uint32_t sent = 0;
    while (sent < size) {
      size_t want = size - sent < sizeof buf ? size - sent : sizeof buf;
      ssize_t r = read(fd, buf, want);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        memset(buf, 0, want);
        r = (ssize_t)want;
      }
      write_full(STAGE_OUT_FD, buf, (size_t)r);
      sent += (uint32_t)r;
    }
    close(fd);
    total += size;
  }
}
