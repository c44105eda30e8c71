import type Router from '@koa/router';
import { accountIdByEmail, checkEmail as checkEmailAddress, createAccount } from '../../accounts/accounts.js';
import { AccountInputError, EmailTakenError } from '../../accounts/errors.js';
import { checkPasswordRules, findLogin, hashPassword, passwordMatches, setPassword, setPasswordHash } from '../../accounts/passwords.js';
import { consumeToken, issueToken, peekToken } from '../../accounts/tokens.js';
import { publicUrl } from '../../config.js';
import { setCookie } from '../cookies.js';
import { beginLogin, loginFailed, loginSucceeded } from '../login-limit.js';
import { mailConfigured, resetMessage, sendPortalMail, signupExistsMessage, verifyMessage } from '../mail.js';
import { admitSignup } from '../signup-limit.js';
import { sendPage } from '../render.js';
import { ABSOLUTE_MS, createSession, endAllSessions, endSession, SESSION_COOKIE } from '../sessions.js';
import { field, pageContext, PortalError, type PortalContext, type PortalDeps, type PortalState } from '../state.js';
import { ForgotPage, LoginPage, MessagePage, ResetPage, SignupClosedPage, SignupPage } from '../views/auth.js';

// Sign up, log in, log out, forgotten password, reset and verification links.

const TAKEN = 'an account with this address already exists; log in, or ask for a password reset';

/** Only paths of this site: a `next` of //evil.example or https://… is dropped. */
function localPath(raw: string): string {
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(raw) ? raw : '/';
}

export function secureCookies(deps: PortalDeps): boolean {
  return deps.config.RUNBOX_PUBLIC_URL.startsWith('https://');
}

/** Rotates the session at log-in: any earlier session of this browser ends, a new id is issued. */
async function logIn(ctx: PortalContext, deps: PortalDeps, accountId: string): Promise<void> {
  if (ctx.state.session) await endSession(deps.db, ctx.state.session.idHash);
  const { id } = await createSession(deps.db, accountId);
  setCookie(ctx, SESSION_COOKIE, id, { secure: secureCookies(deps), maxAge: ABSOLUTE_MS / 1000 });
}

// Links in emails use the configured address, never the request's Host header (which a
// caller controls and could point at another site).
async function sendVerification(deps: PortalDeps, accountId: string, email: string): Promise<void> {
  const { token } = await issueToken(deps.db, 'verify', email, accountId);
  const m = verifyMessage(`${publicUrl(deps.config)}/verify?token=${token}`);
  await sendPortalMail(deps.config, email, m.subject, m.text);
}

/** To the owner of an address a sign-up found taken: the page says nothing about it. */
async function sendExistsNote(deps: PortalDeps, typed: string): Promise<void> {
  const owner = await findLogin(deps.db, typed);
  if (!owner) return;
  const base = publicUrl(deps.config);
  const m = signupExistsMessage(`${base}/login`, `${base}/forgot`);
  await sendPortalMail(deps.config, owner.email, m.subject, m.text);
}

/** The answer to a sign-up when SMTP is configured, the same for a new address and a taken one. */
function checkEmail(ctx: PortalContext, email: string): void {
  sendPage(
    ctx,
    <MessagePage
      page={pageContext(ctx)}
      title="Check your email"
      text={`We sent a message to ${email}. Open the link in it to confirm your address; then log in with your password.`}
      link={['/login', 'Log in']}
    />,
  );
}

export function authRoutes(router: Router<PortalState>, deps: PortalDeps): void {
  const { db, config } = deps;

  /** Whether this visitor may sign up, and with which address when an invite fixes it. */
  const signupGate = async (invite: string): Promise<{ email?: string } | 'closed'> => {
    if (config.RUNBOX_SIGNUP === 'closed') return 'closed';
    if (config.RUNBOX_SIGNUP === 'invite' || invite !== '') {
      const row = invite ? await peekToken(db, 'invite', invite) : undefined;
      if (!row) {
        if (config.RUNBOX_SIGNUP === 'invite') return 'closed';
        throw new PortalError(404, 'This invite link is unknown, used or expired.');
      }
      return { email: row.email };
    }
    return {};
  };

  router.get('/signup', async (ctx) => {
    const c = ctx as PortalContext;
    if (c.state.session) return ctx.redirect('/');
    const invite = String(ctx.query['invite'] ?? '');
    const gate = await signupGate(invite);
    if (gate === 'closed') return sendPage(ctx, <SignupClosedPage page={pageContext(c)} invite={config.RUNBOX_SIGNUP === 'invite'} />, 403);
    sendPage(ctx, <SignupPage page={pageContext(c)} invite={invite || undefined} email={gate.email} emailFixed={gate.email !== undefined} />);
  });

  router.post('/signup', async (ctx) => {
    const c = ctx as PortalContext;
    const invite = field(c, 'invite');
    const gate = await signupGate(invite);
    if (gate === 'closed') return sendPage(ctx, <SignupClosedPage page={pageContext(c)} invite={config.RUNBOX_SIGNUP === 'invite'} />, 403);
    const email = gate.email ?? field(c, 'email').trim();
    const password = field(c, 'password');
    // Every field's error at once: the address, the password, and (where the page may
    // say so, without SMTP) an address that has an account already.
    const errors: Record<string, string> = {};
    if (gate.email === undefined) {
      try {
        checkEmailAddress(email);
      } catch (err) {
        errors['email'] = (err as Error).message;
      }
    }
    try {
      checkPasswordRules(password);
    } catch (err) {
      errors['password'] = (err as Error).message;
    }
    const again = () =>
      sendPage(ctx, <SignupPage page={pageContext(c)} invite={invite || undefined} email={email} emailFixed={gate.email !== undefined} errors={errors} />, 400);
    if (errors['password'] || errors['email']) {
      if (!errors['email'] && !(mailConfigured(config) && !invite) && gate.email === undefined && (await accountIdByEmail(db, email))) errors['email'] = TAKEN;
      return again();
    }
    if (!(await admitSignup(db, ctx.ip || 'unknown', config.RUNBOX_SIGNUPS_PER_HOUR))) {
      throw new PortalError(429, 'Too many sign-ups from your network. Try again in an hour.');
    }
    // With SMTP (and no invite, whose holder has shown they own the address) the answer
    // is the same whether or not the address has an account: the owner is told by email.
    const byMail = mailConfigured(config) && !invite;
    // Made before the address is looked at, so both answers cost the same.
    const passwordHash = await hashPassword(password);
    let accountId: string;
    try {
      accountId = (await createAccount(db, email)).id;
    } catch (err) {
      if (!(err instanceof AccountInputError)) throw err;
      if (err instanceof EmailTakenError) {
        if (byMail) {
          await sendExistsNote(deps, email).catch((e: Error) => deps.log?.error({ err: e.message }, 'sign-up note not sent'));
          return checkEmail(c, email);
        }
        errors['email'] = TAKEN;
      } else errors['email'] = err.message;
      return again();
    }
    await setPasswordHash(db, accountId, passwordHash);
    // An invite was sent to this address: following it proves the address.
    if (invite) await consumeToken(db, 'invite', invite);
    if (byMail) {
      await db.updateTable('accounts').set({ email_verified_at: null }).where('id', '=', accountId).execute();
      await sendVerification(deps, accountId, email).catch((err: Error) => deps.log?.error({ err: err.message }, 'verification email not sent'));
      return checkEmail(c, email);
    }
    await logIn(c, deps, accountId);
    ctx.redirect('/?welcome=1');
  });

  router.get('/login', async (ctx) => {
    const c = ctx as PortalContext;
    if (c.state.session) return ctx.redirect('/');
    const notices = ctx.query['reset'] ? [{ kind: 'ok' as const, text: 'Your password is set. Log in with it.' }] : ctx.query['out'] ? [{ kind: 'ok' as const, text: 'You are logged out.' }] : [];
    sendPage(ctx, <LoginPage page={pageContext(c)} next={typeof ctx.query['next'] === 'string' ? localPath(ctx.query['next']) : undefined} notices={notices} />);
  });

  router.post('/login', async (ctx) => {
    const c = ctx as PortalContext;
    const email = field(c, 'email').trim().toLowerCase().slice(0, 320);
    const password = field(c, 'password');
    const next = localPath(field(c, 'next') || '/');
    const ip = ctx.ip || 'unknown';
    // The attempt counts before the password is checked: attempts sent at once cannot
    // check more passwords than the limit allows.
    const attempt = await beginLogin(db, email, ip);
    if (attempt === null) {
      return sendPage(ctx, <LoginPage page={pageContext(c)} email={email} next={next} error="Too many log-in attempts. Wait 15 minutes and try again." />, 429);
    }
    const account = await findLogin(db, email);
    const ok = await passwordMatches(account?.password_hash ?? null, password);
    if (!ok || !account) {
      // One message whether the address is unknown or the password wrong.
      loginFailed(email, ip);
      return sendPage(ctx, <LoginPage page={pageContext(c)} email={email} next={next} error="Wrong email or password." />, 401);
    }
    await loginSucceeded(db, attempt, email, ip);
    await logIn(c, deps, account.id);
    ctx.redirect(next);
  });

  router.post('/logout', async (ctx) => {
    const c = ctx as PortalContext;
    if (c.state.session) await endSession(db, c.state.session.idHash);
    setCookie(ctx, SESSION_COOKIE, '', { secure: secureCookies(deps), maxAge: 0 });
    ctx.redirect('/login?out=1');
  });

  router.get('/forgot', async (ctx) => {
    sendPage(ctx, <ForgotPage page={pageContext(ctx as PortalContext)} smtp={mailConfigured(config)} />);
  });

  router.post('/forgot', async (ctx) => {
    const c = ctx as PortalContext;
    if (!mailConfigured(config)) return sendPage(ctx, <ForgotPage page={pageContext(c)} smtp={false} />, 400);
    const email = field(c, 'email').trim();
    const account = email ? await findLogin(db, email) : undefined;
    if (account) {
      const { token } = await issueToken(db, 'reset', account.email, account.id);
      const m = resetMessage(`${publicUrl(config)}/reset?token=${token}`);
      await sendPortalMail(config, account.email, m.subject, m.text).catch((err: Error) => deps.log?.error({ err: err.message }, 'reset email not sent'));
    }
    // The same answer whether or not the address has an account.
    sendPage(ctx, <ForgotPage page={pageContext(c)} smtp notices={[{ kind: 'ok', text: 'If an account has this address, a reset link is on its way.' }]} />);
  });

  const resetTarget = async (token: string) => {
    const row = await peekToken(db, 'reset', token);
    if (!row || row.account_id === null) throw new PortalError(404, 'This link is unknown, used or expired. Ask for a new one.');
    return { ...row, account_id: row.account_id };
  };

  router.get('/reset', async (ctx) => {
    const token = String(ctx.query['token'] ?? '');
    const row = await resetTarget(token);
    sendPage(ctx, <ResetPage page={pageContext(ctx as PortalContext)} token={token} email={row.email} />);
  });

  router.post('/reset', async (ctx) => {
    const c = ctx as PortalContext;
    const token = field(c, 'token');
    const row = await resetTarget(token);
    const password = field(c, 'password');
    try {
      checkPasswordRules(password);
    } catch (err) {
      return sendPage(ctx, <ResetPage page={pageContext(c)} token={token} email={row.email} error={(err as Error).message} />, 400);
    }
    if (!(await consumeToken(db, 'reset', token))) throw new PortalError(404, 'This link is unknown, used or expired. Ask for a new one.');
    await setPassword(db, row.account_id, password);
    // The link reached the address: it is verified; every old session ends.
    await db.updateTable('accounts').set({ email_verified_at: new Date() }).where('id', '=', row.account_id).where('email_verified_at', 'is', null).execute();
    await endAllSessions(db, row.account_id);
    setCookie(ctx, SESSION_COOKIE, '', { secure: secureCookies(deps), maxAge: 0 });
    ctx.redirect('/login?reset=1');
  });

  router.get('/verify', async (ctx) => {
    const c = ctx as PortalContext;
    const row = await consumeToken(db, 'verify', String(ctx.query['token'] ?? ''));
    if (!row || row.account_id === null) throw new PortalError(404, 'This link is unknown, used or expired. Log in and ask for a new one on the Account page.');
    await db.updateTable('accounts').set({ email_verified_at: new Date() }).where('id', '=', row.account_id).where('email_verified_at', 'is', null).execute();
    sendPage(ctx, <MessagePage page={pageContext(c)} title="Address confirmed" text={`${row.email} is confirmed. You can create API keys now.`} link={['/keys', 'Go to API keys']} />);
  });

  // Resending the verification link and the account's own password and session actions live on /account.
  router.post('/account/verify', async (ctx) => {
    const c = ctx as PortalContext;
    const s = c.state.session;
    if (!s) throw new PortalError(401, 'Log in first.');
    if (!s.emailVerified && mailConfigured(config)) await sendVerification(deps, s.accountId, s.email);
    ctx.redirect('/account?sent=1');
  });
}
