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

type Row = { [k: string]: Plain };

const isRecord = (v: Plain): v is Row => v !== null && typeof v === 'object' && !Array.isArray(v);
const isRows = (v: Plain): v is Row[] => Array.isArray(v) && v.length > 0 && v.every(isRecord);

/** A value in a cell; `name` is its field's (sizes in `…_bytes` fields read as kB, MB, GB). */
function cell(v: Plain, name?: string): string {
  if (v === null) return '';
  if (Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object')) return v.map((x) => cell(x, name)).join(', ');
  if (isRecord(v)) return inline(v);
  if (typeof v === 'object') return JSON.stringify(v);
  if (typeof v === 'number' && name?.endsWith('_bytes')) return size(v);
  if (typeof v === 'string') {
    // A digest is told apart by its first characters; --json has it whole.
    if (HEX_DIGEST.test(v)) return `${v.slice(0, 12)}…`;
    // Times as the portal shows them.
    const t = ISO_TIME.exec(v);
    if (t) return `${t[1]} ${t[2]} UTC`;
  }
  return String(v);
}

const HEX_DIGEST = /^[0-9a-f]{40,}$/;
const ISO_TIME = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)(?::\d\d(?:\.\d+)?)?Z$/;

function size(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = bytes / 1000;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** A record inside one cell, for reading: `a: 1, b: 2`; a map of records as `name (its fields)`. */
function inline(v: Row): string {
  return Object.entries(v)
    .map(([k, x]) => {
      if (!isRecord(x)) return `${k}: ${cell(x, k)}`;
      const values = Object.values(x);
      // { "gcc-12": { version: "12.2.0" } } reads as gcc-12 (12.2.0)
      return `${k} (${values.length === 1 && !isRecord(values[0]!) ? cell(values[0]!) : inline(x)})`;
    })
    .join(', ');
}

function newTable(head?: string[]): Table.Table {
  // No colours: the output is read, copied and pasted, not decorated.
  return new Table({ ...(head ? { head } : {}), style: { head: [], border: [], compact: true } });
}

function rowsTable(rows: Row[]): string {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  // A column of lists of records (an image's compilers) is drawn as rows of their own
  // below their parent's, one line each, instead of as JSON in one cell.
  const nested = columns.filter((c) => rows.some((r) => isRows(r[c] ?? null)));
  if (nested.length === 1) {
    const list = nested[0]!;
    const outer = columns.filter((c) => c !== list);
    const itemsOf = (r: Row): Row[] => {
      const v = r[list] ?? null;
      return isRows(v) ? v : [];
    };
    const inner = [...new Set(rows.flatMap((r) => itemsOf(r).flatMap((x) => Object.keys(x))))];
    const innerName = (c: string) => (outer.includes(c) ? `${list}.${c}` : c);
    const t = newTable([...outer, ...inner.map(innerName)]);
    for (const r of rows) {
      const own = itemsOf(r);
      const items = own.length > 0 ? own : [{}];
      // The parent's fields on its first line only, so each group reads as one.
      items.forEach((item, n) => t.push([...outer.map((c) => (n === 0 ? cell(r[c] ?? null, c) : '')), ...inner.map((c) => cell(item[c] ?? null, c))]));
    }
    return t.toString();
  }
  const t = newTable(columns);
  for (const r of rows) t.push(columns.map((c) => cell(r[c] ?? null, c)));
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
      else t.push({ [name]: Array.isArray(x) && x.length === 0 ? '(none)' : cell(x, k) });
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
  if (Array.isArray(v)) return v.map((x) => cell(x)).join('\n') + '\n';
  return cell(v) + '\n';
}

export function formatResult(value: unknown, opts: { json: boolean }): string {
  return opts.json ? asJson(value) : asTable(value);
}
