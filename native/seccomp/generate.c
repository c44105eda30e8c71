// runbox-seccomp: compiles seccomp/policy.txt into
//   <out>.bpf   — default allow, listed syscalls fail with their errno, native ABI only
//                 (i386 and x32 syscalls kill the process); loaded by runbox-init.
//   <out>.kafel — the same policy as an allowlist for nsjail: every native syscall that
//                 libseccomp knows, minus the denied ones, DEFAULT KILL. Being an
//                 allowlist of native numbers it also kills x32 calls, which kafel's own
//                 architecture check lets through.
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

struct rule {
  int nr;
  int err;
  int ns_flags_only;
};

static void die(const char *what, const char *detail) {
  fprintf(stderr, "runbox-seccomp: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(1);
}

static int parse_errno(const char *s) {
  if (!strcmp(s, "EPERM")) return EPERM;
  if (!strcmp(s, "ENOSYS")) return ENOSYS;
  if (!strcmp(s, "EACCES")) return EACCES;
  die("unknown errno in policy", s);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4) die("usage: runbox-seccomp POLICY OUT.bpf OUT.kafel", NULL);
  FILE *in = fopen(argv[1], "r");
  if (!in) die("cannot open policy", argv[1]);

  static struct rule rules[MAX_SYSCALL_NR];
  int nrules = 0;
  char line[512];
  int lineno = 0;
  while (fgets(line, sizeof line, in)) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    char name[128], err[32], cond[64];
    int n = sscanf(line, "%127s %31s %63s", name, err, cond);
    if (n <= 0) continue;
    if (n < 2) die("policy line needs a syscall and an errno", name);
    int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);
    if (nr == __NR_SCMP_ERROR) die("unknown syscall in policy", name);
    if (nr < 0) continue;  // not a syscall on this architecture
    if (nrules == MAX_SYSCALL_NR) die("too many rules", NULL);
    rules[nrules].nr = nr;
    rules[nrules].err = parse_errno(err);
    rules[nrules].ns_flags_only = 0;
    if (n == 3) {
      if (strcmp(cond, "if-namespace-flags") != 0) die("unknown condition", cond);
      rules[nrules].ns_flags_only = 1;
    }
    nrules++;
  }
  fclose(in);

  // (a) BPF for runbox-init.
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) die("seccomp_init failed", NULL);
  if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0) die("cannot set bad-arch action", NULL);
  for (int i = 0; i < nrules; i++) {
    int rc;
    if (rules[i].ns_flags_only) {
      for (size_t f = 0; f < sizeof NS_FLAGS / sizeof NS_FLAGS[0]; f++) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(rules[i].err), rules[i].nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS[f], NS_FLAGS[f]));
        if (rc) die("seccomp_rule_add (flags) failed", strerror(-rc));
      }
    } else {
      rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(rules[i].err), rules[i].nr, 0);
      if (rc) die("seccomp_rule_add failed", strerror(-rc));
    }
  }
  int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) die("cannot write", argv[2]);
  if (seccomp_export_bpf(ctx, fd) != 0) die("seccomp_export_bpf failed", NULL);
  close(fd);
  seccomp_release(ctx);

  // (b) kafel allowlist for nsjail.
  FILE *out = fopen(argv[3], "w");
  if (!out) die("cannot write", argv[3]);
  fprintf(out, "POLICY runbox {\n");
  for (int i = 0; i < nrules; i++) {
    if (rules[i].ns_flags_only) continue;
    fprintf(out, "  ERRNO(%d) { SYSCALL[%d] },\n", rules[i].err, rules[i].nr);
  }
  for (int i = 0; i < nrules; i++) {
    if (!rules[i].ns_flags_only) continue;
    fprintf(out, "  ALLOW { SYSCALL[%d](flags) { (flags & 0x%lx) == 0 } },\n", rules[i].nr, NS_MASK);
    fprintf(out, "  ERRNO(%d) { SYSCALL[%d] },\n", rules[i].err, rules[i].nr);
  }
  fprintf(out, "  ALLOW {\n");
  int first = 1;
  for (int nr = 0; nr < MAX_SYSCALL_NR; nr++) {
    char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
    if (!name) continue;
    free(name);
    int denied = 0;
    for (int i = 0; i < nrules; i++) denied |= rules[i].nr == nr;
    if (denied) continue;
    fprintf(out, "%s    SYSCALL[%d]", first ? "" : ",\n", nr);
    first = 0;
  }
  fprintf(out, "\n  }\n}\nUSE runbox DEFAULT KILL\n");
  if (fclose(out) != 0) die("cannot write", argv[3]);
  return 0;
}
