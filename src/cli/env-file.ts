import { readFileSync } from 'node:fs';
import { parse } from 'dotenv';
import { DEFAULT_ENV_FILE } from '../config.js';

// runbox-admin reads the environment file the systemd units read (EnvironmentFile=),
// so on an installed host it talks to the same database and prints links with the
// same public URL as the services. The file's NAME=value lines are the subset of the
// systemd format that both readers agree on; dotenv parses them.

export interface EnvFileResult {
  /** The file read, or null when none was. */
  file: string | null;
  /** Variables taken from the file (those not already set in the environment). */
  applied: string[];
}

/**
 * Fills `env` from RUNBOX_ENV_FILE (empty: no file), else from /etc/runbox/runbox.env
 * when it exists. A variable already set in `env` wins over the file. A file named by
 * RUNBOX_ENV_FILE must exist; the default one may be absent (a checkout, a laptop).
 */
export function applyEnvFile(env: NodeJS.ProcessEnv = process.env, defaultFile: string = DEFAULT_ENV_FILE): EnvFileResult {
  const named = env['RUNBOX_ENV_FILE'];
  if (named === '') return { file: null, applied: [] };
  const file = named ?? defaultFile;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (named === undefined && code === 'ENOENT') return { file: null, applied: [] };
    if (code === 'EACCES') {
      throw new Error(`cannot read ${file}: run as root or as a member of its group (runbox), or set RUNBOX_ENV_FILE`);
    }
    throw new Error(`cannot read the environment file ${file} (RUNBOX_ENV_FILE): ${(err as Error).message}`);
  }
  const applied: string[] = [];
  for (const [name, value] of Object.entries(parse(text))) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    applied.push(name);
  }
  return { file, applied };
}
