import type { KeyListing } from '../../accounts/keys.js';
import { fmtCount } from '../format.js';
import { Count, CsrfField, Field, firstError, Layout, RevokedToggle, SecretField, TableBox, When, type Notice, type PageContext } from './layout.js';

// The API keys page: the list, "+ Create New", a key's page (edit, roll, revoke), and
// the once-only display of a new key or signing secret.

export interface KeyRow extends KeyListing {
  runs_this_month: number;
  remaining: number | null;
  last_used: Date | null;
}

export interface KeyForm {
  appName: string;
  redirectUrl: string;
  monthlyLimit: string;
  kind: 'api' | 'widget';
  allowedOrigins: string;
  /** API keys: a student's key (sees the account's problems under their feedback setting). */
  student?: boolean;
}

export type KeyErrors = Partial<Record<keyof KeyForm, string>>;

export const kindLabel = (kind: string) => (kind === 'widget' ? 'Widget key' : 'API key');

/** A key's usage figures as table cells, each named by its usage field (data-field), as the key rows of the keys list and the dashboard show them. */
export function KeyUsageCells(p: { k: KeyRow }) {
  const { k } = p;
  return (
    <>
      <td class="num" data-field="submissions">
        {fmtCount(k.runs_this_month)}
      </td>
      <td class="num" data-field="monthly_limit">
        {k.monthly_limit === null ? 'none' : fmtCount(k.monthly_limit)}
      </td>
      <td class="num" data-field="remaining">
        {k.remaining === null ? '—' : fmtCount(k.remaining)}
      </td>
    </>
  );
}

/** Where a page of a list stands: how many more after it, the next page's key, whether it is the first. */
export interface ListPosition {
  more: number;
  next: string | null;
  first: boolean;
}

/** "N shown, newest first; M more", and the links to the newest and to the next (older) page. */
export function ListPager(p: { shown: number; list: ListPosition; noun: string; path: string }) {
  const { more, next, first } = p.list;
  return (
    <>
      {(p.shown > 0 || !first) && (
        <p data-field="more">
          {p.shown} shown, newest first; {more === 0 ? 'no more.' : `${fmtCount(more)} more ${more === 1 ? p.noun.replace(/s$/, '') : p.noun}.`}
        </p>
      )}
      {(!first || next !== null) && (
        <nav class="pager" aria-label="Pages">
          {!first && <a href={p.path}>Newest</a>}
          {next !== null && <a href={`${p.path}?after=${encodeURIComponent(next)}`}>Older</a>}
        </nav>
      )}
    </>
  );
}

export function KeysPage(p: { page: PageContext; keys: KeyRow[]; list: ListPosition; revokedCount: number; showRevoked: boolean; canCreate: boolean; notices?: Notice[] }) {
  return (
    <Layout title="API keys" page={p.page} notices={p.notices} scripts={['portal.js']}>
      <p>
        API keys authenticate calls to the API (<code>Authorization: &lt;key&gt;</code>). Widget keys run the embeddable widget from the origins you allow.
      </p>
      {p.canCreate ? (
        <p>
          <a class="button" href="/keys/new">
            + Create New
          </a>
        </p>
      ) : (
        <p class="notice warn">Confirm your email address (see the Account page) before creating keys.</p>
      )}
      <RevokedToggle path="/keys" shown={p.showRevoked} count={p.revokedCount} />
      {p.keys.length === 0 && p.list.first ? (
        <p>{p.revokedCount > 0 && !p.showRevoked ? 'No active keys.' : 'No keys yet.'}</p>
      ) : (
        <TableBox label="Your keys">
          <table>
            <caption class="muted">Your keys; runs and remaining are this month's (UTC).</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">App Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Redirect Url</th>
                <th scope="col">Allowed origins</th>
                <th scope="col" class="num">Runs this month</th>
                <th scope="col" class="num">Own limit</th>
                <th scope="col" class="num">Remaining</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {p.keys.map((k) => (
                <tr data-key-id={k.id} data-key-prefix={k.key_prefix}>
                  <td class="mono nowrap">{k.key_prefix}…</td>
                  <td>
                    <a href={`/keys/${k.id}`}>{k.app_name}</a>
                  </td>
                  <td>{kindLabel(k.kind)}{k.student ? ' (student)' : ''}</td>
                  <td class="mono">{k.redirect_url ?? '—'}</td>
                  <td class="mono" data-field="allowed_origins">
                    {k.kind === 'widget' ? k.allowed_origins.map((o) => <div>{o}</div>) : '—'}
                  </td>
                  <KeyUsageCells k={k} />
                  <td>
                    <When d={k.created_at} />
                  </td>
                  <td>{k.last_used ? <When d={k.last_used} /> : 'never'}</td>
                  <td class={k.revoked_at ? 'state-revoked' : 'state-active'}>
                    {k.revoked_at ? (
                      <>
                        Revoked <When d={k.revoked_at} />
                      </>
                    ) : (
                      'Active'
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      <ListPager shown={p.keys.length} list={p.list} noun="keys" path="/keys" />
    </Layout>
  );
}

const FIELD_ORDER: (keyof KeyForm)[] = ['appName', 'redirectUrl', 'monthlyLimit', 'kind', 'allowedOrigins'];

function KeyFields(p: { form: KeyForm; errors: KeyErrors; fixedKind?: boolean }) {
  const { form, errors } = p;
  // The first field with an error takes the focus when the page loads (no script needed).
  const first = firstError(errors, FIELD_ORDER);
  const widget = p.fixedKind && form.kind === 'widget';
  return (
    <>
      <Field name="app_name" label="App Name" value={form.appName} error={errors.appName} required autofocus={first === 'appName'} />
      {!widget && (
        <Field
          name="redirect_url"
          label="Redirect Url"
          type="url"
          value={form.redirectUrl}
          error={errors.redirectUrl}
          autofocus={first === 'redirectUrl'}
          hint="API keys only. Results of asynchronous runs are POSTed here, signed with the key's signing secret. Optional."
        />
      )}
      <Field
        name="monthly_limit"
        label="Monthly limit"
        inputMode="numeric"
        value={form.monthlyLimit}
        error={errors.monthlyLimit}
        autofocus={first === 'monthlyLimit'}
        hint="Runs per calendar month (UTC) for this key alone. Empty: no limit of its own (the account's allowance applies)."
      />
      {!p.fixedKind && (
        <fieldset aria-describedby={errors.kind ? 'f-kind-error' : undefined}>
          <legend>Kind</legend>
          <input type="radio" id="kind-api" name="kind" value="api" checked={form.kind === 'api'} autoFocus={first === 'kind'} />
          <label for="kind-api">API key</label>
          <input type="radio" id="kind-widget" name="kind" value="widget" checked={form.kind === 'widget'} />
          <label for="kind-widget">Widget key</label>
          {errors.kind && (
            <p class="field-error" id="f-kind-error">
              {errors.kind}
            </p>
          )}
        </fieldset>
      )}
      {(!p.fixedKind || form.kind === 'api') && (
        <p>
          <input type="checkbox" id="f-student" name="student" checked={form.student === true} aria-describedby="f-student-hint" />
          <label for="f-student">Student key</label>
          <span class="hint" id="f-student-hint">
            {' '}API keys: runs against this account's problems show only what each problem's feedback setting allows (as widget keys always do).
          </span>
        </p>
      )}
      {(!p.fixedKind || form.kind === 'widget') && (
        <Field
          name="allowed_origins"
          label="Allowed origins"
          multiline
          value={form.allowedOrigins}
          error={errors.allowedOrigins}
          autofocus={first === 'allowedOrigins'}
          hint="Widget keys (at least one): the sites the widget may run on, one per line, as scheme://host[:port] (e.g. https://docs.example.com)."
        />
      )}
    </>
  );
}

export function NewKeyPage(p: { page: PageContext; form: KeyForm; errors: KeyErrors }) {
  return (
    <Layout title="Create a key" page={p.page}>
      <form class="stack" method="post" action="/keys" noValidate>
        <CsrfField token={p.page.csrf} />
        <KeyFields form={p.form} errors={p.errors} />
        <div class="actions">
          <button type="submit">Create</button>
          <a href="/keys">Cancel</a>
        </div>
      </form>
    </Layout>
  );
}

/** What the embed snippet on a widget key's own page says in place of the key, which only the page shown at creation knows. */
export const KEY_PLACEHOLDER = 'YOUR_WIDGET_KEY';

export function embedSnippet(base: string, key: string): string {
  return `<script type="module" src="${base}/widget/v1.js"></script>\n<runbox-widget key="${key}" compiler="python-3.9.7">print("hello")</runbox-widget>`;
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The embed snippet: with the whole key on the page shown at creation (the one time it
 * is known: keys are stored hashed), with a placeholder to replace everywhere else;
 * and on the page shown at creation, the widget itself running with that key.
 */
function Embed(p: { base: string; fullKey?: string; prefix: string; origins?: string[] }) {
  const origin = new URL(p.base).origin;
  return (
    <section aria-labelledby="embed-h">
      <h2 id="embed-h">Embed the widget</h2>
      <label for="embed-snippet">Embed snippet</label>
      <textarea id="embed-snippet" readOnly rows={4} spellcheck={false} aria-describedby={p.fullKey ? undefined : 'embed-hint'}>
        {embedSnippet(p.base, p.fullKey ?? KEY_PLACEHOLDER)}
      </textarea>
      {!p.fullKey && (
        <p class="hint" id="embed-hint">
          Replace <code>{KEY_PLACEHOLDER}</code> with this widget key (the one starting <span class="mono">{p.prefix}</span>), as it was shown when the key was
          created. Keys are stored hashed, so this page cannot show it; if it is lost, create a new widget key and revoke this one.
        </p>
      )}
      <p>
        <button type="button" class="secondary" data-copy="embed-snippet" aria-label="Copy embed snippet">
          Copy
        </button>
      </p>
      <h3>Live preview</h3>
      {p.fullKey ? (
        <>
          {!p.origins?.includes(origin) && (
            <p class="muted">
              Runs from this preview are refused unless {origin} is one of the key's allowed origins; on your own pages the widget runs from
              the origins you listed.
            </p>
          )}
          {/* A custom element with a `key` attribute, which JSX would take for its own. */}
          <div
            class="widget-preview"
            id="widget-preview"
            data-widget-preview=""
            dangerouslySetInnerHTML={{
              __html: `<runbox-widget key="${escapeAttr(p.fullKey)}" api="${escapeAttr(origin)}" compiler="python-3.9.7">print(&quot;hello&quot;)</runbox-widget>`,
            }}
          />
          <script type="module" src="/widget/v1.js" />
        </>
      ) : (
        <p class="muted">The preview runs on the page shown when a widget key is created, the one time its whole key is known.</p>
      )}
    </section>
  );
}

export function KeyCreatedPage(p: { page: PageContext; apiKey: KeyListing; secret: string; signingSecret: string | null; base: string }) {
  const widget = p.apiKey.kind === 'widget';
  return (
    <Layout title="Key created" page={p.page} scripts={['portal.js']}>
      <p class="notice warn" role="alert">
        {p.signingSecret ? 'Copy the key and its signing secret now: they will not be shown again.' : 'Copy the key now: it will not be shown again.'}
      </p>
      <p>
        <strong>{p.apiKey.app_name}</strong> ({kindLabel(p.apiKey.kind)})
      </p>
      <SecretField id="new-key" label={kindLabel(p.apiKey.kind)} value={p.secret} />
      {p.signingSecret && <SecretField id="new-secret" label="Signing secret" value={p.signingSecret} />}
      {widget && (
        <>
          <p>Allowed origins: {p.apiKey.allowed_origins.join(', ')}. A widget key works only in the widget, on those sites; it has no signing secret.</p>
          <Embed base={p.base} fullKey={p.secret} prefix={p.apiKey.key_prefix} origins={p.apiKey.allowed_origins} />
        </>
      )}
      <p>
        <a href={`/keys/${p.apiKey.id}`}>Go to the key's page</a> · <a href="/keys">Back to API keys</a>
      </p>
    </Layout>
  );
}

export function SecretRolledPage(p: { page: PageContext; apiKey: KeyListing; signingSecret: string }) {
  return (
    <Layout title="New signing secret" page={p.page} scripts={['portal.js']}>
      <p class="notice warn" role="alert">
        Callbacks of {p.apiKey.app_name} are signed with this new secret from now on. Copy it now: it will not be shown again.
      </p>
      <SecretField id="new-secret" label="Signing secret" value={p.signingSecret} />
      <p>
        <a href={`/keys/${p.apiKey.id}`}>Back to the key</a>
      </p>
    </Layout>
  );
}

export function KeyPage(p: { page: PageContext; apiKey: KeyRow; form: KeyForm; errors: KeyErrors; base: string; notices?: Notice[] }) {
  const k = p.apiKey;
  const active = k.revoked_at === null;
  return (
    <Layout title={k.app_name} page={p.page} notices={p.notices} scripts={['portal.js']}>
      <dl class="figures">
        <div>
          <dt>Key</dt>
          <dd class="mono">{k.key_prefix}…</dd>
        </div>
        <div>
          <dt>Kind</dt>
          <dd>{kindLabel(k.kind)}</dd>
        </div>
        <div>
          <dt>Runs this month</dt>
          <dd data-field="submissions">
            <Count n={k.runs_this_month} />
          </dd>
        </div>
        <div>
          <dt>Remaining</dt>
          <dd data-field="remaining">
            <Count n={k.remaining} />
          </dd>
        </div>
        <div>
          <dt>State</dt>
          <dd class={active ? 'state-active' : 'state-revoked'}>{active ? 'Active' : 'Revoked'}</dd>
        </div>
      </dl>
      {active ? (
        <>
          <h2>Edit</h2>
          <form class="stack" method="post" action={`/keys/${k.id}`} noValidate>
            <CsrfField token={p.page.csrf} />
            <KeyFields form={p.form} errors={p.errors} fixedKind />
            <div>
              <button type="submit">Save</button>
            </div>
          </form>
          {k.kind === 'widget' && <Embed base={p.base} prefix={k.key_prefix} />}
          {k.kind === 'api' && (
            <>
              <h2>Signing secret</h2>
              <form method="post" action={`/keys/${k.id}/roll`}>
                <CsrfField token={p.page.csrf} />
                <p>A new secret replaces the current one at once; the new one is shown once.</p>
                <button type="submit" class="secondary">
                  Roll signing secret
                </button>
              </form>
            </>
          )}
          <h2>Revoke</h2>
          <p>A revoked key answers 401 at once, for good.</p>
          <p>
            <a class="button secondary" href={`/keys/${k.id}/revoke`}>
              Revoke key…
            </a>
          </p>
        </>
      ) : (
        <p>
          This key was revoked at <When d={k.revoked_at} />; calls with it answer 401.
        </p>
      )}
      <p>
        <a href="/keys">Back to API keys</a>
      </p>
    </Layout>
  );
}

export function RevokePage(p: { page: PageContext; apiKey: KeyListing }) {
  return (
    <Layout title={`Revoke ${p.apiKey.app_name}?`} page={p.page}>
      <p>
        Calls with <span class="mono">{p.apiKey.key_prefix}…</span> ({p.apiKey.app_name}) will answer 401 at once. This cannot be undone.
      </p>
      <form method="post" action={`/keys/${p.apiKey.id}/revoke`} class="actions">
        <CsrfField token={p.page.csrf} />
        <button type="submit" class="danger">
          Revoke key
        </button>
        <a href={`/keys/${p.apiKey.id}`}>Cancel</a>
      </form>
    </Layout>
  );
}
