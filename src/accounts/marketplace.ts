import { createHash, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import { FREE_PLAN_NAME } from '../limits.js';

// Calls through an API marketplace (RapidAPI is the model). The marketplace forwards
// each subscriber's call with its proxy secret, the subscriber's name and their plan;
// with RUNBOX_MARKETPLACE_PROXY_SECRET set, a matching secret authenticates the call
// as that subscriber, whose account is made on their first call. Such a call has no
// key: no key limit, no key object in the usage record, no callback.

export const MARKETPLACE_HEADERS = {
  secret: 'X-RapidAPI-Proxy-Secret',
  user: 'X-RapidAPI-User',
  subscription: 'X-RapidAPI-Subscription',
} as const;

/** Who is calling, for a marketplace call: an account without a key. */
export interface MarketplaceCaller {
  kind: 'marketplace';
  keyId: null;
  accountId: string;
  keyMonthlyLimit: null;
  revoked: false;
  allowedOrigins: string[];
  /** The marketplace's name for the subscriber. */
  subscriber: string;
  plan: string;
}

export interface Marketplace {
  /** Whether the given proxy-secret header equals the configured secret (constant time). */
  secretMatches(given: string): boolean;
  /** The runbox plan a subscription name maps to (unknown names: the Free plan). */
  planFor(subscription: string): string;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** The configured marketplace, or null when RUNBOX_MARKETPLACE_PROXY_SECRET is empty. */
export function marketplaceFromConfig(config: Pick<Config, 'RUNBOX_MARKETPLACE_PROXY_SECRET' | 'RUNBOX_MARKETPLACE_PLANS'>): Marketplace | null {
  const secret = config.RUNBOX_MARKETPLACE_PROXY_SECRET;
  if (secret === '') return null;
  const expected = digest(secret);
  const plans = new Map<string, string>();
  for (const pair of config.RUNBOX_MARKETPLACE_PLANS.split(',').filter((p) => p !== '')) {
    const [name, plan] = pair.split(':') as [string, string];
    plans.set(name.toUpperCase(), plan);
  }
  return {
    // Both sides hashed to the same length first, so the comparison time says nothing
    // about the secret's length or content.
    secretMatches: (given) => timingSafeEqual(digest(given), expected),
    planFor: (subscription) => plans.get(subscription.trim().toUpperCase()) ?? FREE_PLAN_NAME,
  };
}

/** A subscriber name we accept: printable, without surrounding blanks, at most 200 characters. */
export function validSubscriber(name: string): boolean {
  return /^[\x21-\x7e](?:[\x20-\x7e]{0,198}[\x21-\x7e])?$/.test(name);
}

/**
 * The subscriber's account, made on their first call and moved to the plan their
 * subscription maps to when it changed (a plan that does not exist here: Free). One
 * read when nothing changed; otherwise one upsert on the unique marketplace_user index,
 * so concurrent first calls from several API processes end with one account.
 */
export async function subscriberAccount(db: Db, subscriber: string, plan: string): Promise<{ accountId: string; plan: string }> {
  const found = await db.selectFrom('accounts').select(['id', 'plan']).where('marketplace_user', '=', subscriber).executeTakeFirst();
  if (found && found.plan === plan) return { accountId: found.id, plan };
  const { rows } = await sql<{ id: string; plan: string }>`
    INSERT INTO accounts (email, marketplace_user, plan)
    VALUES (NULL, ${subscriber}, coalesce((SELECT name FROM plans WHERE name = ${plan}), ${FREE_PLAN_NAME}))
    ON CONFLICT (marketplace_user) DO UPDATE SET plan = excluded.plan
    RETURNING id, plan
  `.execute(db);
  const row = rows[0]!;
  return { accountId: row.id, plan: row.plan };
}
