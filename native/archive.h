// The stage archive that runbox-init reads on fd 3 and writes on fd 4. All integers
// are big-endian.
//   'F' u16 name_len, name, u32 mode, u32 size, bytes   a workspace file
//   'X' u32 code                                       the program exited with code
//   'S' u32 signal                                     the program was killed by signal
// Names are plain: 1..255 bytes, no '/', no NUL, not "." or "..".
#ifndef RUNBOX_ARCHIVE_H
#define RUNBOX_ARCHIVE_H
#define ARCHIVE_FILE 'F'
#define ARCHIVE_EXITED 'X'
#define ARCHIVE_SIGNALED 'S'
#define ARCHIVE_NAME_MAX 255
#endif
