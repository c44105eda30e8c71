import { sql } from 'kysely';
import type { Db } from './connect.js';

// Transaction-scoped advisory locks that serialise one kind of check-then-write per key
// (an address, a client IP, an account, a submission) across every API host. Each kind
// is a class id of the two-key form pg_advisory_xact_lock(int, int), whose keys never
// meet the one-key form (the reaper's). The check that follows must be a statement of
// its own: under READ COMMITTED it then sees every write committed before the lock was
// granted.

export const LOCK_CLASSES = {
  loginAddress: 7_316_101,
  loginIp: 7_316_102,
  signupIp: 7_316_103,
  redeliverAccount: 7_316_104,
  redeliverSubmission: 7_316_105,
  /** One account's problem writes: its storage total is checked exactly. */
  problemAccount: 7_316_106,
  /** One account's problem writes per minute: counted one after another. */
  problemWrites: 7_316_108,
} as const;

/** Problem writes take it shared, the collection of unreferenced test data exclusively
 *  (src/problems/sweep.ts): data a write is about to point at is never collected under it. */
export const TEST_DATA_LOCK = { class: 7_316_107, key: 0 } as const;

export type LockClass = keyof typeof LOCK_CLASSES;

/** Takes the locks in the order given; callers take them in one fixed order, so two never wait on each other. */
export async function lockKeys(trx: Db, ...locks: [LockClass, string][]): Promise<void> {
  for (const [kind, key] of locks) {
    await sql`SELECT pg_advisory_xact_lock(${LOCK_CLASSES[kind]}, hashtext(${key}))`.execute(trx);
  }
}
