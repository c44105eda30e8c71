import { expect } from 'chai';
import { sql } from 'kysely';
import { REQUEST_LIMITS, RUN_LIMITS } from '../../src/limits.js';
import { waitForStates } from '../helpers/queue-rows.js';
import { keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { WsClient } from '../helpers/ws-client.js';

// Interactive WebSocket runs end to end: a real client, the real API, a real runner and
// sandbox. What the client types travels API → Postgres (stored, NOTIFY runbox_input) →
// runner → the program's stdin; the prompts travel back as output messages.

const PY = 'python-3.9.7';
const C = 'gcc-4.9';
const SITE = 'https://a.example';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const GREETER = 'import sys\nname = input("name? ")\nage = input("age? ")\nprint("hello", name, int(age) + 1, sys.stdin.isatty())\n';
const SCANF = `#include <stdio.h>
int main(void) {
  int a, b;
  printf("a? "); fflush(stdout);
  if (scanf("%d", &a) != 1) return 2;
  printf("b? "); fflush(stdout);
  if (scanf("%d", &b) != 1) return 3;
  printf("sum %d\\n", a + b);
  return 0;
}
`;
/** Reads lines until the end of its input. */
const COUNTER = 'import sys\nprint("ready", flush=True)\nn = 0\nfor line in sys.stdin:\n    n += 1\n    print("got", line.strip(), flush=True)\nprint("lines", n)\n';

describe('interactive WebSocket runs', function () {
  this.timeout(120_000);
  let s: ResultsStack;
  let wsUrl: string;
  before(async function () {
    const why = realRunsUnavailable(['python3.9', 'gcc']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    s = await resultsStack('wsin');
    await s.startRunner();
    wsUrl = `ws://127.0.0.1:${s.api.port}/api/v2/ws/`;
  });
  after(async () => s?.close());
  beforeEach(async () => {
    for (;;) {
      const busy = await s.db.db.selectFrom('submissions').select('id').where('state', 'in', ['queued', 'running']).execute();
      if (busy.length === 0) return;
      await pause(50);
    }
  });

  async function client(opts: Parameters<typeof keyFor>[1] = {}): Promise<{ c: WsClient; accountId: string }> {
    const { key, accountId } = await keyFor(s.db, opts);
    return { c: await WsClient.open(wsUrl, { Authorization: key.key }), accountId };
  }
  /** Waits until the run's stdout so far includes `text`. */
  const prompted = (c: WsClient, id: string, text: string) => c.until(() => c.stdout(id).includes(text));
  /** The run's result, or the refusal of the run (not an answer to a stdin message). */
  const STDIN_ERRORS = new Set(['bad_request', 'unknown_run', 'not_interactive', 'run_finished', 'stdin_closed', 'input_limit']);
  const resultOf = (c: WsClient, id: string) => c.until((m) => m.id === id && (m.type === 'result' || (m.type === 'error' && !STDIN_ERRORS.has(m.code as string))));

  it('Python input(): each prompt arrives before any stdin is sent, each answer reaches the program (a pipe, not a terminal)', async () => {
    const { c, accountId } = await client();
    c.send({ type: 'run', id: 'py', code: GREETER, compiler: PY, interactive: true });
    await prompted(c, 'py', 'name? ');
    // Nothing has been sent yet, and the program is waiting: its prompt came on its own.
    expect(c.messages.some((m) => m.type === 'result')).to.equal(false);
    c.send({ type: 'stdin', id: 'py', data: 'Ada\n' });
    await prompted(c, 'py', 'age? ');
    c.send({ type: 'stdin', id: 'py', data: '3' });
    c.send({ type: 'stdin', id: 'py', data: '5\n' });
    const result = await resultOf(c, 'py');
    c.close();
    expect(result).to.include({ type: 'result', status: 'success', output: 'name? age? hello Ada 36 False\n' });
    expect(c.stdout('py')).to.equal('name? age? hello Ada 36 False\n');
    expect(c.messages.filter((m) => m.type === 'error')).to.deep.equal([]);
    // Counted once, as any WebSocket run.
    const rows = await s.db.db.selectFrom('submissions').select(['mode', 'units', 'run_options']).where('account_id', '=', accountId).execute();
    expect(rows).to.deep.equal([{ mode: 'ws', units: 1, run_options: { interactive: true } }]);
  });

  it('stdin sent right after the run message, before the run is admitted, is kept for the program', async () => {
    const { c } = await client();
    c.send({ type: 'run', id: 'quick', code: 'import sys\nprint(sys.stdin.read().upper())\n', compiler: PY, input: 'one ', interactive: true });
    c.send({ type: 'stdin', id: 'quick', data: 'two ' });
    c.send({ type: 'stdin', id: 'quick', data: 'three', eof: true });
    const result = await resultOf(c, 'quick');
    c.close();
    expect(c.messages.filter((m) => m.type === 'error')).to.deep.equal([]);
    expect(result).to.include({ type: 'result', status: 'success', output: 'ONE TWO THREE\n' });
  });

  it('C scanf: input given up front is written first, the rest is typed after the prompt', async () => {
    const { c } = await client();
    c.send({ type: 'run', id: 'c', code: SCANF, compiler: C, input: '37\n', interactive: true });
    await prompted(c, 'c', 'b? ');
    expect(c.stdout('c')).to.equal('a? b? ');
    c.send({ type: 'stdin', id: 'c', data: '5\n' });
    const result = await resultOf(c, 'c');
    c.close();
    expect(result).to.include({ type: 'result', status: 'success', output: 'a? b? sum 42\n', exit_code: 0 });
  });

  it('C printf without fflush: the prompt still arrives before any stdin is sent (stdio line-buffered, as on a terminal)', async () => {
    const { c } = await client();
    const code = '#include <stdio.h>\n#include <unistd.h>\nint main(void) {\n  char name[64];\n  printf("first line\\n");\n  printf("name? ");\n' +
      '  if (scanf("%63s", name) != 1) return 2;\n  printf("hello %s, tty %d\\n", name, isatty(1));\n  return 0;\n}\n';
    c.send({ type: 'run', id: 'nf', code, compiler: C, interactive: true });
    await prompted(c, 'nf', 'name? ');
    expect(c.stdout('nf')).to.equal('first line\nname? ');
    expect(c.messages.some((m) => m.type === 'result')).to.equal(false);
    c.send({ type: 'stdin', id: 'nf', data: 'Ada\n' });
    const result = await resultOf(c, 'nf');
    c.close();
    // Still a pipe, and nothing on stderr (the preload is quiet).
    expect(result).to.include({ type: 'result', status: 'success', output: 'first line\nname? hello Ada, tty 0\n', error: '', exit_code: 0 });
  });

  it('eof closes the program\'s stdin: a program reading to the end finishes; stdin after it is refused', async () => {
    const { c } = await client();
    c.send({ type: 'run', id: 'n', code: COUNTER, compiler: PY, interactive: true });
    await prompted(c, 'n', 'ready\n');
    c.send({ type: 'stdin', id: 'n', data: 'one\n' });
    await prompted(c, 'n', 'got one\n');
    c.send({ type: 'stdin', id: 'n', data: 'two\n', eof: true });
    c.send({ type: 'stdin', id: 'n', data: 'three\n' });
    const closed = await c.until((m) => m.type === 'error' && m.id === 'n');
    expect(closed).to.include({ code: 'stdin_closed' });
    expect(closed['message']).to.match(/stdin of run "n" is closed/);
    const result = await resultOf(c, 'n');
    c.close();
    expect(result).to.include({ status: 'success', output: 'ready\ngot one\ngot two\nlines 2\n' });
  });

  it('stdin beyond the input limit (input included) is refused naming the limit, and stdin is closed', async () => {
    const { c } = await client();
    const code = 'import sys\nprint("ready", flush=True)\nprint(len(sys.stdin.read()))\n';
    const upfront = 'a'.repeat(50_000);
    c.send({ type: 'run', id: 'big', code, compiler: PY, input: upfront, interactive: true });
    await prompted(c, 'big', 'ready\n');
    c.send({ type: 'stdin', id: 'big', data: 'b'.repeat(45_000) });
    c.send({ type: 'stdin', id: 'big', data: 'c'.repeat(REQUEST_LIMITS.inputMaxBytes - 95_000 + 1) });
    const refused = await c.until((m) => m.type === 'error' && m.id === 'big');
    expect(refused).to.include({ code: 'input_limit' });
    expect(refused['message']).to.include(`at most ${REQUEST_LIMITS.inputMaxBytes} bytes`);
    // Its stdin closed: the program sees the end of what was within the limit.
    const result = await resultOf(c, 'big');
    expect(result).to.include({ status: 'success', output: 'ready\n95000\n' });
    c.close();
  });

  it('a program waiting for input that never comes gets the timeout verdict (the wall timeout counts the wait)', async function () {
    this.timeout(RUN_LIMITS.timeoutMs + 60_000);
    const { c } = await client();
    c.send({ type: 'run', id: 'wait', code: 'print("waiting", flush=True)\ninput()\n', compiler: PY, interactive: true });
    await prompted(c, 'wait', 'waiting\n');
    const result = await resultOf(c, 'wait');
    c.close();
    expect(result).to.include({ type: 'result', status: 'timeout', output: 'waiting\n' });
  });

  it('a widget key from one of its allowed origins runs interactively', async () => {
    const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [SITE] });
    const c = await WsClient.open(`${wsUrl}?key=${encodeURIComponent(key.key)}`, {}, SITE);
    c.send({ type: 'run', id: 'w', code: 'print(input("word? ").upper())\n', compiler: PY, interactive: true });
    await prompted(c, 'w', 'word? ');
    c.send({ type: 'stdin', id: 'w', data: 'widget\n' });
    const result = await resultOf(c, 'w');
    c.close();
    expect(result).to.include({ type: 'result', status: 'success', output: 'word? WIDGET\n' });
  });

  it('closing the connection while the program waits for input cancels the run and frees the slot', async () => {
    const { c, accountId } = await client({ limits: { running: 1 } });
    c.send({ type: 'run', id: 'gone', code: 'print("?", flush=True)\ninput()\n', compiler: PY, interactive: true });
    await prompted(c, 'gone', '?\n');
    const row = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).executeTakeFirstOrThrow();
    c.close();
    await waitForStates(s.db.db, [row.id], ['finished']);
    const done = await s.db.db.selectFrom('submissions').select('result').where('id', '=', row.id).executeTakeFirstOrThrow();
    expect((done.result as { status: string }).status).to.equal('cancelled');
    const account = await s.db.db.selectFrom('accounts').select('running_now').where('id', '=', accountId).executeTakeFirstOrThrow();
    expect(account.running_now).to.equal(0);
  });

  it("an account's runs waiting on stdin may take every slot while nobody else waits; another account's run still starts: the idle run in the lent slot is stopped, saying why", async () => {
    const { c } = await client({ limits: { running: 2 } });
    c.send({ type: 'run', id: 'wait1', code: GREETER, compiler: PY, interactive: true });
    await prompted(c, 'wait1', 'name? ');
    // The second takes the runner's last slot, lent beyond the account's share while no other account waits.
    await pause(1100); // one run a second per connection
    c.send({ type: 'run', id: 'wait2', code: GREETER, compiler: PY, interactive: true });
    await prompted(c, 'wait2', 'name? ');
    // Another account's run, while both still wait for their input: the stated bound is 10 s,
    // a third of the 30 s a waiting run could hold the slot (the lent slot's run idles 5 s at most then).
    const other = await keyFor(s.db);
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${s.api.port}/api/v2/run-code-sync/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: other.key.key },
      body: JSON.stringify({ code: 'print("served")', compiler: PY }),
    });
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { output: string }).output).to.equal('served\n');
    expect(performance.now() - started, 'ms until the other account was served').to.be.below(10_000);
    const stopped = await resultOf(c, 'wait2');
    expect(stopped).to.include({ type: 'result', status: 'cancelled' });
    expect(stopped['error']).to.match(/waited for input for 5 s in a slot lent beyond the account's share of the runner while another account's run needed it/);
    // The run in the account's own share goes on.
    c.send({ type: 'stdin', id: 'wait1', data: 'Ada\n3\n' });
    expect(await resultOf(c, 'wait1')).to.include({ type: 'result', status: 'success' });
    c.close();
  });

  it('stdin for no such run, a run that is not interactive, or one that finished gets an error; bad ones bad_request; the connection stays', async () => {
    const { c } = await client();
    c.send({ type: 'stdin', id: 'nobody', data: 'x\n' });
    expect(await c.until((m) => m.id === 'nobody')).to.include({ type: 'error', code: 'unknown_run', message: 'no run "nobody" is going on this connection' });
    c.send({ type: 'stdin', id: 'nobody', data: 7 });
    const typed = await c.until((m) => m.id === 'nobody' && m.code === 'bad_request');
    expect(typed['message']).to.match(/^invalid stdin message: \/data: /);
    c.send({ type: 'stdin', id: 'nobody' });
    expect(await c.until((m) => m.id === 'nobody' && m.code === 'bad_request' && m !== typed)).to.include({ message: 'invalid stdin message: give data, eof or both' });

    c.send({ type: 'run', id: 'plain', code: 'import time\nprint("up", flush=True)\ntime.sleep(1)\n', compiler: PY });
    await prompted(c, 'plain', 'up\n');
    c.send({ type: 'stdin', id: 'plain', data: 'x\n' });
    const notInteractive = await c.until((m) => m.id === 'plain' && m.type === 'error');
    expect(notInteractive).to.include({ code: 'not_interactive' });
    expect(notInteractive['message']).to.include('"interactive": true');
    expect(await resultOf(c, 'plain')).to.include({ type: 'result', status: 'success' });
    c.send({ type: 'stdin', id: 'plain', eof: true });
    expect(await c.until((m) => m.id === 'plain' && m.code === 'run_finished')).to.include({ type: 'error', message: 'run "plain" has finished; it takes no more input' });

    await pause(1000); // one run per second per connection
    c.send({ type: 'run', id: 'again', code: 'print(input())\n', compiler: PY, input: 'still here\n', interactive: true });
    c.send({ type: 'stdin', id: 'again', eof: true });
    expect(await resultOf(c, 'again')).to.include({ type: 'result', status: 'success', output: 'still here\n' });
    c.close();
  });

  it('no input is lost or repeated when the runner\'s LISTEN connection drops while the program waits', async () => {
    const { c } = await client();
    c.send({ type: 'run', id: 'drop', code: COUNTER, compiler: PY, interactive: true });
    await prompted(c, 'drop', 'ready\n');
    const { rows } = await sql<{ n: number }>`
      SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = 'runbox-listen'
    `.execute(s.db.db);
    expect(rows[0]!.n).to.equal(1);
    for (const word of ['one', 'two', 'three']) c.send({ type: 'stdin', id: 'drop', data: `${word}\n` });
    c.send({ type: 'stdin', id: 'drop', eof: true });
    const result = await resultOf(c, 'drop');
    c.close();
    expect(result).to.include({ status: 'success', output: 'ready\ngot one\ngot two\ngot three\nlines 3\n' });
  });
});
