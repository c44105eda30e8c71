// What the program may do: the seccomp filter, no capabilities, speculation
// controls, its CPUs.
#include "init.h"

// The filter, read once (a pooled init reads it before its first stage).
static struct sock_filter seccomp_insns[BPF_MAXINSNS];
static unsigned short seccomp_len;

void read_seccomp(void) {
  int fd = open(SECCOMP_FILE, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open", SECCOMP_FILE);
  ssize_t n = read(fd, seccomp_insns, sizeof seccomp_insns);
  close(fd);
  if (n <= 0 || n % sizeof(struct sock_filter) != 0) {
    errno = 0;
    fail("bad seccomp program", SECCOMP_FILE);
  }
  seccomp_len = (unsigned short)(n / sizeof(struct sock_filter));
}

void load_seccomp(void) {
  if (!seccomp_len) read_seccomp();
  struct sock_fprog prog = {.len = seccomp_len, .filter = seccomp_insns};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs", NULL);
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) fail("cannot load seccomp filter", NULL);
}

// "0,1" or "2-3,5": the CPUs to keep the program to.
void parse_cpus(const char *list, cpu_set_t *set) {
  CPU_ZERO(set);
  const char *p = list;
  while (*p) {
    char *end;
    long a = strtol(p, &end, 10), b = a;
    if (end == p || a < 0 || a >= CPU_SETSIZE) goto bad;
    if (*end == '-') {
      p = end + 1;
      b = strtol(p, &end, 10);
      if (end == p || b < a || b >= CPU_SETSIZE) goto bad;
    }
    for (long c = a; c <= b; c++) CPU_SET((int)c, set);
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') goto bad;
  }
  if (CPU_COUNT(set) > 0) return;
bad:
  errno = 0;
  fail("bad --cpus list", list);
}

// Every capability goes: effective, permitted, inheritable, ambient and the bounding
// set. A launcher that runs unprivileged (bubblewrap) grants init CAP_SYS_ADMIN in the
// sandbox's user namespace for the devpts mount only.
// A pooled init empties its bounding set once (it limits only what an exec could gain,
// not what init holds), so that its stages' children start with it empty.
int bounding_set_empty;

void drop_bounding_set(void) {
  // Dropping from the bounding set needs CAP_SETPCAP; without it (nsjail drops every
  // capability itself) nothing could be regained anyway: no_new_privs, nosuid mounts.
  for (int cap = 0; cap <= 63; cap++)
    if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
}

void drop_capabilities(void) {
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (!bounding_set_empty) drop_bounding_set();
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &hdr, data) != 0) fail("cannot drop capabilities", NULL);
}

// Speculative-execution mitigations for the program, where the CPU and kernel offer
// them (ENXIO/EINVAL elsewhere): no speculative store bypass, no indirect branch
// speculation shared with other programs. FORCE: the program cannot undo them.
void mitigate_speculation(void) {
  prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, PR_SPEC_FORCE_DISABLE, 0, 0);
  prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_INDIRECT_BRANCH, PR_SPEC_FORCE_DISABLE, 0, 0);
}
