// runbox-seccomp: compiles seccomp/policy.txt into one policy, written twice:
//   <out>.bpf   — for runbox-init, which loads it under every launcher;
//   <out>.kafel — the same decisions in kafel's language, for nsjail's own filter.
// The one rule, for both:
//   - a native (x86-64) syscall that libseccomp names and the policy does not list: allowed;
//   - a listed syscall: fails with its errno (under its condition, if any);
//   - any other native number (gaps, syscalls newer than libseccomp, nonsense): ENOSYS,
//     as the kernel itself answers an unknown number, so libc falls back;
//   - foreign ABIs (i386 `int 0x80`, x32): the whole process is killed (KILL_PROCESS).
// kafel does not see the x32 bit and kills only the calling thread on a foreign
// architecture; stacked with the BPF filter (which runbox-init always loads) the
// strictest action wins, so under nsjail too the process dies.
// Usage: runbox-seccomp POLICY OUT.bpf OUT.kafel
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// CLONE_NEWTIME | CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |
// CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
static const unsigned long NS_FLAGS[] = {0x80, 0x20000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000};
#define NS_MASK 0x7E020080UL
#define MAX_SYSCALL_NR 1024
#define MAX_VALUES 8

enum condition { ALWAYS, IF_NAMESPACE_FLAGS, UNLESS_FAMILY, IF_ARG_BITS };

struct rule {
  int nr;
  int err;
  enum condition cond;
  // UNLESS_FAMILY: the first argument values that are allowed; every other value fails.
  unsigned long values[MAX_VALUES];
  int nvalues;
  // IF_ARG_BITS: fails when argument `arg` has any bit of `mask` set.
  int arg;
  unsigned long mask;
};

static void die(const char *what, const char *detail) {
  fprintf(stderr, "runbox-seccomp: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(1);
}

static int parse_errno(const char *s) {
  static const struct { const char *name; int err; } table[] = {
      {"EPERM", EPERM}, {"ENOSYS", ENOSYS}, {"EACCES", EACCES}, {"EAFNOSUPPORT", EAFNOSUPPORT},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].name, s)) return table[i].err;
  die("unknown errno in policy", s);
  return 0;
}

static unsigned long parse_family(const char *s) {
  static const struct { const char *name; unsigned long af; } table[] = {{"AF_UNIX", 1}, {"AF_INET", 2}, {"AF_INET6", 10}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].name, s)) return table[i].af;
  die("unknown address family in policy", s);
  return 0;
}

static int is_allowed_value(const struct rule *r, unsigned long v) {
  for (int k = 0; k < r->nvalues; k++)
    if (r->values[k] == v) return 1;
  return 0;
}

#define DEFAULT_ACTION SCMP_ACT_ERRNO(ENOSYS)

static void add(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned count, const struct scmp_arg_cmp *cmp) {
  // libseccomp refuses a rule that only restates the default action (clone3's ENOSYS).
  if (action == DEFAULT_ACTION) return;
  int rc = seccomp_rule_add_array(ctx, action, nr, count, cmp);
  if (rc) die("seccomp_rule_add failed", strerror(-rc));
}

int main(int argc, char **argv) {
  if (argc != 4) die("usage: runbox-seccomp POLICY OUT.bpf OUT.kafel", NULL);
  FILE *in = fopen(argv[1], "r");
  if (!in) die("cannot open policy", argv[1]);

  static struct rule rules[MAX_SYSCALL_NR];
  int nrules = 0;
  char line[512];
  while (fgets(line, sizeof line, in)) {
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    char *save = NULL;
    char *name = strtok_r(line, " \t\n", &save);
    if (!name) continue;
    char *err = strtok_r(NULL, " \t\n", &save);
    if (!err) die("policy line needs a syscall and an errno", name);
    int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);
    if (nr == __NR_SCMP_ERROR) die("unknown syscall in policy", name);
    if (nr < 0) continue;  // not a syscall on this architecture
    if (nrules == MAX_SYSCALL_NR) die("too many rules", NULL);
    struct rule *r = &rules[nrules++];
    memset(r, 0, sizeof *r);
    r->nr = nr;
    r->err = parse_errno(err);
    char *cond = strtok_r(NULL, " \t\n", &save);
    if (!cond) continue;
    if (!strcmp(cond, "if-namespace-flags")) r->cond = IF_NAMESPACE_FLAGS;
    else if (!strcmp(cond, "unless-family")) {
      r->cond = UNLESS_FAMILY;
      for (char *v; (v = strtok_r(NULL, " \t\n,", &save));) {
        if (r->nvalues == MAX_VALUES) die("too many values", name);
        r->values[r->nvalues++] = parse_family(v);
      }
      if (r->nvalues == 0) die("unless-family needs families", name);
    } else if (!strncmp(cond, "if-arg", 6) && cond[6] >= '0' && cond[6] <= '5' && !strcmp(cond + 7, "-bits")) {
      r->cond = IF_ARG_BITS;
      r->arg = cond[6] - '0';
      char *mask = strtok_r(NULL, " \t\n", &save);
      char *end = NULL;
      r->mask = mask ? strtoul(mask, &end, 0) : 0;
      if (!mask || *end || r->mask == 0) die("if-argN-bits needs a non-zero mask", name);
    } else die("unknown condition", cond);
    if (strtok_r(NULL, " \t\n", &save) && r->cond != UNLESS_FAMILY) die("trailing words after condition", name);
  }
  fclose(in);

  // Which native numbers libseccomp names: these, unless listed, are allowed.
  static int listed[MAX_SYSCALL_NR];
  for (int i = 0; i < nrules; i++) listed[rules[i].nr] = 1;
  static int known[MAX_SYSCALL_NR];
  for (int nr = 0; nr < MAX_SYSCALL_NR; nr++) {
    char *n = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
    if (n) known[nr] = 1;
    free(n);
  }

  // (a) BPF for runbox-init.
  scmp_filter_ctx ctx = seccomp_init(DEFAULT_ACTION);
  if (!ctx) die("seccomp_init failed", NULL);
  if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0) die("cannot set bad-arch action", NULL);
  // A binary search over syscall numbers keeps a long allowlist fast (libseccomp >= 2.5).
  seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  for (int nr = 0; nr < MAX_SYSCALL_NR; nr++)
    if (known[nr] && !listed[nr]) add(ctx, SCMP_ACT_ALLOW, nr, 0, NULL);
  for (int i = 0; i < nrules; i++) {
    const struct rule *r = &rules[i];
    uint32_t fail = SCMP_ACT_ERRNO((uint32_t)r->err);
    switch (r->cond) {
      case ALWAYS:
        add(ctx, fail, r->nr, 0, NULL);
        break;
      case IF_NAMESPACE_FLAGS: {
        struct scmp_arg_cmp none = SCMP_A0(SCMP_CMP_MASKED_EQ, NS_MASK, 0);
        add(ctx, SCMP_ACT_ALLOW, r->nr, 1, &none);
        for (size_t f = 0; f < sizeof NS_FLAGS / sizeof NS_FLAGS[0]; f++) {
          struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS[f], NS_FLAGS[f]);
          add(ctx, fail, r->nr, 1, &c);
        }
        break;
      }
      case UNLESS_FAMILY: {
        // Every 64-bit value of the first argument is covered: the allowed ones, each
        // other value up to the largest allowed one, and everything above it.
        unsigned long top = 0;
        for (int k = 0; k < r->nvalues; k++)
          if (r->values[k] > top) top = r->values[k];
        for (unsigned long v = 0; v <= top; v++) {
          struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, v);
          add(ctx, is_allowed_value(r, v) ? SCMP_ACT_ALLOW : fail, r->nr, 1, &c);
        }
        struct scmp_arg_cmp above = SCMP_A0(SCMP_CMP_GT, top);
        add(ctx, fail, r->nr, 1, &above);
        break;
      }
      case IF_ARG_BITS: {
        struct scmp_arg_cmp none = {.arg = (unsigned)r->arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = r->mask, .datum_b = 0};
        add(ctx, SCMP_ACT_ALLOW, r->nr, 1, &none);
        for (int bit = 0; bit < 64; bit++) {
          unsigned long b = 1UL << bit;
          if (!(r->mask & b)) continue;
          struct scmp_arg_cmp c = {.arg = (unsigned)r->arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = b, .datum_b = b};
          add(ctx, fail, r->nr, 1, &c);
        }
        break;
      }
    }
  }
  int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) die("cannot write", argv[2]);
  if (seccomp_export_bpf(ctx, fd) != 0) die("seccomp_export_bpf failed", NULL);
  close(fd);
  seccomp_release(ctx);

  // (b) kafel for nsjail: first matching rule wins.
  FILE *out = fopen(argv[3], "w");
  if (!out) die("cannot write", argv[3]);
  fprintf(out, "POLICY runbox {\n");
  for (int i = 0; i < nrules; i++) {
    const struct rule *r = &rules[i];
    if (r->cond == IF_NAMESPACE_FLAGS) {
      fprintf(out, "  ALLOW { SYSCALL[%d](flags) { (flags & 0x%lx) == 0 } },\n", r->nr, NS_MASK);
    } else if (r->cond == UNLESS_FAMILY) {
      fprintf(out, "  ALLOW { SYSCALL[%d](family) { ", r->nr);
      for (int k = 0; k < r->nvalues; k++) fprintf(out, "%sfamily == %lu", k ? " || " : "", r->values[k]);
      fprintf(out, " } },\n");
    } else if (r->cond == IF_ARG_BITS) {
      fprintf(out, "  ALLOW { SYSCALL[%d](", r->nr);
      for (int a = 0; a <= r->arg; a++) fprintf(out, "%sa%d", a ? ", " : "", a);
      fprintf(out, ") { (a%d & 0x%lx) == 0 } },\n", r->arg, r->mask);
    }
    fprintf(out, "  ERRNO(%d) { SYSCALL[%d] },\n", r->err, r->nr);
  }
  fprintf(out, "  ALLOW {\n");
  int first = 1;
  for (int nr = 0; nr < MAX_SYSCALL_NR; nr++) {
    if (!known[nr] || listed[nr]) continue;
    fprintf(out, "%s    SYSCALL[%d]", first ? "" : ",\n", nr);
    first = 0;
  }
  fprintf(out, "\n  }\n}\nUSE runbox DEFAULT ERRNO(%d)\n", ENOSYS);
  if (fclose(out) != 0) die("cannot write", argv[3]);
  return 0;
}
