import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import pino from 'pino';
import { createKey } from '../../src/accounts/keys.js';
import { deliveriesOf, redeliver } from '../../src/callbacks/redeliver.js';
import { startSender, type Sender } from '../../src/callbacks/sender.js';
import { verifySignature } from '../../src/callbacks/sign.js';
import { readManifest } from '../../src/compilers/availability.js';
import { loadConfig } from '../../src/config.js';
import { testConfig } from '../helpers/api.js';
import { keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { sqliteDatabase } from '../helpers/sqlite-file.js';
import { SPECS_ATTACK } from '../helpers/specs-attack.js';
import yazl from 'yazl';

/** A zip of these files, Base64 encoded, as Judge0's additional_files. */
async function zipOf(files: Record<string, string | Buffer>): Promise<string> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) zip.addBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('base64');
}

// The Judge0 CE compatible routes end to end (real API, runner, sandbox, Postgres):
// request/response pairs recorded from Judge0's documentation (docs/api, 1.13; the
// shapes, not the values that vary from run to run), and a small client written the
// way Judge0's own examples call it: submit, poll by token, Base64 round trip.

const DEFAULT_KEYS = ['token', 'time', 'memory', 'stdout', 'stderr', 'compile_output', 'message', 'status'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const C_HELLO = '#include <stdio.h>\n\nint main(void) {\n  char name[10];\n  scanf("%s", name);\n  printf("hello, %s\\n", name);\n  return 0;\n}';
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | null) => (s === null ? null : Buffer.from(s, 'base64').toString('utf8'));

type Submission = Record<string, unknown> & { status: { id: number; description: string } };

/** A receiver for callback_url: records each request's method, headers and body. */
class Receiver {
  server: Server;
  got: { method: string; headers: IncomingMessage['headers']; body: string }[] = [];
  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.got.push({ method: req.method ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end();
      });
    });
  }
  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/judge0-callback`;
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

describe('Judge0 CE compatible API', function () {
  let s: ResultsStack;
  let key: string;
  let signingSecret: string;
  let gcc = false;
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${s.url}/judge0${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', 'X-Auth-Token': key, ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  /** Judge0's examples: POST, then GET the token until the status is past In Queue / Processing. */
  async function submitAndPoll(body: Record<string, unknown>, base64 = false): Promise<Submission> {
    const created = await call('POST', `/submissions/?base64_encoded=${base64}&wait=false`, body);
    expect(created.status).to.equal(201);
    const { token } = (await created.json()) as { token: string };
    expect(token).to.match(UUID);
    for (;;) {
      const res = await call('GET', `/submissions/${token}?base64_encoded=${base64}&fields=*`);
      expect(res.status).to.equal(200);
      const sub = (await res.json()) as Submission;
      if (sub.status.id > 2) return sub;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  before(async function () {
    const why = realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    const uidBase = process.env['RUNBOX_SANDBOX_UID_BASE'];
    s = await resultsStack('judge0', { RUNBOX_RUNNER_SLOTS: '2', ...(uidBase ? { RUNBOX_SANDBOX_UID_BASE: uidBase } : {}) });
    await s.startRunner();
    // With every image installed the file submits more than the free plan's 30 runs a minute.
    const k = await keyFor(s.db, { limits: { perMinute: 120 } });
    key = k.key.key;
    signingSecret = k.key.signing_secret!;
    gcc = readManifest(loadConfig().RUNBOX_IMAGES_DIR, 'gcc') !== undefined;
  });
  after(async () => s?.close());

  const needGcc = (ctx: Mocha.Context) => {
    if (!gcc) {
      console.log('      SKIPPED: the gcc image is not installed');
      ctx.skip();
    }
  };

  describe("recorded from Judge0's documentation", () => {
    it('GET /statuses (statuses_and_languages/get_statuses.md): the same list', async () => {
      const res = await fetch(`${s.url}/judge0/statuses`);
      expect(res.status).to.equal(200);
      const got = (await res.json()) as { id: number; description: string }[];
      expect(got).to.have.length(14);
      expect(got[0]).to.deep.equal({ id: 1, description: 'In Queue' });
      expect(got[3]).to.deep.equal({ id: 4, description: 'Wrong Answer' });
      expect(got[6]).to.deep.equal({ id: 7, description: 'Runtime Error (SIGSEGV)' });
      expect(got[13]).to.deep.equal({ id: 14, description: 'Exec Format Error' });
    });

    it("GET /languages (get_languages.md): [{id, name}] with Judge0 CE's ids", async () => {
      const got = (await (await fetch(`${s.url}/judge0/languages`)).json()) as { id: number; name: string }[];
      expect(got).to.deep.include({ id: 71, name: 'Python (3.9.2)' });
      if (gcc) {
        expect(got).to.deep.include({ id: 50, name: 'C (GCC 9.3.0)' });
        expect(got).to.deep.include({ id: 54, name: 'C++ (GCC 9.3.0)' });
      }
      for (const l of got) expect(Object.keys(l)).to.deep.equal(['id', 'name']);
    });

    it('POST /submissions (create_a_submission.md): 201 {"token"}', async function () {
      needGcc(this);
      const res = await call('POST', '/submissions', { source_code: C_HELLO, language_id: 50, stdin: 'world' });
      expect(res.status).to.equal(201);
      const body = (await res.json()) as { token: string };
      expect(Object.keys(body)).to.deep.equal(['token']);
      expect(body.token).to.match(UUID);
    });

    it('POST /submissions without language_id: 422 {"language_id": ["can\'t be blank"]}', async () => {
      const res = await call('POST', '/submissions', { source_code: C_HELLO });
      expect(res.status).to.equal(422);
      expect(await res.json()).to.deep.equal({ language_id: ["can't be blank"] });
    });

    it('POST /submissions with language_id 150000: 422 {"language_id": ["language with id 150000 doesn\'t exist"]}', async () => {
      const res = await call('POST', '/submissions', { source_code: C_HELLO, language_id: 150000, stdin: 'world', expected_output: 'hello, world' });
      expect(res.status).to.equal(422);
      expect(await res.json()).to.deep.equal({ language_id: ["language with id 150000 doesn't exist"] });
    });

    it('POST /submissions?wait=true with expected_output: 201 with the eight default fields, Accepted', async function () {
      needGcc(this);
      const res = await call('POST', '/submissions?wait=true', { source_code: C_HELLO, language_id: '50', stdin: 'Judge0', expected_output: 'hello, Judge0' });
      expect(res.status).to.equal(201);
      const got = (await res.json()) as Submission;
      expect(Object.keys(got).sort()).to.deep.equal([...DEFAULT_KEYS].sort());
      expect(got).to.deep.include({ stdout: 'hello, Judge0\n', stderr: null, compile_output: null, message: null, status: { id: 3, description: 'Accepted' } });
      expect(got['time']).to.match(/^\d+\.\d{3}$/);
      expect(got['memory']).to.be.a('number');
    });

    it('GET /submissions/{token}?fields=stdout,stderr,status_id,language_id (get_a_submission.md): exactly those fields', async () => {
      const done = await submitAndPoll({ source_code: 'print("hello, world")', language_id: 71 });
      const res = await call('GET', `/submissions/${String(done['token'])}?fields=stdout,stderr,status_id,language_id`);
      expect(await res.json()).to.deep.equal({ stdout: 'hello, world\n', stderr: null, status_id: 3, language_id: 71 });
      const bad = await call('GET', `/submissions/${String(done['token'])}?fields=stdout,nonsense`);
      expect(bad.status).to.equal(400);
      expect(await bad.json()).to.deep.equal({ error: 'invalid fields: [nonsense]' });
    });

    it('POST /submissions/batch (create_a_submission_batch.md): a token or the errors for each, in order', async () => {
      const res = await call('POST', '/submissions/batch', {
        submissions: [
          { language_id: 71, source_code: 'print("hello from Python")' },
          { language_id: 123456789, source_code: 'print("hello from Python")' },
          { language_id: 71, source_code: '' },
        ],
      });
      expect(res.status).to.equal(201);
      const got = (await res.json()) as Record<string, unknown>[];
      expect(got).to.have.length(3);
      expect(got[0]!['token']).to.match(UUID);
      expect(got[1]).to.deep.equal({ language_id: ["language with id 123456789 doesn't exist"] });
      expect(got[2]).to.deep.equal({ source_code: ["can't be blank"] });

      // get_a_submission_batch.md: {"submissions": [...]} in the order of the tokens.
      const token = String(got[0]!['token']);
      for (;;) {
        const batch = await call('GET', `/submissions/batch?tokens=${token},00000000-0000-4000-8000-000000000000&fields=token,stdout,stderr,status_id,language_id`);
        expect(batch.status).to.equal(200);
        const body = (await batch.json()) as { submissions: (Record<string, unknown> | null)[] };
        expect(body.submissions).to.have.length(2);
        expect(body.submissions[1]).to.equal(null);
        if ((body.submissions[0]!['status_id'] as number) > 2) {
          expect(body.submissions[0]).to.deep.equal({ token, stdout: 'hello from Python\n', stderr: null, status_id: 3, language_id: 71 });
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      const empty = await call('POST', '/submissions/batch', { submissions: [] });
      expect(empty.status).to.equal(400);
      expect(await empty.json()).to.deep.equal({ error: 'there should be at least one submission in a batch' });
      const many = await call('POST', '/submissions/batch', { submissions: Array.from({ length: 21 }, () => ({ language_id: 71, source_code: 'print(1)' })) });
      expect(many.status).to.equal(400);
      expect(await many.json()).to.deep.equal({ error: 'number of submissions in a batch should be less than or equal to 20' });
    });
  });

  describe("a client written the way Judge0's examples call it", () => {
    it('Base64 round trip: source, stdin and the answer all Base64', async () => {
      const code = 'name = input()\nprint(f"héllo, {name} ✓")\n';
      const done = await submitAndPoll({ source_code: b64(code), language_id: 71, stdin: b64('Judge0\n'), expected_output: b64('héllo, Judge0 ✓') }, true);
      expect(done.status).to.deep.equal({ id: 3, description: 'Accepted' });
      expect(unb64(done['stdout'] as string)).to.equal('héllo, Judge0 ✓\n');
      expect(unb64(done['source_code'] as string)).to.equal(code);
      expect(unb64(done['stdin'] as string)).to.equal('Judge0\n');
      expect(done['language_id']).to.equal(71);
    });

    it('expected_output: Wrong Answer when it differs; trailing whitespace does not count', async () => {
      const wrong = await submitAndPoll({ source_code: 'print("4")', language_id: 71, expected_output: '5' });
      expect(wrong.status).to.deep.equal({ id: 4, description: 'Wrong Answer' });
      const right = await submitAndPoll({ source_code: 'print("4  ")\nprint()', language_id: 71, expected_output: '4\n' });
      expect(right.status).to.deep.equal({ id: 3, description: 'Accepted' });
    });

    it('runtime errors by signal and exit code; compile errors; time limits', async function () {
      const nzec = await submitAndPoll({ source_code: 'import sys\nsys.exit(2)', language_id: 71 });
      expect(nzec.status).to.deep.equal({ id: 11, description: 'Runtime Error (NZEC)' });
      expect(nzec['exit_code']).to.equal(2);
      const segv = await submitAndPoll({ source_code: 'import os\nos.kill(os.getpid(), 11)', language_id: 71 });
      expect(segv.status).to.deep.equal({ id: 7, description: 'Runtime Error (SIGSEGV)' });
      expect(segv['exit_signal']).to.equal(11);
      const abrt = await submitAndPoll({ source_code: 'import os\nos.abort()', language_id: 71 });
      expect(abrt.status).to.deep.equal({ id: 10, description: 'Runtime Error (SIGABRT)' });
      const tle = await submitAndPoll({ source_code: 'while True:\n    pass', language_id: 71, cpu_time_limit: 0.3, wall_time_limit: 1 });
      expect(tle.status).to.deep.equal({ id: 5, description: 'Time Limit Exceeded' });
      // cpu_time_limit is CPU time: a whole second is a Time Limit Exceeded, never a runtime error (SIGXCPU).
      const cpu = await submitAndPoll({ source_code: 'while True:\n    pass', language_id: 71, cpu_time_limit: 1, wall_time_limit: 20 });
      expect([cpu.status, cpu['message']]).to.deep.equal([{ id: 5, description: 'Time Limit Exceeded' }, 'Time limit exceeded']);
      expect(Number(cpu['time'])).to.be.greaterThan(1);
      const sleeper = await submitAndPoll({ source_code: 'import time\ntime.sleep(10)\nprint("woke")', language_id: 71, cpu_time_limit: 1, wall_time_limit: 1 });
      expect([sleeper.status, sleeper['message'], sleeper['stdout']]).to.deep.equal([{ id: 5, description: 'Time Limit Exceeded' }, 'Time limit exceeded (wall clock)', null]);
      const args = await submitAndPoll({ source_code: 'import sys\nprint(sys.argv[1:])', language_id: 71, command_line_arguments: 'a  b' });
      expect(args['stdout']).to.equal("['a', 'b']\n");
      if (!gcc) {
        console.log('      SKIPPED (the C cases): the gcc image is not installed');
        return;
      }
      const fpe = await submitAndPoll({ source_code: '#include <signal.h>\nint main(void) { raise(SIGFPE); return 0; }', language_id: 50 });
      expect(fpe.status).to.deep.equal({ id: 9, description: 'Runtime Error (SIGFPE)' });
      const ce = await submitAndPoll({ source_code: 'int main( {', language_id: 50 });
      expect(ce.status).to.deep.equal({ id: 6, description: 'Compilation Error' });
      expect(ce['compile_output']).to.match(/error/);
      expect(ce['stdout']).to.equal(null);
    });
  });

  it("callback_url: the finished submission is PUT there, Base64 encoded, signed by runbox's sender", async () => {
    const receiver = new Receiver();
    const url = await receiver.start();
    const env = { ...s.env, RUNBOX_CALLBACK_ALLOW_PRIVATE: '1', RUNBOX_CALLBACK_BACKOFF_MS: '100' };
    const sender: Sender = await startSender({ db: s.db.db, config: testConfig(s.db.url, '/nonexistent', env), log: pino({ level: 'silent' }) });
    try {
      const created = await call('POST', '/submissions', { source_code: 'print(input())', language_id: 71, stdin: 'ping', expected_output: 'ping', callback_url: url });
      expect(created.status).to.equal(201);
      const { token } = (await created.json()) as { token: string };
      for (;;) {
        const rows = await deliveriesOf(s.db.db, token);
        if (rows[0]?.state === 'delivered') break;
        expect(rows[0]?.state ?? 'pending').to.equal('pending');
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(receiver.got).to.have.length(1);
      const got = receiver.got[0]!;
      expect(got.method).to.equal('PUT');
      expect(got.headers['content-type']).to.equal('application/json');
      expect(verifySignature(signingSecret, got.body, String(got.headers['x-runbox-signature']))).to.equal(true);
      const body = JSON.parse(got.body) as Submission;
      expect(Object.keys(body).sort()).to.deep.equal([...DEFAULT_KEYS].sort());
      expect(body.token).to.equal(token);
      expect(unb64(body['stdout'] as string)).to.equal('ping\n');
      expect(body.status).to.deep.equal({ id: 3, description: 'Accepted' });
      // Sent again on request, to the submission's own URL and by PUT again.
      expect(await redeliver(s.db.db, token)).to.be.a('string');
      for (;;) {
        const rows = await deliveriesOf(s.db.db, token);
        if (rows.length === 2 && rows[1]!.state === 'delivered') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(receiver.got.map((g) => g.method)).to.deep.equal(['PUT', 'PUT']);
      expect(receiver.got[1]!.body).to.equal(got.body);
      const bad = await call('POST', '/submissions', { source_code: 'print(1)', language_id: 71, callback_url: 'ftp://example.com/x' });
      expect(bad.status).to.equal(422);
      expect(await bad.json()).to.deep.equal({ callback_url: ['is not a valid http or https URL'] });
    } finally {
      await sender.stop();
      await receiver.close();
    }
  });

  it('callback_url to a non-public address is refused by the sender\'s guard: the delivery is dead at once', async () => {
    const env = { ...s.env, RUNBOX_CALLBACK_ALLOW_PRIVATE: '0' };
    const sender: Sender = await startSender({ db: s.db.db, config: testConfig(s.db.url, '/nonexistent', env), log: pino({ level: 'silent' }) });
    try {
      const created = await call('POST', '/submissions', { source_code: 'print(1)', language_id: 71, callback_url: 'http://169.254.169.254/latest' });
      expect(created.status).to.equal(201);
      const { token } = (await created.json()) as { token: string };
      for (;;) {
        const rows = await deliveriesOf(s.db.db, token);
        if (rows[0]?.state === 'dead') {
          expect(rows[0].last_error).to.match(/non-public address/);
          expect(rows[0].attempts).to.equal(1);
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await sender.stop();
    }
  });

  describe('programs of several files, options and arguments', () => {
    it('additional_files: a zip unpacked beside the source (a Python package and a data file); the source wins over a file of its name', async () => {
      const zip = await zipOf({ 'helpers/__init__.py': 'def twice(x):\n    return 2 * x\n', 'data/n.txt': '21\n', 'main.py': 'print("replaced")\n' });
      const sub = await submitAndPoll({ source_code: 'from helpers import twice\nprint(twice(int(open("data/n.txt").read())))\n', language_id: 71, additional_files: zip });
      expect(sub.status.id, String(sub['stderr'])).to.equal(3);
      expect(sub['stdout']).to.equal('42\n');
    });

    it('additional_files: a C header and unit are built with the source; compiler_options and command_line_arguments split as bash does', async function () {
      needGcc(this);
      const zip = await zipOf({ 'util.h': 'int twice(int);\n', 'util.c': '#include "util.h"\nint twice(int x) { return 2 * x; }\n' });
      const sub = await submitAndPoll({
        source_code: '#include <stdio.h>\n#include "util.h"\nint main(int argc, char **argv) { printf("%d %s %d\\n", twice(N), argv[1], argc - 1); return 0; }\n',
        language_id: 50,
        additional_files: zip,
        compiler_options: '-DN=21 -O0',
        command_line_arguments: `"a b" c`,
      });
      expect(sub.status.id, String(sub['compile_output'])).to.equal(3);
      expect(sub['stdout']).to.equal('42 a b 2\n');
    });

    it("additional_files: a file named -B.c is compiled as a file, never gcc's -B; the .c/specs beside it runs nothing", async function () {
      needGcc(this);
      const { 'main.c': source, ...rest } = SPECS_ATTACK;
      const sub = await submitAndPoll({ source_code: source, language_id: 50, additional_files: await zipOf(rest) });
      expect(sub.status.id, String(sub['compile_output'])).to.equal(3);
      expect(sub['stdout']).to.equal('compiled\n');
      expect(`${String(sub['stdout'])}${String(sub['stderr'])}${String(sub['compile_output'])}`).to.not.include('PWNED');
    });

    it('422 for what breaks a rule: an option the compiler does not allow, a zip that is not one, a path out of the workspace', async function () {
      needGcc(this);
      const bad = await call('POST', '/submissions', { source_code: 'int main(){}', language_id: 50, compiler_options: '-fplugin=x.so' });
      expect(bad.status).to.equal(422);
      expect(((await bad.json()) as Record<string, string[]>)['compiler_options']![0]).to.match(/"-fplugin=x\.so" is never allowed/);
      const notZip = await call('POST', '/submissions', { source_code: 'print(1)', language_id: 71, additional_files: Buffer.from('nope').toString('base64') });
      expect(notZip.status).to.equal(422);
      expect(((await notZip.json()) as Record<string, string[]>)['additional_files']![0]).to.match(/^is not a zip archive/);
    });

    it("ids 48, 49, 52 and 53 (GCC 7.4 and 8.3) are listed and compile at those versions' default standards", async function () {
      needGcc(this);
      const langs = (await (await fetch(`${s.url}/judge0/languages`)).json()) as { id: number; name: string }[];
      for (const id of [48, 49, 52, 53]) expect(langs.map((l) => l.id)).to.include(id);
      const c = '#include <stdio.h>\nint main(void) { printf("%ld\\n", (long)__STDC_VERSION__); return 0; }\n';
      const cxx = '#include <iostream>\nint main() { std::cout << __cplusplus << std::endl; }\n';
      const got = await Promise.all([
        submitAndPoll({ source_code: c, language_id: 48 }),
        submitAndPoll({ source_code: c, language_id: 49 }),
        submitAndPoll({ source_code: cxx, language_id: 52 }),
        submitAndPoll({ source_code: cxx, language_id: 53 }),
      ]);
      expect(got.map((g) => g['stdout'])).to.deep.equal(['201112\n', '201710\n', '201402\n', '201402\n']);
    });

    it('language 89, the Multi-file program: the zip\'s compile and run scripts, by bash', async function () {
      if (!readManifest(loadConfig().RUNBOX_IMAGES_DIR, 'multi-file')) {
        console.log('      SKIPPED: the multi-file image is not installed (runbox-admin image build multi-file)');
        this.skip();
      }
      const zip = await zipOf({
        compile: 'gcc "$@" -o app main.c\n',
        run: './app "$@"\n',
        'main.c': '#include <stdio.h>\nint main(int argc, char **argv) { printf("%d %d\\n", N, argc - 1); return 0; }\n',
      });
      const sub = await submitAndPoll({ language_id: 89, additional_files: zip, compiler_options: '-DN=7 -O2', command_line_arguments: 'x y' });
      expect(sub.status.id, `${String(sub['compile_output'])} ${String(sub['stderr'])}`).to.equal(3);
      expect(sub['stdout']).to.equal('7 2\n');
      const noRun = await call('POST', '/submissions', { language_id: 89, additional_files: await zipOf({ compile: 'true\n' }) });
      expect(noRun.status).to.equal(422);
    });
  });

  // The shapes of Judge0's own examples (github.com/judge0/examples): a zip whose compile
  // and run scripts call the install paths of Judge0 CE's languages, a CMake project, and
  // an SQL script run against the database sent beside it. Written for this test.
  describe("Judge0's examples of multi-file programs and of SQLite with a database", () => {
    const needImage = (ctx: Mocha.Context, image: string) => {
      if (!readManifest(loadConfig().RUNBOX_IMAGES_DIR, image)) {
        console.log(`      SKIPPED: the ${image} image is not installed (runbox-admin image build ${image})`);
        ctx.skip();
      }
    };
    const succeeded = (sub: Submission) => expect(sub.status.id, `${String(sub['compile_output'])} ${String(sub['stderr'])}`).to.equal(3);
    /** A multi-file program of these files, sent Base64 as the examples send it: Accepted, with its stdout and compile output decoded. */
    async function multiFile(files: Record<string, string>): Promise<{ stdout: string | null; compileOutput: string | null }> {
      const sub = await submitAndPoll({ source_code: '', language_id: 89, additional_files: await zipOf(files) }, true);
      succeeded(sub);
      return { stdout: unb64(sub['stdout'] as string | null), compileOutput: unb64(sub['compile_output'] as string | null) };
    }

    it('C++ built with /usr/local/gcc-9.2.0/bin/g++, run with its lib64 on LD_LIBRARY_PATH (a header-only test library beside it)', async function () {
      needImage(this, 'multi-file');
      const { stdout } = await multiFile({
        compile: '#!/bin/bash\n/usr/local/gcc-9.2.0/bin/g++ main.cpp\n',
        run: '#!/bin/bash\nLD_LIBRARY_PATH=/usr/local/gcc-9.2.0/lib64 ./a.out\n',
        'check.hpp': '#include <iostream>\nstatic int passed = 0, failed = 0;\n#define CHECK(e) do { if (e) ++passed; else { ++failed; std::cout << "failed: " #e "\\n"; } } while (0)\n',
        'main.cpp': '#include "check.hpp"\n#include <string>\nint main() {\n  CHECK(std::string("ab") + "c" == "abc");\n  CHECK(6 * 7 == 42);\n  std::cout << passed << " passed, " << failed << " failed\\n";\n  return failed;\n}\n',
      });
      expect(stdout).to.equal('2 passed, 0 failed\n');
    });

    it('Java: two classes compiled with /usr/local/openjdk13/bin/javac, run with /usr/local/openjdk13/bin/java', async function () {
      needImage(this, 'multi-file');
      const { stdout } = await multiFile({
        compile: '#!/bin/bash\n/usr/local/openjdk13/bin/javac Main.java\n',
        run: '#!/bin/bash\n/usr/local/openjdk13/bin/java Main\n',
        'Main.java': 'public class Main {\n  public static void main(String[] args) {\n    System.out.println(Greeter.greet("Judge0"));\n  }\n}\n',
        'Greeter.java': 'public class Greeter {\n  static String greet(String who) { return "Hello, " + who + "!"; }\n}\n',
      });
      expect(stdout).to.equal('Hello, Judge0!\n');
    });

    it('Python: a package beside main.py, run by /usr/local/python-3.8.1/bin/python3', async function () {
      needImage(this, 'multi-file');
      const { stdout } = await multiFile({
        run: '#!/bin/bash\n/usr/local/python-3.8.1/bin/python3 main.py\n',
        'main.py': 'import sys\nfrom shapes import area\nfrom shapes.units import cm\nprint(area.square(3), cm(2), sys.version_info >= (3, 8))\n',
        'shapes/__init__.py': '',
        'shapes/area.py': 'def square(side):\n    return side * side\n',
        'shapes/units.py': 'def cm(x):\n    return f"{x} cm"\n',
      });
      expect(stdout).to.equal('9 2 cm True\n');
    });

    it('a CMake project: the compile script runs cmake and make in build/, the run script runs what they built', async function () {
      needImage(this, 'multi-file');
      const { stdout, compileOutput } = await multiFile({
        compile: '#!/bin/bash\nmkdir build\ncd build\ncmake ..\nmake\n',
        run: '#!/bin/bash\n./build/hello\n',
        'CMakeLists.txt': 'cmake_minimum_required(VERSION 3.13)\nproject(greet LANGUAGES CXX)\nset(CMAKE_CXX_STANDARD 14)\nadd_executable(hello src/main.cpp src/greet.cpp)\ntarget_include_directories(hello PRIVATE include)\n',
        'include/greet.hpp': '#pragma once\n#include <string>\nstd::string greet(const std::string &who);\n',
        'src/greet.cpp': '#include "greet.hpp"\nstd::string greet(const std::string &who) { return "Hello from CMake, " + who; }\n',
        'src/main.cpp': '#include <iostream>\n#include "greet.hpp"\nint main() { std::cout << greet("Judge0") << std::endl; }\n',
      });
      expect(stdout).to.equal('Hello from CMake, Judge0\n');
      // cmake's own report of the build, as Judge0 shows a compile script's output.
      expect(compileOutput).to.match(/Built target hello/);
    });

    it('SQLite (82): the script runs against db.sqlite sent in additional_files, and may change it', async function () {
      needImage(this, 'scripting');
      const db = sqliteDatabase([{ name: 'artists', sql: 'CREATE TABLE artists(name TEXT, albums INTEGER)', rows: [['AC/DC', 18], ['Queen', 15], ['Aerosmith', 15], ['Abba', 9]] }]);
      const script = "PRAGMA integrity_check;\nSELECT name, albums FROM artists WHERE name LIKE 'A%' ORDER BY name;\nINSERT INTO artists VALUES ('Alice Cooper', 29);\nSELECT count(*) FROM artists;\n";
      const sub = await submitAndPoll({ source_code: b64(script), language_id: 82, additional_files: await zipOf({ 'db.sqlite': db }) }, true);
      succeeded(sub);
      expect(unb64(sub['stdout'] as string)).to.equal('ok\nAC/DC|18\nAbba|9\nAerosmith|15\n5\n');
      // Without a database the script starts from an empty one, as Judge0's `sqlite3 db.sqlite` does.
      const none = await submitAndPoll({ source_code: "SELECT count(*) FROM sqlite_schema;\n", language_id: 82 });
      succeeded(none);
      expect(none['stdout']).to.equal('0\n');
    });
  });

  describe('keys and limits', () => {
    it('401 without a key or with a wrong one; Authorization works as well as X-Auth-Token', async () => {
      let res = await fetch(`${s.url}/judge0/submissions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
      expect(res.status).to.equal(401);
      // Named as Judge0's clients send it.
      expect(await res.json()).to.deep.equal({ error: 'the X-Auth-Token header (or Authorization) with an API key is required' });
      res = await call('GET', '/submissions/00000000-0000-4000-8000-000000000000', undefined, { 'X-Auth-Token': 'wrong' });
      expect(res.status).to.equal(401);
      res = await fetch(`${s.url}/judge0/submissions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
        body: JSON.stringify({ source_code: 'print(1)', language_id: 71 }),
      });
      expect(res.status).to.equal(201);
    });

    it('403 {"error"} for a widget key, on every route that takes a key; nothing is stored', async () => {
      const owner = await keyFor(s.db);
      const widget = await createKey(s.db.db, { accountId: owner.accountId, appName: 'site', kind: 'widget', allowedOrigins: ['https://a.example'] });
      const headers = { 'X-Auth-Token': widget.key, Origin: 'https://a.example' };
      const answers = [
        await call('POST', '/submissions', { source_code: 'print(1)', language_id: 71 }, headers),
        await call('POST', '/submissions/batch', { submissions: [{ source_code: 'print(1)', language_id: 71 }] }, headers),
        await call('GET', '/submissions/batch?tokens=00000000-0000-4000-8000-000000000000', undefined, headers),
        await call('GET', '/submissions/00000000-0000-4000-8000-000000000000', undefined, headers),
        await call('POST', '/submissions', { source_code: 'print(1)', language_id: 71 }, { 'X-Auth-Token': '', Authorization: `Bearer ${widget.key}` }),
      ];
      for (const res of answers) {
        expect(res.status).to.equal(403);
        const body = (await res.json()) as { error: string };
        expect(Object.keys(body)).to.deep.equal(['error']);
        expect(body.error).to.match(/widget key/);
      }
      const rows = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', owner.accountId).execute();
      expect(rows).to.have.length(0);
    });

    it("another account's token answers 404, like an unknown one", async () => {
      const done = await submitAndPoll({ source_code: 'print(1)', language_id: 71 });
      const other = await keyFor(s.db);
      const res = await call('GET', `/submissions/${String(done['token'])}`, undefined, { 'X-Auth-Token': other.key.key });
      expect(res.status).to.equal(404);
      expect(await res.json()).to.deep.equal({ error: 'submission not found' });
      expect((await call('GET', '/submissions/not-a-token')).status).to.equal(404);
    });

    it('a key over its limit: 429 {"error"} with Retry-After, nothing stored', async () => {
      const limited = await keyFor(s.db, { monthlyLimit: 1 });
      const headers = { 'X-Auth-Token': limited.key.key };
      expect((await call('POST', '/submissions', { source_code: 'print(1)', language_id: 71 }, headers)).status).to.equal(201);
      const res = await call('POST', '/submissions', { source_code: 'print(1)', language_id: 71 }, headers);
      expect(res.status).to.equal(429);
      expect(res.headers.get('retry-after')).to.match(/^\d+$/);
      expect(((await res.json()) as { error: string }).error).to.match(/monthly limit of 1/);
      const rows = await s.db.db.selectFrom('submissions').select(['mode']).where('account_id', '=', limited.accountId).execute();
      expect(rows).to.deep.equal([{ mode: 'judge0' }]);
    });

    it('400 {"error"} for a body that is not JSON; unknown paths 404 in the same shape', async () => {
      let res = await fetch(`${s.url}/judge0/submissions`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Auth-Token': key }, body: '{' });
      expect(res.status).to.equal(400);
      expect(Object.keys((await res.json()) as object)).to.deep.equal(['error']);
      res = await fetch(`${s.url}/judge0/nothing-here`, { headers: { Accept: 'text/html' } });
      expect(res.status).to.equal(404);
      expect(Object.keys((await res.json()) as object)).to.deep.equal(['error']);
    });
  });

  it('the OpenAPI document lists both compatible APIs under their own tags, with API keys only (no marketplace)', async () => {
    const doc = (await (await fetch(`${s.url}/api/openapi.json`)).json()) as {
      tags: { name: string }[];
      paths: Record<string, Record<string, { tags?: string[]; requestBody?: unknown; security?: unknown; responses: Record<string, unknown> }>>;
    };
    expect(doc.paths['/piston/api/v2/execute']!['post']!.security).to.deep.equal([{ apiKey: [] }]);
    expect(doc.paths['/judge0/submissions']!['post']!.security).to.deep.equal([{ apiKey: [] }]);
    expect(doc.paths['/judge0/submissions']!['post']!.responses).to.have.property('403');
    expect(doc.paths['/api/v2/run-code/']!['post']!.security).to.deep.equal([{ apiKey: [] }, { marketplace: [] }]);
    expect(doc.tags.map((t) => t.name)).to.include.members(['Piston v2 compatible', 'Judge0 CE compatible']);
    expect(doc.paths['/piston/api/v2/execute']!['post']!.tags).to.deep.equal(['Piston v2 compatible']);
    expect(doc.paths['/piston/api/v2/execute']!['post']!.requestBody).to.be.an('object');
    expect(doc.paths['/judge0/submissions']!['post']!.tags).to.deep.equal(['Judge0 CE compatible']);
    expect(doc.paths['/judge0/submissions/{token}']!['get']!.tags).to.deep.equal(['Judge0 CE compatible']);
  });
});
