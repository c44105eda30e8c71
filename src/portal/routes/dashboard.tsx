import type Router from '@koa/router';
import { getAccount } from '../../accounts/accounts.js';
import { listKeys } from '../../accounts/keys.js';
import { thresholdCount } from '../../email/thresholds.js';
import { liveRunnerSlots } from '../../queue/index.js';
import { runsPerDay, usageRecord } from '../../quota/usage.js';
import { keyRows } from '../key-rows.js';
import { mailConfigured } from '../mail.js';
import { sendPage } from '../render.js';
import { showRevoked } from '../show-revoked.js';
import { secureCookies } from './auth.js';
import { pageContext, type PortalContext, type PortalDeps, type PortalState } from '../state.js';
import { DashboardPage } from '../views/dashboard.js';
import type { Notice } from '../views/layout.js';

// GET /: the usage record from usageRecord(), the very function behind GET /api/usage/.

/** The notices the usage emails would send: 80 % and 100 % of the account's allowance and of each key's own limit. */
function usageNotices(used: number, limit: number, resetsAt: string, whose: string | null): Notice[] {
  if (limit <= 0) return [];
  const what = whose === null ? "this month's allowance" : `the monthly limit of key "${whose}"`;
  if (used >= thresholdCount(limit, 100)) {
    const after = whose === null ? 'Runs answer 429' : 'Runs through this key answer 429 (your other keys keep working)';
    return [{ kind: 'bad', text: `You have used all of ${what} (${used} of ${limit}). ${after} until ${resetsAt}.` }];
  }
  if (used >= thresholdCount(limit, 80)) return [{ kind: 'warn', text: `You have used 80 % or more of ${what} (${used} of ${limit}).` }];
  return [];
}

/** Keys on the dashboard, newest first; the API keys page lists them all. */
const DASHBOARD_KEYS = 10;

export function dashboardRoutes(router: Router<PortalState>, deps: PortalDeps): void {
  const { db, clock, config } = deps;
  router.get('/', async (ctx) => {
    const c = ctx as PortalContext;
    const s = c.state.session!;
    const now = clock.now();
    const [usage, account, keys, runnerSlots] = await Promise.all([
      usageRecord(db, { accountId: s.accountId, now }),
      getAccount(db, s.accountId),
      listKeys(db, s.accountId),
      liveRunnerSlots(db, config.RUNBOX_LEASE_SECONDS),
    ]);
    const rows = await keyRows(db, now, s.accountId, keys);
    const shown = showRevoked(ctx, secureCookies(deps));
    const notices: Notice[] = [];
    if (ctx.query['welcome']) notices.push({ kind: 'ok', text: 'Welcome! Create your first key under API keys.' });
    if (!s.emailVerified && mailConfigured(config) && !ctx.query['welcome']) notices.push({ kind: 'warn', text: 'Confirm your email address to create keys (see Account).' });
    notices.push(...usageNotices(usage!.submissions, usage!.monthly_limit, usage!.resets_at, null));
    for (const k of rows) if (k.monthly_limit !== null && !k.revoked_at) notices.push(...usageNotices(k.runs_this_month, k.monthly_limit, usage!.resets_at, k.app_name));
    sendPage(
      ctx,
      <DashboardPage
        page={pageContext(c)}
        usage={usage!}
        plan={account!.plan}
        planLimits={account!.limits}
        runnerSlots={runnerSlots}
        perDay={await runsPerDay(db, s.accountId, usage!.month)}
        keys={(shown ? rows : rows.filter((k) => !k.revoked_at)).slice(0, DASHBOARD_KEYS)}
        moreKeys={Math.max(0, (shown ? rows : rows.filter((k) => !k.revoked_at)).length - DASHBOARD_KEYS)}
        revokedCount={rows.filter((k) => k.revoked_at).length}
        showRevoked={shown}
        notices={notices}
      />,
    );
  });
}
