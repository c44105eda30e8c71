import { expect } from 'chai';
import type { RunResult } from '../../src/result.js';
import type { SandboxSpec } from '../../src/sandbox/spec.js';
import { waitForStates } from '../helpers/queue-rows.js';
import { billedSubmissions, keyFor, postJson, recordingSandbox, resultsStack, type ResultsStack, skipUnlessRealRuns } from '../helpers/results-stack.js';

// Multi-test requests end to end: the API admits and bills N tests, the runner
// compiles once and runs each test in a fresh sandbox, the result lists every test.
// The runner's real sandbox is wrapped to count the stages it is asked to run.

const GCC = 'gcc-4.9';
const DOUBLE = '#include <stdio.h>\nint main(void) { int n; if (scanf("%d", &n) != 1) return 3; printf("%d\\n", 2 * n); return 0; }\n';

describe('multi-test requests', function () {
  let s: ResultsStack;
  const stages: SandboxSpec[] = [];
  before(async function () {
    skipUnlessRealRuns(this, ['gcc']);
    s = await resultsStack('multitest');
    await s.startRunner({ sandbox: await recordingSandbox(stages) });
  });
  after(async () => s?.close());

  it('sync: compiles once, runs each test in its own sandbox, one result per test; each test is billed', async () => {
    const { accountId, key } = await keyFor(s.db);
    stages.length = 0;
    const tests = [{ input: '1\n' }, { input: '21\n' }, { input: '-4\n' }];
    const res = await postJson(`${s.url}/api/v2/run-code-sync/`, key.key, { code: DOUBLE, compiler: GCC, tests });
    expect(res.status).to.equal(200);
    const result = (await res.json()) as RunResult;
    expect(result.tests!.map((t) => t.output)).to.deep.equal(['2\n', '42\n', '-8\n']);
    for (const t of result.tests!) {
      expect(t).to.include({ status: 'success', exit_code: 0, error: '', truncated: false });
      expect(Object.keys(t).sort()).to.deep.equal(['error', 'exit_code', 'limit_exceeded', 'memory', 'output', 'signal', 'status', 'time', 'total', 'truncated']);
    }
    expect(result.compile_output).to.be.a('string');
    expect(result.status).to.equal('success');
    // One compile stage (it collects the binary), then one fresh sandbox per test, fed its own input.
    const compiles = stages.filter((st) => st.collect);
    const runs = stages.filter((st) => !st.collect);
    expect(compiles).to.have.length(1);
    expect(runs.map((st) => String(st.stdin))).to.deep.equal(['1\n', '21\n', '-4\n']);
    expect(await billedSubmissions(s, accountId)).to.equal(3);
  });

  it('async run endpoint: the result (looked up) lists every test; the first failing test is the headline', async () => {
    const { key } = await keyFor(s.db);
    const posted = await postJson(`${s.url}/api/v2/run-code/`, key.key, { code: DOUBLE, compiler: GCC, tests: [{ input: '5' }, { input: 'x' }] });
    expect(posted.status).to.equal(200);
    const id = posted.headers.get('x-submission-id')!;
    await waitForStates(s.db.db, [id], ['finished', 'failed']);
    const view = (await (await fetch(`${s.url}/api/v2/submissions/${id}`, { headers: { Authorization: key.key } })).json()) as { result: RunResult };
    expect(view.result.tests!.map((t) => [t.status, t.output, t.exit_code])).to.deep.equal([
      ['success', '10\n', 0],
      ['runtime_error', '', 3],
    ]);
    expect(view.result).to.include({ status: 'runtime_error', exit_code: 3 });
  });

  it("more tests than the plan's figure: 400 too_many_tests on both endpoints, nothing billed", async () => {
    const { accountId, key } = await keyFor(s.db);
    const eleven = Array.from({ length: 11 }, (_, i) => ({ input: String(i) }));
    for (const path of ['/api/v2/run-code/', '/api/v2/run-code-sync/']) {
      const res = await postJson(`${s.url}${path}`, key.key, { code: DOUBLE, compiler: GCC, tests: eleven });
      expect(res.status, path).to.equal(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('too_many_tests');
    }
    const raised = await keyFor(s.db, { limits: { testsPerRequest: 2 } });
    const three = await postJson(`${s.url}/api/v2/run-code-sync/`, raised.key.key, { code: DOUBLE, compiler: GCC, tests: eleven.slice(0, 3) });
    expect(three.status).to.equal(400);
    expect(await billedSubmissions(s, accountId)).to.equal(0);
  });

  it('each test counts against the monthly allowance', async () => {
    const { accountId, key } = await keyFor(s.db, { limits: { monthlyLimit: 2 } });
    const res = await postJson(`${s.url}/api/v2/run-code-sync/`, key.key, { code: DOUBLE, compiler: GCC, tests: [{ input: '1' }, { input: '2' }, { input: '3' }] });
    expect(res.status).to.equal(429);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('monthly_limit');
    const two = await postJson(`${s.url}/api/v2/run-code-sync/`, key.key, { code: DOUBLE, compiler: GCC, tests: [{ input: '1' }, { input: '2' }] });
    expect(two.status).to.equal(200);
    expect(await billedSubmissions(s, accountId)).to.equal(2);
  });
});
