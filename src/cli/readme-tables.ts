import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configTableMarkdown } from '../config.js';
import { librariesTableMarkdown } from '../docs/libraries-table.js';
import { limitsTableMarkdown } from '../docs/limits-table.js';
import { verdictsTableMarkdown } from '../docs/verdicts-table.js';
import { PROJECT_ROOT } from '../util/paths.js';

// Documentation tables derived from the code, each between <!-- name:start --> and
// <!-- name:end --> in the one file that holds it.

export interface GeneratedTable {
  /** The file, relative to the project root. */
  file: string;
  render: () => string;
}

export const GENERATED_TABLES: Record<'limits-table' | 'config-table' | 'libraries-table' | 'verdicts-table', GeneratedTable> = {
  'limits-table': { file: 'docs/limits.md', render: limitsTableMarkdown },
  'config-table': { file: 'docs/configuration.md', render: configTableMarkdown },
  'libraries-table': { file: 'docs/compilers.md', render: librariesTableMarkdown },
  'verdicts-table': { file: 'docs/api.md', render: verdictsTableMarkdown },
};

export type TableName = keyof typeof GENERATED_TABLES;

export function tablePath(name: TableName): string {
  return join(PROJECT_ROOT, GENERATED_TABLES[name].file);
}

/** The text with the named table between its markers replaced by the code's. */
export function renderTable(name: TableName, text: string): string {
  const { file, render } = GENERATED_TABLES[name];
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i < 0 || j < i) throw new Error(`${file} lacks the ${name} markers`);
  return text.slice(0, i + start.length) + '\n' + render() + '\n' + text.slice(j);
}

/** Rewrites the table in its file; true when the file changed. */
export function writeTable(name: TableName): boolean {
  const path = tablePath(name);
  const text = readFileSync(path, 'utf8');
  const next = renderTable(name, text);
  if (next === text) return false;
  writeFileSync(path, next);
  return true;
}

/** Whether the table in its file matches the code. */
export function tableInSync(name: TableName): boolean {
  const text = readFileSync(tablePath(name), 'utf8');
  return renderTable(name, text) === text;
}

if (process.argv[1]?.endsWith('readme-tables.js') && process.argv.includes('--write')) {
  for (const name of Object.keys(GENERATED_TABLES) as TableName[]) writeTable(name);
}
