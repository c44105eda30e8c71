import type { CompilerAvailability } from '../../compilers/availability.js';
import type { KeyListing } from '../../accounts/keys.js';
import { Layout, type PageContext } from './layout.js';

// The playground: the form is plain HTML; src/browser/playground runs it over the
// API's WebSocket (/api/v2/ws/), naming the chosen key by its id (the portal session
// vouches for it: keys are stored only as hashes, so the page never holds one), so the
// run counts against that key like any other. Each compiler's sample is the hello
// program of its recipe in the catalogue.

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
          The playground runs through one of your API keys. <a href="/keys/new">Create a key</a> first.
        </p>
      ) : available.length === 0 ? (
        <p>No compiler is installed on this service yet: the operator installs them with <code>runbox-admin image build</code>.</p>
      ) : (
        <form class="stack playground" id="playground" data-ws-path="/api/v2/ws/">
          <div>
            <label for="pg-key">Key</label>
            <select id="pg-key" name="key_id" aria-describedby="pg-key-hint">
              {p.keys.map((k) => (
                <option value={k.id}>{`${k.app_name} (${k.key_prefix}…)`}</option>
              ))}
            </select>
            <p class="hint" id="pg-key-hint">
              Runs count against this key and your account, like any run.
            </p>
          </div>
          <div>
            <label for="pg-compiler">Compiler</label>
            <select id="pg-compiler" name="compiler" aria-describedby="pg-compiler-hint">
              {available.map((c) => (
                <option value={c.id} data-sample={c.entry.hello.code}>{`${c.id} — ${c.language} ${c.version ?? ''}`}</option>
              ))}
            </select>
            <p class="hint" id="pg-compiler-hint">
              Choosing a compiler loads its sample program, unless you have changed the code.
            </p>
          </div>
          <div>
            <label for="pg-code">Code</label>
            <textarea id="pg-code" name="code" rows={10} spellcheck={false} class="mono" aria-describedby="pg-code-hint">
              {available[0]!.entry.hello.code}
            </textarea>
            <p class="hint" id="pg-code-hint">
              Ctrl+Enter runs.
            </p>
          </div>
          <div>
            <label for="pg-input">Standard input</label>
            <textarea id="pg-input" name="input" rows={3} spellcheck={false} class="mono" aria-describedby="pg-input-hint"></textarea>
            <p class="hint" id="pg-input-hint">
              Given to the program up front, and its input ends there. Leave it empty to type input under the output while the program runs.
            </p>
          </div>
          <div class="actions">
            <button type="submit" id="pg-run">
              Run
            </button>
            <button type="button" id="pg-stop" class="secondary" aria-disabled="true">
              Stop
            </button>
          </div>
          <section id="pg-result" aria-labelledby="output-h">
            <h2 id="output-h">Output</h2>
            <pre id="output" role="log" aria-live="polite" aria-labelledby="output-h" tabIndex={0}></pre>
            <div id="pg-line" class="stdin-line" hidden>
              <label for="pg-line-input">Input to the program (Enter sends a line, Ctrl+D ends input)</label>
              <div class="actions">
                <input id="pg-line-input" type="text" autoComplete="off" spellcheck={false} class="mono" />
                <button type="button" id="pg-eof" class="secondary">
                  End input
                </button>
              </div>
            </div>
            <p id="verdict" role="status"></p>
          </section>
        </form>
      )}
    </Layout>
  );
}
