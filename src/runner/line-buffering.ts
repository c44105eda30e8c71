import { existsSync } from 'node:fs';
import { join } from 'node:path';

// An interactive run should read like a terminal session: a prompt shows before the
// program waits for its answer. Its stdin and stdout are pipes, though, so C's stdio
// would keep `printf("name? ")` in its buffer until the program ends. coreutils'
// libstdbuf (in every image: debootstrap's minbase has coreutils) makes stdout and
// stdin line-buffered, as on a terminal: each line goes out when written, and a read
// of stdin sends a pending prompt first (glibc flushes a line-buffered stdout when a
// line-buffered stdin needs input). Programs that do not use C's stdio, and static
// ones, are unaffected; isatty() stays false.

const LIBSTDBUF = '/usr/libexec/coreutils/libstdbuf.so';

/** The environment that line-buffers C stdio in an interactive run; empty when the image has no libstdbuf. */
export function lineBufferedEnv(rootfs: string): Record<string, string> {
  if (!existsSync(join(rootfs, LIBSTDBUF))) return {};
  return { LD_PRELOAD: LIBSTDBUF, _STDBUF_O: 'L', _STDBUF_I: 'L' };
}
