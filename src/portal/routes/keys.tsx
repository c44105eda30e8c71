import type Router from '@koa/router';
import { AccountInputError } from '../../accounts/errors.js';
import {
  createKey,
  findKeyOfAccount,
  listKeysPage,
  revokedKeyCount,
  revokeKey,
  rollSigningSecret,
  updateKey,
  validateAllowedOrigins,
  validateAppName,
  validateMonthlyLimit,
  validateRedirectUrl,
  WIDGET_NEEDS_ORIGIN,
  WIDGET_NO_REDIRECT,
  type KeyListing,
} from '../../accounts/keys.js';
import { holdReveal, takeReveal } from '../key-reveals.js';
import { keyRows } from '../key-rows.js';
import { mailConfigured } from '../mail.js';
import { secureCookies } from './auth.js';
import { sendPage } from '../render.js';
import { showRevoked } from '../show-revoked.js';
import { baseUrl, field, notFound, pageContext, PortalError, type PortalContext, type PortalDeps, type PortalState } from '../state.js';
import { KeyCreatedPage, KeyPage, KeysPage, NewKeyPage, RevokePage, SecretRolledPage, type KeyErrors, type KeyForm } from '../views/keys.js';

// API keys: list, "+ Create New", edit, roll the signing secret, revoke. Every rule is
// src/accounts/keys.ts's; the form only maps each rule's message to its field.
//
// The list shows KEYS_PAGE_SIZE keys at a time, newest first (?after=ID for older ones).
//
// A new key and a new signing secret are shown by post/redirect/get: the form answers
// 303 to a page that takes them from key_reveals (src/portal/key-reveals.ts) once. A
// reload of that page makes no second key and shows the secret no more.

/** Keys on one page of the list. */
export const KEYS_PAGE_SIZE = 50;

function readForm(ctx: PortalContext): KeyForm {
  return {
    appName: field(ctx, 'app_name'),
    redirectUrl: field(ctx, 'redirect_url').trim(),
    monthlyLimit: field(ctx, 'monthly_limit').trim(),
    kind: field(ctx, 'kind') === 'widget' ? 'widget' : 'api',
    allowedOrigins: field(ctx, 'allowed_origins'),
    student: field(ctx, 'student') !== '',
  };
}

const originLines = (text: string) => text.split(/\r?\n/);

/** The form checked field by field with the domain's own validators; errors keyed by field. */
function check(form: KeyForm, kind: 'api' | 'widget', kindGiven: string): { errors: KeyErrors; limit: number | null } {
  const errors: KeyErrors = {};
  const attempt = (name: keyof KeyForm, fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      if (!(err instanceof AccountInputError)) throw err;
      errors[name] = err.message;
    }
  };
  let limit: number | null = null;
  attempt('appName', () => validateAppName(form.appName));
  if (form.redirectUrl) attempt('redirectUrl', () => validateRedirectUrl(form.redirectUrl));
  attempt('monthlyLimit', () => {
    limit = form.monthlyLimit === '' ? null : validateMonthlyLimit(/^\d+$/.test(form.monthlyLimit) ? Number(form.monthlyLimit) : NaN);
  });
  if (kindGiven !== 'api' && kindGiven !== 'widget') errors.kind = 'choose API key or Widget key';
  attempt('allowedOrigins', () => {
    const origins = validateAllowedOrigins(originLines(form.allowedOrigins));
    if (kind === 'api' && origins.length > 0) throw new AccountInputError('allowed origins are for widget keys only');
    if (kind === 'widget' && origins.length === 0) throw new AccountInputError(WIDGET_NEEDS_ORIGIN);
  });
  if (kind === 'widget' && form.redirectUrl && !errors.redirectUrl) errors.redirectUrl = WIDGET_NO_REDIRECT;
  return { errors, limit };
}

export function keyRoutes(router: Router<PortalState>, deps: PortalDeps): void {
  const { db, config, clock } = deps;

  const canCreate = (ctx: PortalContext) => ctx.state.session!.emailVerified || !mailConfigured(config);

  const rows = (accountId: string, keys: KeyListing[]) => keyRows(db, clock.now(), accountId, keys);

  async function ownKey(ctx: PortalContext): Promise<KeyListing> {
    const key = await findKeyOfAccount(db, ctx.state.session!.accountId, String(ctx.params['id']));
    if (!key) throw notFound();
    return key;
  }

  const formOf = (k: KeyListing): KeyForm => ({
    appName: k.app_name,
    redirectUrl: k.redirect_url ?? '',
    monthlyLimit: k.monthly_limit === null ? '' : String(k.monthly_limit),
    kind: k.kind,
    allowedOrigins: k.allowed_origins.join('\n'),
    student: k.student,
  });

  router.get('/keys', async (ctx) => {
    const c = ctx as PortalContext;
    const accountId = c.state.session!.accountId;
    const notices = ctx.query['done'] === 'revoked' ? [{ kind: 'ok' as const, text: 'The key is revoked; calls with it answer 401.' }] : [];
    const shown = showRevoked(ctx, secureCookies(deps));
    const after = typeof ctx.query['after'] === 'string' && /^\d{1,18}$/.test(ctx.query['after']) ? ctx.query['after'] : undefined;
    const page = await listKeysPage(db, accountId, { limit: KEYS_PAGE_SIZE, after }, { activeOnly: !shown });
    const keys = await rows(accountId, page.items);
    sendPage(
      ctx,
      <KeysPage
        page={pageContext(c)}
        keys={keys}
        list={{ more: page.more, next: page.next, first: after === undefined }}
        revokedCount={await revokedKeyCount(db, accountId)}
        showRevoked={shown}
        canCreate={canCreate(c)}
        notices={notices}
      />,
    );
  });

  router.get('/keys/new', async (ctx) => {
    const c = ctx as PortalContext;
    if (!canCreate(c)) throw new PortalError(403, 'Confirm your email address before creating keys.');
    sendPage(ctx, <NewKeyPage page={pageContext(c)} form={{ appName: '', redirectUrl: '', monthlyLimit: '', kind: 'api', allowedOrigins: '' }} errors={{}} />);
  });

  router.post('/keys', async (ctx) => {
    const c = ctx as PortalContext;
    if (!canCreate(c)) throw new PortalError(403, 'Confirm your email address before creating keys.');
    const form = readForm(c);
    const { errors, limit } = check(form, form.kind, field(c, 'kind'));
    if (Object.keys(errors).length > 0) return sendPage(ctx, <NewKeyPage page={pageContext(c)} form={form} errors={errors} />, 400);
    const created = await createKey(db, {
      accountId: c.state.session!.accountId,
      appName: form.appName,
      redirectUrl: form.redirectUrl || null,
      kind: form.kind,
      monthlyLimit: limit,
      allowedOrigins: form.kind === 'widget' ? originLines(form.allowedOrigins) : [],
      student: form.kind === 'api' && form.student === true,
    });
    await holdReveal(db, c.state.session!.idHash, created.id, { key: created.key, signing_secret: created.signing_secret });
    seeOther(ctx, `/keys/${created.id}/created`);
  });

  router.get('/keys/:id/created', async (ctx) => {
    const c = ctx as PortalContext;
    const key = await ownKey(c);
    const reveal = await takeReveal(db, c.state.session!.idHash, key.id);
    if (!reveal?.key) return ctx.redirect(`/keys/${key.id}?shown=1`);
    sendPage(ctx, <KeyCreatedPage page={pageContext(c)} apiKey={key} secret={reveal.key} signingSecret={reveal.signing_secret} base={baseUrl(ctx, config)} />);
  });

  router.get('/keys/:id', async (ctx) => {
    const c = ctx as PortalContext;
    const key = await ownKey(c);
    const [row] = await rows(c.state.session!.accountId, [key]);
    const notices = ctx.query['saved']
      ? [{ kind: 'ok' as const, text: 'Saved.' }]
      : ctx.query['shown']
        ? [{ kind: 'info' as const, text: 'That page showed a secret once and cannot show it again. If it was not copied, make a new one (a new key, or roll the signing secret).' }]
        : [];
    sendPage(ctx, <KeyPage page={pageContext(c)} apiKey={row!} form={formOf(key)} errors={{}} base={baseUrl(ctx, config)} notices={notices} />);
  });

  router.post('/keys/:id', async (ctx) => {
    const c = ctx as PortalContext;
    const key = await ownKey(c);
    if (key.revoked_at) throw new PortalError(400, 'A revoked key cannot be changed.');
    const form = { ...readForm(c), kind: key.kind };
    const { errors, limit } = check(form, key.kind, key.kind);
    if (Object.keys(errors).length > 0) {
      const [row] = await rows(c.state.session!.accountId, [key]);
      return sendPage(ctx, <KeyPage page={pageContext(c)} apiKey={row!} form={form} errors={errors} base={baseUrl(ctx, config)} />, 400);
    }
    await updateKey(db, c.state.session!.accountId, key.id, {
      appName: form.appName,
      redirectUrl: form.redirectUrl || null,
      monthlyLimit: limit,
      allowedOrigins: key.kind === 'widget' ? originLines(form.allowedOrigins) : [],
      ...(key.kind === 'api' ? { student: form.student === true } : {}),
    });
    ctx.redirect(`/keys/${key.id}?saved=1`);
  });

  router.post('/keys/:id/roll', async (ctx) => {
    const c = ctx as PortalContext;
    const key = await ownKey(c);
    if (key.kind === 'widget') throw new PortalError(400, 'A widget key has no signing secret: it sends no callbacks.');
    const rolled = await rollSigningSecret(db, c.state.session!.accountId, key.id).catch((err) => {
      if (err instanceof AccountInputError) throw new PortalError(400, 'A revoked key has no signing secret to roll.');
      throw err;
    });
    await holdReveal(db, c.state.session!.idHash, key.id, { key: null, signing_secret: rolled.signing_secret });
    seeOther(ctx, `/keys/${key.id}/secret`);
  });

  router.get('/keys/:id/secret', async (ctx) => {
    const c = ctx as PortalContext;
    const key = await ownKey(c);
    const reveal = await takeReveal(db, c.state.session!.idHash, key.id);
    if (!reveal?.signing_secret || reveal.key) {
      // A new key's reveal belongs to its own page.
      if (reveal?.key) await holdReveal(db, c.state.session!.idHash, key.id, reveal);
      return ctx.redirect(`/keys/${key.id}?shown=1`);
    }
    sendPage(ctx, <SecretRolledPage page={pageContext(c)} apiKey={key} signingSecret={reveal.signing_secret} />);
  });

  router.get('/keys/:id/revoke', async (ctx) => {
    const c = ctx as PortalContext;
    sendPage(ctx, <RevokePage page={pageContext(c)} apiKey={await ownKey(c)} />);
  });

  router.post('/keys/:id/revoke', async (ctx) => {
    const c = ctx as PortalContext;
    const key = await ownKey(c);
    await revokeKey(db, key.id);
    ctx.redirect('/keys?done=revoked');
  });
}

/** 303: the browser follows with a GET, so a reload repeats the GET, never the POST. */
function seeOther(ctx: PortalContext, path: string): void {
  ctx.status = 303;
  ctx.redirect(path);
}
