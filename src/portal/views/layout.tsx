import type { ComponentChildren } from 'preact';
import { assetUrl } from '../assets.js';

// The frame of every page: skip link, header with navigation and the log-out form,
// one <main>. Scripts are external, versioned and deferred; there is no inline script.

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
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · runbox`}</title>
        {css && <link rel="stylesheet" href={css} />}
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

export function fmtTime(d: Date | string | null | undefined): string {
  if (!d) return '—';
  return new Date(d).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}
