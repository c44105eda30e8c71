import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../util/paths.js';

/** How runbox names itself to MCP clients (serverInfo), with its package version. */
export const RUNBOX_MCP = {
  name: 'runbox',
  version: (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version,
};
