import { createAccount, getAccount, listAccounts, setAccountEmail, setAccountLimits, setAccountPlan } from '../../accounts/accounts.js';
import { createKey, listKeysPage, revokeKey, setKeyLimit, setKeyOrigins, setKeyStudent } from '../../accounts/keys.js';
import { listPlans, upsertPlan } from '../../accounts/plans.js';
import { findLogin } from '../../accounts/passwords.js';
import { issueToken } from '../../accounts/tokens.js';
import { publicUrl } from '../../config.js';
import { readMaintenance, setMaintenance } from '../../api/maintenance.js';
import type { KeyKind } from '../../db/schema.js';
import { FREE_PLAN_NAME, MAX_MONTHLY_LIMIT, type PlanLimits } from '../../limits.js';
import { usageRecord } from '../../quota/usage.js';
import { systemClock } from '../../util/clock.js';
import { type Command, type CommandContext, Listed, optionalInt, pageHelp, pageOptions, pageRequest, requireString, UsageError } from '../command.js';
import { accountIdOf, asUsage, numericId } from './account-input.js';

// Accounts, plans, keys, usage and maintenance mode.

/** A whole number, or `none` to clear (null); undefined when the option is absent. */
function intOrNone(ctx: CommandContext, name: string): number | null | undefined {
  if (ctx.values[name] === 'none') return null;
  return optionalInt(ctx, name);
}

const figureOptions = {
  'monthly-limit': { type: 'string' },
  'per-minute': { type: 'string' },
  pending: { type: 'string' },
  running: { type: 'string' },
  'tests-per-request': { type: 'string' },
  'sandbox-seconds-per-request': { type: 'string' },
  'problem-storage-bytes': { type: 'string' },
} as const;

const figureNames: [keyof PlanLimits, string][] = [
  ['monthlyLimit', 'monthly-limit'],
  ['perMinute', 'per-minute'],
  ['pending', 'pending'],
  ['running', 'running'],
  ['testsPerRequest', 'tests-per-request'],
  ['sandboxSecondsPerRequest', 'sandbox-seconds-per-request'],
  ['problemStorageBytes', 'problem-storage-bytes'],
];

const figureHelp = (none: boolean) =>
  [
    `  --monthly-limit N      submissions per UTC calendar month (at most ${MAX_MONTHLY_LIMIT})`,
    '  --per-minute N         submissions per rolling minute',
    '  --pending N            submissions queued or running at once',
    '  --running N            runs in a sandbox at once',
    '  --tests-per-request N  tests in one multi-test request',
    '  --sandbox-seconds-per-request N  sandbox time one request may ask for (compile timeout + tests x run timeout)',
    "  --problem-storage-bytes N  test data the account's stored problems may keep",
    ...(none ? ["  (each also takes `none`: back to the plan's figure)"] : []),
  ].join('\n');

export const accountCommands: Command[] = [
  {
    name: 'account create',
    summary: 'Create an account.',
    help: `  --email E   the account's address (usage emails go there)\n  --plan P    plan name (default ${FREE_PLAN_NAME})`,
    options: { email: { type: 'string' }, plan: { type: 'string' } },
    needsDb: true,
    run: (ctx) => asUsage(() => createAccount(ctx.db, requireString(ctx, 'email'), (ctx.values.plan as string | undefined) ?? FREE_PLAN_NAME)),
  },
  {
    name: 'account set-email',
    summary: "Give an account another address (it keeps its password and keys; its outstanding reset and confirmation links end).",
    help:
      '  --account ID   the account\n  --email E      the new address (unique whatever its case)\n' +
      '  Also resolves addresses that differ only in case, which the migration to case-insensitive addresses reports and waits on.',
    options: { account: { type: 'string' }, email: { type: 'string' } },
    needsDb: true,
    run: (ctx) => asUsage(() => setAccountEmail(ctx.db, numericId(ctx, 'account'), requireString(ctx, 'email'))),
  },
  {
    name: 'account invite',
    summary: 'Print a one-time sign-up link for an address (RUNBOX_SIGNUP=invite); it expires in 7 days.',
    help: '  --email E   the address the account will have',
    options: { email: { type: 'string' } },
    needsDb: true,
    run: async (ctx) => {
      const email = requireString(ctx, 'email').trim();
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError(`${JSON.stringify(email)} is not an email address`);
      if (await findLogin(ctx.db, email)) throw new UsageError(`an account with email ${email} already exists`);
      const { token, expires_at } = await issueToken(ctx.db, 'invite', email, null);
      return { email, link: `${publicUrl(ctx.config)}/signup?invite=${token}`, expires_at };
    },
  },
  {
    name: 'account password-reset-link',
    summary: 'Print a one-time link to set a new password (also for accounts made here, which have none); it expires in 24 hours.',
    help: '  --account ID | --email E',
    options: { account: { type: 'string' }, email: { type: 'string' } },
    needsDb: true,
    run: async (ctx) => {
      const account =
        ctx.values.account !== undefined ? await getAccount(ctx.db, numericId(ctx, 'account')) : await findLogin(ctx.db, requireString(ctx, 'email'));
      if (!account) throw new UsageError('no such account (give --account ID or --email E)');
      if (account.email === null) throw new UsageError(`account ${account.id} has no email address (a marketplace subscriber's): it has no portal log-in`);
      const { token, expires_at } = await issueToken(ctx.db, 'reset', account.email, account.id);
      return { account: account.id, email: account.email, link: `${publicUrl(ctx.config)}/reset?token=${token}`, expires_at };
    },
  },
  {
    name: 'account list',
    summary: 'List accounts, newest first: id, email, plan, active keys, created; and how many more there are.',
    help: '  --plan P     only the accounts on this plan\n' + pageHelp('accounts', 100),
    options: { plan: { type: 'string' }, ...pageOptions },
    needsDb: true,
    run: async (ctx) => new Listed(await listAccounts(ctx.db, { plan: ctx.values.plan as string | undefined, page: pageRequest(ctx, 100) }), 'accounts'),
  },
  {
    name: 'account show',
    summary: 'Show an account with its plan, overrides and the figures in force.',
    help: '  --account ID | --email E',
    options: { account: { type: 'string' }, email: { type: 'string' } },
    needsDb: true,
    run: async (ctx) => {
      const id = await accountIdOf(ctx);
      const account = await getAccount(ctx.db, id);
      if (!account) throw new UsageError(`no account ${id}`);
      return account;
    },
  },
  {
    name: 'account set-plan',
    summary: "Move an account to another plan.",
    help: '  --account ID\n  --plan P',
    options: { account: { type: 'string' }, plan: { type: 'string' } },
    needsDb: true,
    run: (ctx) => asUsage(() => setAccountPlan(ctx.db, numericId(ctx, 'account'), requireString(ctx, 'plan'))),
  },
  {
    name: 'account set-limits',
    summary: "Override the plan's figures for one account.",
    help: '  --account ID\n' + figureHelp(true),
    options: { account: { type: 'string' }, ...figureOptions },
    needsDb: true,
    run: (ctx) => {
      const accountId = numericId(ctx, 'account');
      const overrides: { [K in keyof PlanLimits]?: number | null } = {};
      for (const [field, option] of figureNames) overrides[field] = intOrNone(ctx, option);
      return asUsage(() => setAccountLimits(ctx.db, accountId, overrides));
    },
  },
  {
    name: 'plan upsert',
    summary: 'Create a plan or change its figures (a new plan starts from the Free figures).',
    help: '  --name P\n' + figureHelp(false),
    options: { name: { type: 'string' }, ...figureOptions },
    needsDb: true,
    run: (ctx) => {
      const figures: Partial<PlanLimits> = {};
      for (const [field, option] of figureNames) {
        const v = optionalInt(ctx, option);
        if (v !== undefined) figures[field] = v;
      }
      return asUsage(() => upsertPlan(ctx.db, requireString(ctx, 'name'), figures));
    },
  },
  {
    name: 'plan list',
    summary: 'List the plans, newest first.',
    help: pageHelp('plans', 100, 'name'),
    options: pageOptions,
    needsDb: true,
    run: async (ctx) => new Listed(await asUsage(() => listPlans(ctx.db, pageRequest(ctx, 100, /^[a-z0-9][a-z0-9_-]{0,62}$/))), 'plans'),
  },
  {
    name: 'key create',
    summary: 'Create a key; the key (and an API key\'s signing secret) is shown this once only.',
    help: [
      '  --account ID | --email E   the account',
      '  --app-name NAME',
      '  --redirect-url URL   API keys: callback address for results (http or https)',
      `  --monthly-limit N    the key's own monthly limit (at most ${MAX_MONTHLY_LIMIT}); default none`,
      '  --kind api|widget    default api',
      '  --origin ORIGIN      widget keys (at least one): a site the widget may run on (scheme://host[:port]); repeat for more',
      "  --student            API keys: a student's key (its account's problems' runs reach it under their feedback setting)",
    ].join('\n'),
    options: {
      account: { type: 'string' },
      email: { type: 'string' },
      'app-name': { type: 'string' },
      'redirect-url': { type: 'string' },
      'monthly-limit': { type: 'string' },
      kind: { type: 'string' },
      origin: { type: 'string', multiple: true },
      student: { type: 'boolean' },
    },
    needsDb: true,
    run: async (ctx) => {
      const kind = (ctx.values.kind as string | undefined) ?? 'api';
      if (kind !== 'api' && kind !== 'widget') throw new UsageError('--kind must be api or widget');
      if (kind === 'widget' && !(ctx.values.origin as string[] | undefined)?.length) {
        throw new UsageError('a widget key needs at least one --origin: the site its pages are on, as scheme://host[:port] (e.g. --origin https://docs.example.com)');
      }
      const accountId = await accountIdOf(ctx);
      return asUsage(() =>
        createKey(ctx.db, {
          accountId,
          appName: requireString(ctx, 'app-name'),
          redirectUrl: (ctx.values['redirect-url'] as string | undefined) ?? null,
          monthlyLimit: intOrNone(ctx, 'monthly-limit') ?? null,
          kind: kind as KeyKind,
          allowedOrigins: (ctx.values.origin as string[] | undefined) ?? [],
          student: ctx.values.student === true,
        }),
      );
    },
  },
  {
    name: 'key set-student',
    summary: "Mark an API key as a student's (its account's problems' runs reach it under their feedback setting), or unmark it.",
    help: '  --key ID\n  --off   unmark it',
    options: { key: { type: 'string' }, off: { type: 'boolean' } },
    needsDb: true,
    run: (ctx) => asUsage(() => setKeyStudent(ctx.db, numericId(ctx, 'key'), ctx.values.off !== true)),
  },
  {
    name: 'key set-origins',
    summary: "Replace a widget key's allowed origins (the sites its widget may run on).",
    help: '  --key ID\n  --origin ORIGIN   scheme://host[:port]; repeat for more; at least one',
    options: { key: { type: 'string' }, origin: { type: 'string', multiple: true } },
    needsDb: true,
    run: (ctx) => asUsage(() => setKeyOrigins(ctx.db, numericId(ctx, 'key'), (ctx.values.origin as string[] | undefined) ?? [])),
  },
  {
    name: 'key set-limit',
    summary: "Set or clear (none) a key's own monthly limit.",
    help: '  --key ID\n  --monthly-limit N|none',
    options: { key: { type: 'string' }, 'monthly-limit': { type: 'string' } },
    needsDb: true,
    run: (ctx) => {
      const limit = intOrNone(ctx, 'monthly-limit');
      if (limit === undefined) throw new UsageError('--monthly-limit is required (a number or none)');
      return asUsage(() => setKeyLimit(ctx.db, numericId(ctx, 'key'), limit));
    },
  },
  {
    name: 'key revoke',
    summary: 'Revoke a key: calls with it answer 401 from then on.',
    help: '  --key ID',
    options: { key: { type: 'string' } },
    needsDb: true,
    run: (ctx) => asUsage(() => revokeKey(ctx.db, numericId(ctx, 'key'))),
  },
  {
    name: 'key list',
    summary: "List an account's keys, newest first (never the keys themselves).",
    help: '  --account ID | --email E\n' + pageHelp('keys', 100),
    options: { account: { type: 'string' }, email: { type: 'string' }, ...pageOptions },
    needsDb: true,
    run: async (ctx) => {
      const accountId = await accountIdOf(ctx);
      const page = pageRequest(ctx, 100);
      if (!(await getAccount(ctx.db, accountId))) throw new UsageError(`no account ${accountId}`);
      return new Listed(await listKeysPage(ctx.db, accountId, page), 'keys');
    },
  },
  {
    name: 'usage',
    summary: "An account's usage record, as GET /api/usage/ shows it (without a key).",
    help: '  --account ID | --email E\n  --month YYYY-MM   default: this month (UTC)',
    options: { account: { type: 'string' }, email: { type: 'string' }, month: { type: 'string' } },
    needsDb: true,
    run: async (ctx) => {
      const accountId = await accountIdOf(ctx);
      const month = ctx.values.month as string | undefined;
      if (month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new UsageError('--month must be YYYY-MM');
      const record = await usageRecord(ctx.db, { accountId, now: systemClock.now(), month });
      if (!record) throw new UsageError(`no account ${accountId}`);
      return { account: accountId, ...record };
    },
  },
  {
    name: 'maintenance',
    summary: 'Switch maintenance mode on or off (run endpoints answer 503), or show it.',
    help: '  on | off | status   (every API process sees the change within about a second)',
    allowPositionals: true,
    needsDb: true,
    run: async (ctx) => {
      const [word, ...extra] = ctx.positionals;
      if (extra.length > 0 || (word !== 'on' && word !== 'off' && word !== 'status')) throw new UsageError('say on, off or status');
      if (word !== 'status') await setMaintenance(ctx.db, word === 'on');
      return { maintenance: await readMaintenance(ctx.db) };
    },
  },
];
