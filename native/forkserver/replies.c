// Replies to the runner: length-prefixed frames of fields, gathered per loop turn.
#include "forkserver.h"

static void write_all(const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(1, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) exit(0);  // the runner is gone
    c += w;
    n -= (size_t)w;
  }
}

static void put32(unsigned char *b, uint32_t v) {
  b[0] = (unsigned char)v;
  b[1] = (unsigned char)(v >> 8);
  b[2] = (unsigned char)(v >> 16);
  b[3] = (unsigned char)(v >> 24);
}


// Replies wait here until the end of the loop's turn (flush_replies), so that what one
// turn produces (a stage's streams and its end, say) reaches the runner in one write and
// wakes it once. A reply too large to copy is written at once, after what waits.
#define REPLY_BUFFERED (64 * 1024)
static char *replies;
static size_t replies_len, replies_cap;

void flush_replies(void) {
  if (replies_len) write_all(replies, replies_len);
  replies_len = 0;
}

static void writev_all(struct iovec *iov, int n) {
  while (n > 0) {
    ssize_t w = writev(1, iov, n > IOV_MAX ? IOV_MAX : n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) exit(0);  // the runner is gone
    while (n > 0 && (size_t)w >= iov->iov_len) {
      w -= (ssize_t)iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + w;
      iov->iov_len -= (size_t)w;
    }
  }
}

void send_frame(const struct field *f, int nf) {
  size_t total = 4;
  for (int i = 0; i < nf; i++) total += 4 + f[i].n;
  if (total + 4 <= REPLY_BUFFERED) {
    if (replies_cap - replies_len < total + 4) {
      size_t cap = replies_cap ? replies_cap : REPLY_BUFFERED;
      while (cap - replies_len < total + 4) cap *= 2;
      char *p = realloc(replies, cap);
      if (!p) {
        flush_replies();
        p = replies;
      } else {
        replies = p;
        replies_cap = cap;
      }
    }
    if (replies_cap - replies_len >= total + 4) {
      unsigned char *b = (unsigned char *)replies + replies_len;
      put32(b, (uint32_t)total);
      put32(b + 4, (uint32_t)nf);
      size_t at = 8;
      for (int i = 0; i < nf; i++) {
        put32(b + at, (uint32_t)f[i].n);
        if (f[i].n) memcpy(b + at + 4, f[i].p, f[i].n);
        at += 4 + f[i].n;
      }
      replies_len += at;
      return;
    }
  }
  flush_replies();
  // Head, then each field's length and bytes: one writev, the bytes not copied.
  unsigned char head[8];
  unsigned char lens[MAX_FRAME_FIELDS][4];
  struct iovec iov[1 + 2 * MAX_FRAME_FIELDS];
  int n = 0;
  put32(head, (uint32_t)total);
  put32(head + 4, (uint32_t)nf);
  iov[n++] = (struct iovec){head, 8};
  for (int i = 0; i < nf && i < MAX_FRAME_FIELDS; i++) {
    put32(lens[i], (uint32_t)f[i].n);
    iov[n++] = (struct iovec){lens[i], 4};
    iov[n++] = (struct iovec){(void *)f[i].p, f[i].n};
  }
  writev_all(iov, n);
}

struct field text(const char *s) {
  return (struct field){s, strlen(s)};
}

void reply_text(int n, ...) {
  struct field f[8];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n && i < 8; i++) f[i] = text(va_arg(ap, const char *));
  va_end(ap);
  send_frame(f, n < 8 ? n : 8);
}
