// One stage's life, start to end record.
#include "init.h"

// One stage: the program from fd 3, its files, the filter, the program itself with its
// stdio relayed, its end and the collected files on fd 4. Returns the exit code.
int stage(int direct) {
  // The program (same uid) must not reach fd 4 through /proc/<init>/fd.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  signal(SIGPIPE, SIG_IGN);
  struct program prog;
  read_program(&prog);
  stage_in();
  mitigate_speculation();
  load_seccomp();

  int status = direct ? spawn_direct(&prog) : spawn_relayed(&prog);
  // The end goes first, its time and then how it ended: whatever happens while the files
  // are collected, the runner has the program's outcome.
  unsigned char at[9] = {ARCHIVE_ENDED_AT};
  put32(at + 1, (uint32_t)(program_ended_ns >> 32));
  put32(at + 5, (uint32_t)program_ended_ns);
  write_full(STAGE_OUT_FD, at, sizeof at);
  unsigned char rec[5];
  int code;
  if (WIFSIGNALED(status)) {
    rec[0] = ARCHIVE_SIGNALED;
    put32(rec + 1, (uint32_t)WTERMSIG(status));
    code = 128 + WTERMSIG(status);
  } else {
    rec[0] = ARCHIVE_EXITED;
    put32(rec + 1, (uint32_t)WEXITSTATUS(status));
    code = WEXITSTATUS(status);
  }
  write_full(STAGE_OUT_FD, rec, sizeof rec);
  collect(prog.collect, prog.collect_count, prog.collect_max, prog.collect_files);
  free_program(&prog);
  return code;
}
