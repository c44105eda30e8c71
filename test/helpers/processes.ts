import { type CliProcess, spawnCli } from './cli-process.js';

// Whole runbox processes for the tests that run them as deployed (faults, PgBouncer,
// partitions, draining, upgrades): started, followed through their JSON log lines, and
// all stopped at the end.

export interface Proc extends CliProcess {
  name: string;
}

export class Processes {
  readonly all: Proc[] = [];

  /** Starts dist/src/cli/<entry>; `wrap` puts a command in front that execs it (nsenter), never one that forks it: the kill goes to the wrapper. */
  launch(name: string, entry: string, env: Record<string, string>, wrap: string[] = []): Proc {
    const p = { name, ...spawnCli(entry, { RUNBOX_POLL_MS: '200', ...env }, wrap) };
    this.all.push(p);
    return p;
  }

  /** Kills every process started here and waits for each to be gone. */
  async stopAll(): Promise<void> {
    for (const p of this.all.splice(0)) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      await p.exited;
    }
  }

  /** The last lines of each process, for a failed test's report. */
  tails(n = 40): string {
    return this.all.map((p) => `      --- ${p.name} (last lines)\n${p.lines.slice(-n).join('\n')}`).join('\n');
  }
}

/** The JSON lines `p` has written so far (its other lines left out). */
export function logLines(p: CliProcess): Record<string, unknown>[] {
  return p.lines.flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** The first JSON line of `p` matching `test`, waiting for it (fails if the process exits first). */
export async function waitForLine(p: CliProcess & { name?: string }, test: (l: Record<string, unknown>) => boolean, ms = 60_000): Promise<Record<string, unknown>> {
  const name = p.name ?? 'process';
  const end = Date.now() + ms;
  for (;;) {
    const hit = logLines(p).find(test);
    if (hit) return hit;
    if (p.child.exitCode !== null) throw new Error(`${name} exited (${p.child.exitCode}):\n${p.lines.slice(-30).join('\n')}`);
    if (Date.now() > end) throw new Error(`${name}: no such line within ${ms} ms`);
    await sleep(50);
  }
}

/** The first log line of `p` whose message matches `msg`, waiting for it. */
export function waitForLog(p: CliProcess & { name?: string }, msg: RegExp, ms?: number): Promise<Record<string, unknown>> {
  return waitForLine(p, (l) => typeof l['msg'] === 'string' && msg.test(l['msg']), ms);
}

/** The API address a start.js or api.js process announced. */
export async function apiUrlOf(p: Proc, host = '127.0.0.1'): Promise<string> {
  const line = await waitForLine(p, (l) => typeof l['listening'] === 'object' || (typeof l['url'] === 'string' && String(l['msg']).startsWith('API listening')));
  const port = typeof line['listening'] === 'object' ? (line['listening'] as { port: number }).port : new URL(String(line['url'])).port;
  return `http://${host}:${port}`;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function until(what: string, check: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await sleep(100);
  }
}
