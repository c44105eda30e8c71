import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/util/paths.js';

// A real runbox process (dist/src/cli/<entry>) with its output kept line by line, for
// the tests that run whole processes as deployed.

export interface CliProcess {
  child: ChildProcess;
  /** stdout and stderr lines as they came, interleaved. */
  lines: string[];
  exited: Promise<number | null>;
}

let lockDir: string | undefined;

/**
 * The runners of one test process claim their sandbox uid ranges in a lock directory
 * of their own: the fixed bases tests give them must not clash with another person's
 * run of the same test on this host.
 */
function testLockDir(): string {
  if (!lockDir) {
    const dir = mkdtempSync(join(tmpdir(), 'runbox-test-locks-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    lockDir = dir;
  }
  return lockDir;
}

/**
 * Starts dist/src/cli/<entry> (of this checkout, or of the build in `root`) with info-level
 * logs and `env` over this process's environment; `wrap` is a command that execs it
 * (`nsenter --net=…`).
 */
export function spawnCli(entry: string, env: Record<string, string>, wrap: string[] = [], root: string = PROJECT_ROOT): CliProcess {
  const argv = [...wrap, process.execPath, join(root, 'dist/src/cli', entry)];
  const child = spawn(argv[0]!, argv.slice(1), {
    env: { ...process.env, RUNBOX_LOG_LEVEL: 'info', RUNBOX_LOCK_DIR: testLockDir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let buf = '';
  const take = (chunk: Buffer) => {
    buf += chunk.toString('utf8');
    const parts = buf.split('\n');
    buf = parts.pop()!;
    lines.push(...parts);
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, lines, exited };
}
