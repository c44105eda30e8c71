import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PROJECT_ROOT } from '../../src/util/paths.js';

// A second, real API process (dist/src/cli/api.js) on the same database.

export interface ApiProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function spawnApiProcess(env: Record<string, string>): Promise<ApiProcess> {
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'dist/src/cli/api.js')], {
    env: { ...process.env, RUNBOX_HOST: '127.0.0.1', RUNBOX_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      try {
        resolve((JSON.parse(line) as { listening: { port: number } }).listening.port);
      } catch (err) {
        reject(err as Error);
      }
    });
    child.once('exit', (code) => reject(new Error(`API process exited with ${code}: ${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
