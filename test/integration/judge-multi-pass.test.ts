import { expect } from 'chai';
import { keyFor, resultsStack, type ResultsStack, skipUnlessRealRuns, syncRun } from '../helpers/results-stack.js';
import { makeZip } from '../helpers/zip.js';

// Multi-pass problems, packages written for these tests: a Python output validator that
// accepts the first pass and asks for a second one by writing nextpass.in, then on the
// second pass finds its first pass's judgemessage.txt still there (the feedback
// directory persists); a program wrong on the second pass only; the spec's judge errors
// (more passes than validation_passes, nextpass.in with exit 43); and an interactive
// multi-pass problem (2025-09 type: [interactive, multi-pass]).

const PY = 'python-3.9.7';

/** Pass "first N" asks for "second 2N"; the answer file says how the validator misbehaves (loop, reject-next). */
const VALIDATOR = `#!/usr/bin/env python3
import os, sys
kind, n = open(sys.argv[1]).read().split()
mode = open(sys.argv[2]).read().strip()
fb = sys.argv[3]
out = sys.stdin.read().split()
def say(s):
    with open(os.path.join(fb, 'judgemessage.txt'), 'a') as f:
        print(s, file=f)
if out != [str(2 * int(n))]:
    say(f'{kind}: {" ".join(out)} is not {2 * int(n)}')
    sys.exit(43)
if kind == 'first' or mode in ('loop', 'reject-next'):
    say(f'{kind} ok')
    with open(os.path.join(fb, 'nextpass.in'), 'w') as f:
        print('second', 2 * int(n), file=f)
    sys.exit(43 if mode == 'reject-next' else 42)
if 'first ok' not in open(os.path.join(fb, 'judgemessage.txt')).read():
    say('the first pass left nothing')
    sys.exit(43)
say('second ok')
sys.exit(42)
`;

const DOUBLE = 'kind, n = input().split()\nprint(2 * int(n))\n';
const WRONG_SECOND = "kind, n = input().split()\nprint(2 * int(n) if kind == 'first' else 0)\n";

/** The interactor sends N, reads 2N; "first" asks for a second pass with 2N. */
const INTERACTOR = `#!/usr/bin/env python3
import os, sys
kind, n = open(sys.argv[1]).read().split()
fb = sys.argv[3]
print(n, flush=True)
got = sys.stdin.readline().strip()
with open(os.path.join(fb, 'judgemessage.txt'), 'a') as f:
    print(kind, got, file=f)
if got != str(2 * int(n)):
    sys.exit(43)
if kind == 'first':
    with open(os.path.join(fb, 'nextpass.in'), 'w') as f:
        print('second', got, file=f)
sys.exit(42)
`;

const INTERACTIVE_DOUBLE = 'print(2 * int(input()), flush=True)\n';

describe('judged runs (multi-pass problems)', function () {
  let s: ResultsStack;
  before(async function () {
    skipUnlessRealRuns(this, ['python3.9']);
    s = await resultsStack('judge_multi_pass');
    await s.startRunner();
  });
  after(async () => s?.close());

  const upload = async (key: string, files: { name: string; content: string }[]) => {
    const res = await fetch(`${s.url}/api/v2/problems`, { method: 'POST', headers: { Authorization: key, 'Content-Type': 'application/zip' }, body: new Uint8Array(makeZip(files)) });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as { id: string; checker?: { passes?: number }; interactor?: { passes?: number }; error?: { code: string; message: string } } };
  };
  const legacy = (validation: string, limits = '') => [
    { name: 'double/problem.yaml', content: `name: Double twice\nvalidation: ${validation}\n${limits}` },
    { name: 'double/data/sample/1.in', content: 'first 3\n' },
    { name: 'double/data/sample/1.ans', content: 'ok\n' },
    { name: 'double/data/secret/1.in', content: 'first 21\n' },
    { name: 'double/data/secret/1.ans', content: 'ok\n' },
    { name: 'double/output_validators/double/validator.py', content: VALIDATOR },
  ];

  it('legacy validation: custom multi-pass: the second pass reads nextpass.in, the feedback directory persists', async () => {
    const { key } = await keyFor(s.db);
    const up = await upload(key.key, legacy('custom multi-pass'));
    expect(up.status, JSON.stringify(up.body)).to.equal(201);
    // validation_passes' default, shown with the validator.
    expect(up.body.checker!.passes).to.equal(2);
    const r = await syncRun(s, key.key, { code: DOUBLE, compiler: PY, problem: up.body.id });
    expect(r.tests!.map((t) => [t.name, t.verdict, t.passes, t.checker_message])).to.deep.equal([
      ['sample/1', 'accepted', 2, 'first ok\nsecond ok'],
      ['secret/1', 'accepted', 2, 'first ok\nsecond ok'],
    ]);
    expect(r).to.include({ verdict: 'accepted', score: 1 });
    // The test's output is its last pass's: 2 × 42 on the second pass of secret/1.
    expect(r.tests![1]!.output).to.equal('84\n');
  });

  it('a program right on the first pass and wrong on the second: wrong answer, with both passes in the message', async () => {
    const { key } = await keyFor(s.db);
    const up = await upload(key.key, legacy('custom multi-pass'));
    const r = await syncRun(s, key.key, { code: WRONG_SECOND, compiler: PY, problem: up.body.id });
    expect(r.tests!.map((t) => [t.verdict, t.passes, t.checker_message])).to.deep.equal([
      ['wrong_answer', 2, 'first ok\nsecond: 0 is not 12'],
      ['wrong_answer', 2, 'first ok\nsecond: 0 is not 84'],
    ]);
  });

  it("the spec's judge errors: a pass past validation_passes, and nextpass.in with exit 43", async () => {
    const { key } = await keyFor(s.db);
    const files = legacy('custom multi-pass', 'limits:\n  validation_passes: 3\n  time_limit: 2\n');
    files[2]!.content = 'loop\n';
    files[4]!.content = 'reject-next\n';
    const up = await upload(key.key, files);
    expect(up.status, JSON.stringify(up.body)).to.equal(201);
    const r = await syncRun(s, key.key, { code: DOUBLE, compiler: PY, problem: up.body.id });
    expect(r.tests!.map((t) => [t.verdict, t.passes])).to.deep.equal([
      ['checker_error', 3],
      ['checker_error', 1],
    ]);
    expect(r.tests![0]!.checker_message).to.match(/^the validator asked for pass 4; the problem's validation_passes is 3/);
    expect(r.tests![1]!.checker_message).to.match(/^the validator wrote nextpass\.in and rejected the pass \(exit 43\)/);
  });

  it('a pass that fails is the verdict: a runtime error on the second pass', async () => {
    const { key } = await keyFor(s.db);
    const up = await upload(key.key, legacy('custom multi-pass'));
    const r = await syncRun(s, key.key, { code: "kind, n = input().split()\nassert kind == 'first'\nprint(2 * int(n))\n", compiler: PY, problem: up.body.id });
    expect(r.tests!.map((t) => [t.verdict, t.passes])).to.deep.equal([
      ['runtime_error', 2],
      ['runtime_error', 2],
    ]);
  });

  it("a request's sandbox time counts every pass a test may take: past the plan's bound it is refused before anything runs", async () => {
    const { key } = await keyFor(s.db);
    const up = await upload(key.key, legacy('custom multi-pass', 'limits:\n  validation_passes: 32\n  time_limit: 30\n'));
    expect(up.status).to.equal(201);
    const res = await fetch(`${s.url}/api/v2/run-code-sync/`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/json' }, body: JSON.stringify({ code: DOUBLE, compiler: PY, problem: up.body.id }) });
    expect(res.status).to.equal(400);
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error.code).to.equal('too_much_sandbox_time');
    expect(error.message).to.include('2 tests × 32 passes × 30 s');
  });

  it('validation_passes out of bounds is refused, naming the key', async () => {
    const { key } = await keyFor(s.db);
    for (const limits of ['limits:\n  validation_passes: 1\n', 'limits:\n  validation_passes: 1000\n']) {
      const up = await upload(key.key, legacy('custom multi-pass', limits));
      expect(up.status).to.equal(400);
      expect(up.body.error!.message).to.match(/validation_passes/);
    }
  });

  it('2025-09 type: [interactive, multi-pass]: the interactor asks for a second pass with the program joined again', async () => {
    const { key } = await keyFor(s.db);
    const up = await upload(key.key, [
      { name: 'p/problem.yaml', content: 'problem_format_version: 2025-09\nname: Double interactively\ntype: [interactive, multi-pass]\n' },
      { name: 'p/data/sample/1.in', content: 'first 1\n' },
      { name: 'p/data/sample/1.ans', content: '\n' },
      { name: 'p/data/sample/1.interaction', content: '<1\n>2\n---\n<2\n>4\n' },
      { name: 'p/data/secret/1.in', content: 'first 5\n' },
      { name: 'p/data/secret/1.ans', content: '\n' },
      { name: 'p/output_validator/interactor.py', content: INTERACTOR },
    ]);
    expect(up.status, JSON.stringify(up.body)).to.equal(201);
    expect(up.body.interactor!.passes).to.equal(2);
    // The sample's interaction is kept and shown with it.
    const shown = (await (await fetch(`${s.url}/api/v2/problems/${up.body.id}`, { headers: { Authorization: key.key } })).json()) as { tests: { name: string; interaction?: string }[] };
    expect(shown.tests.map((t) => [t.name, t.interaction])).to.deep.equal([['sample/1', '<1\n>2\n---\n<2\n>4\n'], ['secret/1', undefined]]);
    const ok = await syncRun(s, key.key, { code: INTERACTIVE_DOUBLE, compiler: PY, problem: up.body.id });
    expect(ok.tests!.map((t) => [t.verdict, t.passes, t.checker_message])).to.deep.equal([['accepted', 2, 'first 2\nsecond 4'], ['accepted', 2, 'first 10\nsecond 20']]);
    const wrong = await syncRun(s, key.key, { code: 'n = int(input())\nprint(10, flush=True)\n', compiler: PY, problem: up.body.id });
    expect(wrong.tests!.map((t) => [t.verdict, t.passes, t.checker_message])).to.deep.equal([['wrong_answer', 1, 'first 10'], ['wrong_answer', 2, 'first 10\nsecond 10']]);
  });
});
