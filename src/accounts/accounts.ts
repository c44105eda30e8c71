import { sql } from 'kysely';
import { pageOf, type Page, type PageRequest } from '../util/pages.js';
import type { Db } from '../db/connect.js';
import { FREE_PLAN_NAME, type PlanLimits } from '../limits.js';
import { AccountInputError, EmailTakenError } from './errors.js';
import { announce } from './events.js';
import { checkPlanFigures } from './plans.js';

// Accounts: an email (or, for an API-marketplace subscriber, the marketplace's name for them), a plan, and optional per-account overrides of the plan's figures
// (NULL: the plan's).

export interface AccountView {
  id: string;
  /** Null for an API-marketplace subscriber. */
  email: string | null;
  /** The marketplace's name for the subscriber; null for accounts of our own. */
  marketplace_user: string | null;
  plan: string;
  /** Per-account overrides; null means the plan's figure applies. */
  overrides: { [K in keyof PlanLimits]: number | null };
  /** The figures in force: override, else plan. */
  limits: PlanLimits;
  created_at: string;
}

/** Reads an account with its figures in force. */
export async function getAccount(db: Db, accountId: string): Promise<AccountView | undefined> {
  if (!/^\d{1,18}$/.test(accountId)) return undefined;
  const row = await db
    .selectFrom('accounts as a')
    .innerJoin('plans as p', 'p.name', 'a.plan')
    .select([
      'a.id',
      'a.email',
      'a.marketplace_user',
      'a.plan',
      'a.created_at',
      'a.monthly_limit',
      'a.per_minute',
      'a.pending',
      'a.running',
      'a.tests_per_request',
      'a.sandbox_seconds_per_request',
      'a.problem_storage_bytes',
      'p.monthly_limit as plan_monthly_limit',
      'p.per_minute as plan_per_minute',
      'p.pending as plan_pending',
      'p.running as plan_running',
      'p.tests_per_request as plan_tests_per_request',
      'p.sandbox_seconds_per_request as plan_sandbox_seconds_per_request',
      'p.problem_storage_bytes as plan_problem_storage_bytes',
    ])
    .where('a.id', '=', accountId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    email: row.email,
    marketplace_user: row.marketplace_user,
    plan: row.plan,
    overrides: {
      monthlyLimit: row.monthly_limit,
      perMinute: row.per_minute,
      pending: row.pending,
      running: row.running,
      testsPerRequest: row.tests_per_request,
      sandboxSecondsPerRequest: row.sandbox_seconds_per_request,
      problemStorageBytes: row.problem_storage_bytes === null ? null : Number(row.problem_storage_bytes),
    },
    limits: {
      monthlyLimit: row.monthly_limit ?? row.plan_monthly_limit,
      perMinute: row.per_minute ?? row.plan_per_minute,
      pending: row.pending ?? row.plan_pending,
      running: row.running ?? row.plan_running,
      testsPerRequest: row.tests_per_request ?? row.plan_tests_per_request,
      sandboxSecondsPerRequest: row.sandbox_seconds_per_request ?? row.plan_sandbox_seconds_per_request,
      problemStorageBytes: Number(row.problem_storage_bytes ?? row.plan_problem_storage_bytes),
    },
    created_at: row.created_at.toISOString(),
  };
}

/** One line of `account list`. */
export interface AccountListing {
  id: string;
  email: string | null;
  marketplace_user: string | null;
  plan: string;
  /** Keys not revoked. */
  active_keys: number;
  created_at: string;
}

/** Accounts newest first (by id), optionally of one plan: one page of them, and how many more. */
export async function listAccounts(db: Db, opts: { plan?: string | undefined; page: PageRequest }): Promise<Page<AccountListing>> {
  const { page } = opts;
  let q = db
    .selectFrom('accounts as a')
    .select((eb) => [
      'a.id',
      'a.email',
      'a.marketplace_user',
      'a.plan',
      'a.created_at',
      eb
        .selectFrom('api_keys as k')
        .select((k) => k.fn.countAll<string>().as('n'))
        .whereRef('k.account_id', '=', 'a.id')
        .where('k.revoked_at', 'is', null)
        .as('active_keys'),
    ])
    .orderBy('a.id', 'desc');
  if (opts.plan !== undefined) q = q.where('a.plan', '=', opts.plan);
  if (page.after !== undefined) q = q.where('a.id', '<', page.after);
  if (page.limit !== null) q = q.limit(page.limit);
  const rows = await q.execute();
  const items = rows.map((r) => ({
    id: r.id,
    email: r.email,
    marketplace_user: r.marketplace_user,
    plan: r.plan,
    active_keys: Number(r.active_keys ?? 0),
    created_at: r.created_at.toISOString(),
  }));
  return pageOf(items, page, (a) => a.id, async (last) => {
    let c = db.selectFrom('accounts').select((eb) => eb.fn.countAll<string>().as('n')).where('id', '<', last);
    if (opts.plan !== undefined) c = c.where('plan', '=', opts.plan);
    return Number((await c.executeTakeFirstOrThrow()).n);
  });
}

/** The id of the account with this address (compared without regard to case). */
export async function accountIdByEmail(db: Db, email: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('accounts')
    .select('id')
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.trim().toLowerCase()))
    .orderBy('id')
    .executeTakeFirst();
  return row?.id;
}

async function mustGet(db: Db, accountId: string): Promise<AccountView> {
  const account = await getAccount(db, accountId);
  if (!account) throw new AccountInputError(`no account ${accountId}`);
  return account;
}

async function requirePlan(db: Db, plan: string): Promise<void> {
  const found = await db.selectFrom('plans').select('name').where('name', '=', plan).executeTakeFirst();
  if (!found) throw new AccountInputError(`no plan ${JSON.stringify(plan)} (create it with \`plan upsert\`)`);
}

/** The address as stored (trimmed, as typed); throws when it is not one. */
export function checkEmail(email: string): string {
  const trimmed = email.trim();
  if (!/^[^\s@]+@[^\s@]+$/.test(trimmed) || trimmed.length > 320) throw new AccountInputError(`${JSON.stringify(email)} is not an email address`);
  return trimmed;
}

// Addresses keep the case they were typed in but are unique, and looked up, lower-cased
// (the unique index accounts_email_lower_key, migration 0012): two sign-ups of race@ and
// RACE@ at once make one account, and the other finds it taken.
export async function createAccount(db: Db, email: string, plan: string = FREE_PLAN_NAME): Promise<AccountView> {
  const trimmed = checkEmail(email);
  await requirePlan(db, plan);
  const inserted = await db
    .insertInto('accounts')
    .values({ email: trimmed, plan })
    .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) throw new EmailTakenError(trimmed);
  announce({ event: 'account created', account: inserted.id, email: trimmed });
  return mustGet(db, inserted.id);
}

/**
 * Gives an account another address (the operator's word, so its verification stays as it
 * was). Outstanding reset and verification links of the account end: they were sent to
 * the old address. Also works before migration 0012, to resolve the clashes it reports.
 */
export async function setAccountEmail(db: Db, accountId: string, email: string): Promise<{ id: string; email: string }> {
  const trimmed = checkEmail(email);
  // Only columns every schema since the foundation has: this runs before later migrations too.
  const account = await db.selectFrom('accounts').select(['id', 'email']).where('id', '=', accountId).executeTakeFirst();
  if (!account) throw new AccountInputError(`no account ${accountId}`);
  if (account.email === null) throw new AccountInputError(`account ${accountId} is a marketplace subscriber's; it has no email address`);
  await db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('accounts')
      .set({ email: trimmed })
      .where('id', '=', accountId)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('accounts as o').select('o.id').where('o.id', '<>', accountId).where(sql`lower(o.email)`, '=', trimmed.toLowerCase()))),
      )
      .returning('id')
      .executeTakeFirst()
      .catch((err: unknown) => {
        // Another account took the address in the meantime (the unique index).
        if ((err as { code?: string }).code === '23505') return undefined;
        throw err;
      });
    if (!updated) throw new EmailTakenError(trimmed);
    await trx
      .updateTable('account_tokens')
      .set({ used_at: sql<Date>`now()` })
      .where('account_id', '=', accountId)
      .where('purpose', 'in', ['reset', 'verify'])
      .where('used_at', 'is', null)
      .execute();
  });
  return { id: accountId, email: trimmed };
}

export async function setAccountPlan(db: Db, accountId: string, plan: string): Promise<AccountView> {
  await requirePlan(db, plan);
  await mustGet(db, accountId);
  await db.updateTable('accounts').set({ plan }).where('id', '=', accountId).execute();
  return mustGet(db, accountId);
}

/** Sets or clears (null) per-account overrides; figures left undefined stay as they are. */
export async function setAccountLimits(
  db: Db,
  accountId: string,
  overrides: { [K in keyof PlanLimits]?: number | null },
): Promise<AccountView> {
  checkPlanFigures(Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== null)) as Partial<PlanLimits>);
  await mustGet(db, accountId);
  const columns = {
    monthly_limit: overrides.monthlyLimit,
    per_minute: overrides.perMinute,
    pending: overrides.pending,
    running: overrides.running,
    tests_per_request: overrides.testsPerRequest,
    sandbox_seconds_per_request: overrides.sandboxSecondsPerRequest,
    problem_storage_bytes: overrides.problemStorageBytes,
  };
  const given = Object.fromEntries(Object.entries(columns).filter(([, v]) => v !== undefined));
  if (Object.keys(given).length > 0) {
    await db.updateTable('accounts').set(given).where('id', '=', accountId).execute();
  }
  return mustGet(db, accountId);
}

/** The row of a key presented in an Authorization header, with its account's figures in force. */
export interface KeyContext {
  keyId: string;
  accountId: string;
  kind: 'api' | 'widget';
  keyMonthlyLimit: number | null;
  revoked: boolean;
  /** Widget keys: the browser origins the key may be used from (normalised scheme://host[:port]). */
  allowedOrigins: string[];
  /** A student's key: its account's problems' runs reach it under their feedback (src/problems/feedback.ts). */
  student?: boolean;
}

export async function findKeyByHash(db: Db, keyHash: Buffer): Promise<KeyContext | undefined> {
  return keyContext(db, 'key_hash', keyHash);
}

/** The same, by the key's id: for the portal's playground, whose page never holds the key itself. */
export async function findKeyById(db: Db, keyId: string): Promise<KeyContext | undefined> {
  return keyContext(db, 'id', keyId);
}

async function keyContext(db: Db, column: 'key_hash' | 'id', value: Buffer | string): Promise<KeyContext | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(['id', 'account_id', 'kind', 'monthly_limit', 'allowed_origins', 'student', sql<boolean>`revoked_at is not null`.as('revoked')])
    .where(column, '=', value as never)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    keyId: row.id,
    accountId: row.account_id,
    kind: row.kind,
    keyMonthlyLimit: row.monthly_limit,
    revoked: row.revoked,
    allowedOrigins: row.allowed_origins,
    student: row.student,
  };
}
