import type { ComponentChildren } from 'preact';
import { assetUrl } from '../assets.js';
import { fmtCount, fmtTime } from '../format.js';

// The frame of every page: skip link, header with navigation and the log-out form,
// one <main>, a footer with the documentation links, and a live region that scripts
// announce through ("Copied"). Scripts are external, versioned and deferred; there is
// no inline script.

export interface PageContext {
  /** The signed-in person's address; absent on the public pages. */
  email?: string;
  csrf: string;
  path: string;
}

export interface Notice {
  kind: 'info' | 'ok' | 'warn' | 'bad';
  text: string;
}

const NAV: [string, string][] = [
  ['/', 'Dashboard'],
  ['/keys', 'API keys'],
  ['/submissions', 'Submissions'],
  ['/playground', 'Playground'],
  ['/problems', 'Problems'],
  ['/account', 'Account'],
];

export function CsrfField({ token }: { token: string }) {
  return <input type="hidden" name="_csrf" value={token} />;
}

export function NoticeBox({ notice }: { notice: Notice }) {
  return (
    <p class={`notice ${notice.kind}`} role={notice.kind === 'bad' || notice.kind === 'warn' ? 'alert' : 'status'}>
      {notice.text}
    </p>
  );
}

export function Layout(props: { title: string; page: PageContext; scripts?: string[]; notices?: Notice[]; children: ComponentChildren }) {
  const { page } = props;
  const css = assetUrl('portal.css');
  const icon = assetUrl('icon.svg');
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · runbox`}</title>
        {css && <link rel="stylesheet" href={css} />}
        {icon && <link rel="icon" type="image/svg+xml" href={icon} />}
        {(props.scripts ?? []).map((name) => {
          const src = assetUrl(name);
          return src ? <script type="module" src={src} /> : null;
        })}
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/">
            runbox
          </a>
          {page.email !== undefined ? (
            <>
              <nav aria-label="Main">
                <ul>
                  {NAV.map(([href, label]) => {
                    const current = href === '/' ? page.path === '/' : page.path === href || page.path.startsWith(href + '/');
                    return (
                      <li>
                        <a href={href} aria-current={current ? 'page' : undefined}>
                          {label}
                        </a>
                      </li>
                    );
                  })}
                </ul>
              </nav>
              <div class="who">
                <span>{page.email}</span>
                <form class="inline" method="post" action="/logout">
                  <CsrfField token={page.csrf} />
                  <button type="submit" class="secondary">
                    Log out
                  </button>
                </form>
              </div>
            </>
          ) : (
            <nav aria-label="Main">
              <ul>
                <li>
                  <a href="/login" aria-current={page.path === '/login' ? 'page' : undefined}>
                    Log in
                  </a>
                </li>
                <li>
                  <a href="/signup" aria-current={page.path === '/signup' ? 'page' : undefined}>
                    Sign up
                  </a>
                </li>
              </ul>
            </nav>
          )}
        </header>
        <main id="main">
          <h1>{props.title}</h1>
          {(props.notices ?? []).map((n) => (
            <NoticeBox notice={n} />
          ))}
          {props.children}
        </main>
        <footer class="bottom">
          <nav aria-label="Documentation">
            <a href="/docs/">Documentation</a> · <a href="/docs/api">API reference</a> · <a href="/api/openapi.json">OpenAPI document</a>
          </nav>
        </footer>
        {/* Present from the start, so that what a script writes into it is announced. */}
        <p id="live-status" class="visually-hidden" role="status" aria-live="polite" />
      </body>
    </html>
  );
}

/** A labelled input with its hint and its error, wired with aria-describedby. */
export function Field(props: {
  name: string;
  label: string;
  type?: string;
  value?: string;
  error?: string;
  hint?: string;
  required?: boolean;
  autocomplete?: string;
  inputMode?: string;
  multiline?: boolean;
  autofocus?: boolean;
}) {
  const id = `f-${props.name}`;
  const described = [props.hint ? `${id}-hint` : '', props.error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name: props.name,
    required: props.required,
    'aria-invalid': props.error ? ('true' as const) : undefined,
    'aria-describedby': described,
    autoFocus: props.autofocus,
  };
  return (
    <div>
      <label for={id}>{props.label}</label>
      {props.multiline ? (
        <textarea {...common}>{props.value ?? ''}</textarea>
      ) : (
        <input {...common} type={(props.type ?? 'text') as 'text'} value={props.value ?? ''} autoComplete={props.autocomplete} inputMode={props.inputMode as never} />
      )}
      {props.hint && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      )}
    </div>
  );
}

/** A read-only secret with a copy button (the button works with JavaScript; the field can be selected without). */
export function SecretField(props: { id: string; label: string; value: string }) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <div class="secret">
        <input id={props.id} type="text" readOnly value={props.value} spellcheck={false} />
        <button type="button" class="secondary" data-copy={props.id} aria-label={`Copy ${props.label}`}>
          Copy
        </button>
      </div>
    </div>
  );
}

/** A moment in the portal's one form (src/portal/format.ts), machine-readable in its datetime. */
/** A count with thousands separators (12,500); its value, for scripts and tests, in <data value>. */
export function Count({ n }: { n: number | null | undefined }) {
  if (n === null || n === undefined) return <>—</>;
  return <data value={String(n)}>{fmtCount(n)}</data>;
}

export function When({ d }: { d: Date | string | null | undefined }) {
  if (d === null || d === undefined) return <>—</>;
  return <time dateTime={new Date(d).toISOString()}>{fmtTime(d)}</time>;
}

/** The first of `order` that has an error: the field that takes the focus when a form comes back. */
export function firstError<K extends string>(errors: Partial<Record<K, string | undefined>>, order: readonly K[]): K | undefined {
  return order.find((k) => errors[k]);
}

/**
 * A wide table in a box of its own that scrolls sideways on a narrow screen, so the page
 * itself never does; focusable, so the keyboard can scroll it too.
 */
/** One figure of a <dl class="figures">: its label, its value (in an element whose data-field names it, when given). */
export function Figure(p: { label: string; field?: string; value: ComponentChildren }) {
  return (
    <div>
      <dt>{p.label}</dt>
      <dd data-field={p.field}>{p.value}</dd>
    </div>
  );
}

/** Two texts side by side, each under its label and scrollable by keyboard: a sample's input and expected output, or where an output first differs from the expected one. */
export function TextPair(p: { sides: [PairSide, PairSide] }) {
  return (
    <div class="diff-pair">
      {p.sides.map((side) => (
        <div>
          <p class="diff-label">{side.label}</p>
          <pre class={side.class} tabIndex={0} aria-label={side.ariaLabel}>
            {side.text}
          </pre>
        </div>
      ))}
    </div>
  );
}

export interface PairSide {
  label: string;
  class?: string;
  ariaLabel: string;
  text: string;
}

export function TableBox(props: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-box" role="region" aria-label={props.label} tabIndex={0}>
      {props.children}
    </div>
  );
}

/** The "show revoked keys" switch: a plain link (no script), remembered by a cookie (src/portal/show-revoked.ts). */
export function RevokedToggle(props: { path: string; shown: boolean; count: number }) {
  if (props.count === 0) return null;
  return (
    <p class="toggle">
      {props.shown ? (
        <a href={`${props.path}?revoked=hide`}>Hide revoked keys</a>
      ) : (
        <a href={`${props.path}?revoked=show`}>Show revoked keys ({props.count})</a>
      )}
    </p>
  );
}
