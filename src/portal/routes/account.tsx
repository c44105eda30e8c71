import type Router from '@koa/router';
import { getAccount } from '../../accounts/accounts.js';
import { checkPasswordRules, findLogin, passwordMatches, setPassword } from '../../accounts/passwords.js';
import { setCookie } from '../cookies.js';
import { mailConfigured } from '../mail.js';
import { sendPage } from '../render.js';
import { ABSOLUTE_MS, createSession, endAllSessions, SESSION_COOKIE } from '../sessions.js';
import { field, pageContext, type PortalContext, type PortalDeps, type PortalState } from '../state.js';
import { AccountPage } from '../views/account.js';
import type { Notice } from '../views/layout.js';
import { secureCookies } from './auth.js';

// The account's own settings: password, sessions, address confirmation.

export function accountRoutes(router: Router<PortalState>, deps: PortalDeps): void {
  const { db, config } = deps;

  const show = async (ctx: PortalContext, status = 200, errors?: Record<string, string>, notices: Notice[] = []) => {
    const s = ctx.state.session!;
    const account = (await getAccount(db, s.accountId))!;
    sendPage(ctx, <AccountPage page={pageContext(ctx)} plan={account.plan} verified={s.emailVerified} smtp={mailConfigured(config)} errors={errors} notices={notices} />, status);
  };

  router.get('/account', async (ctx) => {
    const notices: Notice[] = [];
    if (ctx.query['sent']) notices.push({ kind: 'ok', text: 'A new confirmation link is on its way.' });
    if (ctx.query['password']) notices.push({ kind: 'ok', text: 'Your password is changed; your other sessions have ended.' });
    await show(ctx as PortalContext, 200, undefined, notices);
  });

  router.post('/account/password', async (ctx) => {
    const c = ctx as PortalContext;
    const s = c.state.session!;
    const login = await findLogin(db, s.email);
    const errors: Record<string, string> = {};
    if (!(await passwordMatches(login?.password_hash ?? null, field(c, 'current')))) errors['current'] = 'this is not your current password';
    try {
      checkPasswordRules(field(c, 'password'));
    } catch (err) {
      errors['password'] = (err as Error).message;
    }
    if (Object.keys(errors).length > 0) return show(c, 400, errors);
    await setPassword(db, s.accountId, field(c, 'password'));
    // Every other session ends; this browser gets a fresh one.
    await endAllSessions(db, s.accountId);
    const { id } = await createSession(db, s.accountId);
    setCookie(ctx, SESSION_COOKIE, id, { secure: secureCookies(deps), maxAge: ABSOLUTE_MS / 1000 });
    ctx.redirect('/account?password=1');
  });

  router.post('/account/logout-everywhere', async (ctx) => {
    const c = ctx as PortalContext;
    await endAllSessions(db, c.state.session!.accountId);
    setCookie(ctx, SESSION_COOKIE, '', { secure: secureCookies(deps), maxAge: 0 });
    ctx.redirect('/login?out=1');
  });
}
