// Shared by runbox-init's files (see main.c for what it does).
#ifndef RUNBOX_INIT_H
#define RUNBOX_INIT_H
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <net/if.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "../archive.h"

#define SECCOMP_FILE "/.runbox/seccomp.bpf"
#define SANDBOX_WORKSPACE "/box"
#define STAGE_IN_FD 3
#define STAGE_OUT_FD 4
// Exit code when the sandbox itself cannot be set up (not the program's doing).
#define INIT_FAILED 126
#define EXEC_FAILED 127

// The program, from the stage archive's first record.
struct program {
  char *record;  // the strings below point into it
  char **argv, **env, **collect;
  int collect_count;
  // Bounds of what comes back: bytes and files.
  unsigned long long collect_max, collect_files;
};

// main.c
void fail(const char *what, const char *detail);

// archive.c: the stage archive on fds 3 and 4
int valid_path(const char *path, size_t len);
int read_full(int fd, void *buf, size_t n);
void write_full(int fd, const void *buf, size_t n);
void put32(unsigned char *p, uint32_t v);
void read_program(struct program *p);
void free_program(struct program *p);
void stage_in(void);
void collect(char **names, int count, unsigned long long max_total, unsigned long long max_files);

// confine.c: what the program may do
extern int bounding_set_empty;
void read_seccomp(void);
void load_seccomp(void);
void parse_cpus(const char *list, cpu_set_t *set);
void drop_bounding_set(void);
void drop_capabilities(void);
void mitigate_speculation(void);

// program.c: starting the program and waiting for its end
char *guarded_stack(size_t size, const char *what);
int spawn_direct(struct program *p);
int spawn_relayed(struct program *p);
// When the program was reaped (CLOCK_MONOTONIC ns): which of two linked stages ended first.
extern uint64_t program_ended_ns;

// stage.c: one stage, start to end record
int stage(int direct);

// pool.c: a pooled sandbox, stage after stage
extern unsigned long long pool_workspace, pool_tmp, pool_shm;
extern const char *pool_devpts;
int serve(void);

#endif
