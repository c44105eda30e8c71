// The stage archive that runbox-init reads on fd 3 and writes on fd 4. All integers
// are big-endian.
//   'P' u32 size, then size bytes: u32 argc, u32 envc, u32 collectc, u32 collect_max,
//       then argc + envc + collectc NUL-terminated strings (the program's argv, its
//       environment as NAME=VALUE, the names to collect)  the program: first on fd 3
//   'F' u16 name_len, name, u32 mode, u32 size, bytes   a workspace file
//   'X' u32 code                                       the program exited with code
//   'S' u32 signal                                     the program was killed by signal
// Names are plain: 1..255 bytes, no '/', no NUL, not "." or "..".
#ifndef RUNBOX_ARCHIVE_H
#define RUNBOX_ARCHIVE_H
#define ARCHIVE_PROGRAM 'P'
#define ARCHIVE_FILE 'F'
#define ARCHIVE_EXITED 'X'
#define ARCHIVE_SIGNALED 'S'
#define ARCHIVE_NAME_MAX 255
// The program record's bound.
#define ARCHIVE_PROGRAM_MAX (1u << 20)
#endif
