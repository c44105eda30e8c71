import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { ProblemInputError, type DataSource } from './draft.js';

// The account's storage allowance (its plan's problem_storage_bytes) during a problem
// write, checked before anything is inflated and then file by file, so a package that
// cannot fit costs neither its inflating nor its storing. Each distinct file counts
// once, and files the account's other problems keep already cost nothing, so:
// - before reading: the least the package can add. Sources of different keys hold
//   different bytes (sha-256, or a zip entry's declared CRC-32 and size), and a file
//   can only be one the account keeps if that has its size; so the package adds at
//   least, for each size, the size times its distinct keys of that size beyond the
//   account's files of that size (exactly the new files, when their hashes are known).
// - while storing: each file once hashed, counted unless the account keeps it already
//   or the package had it before; the first one past the allowance stops the write,
//   before it is stored.
// Read under the account's lock (src/problems/store.ts), so the totals are exact.

/** The hashes of the test data the account's problems keep now (their current versions), but `except`'s; `only`: that one hash if kept. */
export function currentFiles(accountId: string, except?: string, only?: Buffer) {
  const held = (column: 'input_hash' | 'answer_hash') => sql`
    SELECT ${sql.ref(`t.${column}`)} AS hash FROM problem_tests t JOIN problems p ON p.id = t.problem_id AND t.version = p.version
     WHERE p.account_id = ${accountId} AND p.deleted_at IS NULL AND p.id IS DISTINCT FROM ${except ?? null}::uuid
       ${only ? sql`AND ${sql.ref(`t.${column}`)} = ${only}` : sql``}`;
  // The example submissions' files too (migration 0090).
  const submitted = sql`
    SELECT f.hash FROM problem_submission_files f JOIN problems p ON p.id = f.problem_id AND f.version = p.version
     WHERE p.account_id = ${accountId} AND p.deleted_at IS NULL AND p.id IS DISTINCT FROM ${except ?? null}::uuid
       ${only ? sql`AND f.hash = ${only}` : sql``}`;
  return sql`${held('input_hash')} UNION ${held('answer_hash')} UNION ${submitted}`;
}

const MiB = 1024 * 1024;
const mib = (bytes: number) => (bytes < MiB ? `${bytes} bytes` : `${(bytes / MiB).toFixed(1)} MiB`);

export function storageFull(bytes: number, limit: number, exact: boolean): ProblemInputError {
  return new ProblemInputError(
    `the account's stored problems would hold ${exact ? '' : 'at least '}${mib(bytes)} of test data with this one; its plan allows ${mib(limit)} (each distinct file counted once): delete a problem or send less data`,
    'problem_storage_full',
  );
}

export class StorageAllowance {
  private readonly counted = new Set<string>();

  private constructor(
    private readonly trx: Db,
    private readonly accountId: string,
    private readonly except: string | undefined,
    private used: number,
    private readonly limit: number,
  ) {}

  /** The allowance for a write of `sources` (replacing problem `except`); throws problem_storage_full when they cannot fit. */
  static async open(trx: Db, accountId: string, except: string | undefined, sources: DataSource[]): Promise<StorageAllowance> {
    const bySize = new Map<number, Set<string>>();
    const hashed = new Map<string, number>();
    for (const s of sources) {
      if (s.hash) hashed.set(s.hash.toString('hex'), s.size);
      else {
        const keys = bySize.get(s.size) ?? new Set<string>();
        bySize.set(s.size, keys.add(s.key));
      }
    }
    const { rows } = await sql<{ used: number; limit: number; kept: Buffer[] | null; sizes: [number, number][] | null }>`
      WITH files AS (SELECT d.hash, d.size FROM test_data d WHERE d.hash IN (${currentFiles(accountId, except)}))
      SELECT
        (SELECT coalesce(sum(size), 0) FROM files)::float8 AS used,
        (SELECT coalesce(a.problem_storage_bytes, pl.problem_storage_bytes) FROM accounts a JOIN plans pl ON pl.name = a.plan
          WHERE a.id = ${accountId})::float8 AS limit,
        (SELECT array_agg(hash) FROM files WHERE hash = ANY(${[...hashed.keys()].map((h) => Buffer.from(h, 'hex'))}::bytea[])) AS kept,
        (SELECT json_agg(json_build_array(size, n)) FROM (SELECT size, count(*)::int AS n FROM files
          WHERE size = ANY(${[...bySize.keys()]}::int[]) GROUP BY size) s) AS sizes
    `.execute(trx);
    const row = rows[0]!;
    const allowance = new StorageAllowance(trx, accountId, except, row.used, row.limit);
    const kept = new Set((row.kept ?? []).map((h) => h.toString('hex')));
    const keptOfSize = new Map(row.sizes ?? []);
    let least = row.used;
    for (const [h, size] of hashed) if (!kept.has(h)) least += size;
    for (const [size, keys] of bySize) least += size * Math.max(0, keys.size - (keptOfSize.get(size) ?? 0));
    if (least > row.limit) throw storageFull(least, row.limit, bySize.size === 0);
    return allowance;
  }

  /** Counts a file about to be stored; throws problem_storage_full, before it is stored, when it does not fit. */
  async add(hash: Buffer, size: number): Promise<void> {
    const hex = hash.toString('hex');
    if (this.counted.has(hex)) return;
    this.counted.add(hex);
    const { rows } = await sql<{ kept: boolean }>`SELECT EXISTS (${currentFiles(this.accountId, this.except, hash)}) AS kept`.execute(this.trx);
    if (rows[0]!.kept) return;
    this.used += size;
    if (this.used > this.limit) throw storageFull(this.used, this.limit, false);
  }
}
