// The stage archive that runbox-init reads on fd 3 and writes on fd 4. All integers
// are big-endian.
//   'P' u32 size, then size bytes: u32 argc, u32 envc, u32 collectc, u32 collect_max,
//       u32 collect_files, then argc + envc + collectc NUL-terminated strings (the
//       program's argv, its environment as NAME=VALUE, the paths to collect)
//                                                      the program: first on fd 3
//   'D' u16 path_len, path, u32 mode                   a workspace directory (fd 3)
//   'F' u16 path_len, path, u32 mode, u32 size, bytes  a workspace file (fd 3 and 4)
//   'O' u16 path_len, path, u32 size                   a file to collect left out: past
//                                                      collect_max bytes or collect_files
//                                                      files, or its path is not UTF-8 (fd 4)
//   'T' u32 high, u32 low                              when the program ended: CLOCK_MONOTONIC
//                                                      nanoseconds as init reaped it (fd 4,
//                                                      first, just before the end record)
//   'X' u32 code                                       the program exited with code
//   'S' u32 signal                                     the program was killed by signal
// On fd 4 the end record ('X' or 'S') comes first, then the collected files.
// Paths are relative to the workspace: segments of 1..255 bytes separated by '/', no
// NUL, no "." or ".." segment, at most ARCHIVE_PATH_MAX bytes. A file's or directory's
// missing parents are made. A path to collect is a file, or ends in '/' for every
// regular file below that directory ("./": the whole workspace), taken in byte order
// of their paths; files are sent while both bounds hold, the rest listed with 'O'. A
// file whose path is not UTF-8 is listed with 'O' and counts toward neither bound.
#ifndef RUNBOX_ARCHIVE_H
#define RUNBOX_ARCHIVE_H
#define ARCHIVE_PROGRAM 'P'
#define ARCHIVE_DIR 'D'
#define ARCHIVE_FILE 'F'
#define ARCHIVE_OMITTED 'O'
#define ARCHIVE_ENDED_AT 'T'
#define ARCHIVE_EXITED 'X'
#define ARCHIVE_SIGNALED 'S'
#define ARCHIVE_NAME_MAX 255
#define ARCHIVE_PATH_MAX 4095
// The program record's bound, and its fixed part.
#define ARCHIVE_PROGRAM_MAX (1u << 20)
#define ARCHIVE_PROGRAM_HEAD 20
// Entries (files and directories) a directory collect looks at, and how deep it goes.
#define ARCHIVE_WALK_MAX 4096
#define ARCHIVE_WALK_DEPTH 32
#endif
