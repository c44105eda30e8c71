import type { ExpressionBuilder } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Database, Plan } from '../db/schema.js';
import { pageOf, type Page, type PageRequest } from '../util/pages.js';
import { FREE_PLAN, MAX_MONTHLY_LIMIT, sandboxSecondsFor, type PlanLimits } from '../limits.js';
import { AccountInputError } from './errors.js';

// Plans: named sets of per-account figures. A new plan starts from the Free plan's
// figures for anything not given, but for its sandbox seconds per request, which leave
// its tests per request room (a compile and every test at the 30 s timeout).

const planColumns = ['name', 'monthly_limit', 'per_minute', 'pending', 'running', 'tests_per_request', 'sandbox_seconds_per_request', 'problem_storage_bytes'] as const;

/** A plan as read and listed: its table's row without the timestamps (its storage figure as a number). */
export type PlanRow = Omit<Pick<Plan, (typeof planColumns)[number]>, 'problem_storage_bytes'> & { problem_storage_bytes: number };

const planRow = (row: Pick<Plan, (typeof planColumns)[number]>): PlanRow => ({ ...row, problem_storage_bytes: Number(row.problem_storage_bytes) });

export function checkPlanFigures(figures: Partial<PlanLimits>): void {
  for (const [name, value] of Object.entries(figures)) {
    if (value === undefined) continue;
    const min = name === 'testsPerRequest' || name === 'sandboxSecondsPerRequest' ? 1 : 0;
    const max = name === 'monthlyLimit' ? MAX_MONTHLY_LIMIT : name === 'problemStorageBytes' ? Number.MAX_SAFE_INTEGER : 2_147_483_647;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      // Named as the admin API's fields and the CLI's JSON name them.
      throw new AccountInputError(`${name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)} must be a whole number from ${min} to ${max}`);
    }
  }
}

export async function upsertPlan(db: Db, name: string, figures: Partial<PlanLimits>): Promise<PlanRow> {
  if (!/^[a-z0-9][a-z0-9_-]{0,62}$/.test(name)) throw new AccountInputError('plan name must be lower-case letters, digits, - or _');
  checkPlanFigures(figures);
  const columns = {
    monthly_limit: figures.monthlyLimit,
    per_minute: figures.perMinute,
    pending: figures.pending,
    running: figures.running,
    tests_per_request: figures.testsPerRequest,
    sandbox_seconds_per_request: figures.sandboxSecondsPerRequest,
    problem_storage_bytes: figures.problemStorageBytes,
  };
  const given = Object.fromEntries(Object.entries(columns).filter(([, v]) => v !== undefined));
  const row = await db
    .insertInto('plans')
    .values({
      name,
      monthly_limit: figures.monthlyLimit ?? FREE_PLAN.monthlyLimit,
      per_minute: figures.perMinute ?? FREE_PLAN.perMinute,
      pending: figures.pending ?? FREE_PLAN.pending,
      running: figures.running ?? FREE_PLAN.running,
      tests_per_request: figures.testsPerRequest ?? FREE_PLAN.testsPerRequest,
      sandbox_seconds_per_request: figures.sandboxSecondsPerRequest ?? sandboxSecondsFor(figures.testsPerRequest ?? FREE_PLAN.testsPerRequest),
      problem_storage_bytes: figures.problemStorageBytes ?? FREE_PLAN.problemStorageBytes,
    })
    .onConflict((oc) => oc.column('name').doUpdateSet({ ...given, updated_at: new Date() }))
    .returning(planColumns)
    .executeTakeFirstOrThrow();
  return planRow(row);
}

/** A page of plans, newest first (the Free plan, made by the first migration, last), and how many more. */
export async function listPlans(db: Db, page: PageRequest = { limit: null }): Promise<Page<PlanRow>> {
  // Keyset on (created_at, name): plans made in one transaction share a created_at.
  const after = page.after === undefined ? undefined : await db.selectFrom('plans').select(['created_at', 'name']).where('name', '=', page.after).executeTakeFirst();
  if (page.after !== undefined && !after) throw new AccountInputError(`no plan ${page.after}`);
  const older = (eb: ExpressionBuilder<Database, 'plans'>, a: { created_at: Date; name: string }) =>
    eb.or([eb('created_at', '<', a.created_at), eb.and([eb('created_at', '=', a.created_at), eb('name', '<', a.name)])]);
  let q = db.selectFrom('plans').select(planColumns).orderBy('created_at', 'desc').orderBy('name', 'desc');
  if (after) q = q.where((eb) => older(eb, after));
  if (page.limit !== null) q = q.limit(page.limit);
  const items = (await q.execute()).map(planRow);
  return pageOf(items, page, (p) => p.name, async (lastName) => {
    const last = await db.selectFrom('plans').select(['created_at', 'name']).where('name', '=', lastName).executeTakeFirstOrThrow();
    return Number((await db.selectFrom('plans').select((eb) => eb.fn.countAll<string>().as('n')).where((eb) => older(eb, last)).executeTakeFirstOrThrow()).n);
  });
}
