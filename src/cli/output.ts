import Table from 'cli-table3';

// How runbox-admin prints what a command returns: JSON for scripts (with --json, or
// whenever stdout is not a terminal), tables for people at a terminal. Either way the
// field names are snake_case, whatever case the domain module used.

type Plain = null | boolean | number | string | Plain[] | { [k: string]: Plain };

const LOWER_CAMEL = /^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/;

/** `monthlyLimit` → `monthly_limit`; other names (snake_case, compiler ids, ENV_NAMES) unchanged. */
export function snakeName(name: string): string {
  return LOWER_CAMEL.test(name) ? name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : name;
}

/** A JSON-ready copy of value with every lowerCamel field name in snake_case. */
export function snakeKeys(value: unknown): Plain {
  const plain = JSON.parse(JSON.stringify(value ?? null)) as Plain;
  const walk = (v: Plain): Plain => {
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [snakeName(k), walk(x)]));
    return v;
  };
  return walk(plain);
}

export function asJson(value: unknown): string {
  return JSON.stringify(snakeKeys(value), null, 2) + '\n';
}

const isRecord = (v: Plain): v is { [k: string]: Plain } => v !== null && typeof v === 'object' && !Array.isArray(v);
const isRows = (v: Plain): v is { [k: string]: Plain }[] => Array.isArray(v) && v.length > 0 && v.every(isRecord);

function cell(v: Plain): string {
  if (v === null) return '';
  if (Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object')) return v.join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function newTable(head?: string[]): Table.Table {
  // No colours: the output is read, copied and pasted, not decorated.
  return new Table({ ...(head ? { head } : {}), style: { head: [], border: [], compact: true } });
}

function rowsTable(rows: { [k: string]: Plain }[]): string {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const t = newTable(columns);
  for (const r of rows) t.push(columns.map((c) => cell(r[c] ?? null)));
  return t.toString();
}

/** One record: a two-column table, nested objects flattened to a.b; lists of records after it, each under its name. */
function recordTable(record: { [k: string]: Plain }): string {
  const t = newTable();
  const after: string[] = [];
  const add = (prefix: string, v: { [k: string]: Plain }) => {
    for (const [k, x] of Object.entries(v)) {
      const name = prefix + k;
      if (isRecord(x) && Object.keys(x).length > 0) add(`${name}.`, x);
      else if (isRows(x)) after.push(`${name}:\n${rowsTable(x)}`);
      else t.push({ [name]: cell(x) });
    }
  };
  add('', record);
  return [t.length > 0 ? t.toString() : '', ...after].filter(Boolean).join('\n');
}

/** What a person at a terminal sees. */
export function asTable(value: unknown): string {
  const v = snakeKeys(value);
  if (Array.isArray(v) && v.length === 0) return '(none)\n';
  if (isRows(v)) return rowsTable(v) + '\n';
  if (isRecord(v)) return recordTable(v) + '\n';
  if (Array.isArray(v)) return v.map(cell).join('\n') + '\n';
  return cell(v) + '\n';
}

export function formatResult(value: unknown, opts: { json: boolean }): string {
  return opts.json ? asJson(value) : asTable(value);
}
