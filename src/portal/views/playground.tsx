import type { CompilerAvailability } from '../../compilers/availability.js';
import type { KeyListing } from '../../accounts/keys.js';
import { Layout, type PageContext } from './layout.js';

// The playground: the form is plain HTML; src/browser/playground runs it over the
// API's WebSocket (/api/v2/ws/) with the key the person pastes, so the run counts
// against that key like any other.

export function PlaygroundPage(p: { page: PageContext; compilers: CompilerAvailability[]; keys: KeyListing[]; base: string }) {
  const available = p.compilers.filter((c) => c.available);
  return (
    <Layout title="Playground" page={p.page} scripts={['playground.js']}>
      <noscript>
        <p class="notice warn">
          The playground runs in the browser with JavaScript. Without it, run code with curl:{' '}
          <code>{`curl -H "Authorization: $KEY" -H 'Content-Type: application/json' -d '{"code":"print(1)","compiler":"python-3.9.7"}' ${p.base}/api/v2/run-code-sync/`}</code>
        </p>
      </noscript>
      {p.keys.length === 0 ? (
        <p>
          The playground runs through one of your keys. <a href="/keys/new">Create a key</a> first.
        </p>
      ) : (
        <form class="stack" id="playground" data-ws-path="/api/v2/ws/">
          <div>
            <label for="pg-key-id">Key</label>
            <select id="pg-key-id" name="key_id" aria-describedby="pg-key-id-hint">
              {p.keys.map((k) => (
                <option value={k.id} data-prefix={k.key_prefix}>{`${k.app_name} (${k.key_prefix}…)`}</option>
              ))}
            </select>
            <p class="hint" id="pg-key-id-hint">
              Runs count against this key and your account, like any run.
            </p>
          </div>
          <div>
            <label for="pg-key">API key</label>
            <input id="pg-key" name="key" type="password" autoComplete="off" spellcheck={false} aria-describedby="pg-key-hint" required />
            <p class="hint" id="pg-key-hint">
              Keys are stored only as hashes, so paste the chosen key here. It stays in this page.
            </p>
          </div>
          <div>
            <label for="pg-compiler">Compiler</label>
            <select id="pg-compiler" name="compiler">
              {available.map((c) => (
                <option value={c.id}>{`${c.id} — ${c.language ?? ''} ${c.version ?? ''}`}</option>
              ))}
            </select>
          </div>
          <div>
            <label for="pg-code">Code</label>
            <textarea id="pg-code" name="code" rows={10} spellcheck={false} class="mono">
              {'print(input()[::-1])'}
            </textarea>
          </div>
          <div>
            <label for="pg-input">Standard input</label>
            <textarea id="pg-input" name="input" rows={3} spellcheck={false} class="mono">
              {'hello'}
            </textarea>
          </div>
          <div>
            <button type="submit" id="pg-run">
              Run
            </button>
          </div>
          <h2 id="output-h">Output</h2>
          <pre id="output" role="log" aria-live="polite" aria-labelledby="output-h" tabIndex={0}></pre>
          <p id="verdict" role="status"></p>
        </form>
      )}
    </Layout>
  );
}
