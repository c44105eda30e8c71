import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { pageOf, type Page, type PageRequest } from '../util/pages.js';
import type { ApiKey, KeyKind } from '../db/schema.js';
import { MAX_MONTHLY_LIMIT } from '../limits.js';
import { AccountInputError } from './errors.js';
import { announce } from './events.js';

// API keys: random, shown once, stored only as a SHA-256 hash with a short prefix for
// display. Each API key carries its own signing secret for callback signatures; widget
// keys run only over the WebSocket from their allowed origins, so they send no callbacks
// and have neither a signing secret nor a Redirect Url.

const KEY_PREFIX = 'rbx_';
/** Characters of the key kept in clear, enough to tell keys apart in a list. */
const DISPLAY_PREFIX_CHARS = KEY_PREFIX.length + 8;

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function generateSigningSecret(): string {
  return 'rbxs_' + randomBytes(32).toString('base64url');
}

export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_CHARS);
}


/** A callback address must be an absolute http(s) URL. */
export function validateRedirectUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AccountInputError(`redirect URL ${JSON.stringify(raw)} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AccountInputError(`redirect URL must use http or https, not ${url.protocol.replace(/:$/, '')}`);
  }
  if (raw.length > 2048) throw new AccountInputError('redirect URL is longer than 2048 characters');
  return url.toString();
}

export function validateAppName(raw: string): string {
  const appName = raw.trim();
  if (appName === '' || appName.length > 200) throw new AccountInputError('app name must have 1 to 200 characters');
  return appName;
}

export function validateMonthlyLimit(limit: number | null): number | null {
  if (limit === null) return null;
  if (!Number.isSafeInteger(limit) || limit < 0 || limit > MAX_MONTHLY_LIMIT) {
    throw new AccountInputError(`monthly limit must be a whole number from 0 to ${MAX_MONTHLY_LIMIT}`);
  }
  return limit;
}

/**
 * A widget key's allowed origins, each normalised to scheme://host[:port] (what a
 * browser sends in its Origin header); duplicates dropped, order kept.
 */
export function validateAllowedOrigins(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (const entry of raw.map((o) => o.trim()).filter((o) => o !== '')) {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new AccountInputError(`allowed origin ${JSON.stringify(entry)} is not a valid origin (scheme://host[:port])`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new AccountInputError(`allowed origin ${JSON.stringify(entry)} must use http or https`);
    }
    if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash || url.username || url.password) {
      throw new AccountInputError(`allowed origin ${JSON.stringify(entry)} must be only scheme://host[:port], without a path`);
    }
    if (!out.includes(url.origin)) out.push(url.origin);
  }
  if (out.length > 50) throw new AccountInputError('at most 50 allowed origins per key');
  return out;
}

/**
 * Whether a browser's Origin header names one of a widget key's allowed origins. A
 * missing or opaque ("null") origin never does: widget keys are public, and the origin
 * is what keeps them to the sites their owner listed.
 */
export function originAllowed(allowed: readonly string[], origin: string | undefined): boolean {
  if (!origin || origin === 'null') return false;
  let normalised: string;
  try {
    normalised = new URL(origin).origin;
  } catch {
    return false;
  }
  return allowed.includes(normalised);
}

export const WIDGET_NEEDS_ORIGIN =
  'a widget key needs at least one allowed origin: the site its pages are on, as scheme://host[:port] (e.g. https://docs.example.com)';
export const WIDGET_NO_REDIRECT = 'widget keys send no callbacks: leave the Redirect Url empty (use an API key for asynchronous runs)';

/** A widget key is under its problems' feedback already; the mark is for API keys. */
export const STUDENT_API_ONLY = 'only an API key is marked as a student key (a widget key always sees problems under their feedback)';

/** The rules a key's kind sets on its allowed origins and its Redirect Url. */
function checkKindRules(kind: KeyKind, allowedOrigins: readonly string[], redirectUrl: string | null): void {
  if (kind === 'api' && allowedOrigins.length > 0) throw new AccountInputError('allowed origins are for widget keys only');
  if (kind === 'widget' && allowedOrigins.length === 0) throw new AccountInputError(WIDGET_NEEDS_ORIGIN);
  if (kind === 'widget' && redirectUrl !== null) throw new AccountInputError(WIDGET_NO_REDIRECT);
}

export interface NewKeyInput {
  accountId: string;
  appName: string;
  redirectUrl?: string | null;
  kind?: KeyKind;
  monthlyLimit?: number | null;
  /** Widget keys only: the origins the widget may run from. */
  allowedOrigins?: readonly string[];
  /** API keys only: a student's key, which sees its account's problems' runs under their feedback (src/problems/feedback.ts). */
  student?: boolean;
}

/** What the creator sees once: the key and the signing secret are never shown again. */
export interface CreatedKey {
  id: string;
  account_id: string;
  key: string;
  key_prefix: string;
  /** null for a widget key. */
  signing_secret: string | null;
  app_name: string;
  redirect_url: string | null;
  kind: KeyKind;
  monthly_limit: number | null;
  allowed_origins: string[];
  student: boolean;
  created_at: string;
}

export async function createKey(db: Db, input: NewKeyInput): Promise<CreatedKey> {
  const appName = validateAppName(input.appName);
  const kind = input.kind ?? 'api';
  if (kind !== 'api' && kind !== 'widget') throw new AccountInputError(`kind must be api or widget, not ${String(kind)}`);
  const redirectUrl = input.redirectUrl ? validateRedirectUrl(input.redirectUrl) : null;
  const monthlyLimit = validateMonthlyLimit(input.monthlyLimit ?? null);
  const allowedOrigins = validateAllowedOrigins(input.allowedOrigins ?? []);
  checkKindRules(kind, allowedOrigins, redirectUrl);
  if (input.student && kind !== 'api') throw new AccountInputError(STUDENT_API_ONLY);
  const account = await db.selectFrom('accounts').select('id').where('id', '=', input.accountId).executeTakeFirst();
  if (!account) throw new AccountInputError(`no account ${input.accountId}`);
  const key = generateKey();
  const signingSecret = kind === 'api' ? generateSigningSecret() : null;
  const row = await db
    .insertInto('api_keys')
    .values({
      account_id: input.accountId,
      key_hash: hashKey(key),
      key_prefix: displayPrefix(key),
      app_name: appName,
      redirect_url: redirectUrl,
      kind,
      monthly_limit: monthlyLimit,
      signing_secret: signingSecret,
      allowed_origins: allowedOrigins,
      // Named only when set: a key made before the schema has the column (an upgrade's
      // first host) is an ordinary key, as the column's default says.
      ...(input.student === true ? { student: true } : {}),
    })
    .returning(['id', 'account_id', 'key_prefix', 'app_name', 'redirect_url', 'kind', 'monthly_limit', 'allowed_origins', 'created_at'])
    .executeTakeFirstOrThrow();
  announce({ event: 'key created', account: row.account_id, key_id: row.id, kind: row.kind });
  return { ...row, student: input.student === true, key, signing_secret: signingSecret, created_at: row.created_at.toISOString() };
}

/** A key as listed: never the key itself, its hash or its secret. */
export interface KeyListing {
  id: string;
  account_id: string;
  key_prefix: string;
  app_name: string;
  redirect_url: string | null;
  kind: KeyKind;
  monthly_limit: number | null;
  allowed_origins: string[];
  student: boolean;
  created_at: string;
  revoked_at: string | null;
}

const listingColumns = [
  'id',
  'account_id',
  'key_prefix',
  'app_name',
  'redirect_url',
  'kind',
  'monthly_limit',
  'allowed_origins',
  'student',
  'created_at',
  'revoked_at',
] as const;

function toListing(row: Pick<ApiKey, (typeof listingColumns)[number]>): KeyListing {
  return { ...row, created_at: row.created_at.toISOString(), revoked_at: row.revoked_at?.toISOString() ?? null };
}

/** Every key of the account, newest first. */
export async function listKeys(db: Db, accountId: string): Promise<KeyListing[]> {
  return (await listKeysPage(db, accountId, { limit: null })).items;
}

/** A page of the account's keys (only the active ones with activeOnly), newest first, and how many more. */
export async function listKeysPage(db: Db, accountId: string, page: PageRequest, opts: { activeOnly?: boolean } = {}): Promise<Page<KeyListing>> {
  let q = db.selectFrom('api_keys').select(listingColumns).where('account_id', '=', accountId).orderBy('id', 'desc');
  if (opts.activeOnly) q = q.where('revoked_at', 'is', null);
  if (page.after !== undefined) q = q.where('id', '<', page.after);
  if (page.limit !== null) q = q.limit(page.limit);
  const items = (await q.execute()).map(toListing);
  return pageOf(items, page, (k) => k.id, async (last) => {
    let c = db.selectFrom('api_keys').select((eb) => eb.fn.countAll<string>().as('n')).where('account_id', '=', accountId).where('id', '<', last);
    if (opts.activeOnly) c = c.where('revoked_at', 'is', null);
    return Number((await c.executeTakeFirstOrThrow()).n);
  });
}

/** How many of the account's keys are revoked (the portal's "show revoked keys (N)"). */
export async function revokedKeyCount(db: Db, accountId: string): Promise<number> {
  const row = await db.selectFrom('api_keys').select((eb) => eb.fn.countAll<string>().as('n')).where('account_id', '=', accountId).where('revoked_at', 'is not', null).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function setKeyLimit(db: Db, keyId: string, monthlyLimit: number | null): Promise<KeyListing> {
  const row = await db
    .updateTable('api_keys')
    .set({ monthly_limit: validateMonthlyLimit(monthlyLimit) })
    .where('id', '=', keyId)
    .returning(listingColumns)
    .executeTakeFirst();
  if (!row) throw new AccountInputError(`no key ${keyId}`);
  announce({ event: 'key changed', account: row.account_id, key_id: row.id, fields: ['monthly_limit'] });
  return toListing(row);
}

/** Marks or unmarks an API key as a student's (src/problems/feedback.ts). */
export async function setKeyStudent(db: Db, keyId: string, student: boolean): Promise<KeyListing> {
  const key = await db.selectFrom('api_keys').select('kind').where('id', '=', keyId).executeTakeFirst();
  if (!key) throw new AccountInputError(`no key ${keyId}`);
  if (student && key.kind !== 'api') throw new AccountInputError(STUDENT_API_ONLY);
  const row = await db.updateTable('api_keys').set({ student }).where('id', '=', keyId).returning(listingColumns).executeTakeFirstOrThrow();
  announce({ event: 'key changed', account: row.account_id, key_id: row.id, fields: ['student'] });
  return toListing(row);
}

/** Replaces a widget key's allowed origins (an API key takes none). */
export async function setKeyOrigins(db: Db, keyId: string, origins: readonly string[]): Promise<KeyListing> {
  const allowedOrigins = validateAllowedOrigins(origins);
  const key = await db.selectFrom('api_keys').select('kind').where('id', '=', keyId).executeTakeFirst();
  if (!key) throw new AccountInputError(`no key ${keyId}`);
  if (key.kind !== 'widget' && allowedOrigins.length > 0) throw new AccountInputError('allowed origins are for widget keys only');
  if (key.kind === 'widget' && allowedOrigins.length === 0) throw new AccountInputError(WIDGET_NEEDS_ORIGIN);
  const row = await db
    .updateTable('api_keys')
    .set({ allowed_origins: allowedOrigins })
    .where('id', '=', keyId)
    .returning(listingColumns)
    .executeTakeFirstOrThrow();
  announce({ event: 'key changed', account: row.account_id, key_id: row.id, fields: ['allowed_origins'] });
  return toListing(row);
}

/** Revokes a key; revoking twice keeps the first revocation time. */
export async function revokeKey(db: Db, keyId: string): Promise<KeyListing> {
  const row = await db
    .updateTable('api_keys')
    .set({ revoked_at: sql<Date>`coalesce(revoked_at, now())` })
    .where('id', '=', keyId)
    .returning(listingColumns)
    .executeTakeFirst();
  if (!row) throw new AccountInputError(`no key ${keyId}`);
  announce({ event: 'key revoked', account: row.account_id, key_id: row.id });
  return toListing(row);
}

/** One key of one account, or undefined (another account's key looks like no key). */
export async function findKeyOfAccount(db: Db, accountId: string, keyId: string): Promise<KeyListing | undefined> {
  if (!/^\d{1,18}$/.test(keyId)) return undefined;
  const row = await db.selectFrom('api_keys').select(listingColumns).where('id', '=', keyId).where('account_id', '=', accountId).executeTakeFirst();
  return row ? toListing(row) : undefined;
}

export interface KeyChanges {
  appName: string;
  redirectUrl: string | null;
  monthlyLimit: number | null;
  allowedOrigins: readonly string[];
  /** API keys: mark or unmark it as a student's key; left out, unchanged. */
  student?: boolean;
}

/** Edits a key's App Name, Redirect Url, own monthly limit and (widget keys) allowed origins, with createKey's rules. */
export async function updateKey(db: Db, accountId: string, keyId: string, changes: KeyChanges): Promise<KeyListing> {
  const current = await findKeyOfAccount(db, accountId, keyId);
  if (!current) throw new AccountInputError(`no key ${keyId}`);
  const appName = validateAppName(changes.appName);
  const redirectUrl = changes.redirectUrl ? validateRedirectUrl(changes.redirectUrl) : null;
  const monthlyLimit = validateMonthlyLimit(changes.monthlyLimit);
  const allowedOrigins = validateAllowedOrigins(changes.allowedOrigins);
  checkKindRules(current.kind, allowedOrigins, redirectUrl);
  if (changes.student && current.kind !== 'api') throw new AccountInputError(STUDENT_API_ONLY);
  const row = await db
    .updateTable('api_keys')
    .set({ app_name: appName, redirect_url: redirectUrl, monthly_limit: monthlyLimit, allowed_origins: allowedOrigins, ...(changes.student !== undefined ? { student: changes.student } : {}) })
    .where('id', '=', keyId)
    .where('account_id', '=', accountId)
    .returning(listingColumns)
    .executeTakeFirstOrThrow();
  announce({ event: 'key changed', account: accountId, key_id: keyId, fields: ['app_name', 'redirect_url', 'monthly_limit', 'allowed_origins'] });
  return toListing(row);
}

/** A new signing secret for the (API) key, shown once; callbacks are signed with it from now on. */
export async function rollSigningSecret(db: Db, accountId: string, keyId: string): Promise<{ key: KeyListing; signing_secret: string }> {
  const secret = generateSigningSecret();
  const row = await db
    .updateTable('api_keys')
    .set({ signing_secret: secret })
    .where('id', '=', keyId)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .where('kind', '=', 'api')
    .returning(listingColumns)
    .executeTakeFirst();
  if (!row) throw new AccountInputError(`no active API key ${keyId}`);
  announce({ event: 'key signing secret rolled', account: accountId, key_id: keyId });
  return { key: toListing(row), signing_secret: secret };
}

/** When each of the account's keys last admitted a run (keys never used are absent), purged runs included (usage_days). */
export async function lastUsedByKey(db: Db, accountId: string): Promise<Map<string, Date>> {
  const { rows } = await sql<{ key_id: string; last: Date }>`
    SELECT key_id::text, max(last) AS last FROM (
      SELECT key_id, max(created_at) AS last FROM submissions WHERE account_id = ${accountId} AND key_id IS NOT NULL GROUP BY key_id
      UNION ALL
      SELECT key_id, max(last_at) FROM usage_days WHERE account_id = ${accountId} AND key_id <> 0 GROUP BY key_id
    ) x GROUP BY key_id
  `.execute(db);
  return new Map(rows.map((r) => [r.key_id, new Date(r.last)]));
}
