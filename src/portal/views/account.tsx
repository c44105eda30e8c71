import { PASSWORD_MIN_CHARS } from '../../accounts/passwords.js';
import { CsrfField, Field, firstError, Layout, type Notice, type PageContext } from './layout.js';

export function AccountPage(p: { page: PageContext; plan: string; verified: boolean; smtp: boolean; errors?: Record<string, string>; notices?: Notice[] }) {
  const first = firstError(p.errors ?? {}, ['current', 'password']);
  return (
    <Layout title="Account" page={p.page} notices={p.notices}>
      <p>
        Signed in as <strong>{p.page.email}</strong> on the <strong>{p.plan}</strong> plan.
      </p>
      {!p.verified && p.smtp && (
        <form method="post" action="/account/verify">
          <CsrfField token={p.page.csrf} />
          <p>Your address is not confirmed yet, so keys cannot be created.</p>
          <button type="submit" class="secondary">
            Send the confirmation link again
          </button>
        </form>
      )}
      <h2>Change password</h2>
      <form class="stack" method="post" action="/account/password" noValidate>
        <CsrfField token={p.page.csrf} />
        <Field name="current" label="Current password" type="password" error={p.errors?.['current']} required autocomplete="current-password" autofocus={first === 'current'} />
        <Field
          name="password"
          label="New password"
          type="password"
          error={p.errors?.['password']}
          autofocus={first === 'password'}
          hint={`At least ${PASSWORD_MIN_CHARS} characters. Your other sessions end.`}
          required
          autocomplete="new-password"
        />
        <div>
          <button type="submit">Change password</button>
        </div>
      </form>
      <h2>Sessions</h2>
      <form method="post" action="/account/logout-everywhere">
        <CsrfField token={p.page.csrf} />
        <p>End every session of this account, on every browser, this one included.</p>
        <button type="submit" class="secondary">
          Log out everywhere
        </button>
      </form>
    </Layout>
  );
}
