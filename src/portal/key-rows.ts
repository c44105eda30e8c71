import { lastUsedByKey, type KeyListing } from '../accounts/keys.js';
import type { Db } from '../db/connect.js';
import { usageRecord } from '../quota/usage.js';
import type { KeyRow } from './views/keys.js';

/** The account's keys with this month's figures, each from usageRecord: what GET /api/usage/ answers with that key. */
export async function keyRows(db: Db, now: Date, accountId: string, keys: KeyListing[]): Promise<KeyRow[]> {
  const lastUsed = await lastUsedByKey(db, accountId);
  return Promise.all(
    keys.map(async (k) => {
      const usage = (await usageRecord(db, { accountId, keyId: k.id, now }))!.key!;
      return { ...k, runs_this_month: usage.submissions, remaining: usage.remaining, last_used: lastUsed.get(k.id) ?? null };
    }),
  );
}
