import { PASSWORD_MIN_CHARS } from '../../accounts/passwords.js';
import { CsrfField, Field, firstError, Layout, type Notice, type PageContext } from './layout.js';

// Sign up, log in, forgotten and new passwords.

export type Errors = Partial<Record<string, string>>;

export function SignupPage(p: { page: PageContext; email?: string; invite?: string; errors?: Errors; emailFixed?: boolean; notices?: Notice[] }) {
  // The first field with an error takes the focus as the page loads (no script needed).
  const first = firstError(p.errors ?? {}, ['email', 'password']);
  const count = Object.values(p.errors ?? {}).filter(Boolean).length;
  return (
    <Layout
      title="Sign up"
      page={p.page}
      notices={[...(p.notices ?? []), ...(count > 0 ? [{ kind: 'bad' as const, text: count === 1 ? 'One field needs a change (below).' : `${count} fields need a change (below).` }] : [])]}
    >
      <form class="stack" method="post" action="/signup" noValidate>
        <CsrfField token={p.page.csrf} />
        {p.invite && <input type="hidden" name="invite" value={p.invite} />}
        {p.emailFixed ? (
          <div>
            <label for="f-email">Email</label>
            <input id="f-email" type="email" name="email" value={p.email} readOnly />
          </div>
        ) : (
          <Field name="email" label="Email" type="email" value={p.email} error={p.errors?.email} required autocomplete="email" autofocus={first === 'email'} />
        )}
        <Field
          name="password"
          label="Password"
          type="password"
          error={p.errors?.password}
          hint={`At least ${PASSWORD_MIN_CHARS} characters.`}
          required
          autocomplete="new-password"
          autofocus={first === 'password'}
        />
        <div>
          <button type="submit">Sign up</button>
        </div>
      </form>
      <p>
        Already have an account? <a href="/login">Log in</a>
      </p>
    </Layout>
  );
}

export function SignupClosedPage(p: { page: PageContext; invite: boolean }) {
  return (
    <Layout title="Sign up" page={p.page}>
      <p>
        {p.invite
          ? 'Sign-up on this service is by invitation. Ask its operator for an invite link.'
          : 'Sign-up on this service is closed. Ask its operator for an account.'}
      </p>
      <p>
        Already have an account? <a href="/login">Log in</a>
      </p>
    </Layout>
  );
}

export function LoginPage(p: { page: PageContext; email?: string; next?: string; error?: string; notices?: Notice[] }) {
  return (
    <Layout title="Log in" page={p.page} notices={[...(p.notices ?? []), ...(p.error ? [{ kind: 'bad' as const, text: p.error }] : [])]}>
      <form class="stack" method="post" action="/login" noValidate>
        <CsrfField token={p.page.csrf} />
        {p.next && <input type="hidden" name="next" value={p.next} />}
        <Field name="email" label="Email" type="email" value={p.email} required autocomplete="username" />
        <Field name="password" label="Password" type="password" required autocomplete="current-password" />
        <div>
          <button type="submit">Log in</button>
        </div>
      </form>
      <p>
        <a href="/forgot">Forgot your password?</a> · No account yet? <a href="/signup">Sign up</a>
      </p>
    </Layout>
  );
}

export function ForgotPage(p: { page: PageContext; smtp: boolean; notices?: Notice[] }) {
  return (
    <Layout title="Forgot password" page={p.page} notices={p.notices}>
      {p.smtp ? (
        <form class="stack" method="post" action="/forgot" noValidate>
          <CsrfField token={p.page.csrf} />
          <Field name="email" label="Email" type="email" required autocomplete="email" hint="We send a link to set a new password to this address." />
          <div>
            <button type="submit">Send reset link</button>
          </div>
        </form>
      ) : (
        <p>
          This service sends no email, so it cannot send you a reset link. Ask the operator of this service (whoever runs it for you) to reset your
          password: they can give you a link to set a new one.
        </p>
      )}
    </Layout>
  );
}

export function ResetPage(p: { page: PageContext; token: string; email: string; error?: string }) {
  return (
    <Layout title="Set a new password" page={p.page}>
      <form class="stack" method="post" action="/reset" noValidate>
        <CsrfField token={p.page.csrf} />
        <input type="hidden" name="token" value={p.token} />
        <div>
          <label for="f-email">Email</label>
          <input id="f-email" type="email" value={p.email} readOnly autoComplete="username" />
        </div>
        <Field
          name="password"
          label="New password"
          type="password"
          error={p.error}
          autofocus={!!p.error}
          hint={`At least ${PASSWORD_MIN_CHARS} characters.`}
          required
          autocomplete="new-password"
        />
        <div>
          <button type="submit">Set password</button>
        </div>
      </form>
    </Layout>
  );
}

export function MessagePage(p: { page: PageContext; title: string; text: string; link?: [string, string] }) {
  return (
    <Layout title={p.title} page={p.page}>
      <p>{p.text}</p>
      {p.link && (
        <p>
          <a href={p.link[0]}>{p.link[1]}</a>
        </p>
      )}
    </Layout>
  );
}
