import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configTableMarkdown } from '../config.js';
import { limitsTableMarkdown } from '../docs/limits-table.js';
import { PROJECT_ROOT } from '../util/paths.js';

// README sections derived from the code, between <!-- name:start --> and <!-- name:end -->.

export const GENERATED_SECTIONS: Record<string, () => string> = {
  'limits-table': limitsTableMarkdown,
  'config-table': configTableMarkdown,
};

export function renderReadme(text: string): string {
  let out = text;
  for (const [name, render] of Object.entries(GENERATED_SECTIONS)) {
    const start = `<!-- ${name}:start -->`;
    const end = `<!-- ${name}:end -->`;
    const i = out.indexOf(start);
    const j = out.indexOf(end);
    if (i < 0 || j < i) throw new Error(`README.md lacks the ${name} markers`);
    out = out.slice(0, i + start.length) + '\n' + render() + '\n' + out.slice(j);
  }
  return out;
}

export const README_PATH = join(PROJECT_ROOT, 'README.md');

if (process.argv[1]?.endsWith('readme-tables.js') && process.argv.includes('--write')) {
  writeFileSync(README_PATH, renderReadme(readFileSync(README_PATH, 'utf8')));
}
