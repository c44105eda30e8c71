// A small SQLite database file written byte by byte (https://www.sqlite.org/fileformat.html),
// so that a test can send a real database without a SQLite library on the host: page 1
// holds the schema, each table one leaf page of its own after it. Enough for a few
// short rows of text and integers; anything larger is refused rather than written wrong.

export type SqliteValue = string | number | null;

export interface SqliteTable {
  name: string;
  /** The CREATE TABLE statement, as sqlite_schema keeps it (the rows follow its columns). */
  sql: string;
  rows: SqliteValue[][];
}

const PAGE_SIZE = 1024;
/** Payloads up to the usable size minus 35 stay on the page (no overflow pages). */
const MAX_LOCAL_PAYLOAD = PAGE_SIZE - 35;

function varint(n: number): Buffer {
  if (!Number.isInteger(n) || n < 0 || n > 0x3fff) throw new Error(`varint ${n} is out of this writer's range`);
  return n < 0x80 ? Buffer.from([n]) : Buffer.from([0x80 | (n >> 7), n & 0x7f]);
}

/** The serial type and body of one value (integers of up to 32 bits, UTF-8 text, NULL). */
function field(value: SqliteValue): [number, Buffer] {
  if (value === null) return [0, Buffer.alloc(0)];
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return [text.length * 2 + 13, text];
  }
  if (!Number.isInteger(value) || Math.abs(value) > 0x7fffffff) throw new Error(`${value}: only 32-bit integers`);
  if (value === 0) return [8, Buffer.alloc(0)];
  if (value === 1) return [9, Buffer.alloc(0)];
  const [type, bytes] = value >= -0x80 && value < 0x80 ? [1, 1] : value >= -0x8000 && value < 0x8000 ? [2, 2] : [4, 4];
  const body = Buffer.alloc(bytes);
  body.writeIntBE(value, 0, bytes);
  return [type, body];
}

function record(values: SqliteValue[]): Buffer {
  const fields = values.map(field);
  const types = Buffer.concat(fields.map(([t]) => varint(t)));
  // The header's size counts its own varint (one byte while the header stays under 128 bytes).
  if (types.length + 1 >= 0x80) throw new Error('too many columns for this writer');
  return Buffer.concat([varint(types.length + 1), types, ...fields.map(([, b]) => b)]);
}

/** A table b-tree leaf page (type 13) with these rows as rowids 1, 2, …; `offset` is where its header starts (100 on page 1). */
function leafPage(rows: SqliteValue[][], offset: number): Buffer {
  const page = Buffer.alloc(PAGE_SIZE);
  const cells = rows.map((row, i) => {
    const payload = record(row);
    if (payload.length > MAX_LOCAL_PAYLOAD) throw new Error('a row too long for this writer');
    return Buffer.concat([varint(payload.length), varint(i + 1), payload]);
  });
  let end = PAGE_SIZE;
  const pointers = cells.map((cell) => {
    end -= cell.length;
    cell.copy(page, end);
    return end;
  });
  if (end < offset + 8 + 2 * cells.length) throw new Error('rows do not fit on one page');
  page[offset] = 13;
  page.writeUInt16BE(cells.length, offset + 3);
  page.writeUInt16BE(end, offset + 5);
  pointers.forEach((p, i) => page.writeUInt16BE(p, offset + 8 + 2 * i));
  return page;
}

export function sqliteDatabase(tables: SqliteTable[]): Buffer {
  const schema = tables.map((t, i): SqliteValue[] => ['table', t.name, t.name, i + 2, t.sql]);
  const pages = [leafPage(schema, 100), ...tables.map((t) => leafPage(t.rows, 0))];
  const header = pages[0]!;
  header.write('SQLite format 3\u0000', 0, 'latin1');
  header.writeUInt16BE(PAGE_SIZE, 16);
  header[18] = 1; // write and read versions: legacy (rollback journal)
  header[19] = 1;
  header[21] = 64; // payload fractions, fixed by the format
  header[22] = 32;
  header[23] = 32;
  header.writeUInt32BE(1, 24); // change counter
  header.writeUInt32BE(pages.length, 28); // size in pages, valid as it matches the counter at 92
  header.writeUInt32BE(1, 40); // schema cookie
  header.writeUInt32BE(4, 44); // schema format 4
  header.writeUInt32BE(1, 56); // UTF-8
  header.writeUInt32BE(1, 92);
  header.writeUInt32BE(3_040_001, 96);
  return Buffer.concat(pages);
}
