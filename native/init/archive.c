// The stage archive (archive.h): the program and its files read from fd 3 and
// created in the workspace, the collected files and the end written to fd 4.
#include "init.h"

// A workspace path: relative, segments of 1..ARCHIVE_NAME_MAX bytes, none "." or "..",
// no NUL, at most ARCHIVE_PATH_MAX bytes.
int valid_path(const char *path, size_t len) {
  if (len == 0 || len > ARCHIVE_PATH_MAX || memchr(path, 0, len)) return 0;
  size_t seg = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && path[i] != '/') continue;
    size_t n = i - seg;
    if (n == 0 || n > ARCHIVE_NAME_MAX) return 0;
    if ((n == 1 && path[seg] == '.') || (n == 2 && path[seg] == '.' && path[seg + 1] == '.')) return 0;
    seg = i + 1;
  }
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
  if (size < ARCHIVE_PROGRAM_HEAD || size > ARCHIVE_PROGRAM_MAX) bad_program();
  char *buf = malloc(size);
  if (!buf) fail("out of memory", NULL);
  p->record = buf;
  read_full(STAGE_IN_FD, buf, size);
  uint32_t argc = be32((unsigned char *)buf), envc = be32((unsigned char *)buf + 4), collectc = be32((unsigned char *)buf + 8);
  p->collect_max = be32((unsigned char *)buf + 12);
  p->collect_files = be32((unsigned char *)buf + 16);
  // Each string takes at least its NUL: counts past the record's size are malformed.
  if (argc == 0 || argc > size || envc > size || collectc > size || argc + envc + collectc > size - ARCHIVE_PROGRAM_HEAD) bad_program();
  p->argv = calloc(argc + 1, sizeof *p->argv);
  p->env = calloc(envc + 1, sizeof *p->env);
  p->collect = calloc(collectc + 1, sizeof *p->collect);
  if (!p->argv || !p->env || !p->collect) fail("out of memory", NULL);
  size_t at = ARCHIVE_PROGRAM_HEAD;
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

static void bad_record(const char *what, const char *detail) {
  errno = 0;
  fail(what, detail);
}

// The directory that holds `path` (a valid path, changed in place while walking it),
// opened below the workspace (the working directory) one segment at a time, never
// following a symlink: a path through one fails. With `make`, missing directories are
// made on the way. Returns an O_PATH descriptor, or -1; *leaf is the last segment.
static int open_parent(char *path, int make, const char **leaf) {
  int dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  char *seg = path;
  for (;;) {
    char *slash = strchr(seg, '/');
    if (!slash || dir < 0) {
      *leaf = seg;
      return dir;
    }
    *slash = 0;
    if (make && mkdirat(dir, seg, 0755) != 0 && errno != EEXIST) {
      *slash = '/';
      close(dir);
      return -1;
    }
    int next = openat(dir, seg, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    *slash = '/';
    close(dir);
    dir = next;
    seg = slash + 1;
  }
}

// A record's path (u16 length, bytes), checked.
static void read_path(char *path, const char *what) {
  unsigned char hdr[2];
  read_full(STAGE_IN_FD, hdr, 2);
  size_t len = (size_t)hdr[0] << 8 | hdr[1];
  if (len > ARCHIVE_PATH_MAX) bad_record("path too long in stage archive", what);
  read_full(STAGE_IN_FD, path, len);
  path[len] = 0;
  if (!valid_path(path, len)) bad_record("bad path in stage archive", path);
}

// A directory record: the directory and its parents, an existing one kept.
static void make_dir(char *path, mode_t mode) {
  const char *leaf;
  int dir = open_parent(path, 1, &leaf);
  if (dir < 0) fail("cannot make the parents of", path);
  if (mkdirat(dir, leaf, mode) != 0 && errno != EEXIST) fail("cannot make", path);
  int made = openat(dir, leaf, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (made < 0) fail("not a directory:", path);
  close(made);
  close(dir);
}

// A file record: the file, new (nothing is replaced), with its parents.
static void make_file(char *path, mode_t mode, uint32_t size) {
  const char *leaf;
  int dir = open_parent(path, 1, &leaf);
  if (dir < 0) fail("cannot make the parents of", path);
  int fd = openat(dir, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) fail("cannot create", path);
  close(dir);
  char buf[65536];
  while (size > 0) {
    size_t n = size < sizeof buf ? size : sizeof buf;
    read_full(STAGE_IN_FD, buf, n);
    size_t done = 0;
    while (done < n) {
      ssize_t w = write(fd, buf + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail("cannot write", path);
      done += (size_t)w;
    }
    size -= n;
  }
  if (fchmod(fd, mode) != 0) fail("cannot chmod", path);
  close(fd);
}

// The workspace's directories and files: the rest of the stage archive.
void stage_in(void) {
  static char path[ARCHIVE_PATH_MAX + 1];
  for (;;) {
    unsigned char type;
    if (!read_full(STAGE_IN_FD, &type, 1)) break;
    if (type != ARCHIVE_FILE && type != ARCHIVE_DIR) bad_record("unknown record in stage archive", NULL);
    read_path(path, type == ARCHIVE_FILE ? "file" : "directory");
    unsigned char ms[8];
    read_full(STAGE_IN_FD, ms, type == ARCHIVE_FILE ? 8 : 4);
    mode_t mode = be32(ms) & 0777;
    if (type == ARCHIVE_DIR) make_dir(path, mode);
    else make_file(path, mode, be32(ms + 4));
  }
  close(STAGE_IN_FD);
}

// ---- collecting files ------------------------------------------------------------------
// After the program has ended (nothing of it runs any more), but everything in the
// workspace is its doing: paths are opened segment by segment without following a
// symlink, only regular files are taken, and a directory walk is bounded in entries,
// depth and path length.

struct found {
  char *path;
  unsigned long long size;
};

struct walk {
  struct found *list;
  size_t count, cap;
  // Entries looked at by every walk of this stage: ARCHIVE_WALK_MAX at most.
  size_t seen;
};

static void add_found(struct walk *w, const char *path, size_t len, unsigned long long size) {
  if (w->count == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 64;
    struct found *list = realloc(w->list, cap * sizeof *list);
    if (!list) return;
    w->list = list;
    w->cap = cap;
  }
  char *copy = malloc(len + 1);
  if (!copy) return;
  memcpy(copy, path, len + 1);
  w->list[w->count++] = (struct found){.path = copy, .size = size};
}

// Every regular file below the directory open on `fd` (closed here), whose path is
// path[0..len) (empty, or ending in '/').
static void walk_dir(struct walk *w, int fd, char *path, size_t len, int depth) {
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL && w->seen < ARCHIVE_WALK_MAX) {
    const char *name = e->d_name;
    if (!strcmp(name, ".") || !strcmp(name, "..")) continue;
    w->seen++;
    size_t n = strlen(name);
    if (len + n + 1 > ARCHIVE_PATH_MAX) continue;
    struct stat st;
    if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    memcpy(path + len, name, n + 1);
    if (S_ISREG(st.st_mode)) {
      add_found(w, path, len + n, (unsigned long long)st.st_size);
    } else if (S_ISDIR(st.st_mode) && depth < ARCHIVE_WALK_DEPTH) {
      int sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) {
        path[len + n] = '/';
        path[len + n + 1] = 0;
        walk_dir(w, sub, path, len + n + 1, depth + 1);
      }
    }
    path[len] = 0;
  }
  closedir(d);
}

static int by_path(const void *a, const void *b) { return strcmp(((const struct found *)a)->path, ((const struct found *)b)->path); }

// A directory to collect, `name` ending in '/' ("./": the workspace): its files, sorted.
static void find_below(struct walk *w, const char *name, size_t len) {
  static char path[ARCHIVE_PATH_MAX + 2];
  int fd;
  if (len == 2 && name[0] == '.') {
    fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    path[0] = 0;
    len = 0;
  } else {
    if (len - 1 > ARCHIVE_PATH_MAX || !valid_path(name, len - 1)) return;
    memcpy(path, name, len + 1);
    path[len - 1] = 0;
    const char *leaf;
    int parent = open_parent(path, 0, &leaf);
    if (parent < 0) return;
    fd = openat(parent, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(parent);
    path[len - 1] = '/';
  }
  if (fd < 0) return;
  size_t from = w->count;
  walk_dir(w, fd, path, len, 0);
  qsort(w->list + from, w->count - from, sizeof *w->list, by_path);
}

// Opens a file found (or named) for reading, below the workspace; -1 unless it is a regular file.
static int open_found(char *path, struct stat *st) {
  const char *leaf;
  int dir = open_parent(path, 0, &leaf);
  if (dir < 0) return -1;
  int fd = openat(dir, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  close(dir);
  if (fd >= 0 && (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))) {
    close(fd);
    fd = -1;
  }
  return fd;
}

// Whether s[0..len) is well-formed UTF-8 (Unicode table 3-7), as the runner decodes it
// (src/sandbox/archive.ts): a name that is not cannot be sent on as text.
static int utf8(const unsigned char *s, size_t len) {
  for (size_t i = 0; i < len;) {
    unsigned char b = s[i];
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf;
    if (b < 0x80) n = 1;
    else if (b >= 0xc2 && b <= 0xdf) n = 2;
    else if (b >= 0xe0 && b <= 0xef) n = 3, lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
    else if (b >= 0xf0 && b <= 0xf4) n = 4, lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
    else return 0;
    if (i + n > len) return 0;
    for (size_t k = 1; k < n; k++) {
      if (s[i + k] < (k == 1 ? lo : 0x80) || s[i + k] > (k == 1 ? hi : 0xbf)) return 0;
    }
    i += n;
  }
  return 1;
}

static void send_omitted(const char *path, size_t len, unsigned long long size) {
  unsigned char hdr[3 + ARCHIVE_PATH_MAX + 4];
  hdr[0] = ARCHIVE_OMITTED;
  hdr[1] = (unsigned char)(len >> 8);
  hdr[2] = (unsigned char)len;
  memcpy(hdr + 3, path, len);
  put32(hdr + 3 + len, size > UINT32_MAX ? UINT32_MAX : (uint32_t)size);
  write_full(STAGE_OUT_FD, hdr, 7 + len);
}

void collect(char **names, int count, unsigned long long max_total, unsigned long long max_files) {
  struct walk w = {0};
  for (int i = 0; i < count; i++) {
    size_t len = strlen(names[i]);
    if (len > 0 && names[i][len - 1] == '/') find_below(&w, names[i], len);
    else if (valid_path(names[i], len)) add_found(&w, names[i], len, 0);
  }
  unsigned long long total = 0, files = 0;
  int full = 0;
  for (size_t k = 0; k < w.count; k++) {
    char *path = w.list[k].path;
    size_t len = strlen(path);
    struct stat st;
    int fd = open_found(path, &st);
    if (fd < 0) {
      free(path);
      continue;
    }
    // Listed only, outside the bounds: a name the runner cannot carry.
    if (!utf8((const unsigned char *)path, len)) {
      close(fd);
      send_omitted(path, len, (unsigned long long)st.st_size);
      free(path);
      continue;
    }
    // Taken in order while both bounds hold; from the first that does not fit, listed only.
    uint32_t size = (uint32_t)st.st_size;
    full = full || files >= max_files || size > max_total - total;
    if (full) {
      close(fd);
      send_omitted(path, len, (unsigned long long)st.st_size);
      free(path);
      continue;
    }
    // Copied through a buffer made once, never read whole into memory: a pooled stage's
    // child shares init's memory, where a file's size would stay as init's high-water
    // mark and in the job's charge after the stage.
    static char buf[65536];
    static unsigned char hdr[3 + ARCHIVE_PATH_MAX + 8];
    hdr[0] = ARCHIVE_FILE;
    hdr[1] = (unsigned char)(len >> 8);
    hdr[2] = (unsigned char)len;
    memcpy(hdr + 3, path, len);
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
    files++;
    free(path);
  }
  free(w.list);
}
