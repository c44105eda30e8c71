import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'chai';
import { join } from 'node:path';
import { setMaintenance } from '../../src/api/maintenance.js';
import { REQUEST_LIMITS } from '../../src/limits.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';
import { billedSubmissions, keyFor, postJson, resultsStack, skipUnlessRealRuns, syncRun, type ResultsStack } from '../helpers/results-stack.js';

// The MCP face end to end, driven by the SDK's own client over both transports: the
// Streamable HTTP one against /mcp of a real API with a real runner (real sandbox,
// real Postgres), and stdio through `runbox-admin mcp --url` spawned as a desktop
// client starts it, forwarding to the same stack.

type Content = { type: string; text?: string; data?: string; mimeType?: string };
type ToolResult = { content: Content[]; isError?: boolean };

// A 1×1 PNG, written by the program as bytes under /box/out.
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const textOf = (r: ToolResult) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

describe('MCP', function () {
  let s: ResultsStack;
  let key: string;
  let accountId: string;
  const clients: Client[] = [];

  async function httpClient(k: string): Promise<Client> {
    const client = new Client({ name: 'runbox-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: k } } }));
    clients.push(client);
    return client;
  }

  async function stdioClient(k: string): Promise<Client> {
    const client = new Client({ name: 'runbox-test', version: '1' });
    const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(PROJECT_ROOT, 'dist/src/cli/admin.js'), 'mcp', '--url', s.url],
        env: { ...env, RUNBOX_API_KEY: k, RUNBOX_ENV_FILE: '' },
        stderr: 'pipe',
      }),
    );
    clients.push(client);
    return client;
  }

  const readJson = async (client: Client, uri: string): Promise<unknown> => {
    const [content] = (await client.readResource({ uri })).contents;
    expect(content).to.include({ uri, mimeType: 'application/json' });
    return JSON.parse((content as { text: string }).text);
  };

  const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;

  before(async function () {
    skipUnlessRealRuns(this, ['python3.9']);
    const uidBase = process.env['RUNBOX_SANDBOX_UID_BASE'];
    s = await resultsStack('mcp', uidBase ? { RUNBOX_SANDBOX_UID_BASE: uidBase } : {});
    await s.startRunner();
    ({ accountId, key: { key } } = await keyFor(s.db));
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await s?.close();
  });

  for (const transport of ['HTTP', 'stdio'] as const) {
    describe(`over ${transport}`, () => {
      let client: Client;
      before(async () => {
        client = transport === 'HTTP' ? await httpClient(key) : await stdioClient(key);
      });

      it('lists the tools, with the REST schemas as their input schemas and the installed compilers as the enum', async () => {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).to.have.members(['run_code', 'judge', 'list_compilers', 'get_submission', 'session_open', 'session_run', 'session_files', 'session_close']);
        const runCode = tools.find((t) => t.name === 'run_code')!;
        expect(runCode.description).to.match(/\/box\/out/);
        const props = runCode.inputSchema.properties as Record<string, { enum?: string[]; type?: string }>;
        expect(Object.keys(props)).to.include.members(['compiler', 'code', 'files', 'input', 'args', 'limits', 'return_files']);
        expect(props['compiler']!.enum).to.include('python-3.9.7');
        expect(runCode.inputSchema).to.include({ additionalProperties: false });
        expect(Object.keys(tools.find((t) => t.name === 'judge')!.inputSchema.properties!)).to.include.members(['tests', 'problem', 'checker']);
      });

      it('session tools: a workspace kept between runs, its files read and written, closed', async () => {
        const opened = await call(client, 'session_open', { compiler: 'python-3.9.7' });
        expect(opened.isError, textOf(opened)).to.not.equal(true);
        const session = JSON.parse(textOf(opened)) as { id: string; state: string };
        expect(session.state).to.equal('open');
        const wrote = await call(client, 'session_files', { session_id: session.id, action: 'write', path: 'lib/util.py', content: 'def twice(x):\n    return 2 * x\n' });
        expect(wrote.isError, textOf(wrote)).to.not.equal(true);
        const first = await call(client, 'session_run', { session_id: session.id, code: 'from lib.util import twice\nopen("made.txt", "w").write(str(twice(21)))\nprint("ran")' });
        expect(textOf(first)).to.match(/^status: success$/m);
        const again = await call(client, 'session_run', { session_id: session.id, command: ['python3.9', '-c', 'print(open("made.txt").read())'] });
        expect(textOf(again)).to.include('42');
        const listed = JSON.parse(textOf(await call(client, 'session_files', { session_id: session.id, action: 'list' }))) as { files: { path: string }[] };
        expect(listed.files.map((f) => f.path)).to.include.members(['lib/util.py', 'made.txt']);
        const read = JSON.parse(textOf(await call(client, 'session_files', { session_id: session.id, action: 'read', path: 'made.txt' }))) as { content: string };
        expect(read.content).to.equal('42');
        const escape = await call(client, 'session_files', { session_id: session.id, action: 'read', path: '../etc/passwd' });
        expect(escape.isError).to.equal(true);
        expect(textOf(escape)).to.include('invalid_request');
        const closed = JSON.parse(textOf(await call(client, 'session_close', { session_id: session.id }))) as { ending: string };
        expect(closed.ending).to.equal('closed');
        const after = await call(client, 'session_run', { session_id: session.id, code: 'print(1)' });
        expect(after.isError).to.equal(true);
        expect(textOf(after)).to.include('session_ended');
      });

      it('session tools: a kernel session keeps a variable between cells, session_run passing cell through', async () => {
        const opened = await call(client, 'session_open', { compiler: 'python-3.9.7', kind: 'kernel' });
        expect(opened.isError, textOf(opened)).to.not.equal(true);
        const session = JSON.parse(textOf(opened)) as { id: string; kind: string };
        expect(session.kind).to.equal('kernel');
        await call(client, 'session_run', { session_id: session.id, cell: 'total = 40' });
        const shown = await call(client, 'session_run', { session_id: session.id, cell: 'total + 2' });
        expect(textOf(shown)).to.match(/^value: 42$/m);
        const failed = await call(client, 'session_run', { session_id: session.id, cell: 'undefined_name' });
        expect(textOf(failed)).to.match(/^cell error: NameError: /m);
        await call(client, 'session_close', { session_id: session.id });
      });

      it('run_code: the status, output and figures as text, counted as a synchronous run', async () => {
        const before = await billedSubmissions(s, accountId);
        const r = await call(client, 'run_code', { compiler: 'python-3.9.7', code: 'import sys\nprint("hello", input(), sys.argv[1:])\n', input: 'mcp\n', args: ['x'] });
        expect(r.isError, textOf(r)).to.not.equal(true);
        const text = textOf(r);
        expect(text).to.match(/^status: success$/m);
        expect(text).to.include("hello mcp ['x']");
        expect(text).to.match(/memory \d+ KB/);
        const id = /^submission: (\S+)$/m.exec(text)![1]!;
        const row = await s.db.db.selectFrom('submissions').select(['mode', 'state', 'account_id']).where('id', '=', id).executeTakeFirstOrThrow();
        expect(row).to.deep.equal({ mode: 'sync', state: 'finished', account_id: accountId });
        expect(await billedSubmissions(s, accountId)).to.equal(before + 1);
      });

      it('run_code: a PNG the program writes under /box/out comes back as image content', async () => {
        const code = `import base64, os\nos.makedirs('/box/out', exist_ok=True)\nopen('/box/out/dot.png', 'wb').write(base64.b64decode('${PNG_BASE64}'))\nopen('/box/out/notes.txt', 'w').write('n')\nprint('drawn')\n`;
        const r = await call(client, 'run_code', { compiler: 'python-3.9.7', code, return_files: true });
        expect(r.isError, textOf(r)).to.not.equal(true);
        const images = r.content.filter((c) => c.type === 'image');
        expect(images).to.deep.equal([{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }]);
        expect(textOf(r)).to.include('dot.png (image/png, ').and.include('notes.txt (text/plain');
      });

      it('list_compilers: the installed compilers only, with their libraries', async () => {
        const r = await call(client, 'list_compilers', {});
        const text = textOf(r);
        const lines = text.split('\n');
        expect(lines.find((l) => l.startsWith('python-3.9.7: '))).to.match(/^python-3\.9\.7: python 3\.9/);
        const all = (await (await fetch(`${s.url}/api/compilers/`)).json()) as { id: string; available: boolean }[];
        expect(lines.map((l) => l.split(':')[0])).to.have.members(all.filter((c) => c.available).map((c) => c.id));
      });

      it('judge: the verdict of each test and the overall verdict and score', async () => {
        const r = await call(client, 'judge', {
          compiler: 'python-3.9.7',
          code: 'n = int(input())\nprint(n * 2 if n < 5 else n)\n',
          tests: [
            { input: '2\n', expected_output: '4\n' },
            { input: '7\n', expected_output: '14\n', name: 'big' },
          ],
        });
        expect(r.isError, textOf(r)).to.not.equal(true);
        const text = textOf(r);
        expect(text).to.match(/^verdict: wrong_answer, score 0\.5$/m);
        expect(text).to.match(/^test 1: accepted, score 1$/m);
        expect(text).to.match(/^test 2 \(big\): wrong_answer, score 0$/m);
        // What the failing test printed, for the model to fix its program.
        expect(text).to.match(/output:\n\s+7$/m);
      });

      it('judge without expected outputs or a problem is a tool error', async () => {
        const r = await call(client, 'judge', { compiler: 'python-3.9.7', code: 'print(1)', tests: [{ input: '' }] });
        expect(r.isError).to.equal(true);
        expect(textOf(r)).to.match(/^invalid_request: /);
      });

      it("get_submission: the caller's own by id; another account's is not found", async () => {
        const own = await call(client, 'run_code', { compiler: 'python-3.9.7', code: 'print(6 * 7)' });
        const id = /^submission: (\S+)$/m.exec(textOf(own))![1]!;
        const got = await call(client, 'get_submission', { id });
        expect(got.isError, textOf(got)).to.not.equal(true);
        const view = JSON.parse(textOf(got)) as { id: string; state: string; result: { output: string } };
        expect(view).to.include({ id, state: 'finished' });
        expect(view.result.output).to.equal('42\n');
        const other = await keyFor(s.db);
        const theirs = await syncRun(s, other.key.key, { compiler: 'python-3.9.7', code: 'print(1)' });
        const refused = await call(client, 'get_submission', { id: theirs.id });
        expect(refused.isError).to.equal(true);
        expect(textOf(refused)).to.equal(`not_found: no submission ${theirs.id}`);
      });

      it('a bad compiler id, an unknown field: tool errors with their codes', async () => {
        const bad = await call(client, 'run_code', { compiler: 'nope-1.0', code: 'print(1)' });
        expect(bad.isError).to.equal(true);
        expect(textOf(bad)).to.match(/^invalid_request: compiler must be one of: .*python-3\.9\.7/);
        const unknown = await call(client, 'run_code', { compiler: 'python-3.9.7', code: 'print(1)', stdin: 'x' });
        expect(unknown.isError).to.equal(true);
        expect(textOf(unknown)).to.match(/^unknown_field: unknown field stdin: runbox calls it input/);
        const all = (await (await fetch(`${s.url}/api/compilers/`)).json()) as { id: string; available: boolean; successor?: string }[];
        const notInstalled = all.find((c) => !c.available && c.successor === undefined);
        if (notInstalled) {
          const r = await call(client, 'run_code', { compiler: notInstalled.id, code: 'x' });
          expect(r.isError).to.equal(true);
          expect(textOf(r)).to.match(/^compiler_unavailable: /);
        }
      });

      it('reads the compiler catalogue and the account\'s problems as resources, and judges a stored problem', async () => {
        const stored = await postJson(`${s.url}/api/v2/problems/`, key, { name: 'Double', tests: [{ input: '3\n', expected_output: '6\n', sample: true }, { input: '5\n', expected_output: '10\n' }] });
        expect(stored.status).to.equal(201);
        const problem = (await stored.json()) as { id: string };
        const { resources } = await client.listResources();
        expect(resources.map((r) => r.uri)).to.include.members(['runbox://compilers', 'runbox://problems', `runbox://problems/${problem.id}`]);
        const compilers = (await readJson(client, 'runbox://compilers')) as { id: string }[];
        expect(compilers.map((c) => c.id)).to.include('python-3.9.7');
        const list = (await readJson(client, 'runbox://problems')) as { problems: { id: string }[] };
        expect(list.problems.map((p) => p.id)).to.include(problem.id);
        const one = (await readJson(client, `runbox://problems/${problem.id}`)) as { name: string; tests: unknown[] };
        expect(one).to.include({ name: 'Double' });
        expect(one.tests).to.have.length(2);
        const r = await call(client, 'judge', { compiler: 'python-3.9.7', code: 'print(int(input()) * 2)', problem: problem.id });
        expect(textOf(r)).to.match(/^verdict: accepted, score 1$/m);
        expect(textOf(r)).to.include(`problem: ${problem.id} version 1`);
        // Another account's problem is not found.
        const other = await keyFor(s.db);
        const theirs = await (transport === 'HTTP' ? httpClient(other.key.key) : stdioClient(other.key.key));
        const refused = await call(theirs, 'judge', { compiler: 'python-3.9.7', code: 'print(1)', problem: problem.id });
        expect(refused.isError).to.equal(true);
        expect(textOf(refused)).to.equal(`not_found: no problem ${problem.id}`);
        let readError: Error | undefined;
        await theirs.readResource({ uri: `runbox://problems/${problem.id}` }).catch((e: Error) => (readError = e));
        expect(readError?.message).to.include(`not_found: no problem ${problem.id}`);
      });
    });
  }

  it("the account's limits hold: past the key's monthly limit a run is a tool error with its code", async () => {
    const limited = await keyFor(s.db, { monthlyLimit: 1 });
    const client = await httpClient(limited.key.key);
    expect((await call(client, 'run_code', { compiler: 'python-3.9.7', code: 'print(1)' })).isError).to.not.equal(true);
    const refused = await call(client, 'run_code', { compiler: 'python-3.9.7', code: 'print(1)' });
    expect(refused.isError).to.equal(true);
    expect(textOf(refused)).to.match(/^key_monthly_limit: /);
  });

  it('in maintenance mode a run is a tool error, and the catalogue still answers', async () => {
    const client = await httpClient(key);
    await setMaintenance(s.db.db, true);
    try {
      const refused = await call(client, 'run_code', { compiler: 'python-3.9.7', code: 'print(1)' });
      expect(refused.isError).to.equal(true);
      expect(textOf(refused)).to.match(/^maintenance: /);
      expect((await call(client, 'list_compilers', {})).isError).to.not.equal(true);
    } finally {
      await setMaintenance(s.db.db, false);
    }
    expect((await call(client, 'run_code', { compiler: 'python-3.9.7', code: 'print(1)' })).isError).to.not.equal(true);
  });

  it('a caller that goes away stops its run, as a synchronous run\'s client does', async () => {
    const { accountId: caller, key: k } = await keyFor(s.db);
    const abort = new AbortController();
    const callTool = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'run_code', arguments: { compiler: 'python-3.9.7', code: 'while True: pass\n' } } };
    const pending = fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: k.key },
      body: JSON.stringify(callTool),
      signal: abort.signal,
    }).catch((err: Error) => err);
    const rowOf = () => s.db.db.selectFrom('submissions').select(['state', 'result', 'cancelled_at']).where('account_id', '=', caller).executeTakeFirst();
    for (let row = await rowOf(); row?.state !== 'running'; row = await rowOf()) await new Promise((r) => setTimeout(r, 100));
    abort.abort();
    expect(await pending).to.be.an.instanceOf(Error);
    let row = await rowOf();
    for (; row?.state === 'running'; row = await rowOf()) await new Promise((r) => setTimeout(r, 100));
    // Stopped, not run to its timeout.
    expect((row!.result as { status: string }).status).to.equal('cancelled');
    expect(row!.cancelled_at).to.not.equal(null);
  });

  it('over HTTP a missing or wrong key is 401 with the REST error body; GET is 405', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const missing = await fetch(`${s.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(initialize) });
    expect(missing.status).to.equal(401);
    expect(((await missing.json()) as { error: { code: string } }).error.code).to.equal('missing_key');
    const wrong = await fetch(`${s.url}/mcp`, { method: 'POST', headers: { ...headers, Authorization: 'rbx_wrong' }, body: JSON.stringify(initialize) });
    expect(wrong.status).to.equal(401);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).to.equal('invalid_key');
    const ok = await fetch(`${s.url}/mcp`, { method: 'POST', headers: { ...headers, Authorization: key }, body: JSON.stringify(initialize) });
    expect(ok.status).to.equal(200);
    expect(((await ok.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).to.equal('runbox');
    const get = await fetch(`${s.url}/mcp`, { headers: { Accept: 'text/event-stream', Authorization: key } });
    expect(get.status).to.equal(405);
    expect(get.headers.get('allow')).to.equal('POST');
    // The SDK's client sees the refusal when it connects.
    const client = new Client({ name: 'runbox-test', version: '1' });
    let refused: (Error & { code?: number }) | undefined;
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`))).catch((e: Error) => (refused = e));
    expect(refused?.code).to.equal(401);
    expect(refused?.message).to.include('missing_key');
  });

  it('over HTTP the body is read with the REST rules and limits: too large, not JSON, not UTF-8 are 400s', async () => {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: key };
    const post = async (body: string | Blob) => {
      const res = await fetch(`${s.url}/mcp`, { method: 'POST', headers, body });
      return { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code };
    };
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(REQUEST_LIMITS.bodyMaxBytes) } });
    expect(await post(big)).to.deep.equal({ status: 400, code: 'body_too_large' });
    expect(await post('{"jsonrpc": ')).to.deep.equal({ status: 400, code: 'invalid_json' });
    expect(await post(new Blob([new Uint8Array([0x7b, 0xff, 0x7d])]))).to.deep.equal({ status: 400, code: 'invalid_utf8' });
  });

  it('runbox-admin mcp without RUNBOX_API_KEY refuses to start', async () => {
    const client = new Client({ name: 'runbox-test', version: '1' });
    const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && e[0] !== 'RUNBOX_API_KEY'));
    let refused: Error | undefined;
    await client
      .connect(new StdioClientTransport({ command: process.execPath, args: [join(PROJECT_ROOT, 'dist/src/cli/admin.js'), 'mcp', '--url', s.url], env: { ...env, RUNBOX_ENV_FILE: '' }, stderr: 'pipe' }))
      .catch((e: Error) => (refused = e));
    expect(refused).to.be.instanceOf(Error);
  });
});
