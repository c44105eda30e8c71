import { expect } from 'chai';
import type { SandboxSpec } from '../../src/sandbox/spec.js';
import { billedSubmissions, keyFor, recordingSandbox, resultsStack, type ResultsStack, skipUnlessRealRuns, syncRun } from '../helpers/results-stack.js';
import { makeZip } from '../helpers/zip.js';

// Submit-answer problems (2025-09 type: submit-answer, CMS's output-only tasks),
// packages written for these tests: a submission is its answer files in `files`, NAME.out
// for test NAME (or the base name when it is unique), judged by the default validator or
// the package's own; nothing of the submission is built or run.

const PY = 'python-3.9.7';

describe('judged runs (submit-answer problems)', function () {
  let s: ResultsStack;
  const stages: SandboxSpec[] = [];
  before(async function () {
    skipUnlessRealRuns(this, ['python3.9']);
    s = await resultsStack('judge_answers');
    await s.startRunner({ sandbox: await recordingSandbox(stages) });
  });
  after(async () => s?.close());

  const upload = async (key: string, files: { name: string; content: string }[]) => {
    const res = await fetch(`${s.url}/api/v2/problems`, { method: 'POST', headers: { Authorization: key, 'Content-Type': 'application/zip' }, body: new Uint8Array(makeZip(files)) });
    const body = (await res.json()) as { id: string; submit_answer?: boolean; error?: { message: string } };
    return { status: res.status, body };
  };
  const data = [
    { name: 'p/data/secret/a.in', content: '6 7\n' },
    { name: 'p/data/secret/a.ans', content: '42\n' },
    { name: 'p/data/secret/group/b.in', content: '2 3\n' },
    { name: 'p/data/secret/group/b.ans', content: '6\n' },
    { name: 'p/data/secret/c.in', content: '1 1\n' },
    { name: 'p/data/secret/c.ans', content: '1\n' },
  ];

  it('the answers are judged by the default validator, each by its name; a missing one is wrong; nothing runs', async () => {
    const { accountId, key } = await keyFor(s.db);
    const up = await upload(key.key, [{ name: 'p/problem.yaml', content: 'problem_format_version: 2025-09\nname: Products\ntype: pass-fail submit-answer\n' }, ...data]);
    expect(up.status, JSON.stringify(up.body)).to.equal(201);
    expect(up.body.submit_answer).to.equal(true);
    stages.length = 0;
    const r = await syncRun(s, key.key, {
      compiler: PY,
      files: [
        { name: 'a.out', content: '42\n' },
        { name: 'secret/group/b.out', content: '  6 \n' },
      ],
      problem: up.body.id,
    });
    expect(r.tests!.map((t) => [t.name, t.verdict, t.time])).to.deep.equal([
      ['secret/a', 'accepted', null],
      ['secret/c', 'wrong_answer', null],
      ['secret/group/b', 'accepted', null],
    ]);
    expect(r.tests![1]!.checker_message).to.equal('no answer file secret/c.out');
    expect(r).to.include({ verdict: 'wrong_answer', compile_output: null });
    expect(stages, 'no sandbox stage ran').to.have.length(0);
    expect(await billedSubmissions(s, accountId)).to.equal(3);
  });

  it("a package's own validator judges each answer file (its input and answer beside it)", async () => {
    const { key } = await keyFor(s.db);
    const validator = [
      '#!/usr/bin/env python3',
      'import sys',
      'a, b = map(int, open(sys.argv[1]).read().split())',
      'got = sys.stdin.read().split()',
      "ok = len(got) == 2 and int(got[0]) * int(got[1]) == a * b and {int(got[0]), int(got[1])} != {a, b}",
      "open(sys.argv[3] + 'judgemessage.txt', 'w').write('another factoring' if ok else 'not another factoring')",
      'sys.exit(42 if ok else 43)',
    ].join('\n');
    const up = await upload(key.key, [
      { name: 'p/problem.yaml', content: 'problem_format_version: 2025-09\nname: Factor again\ntype: submit-answer\n' },
      ...data,
      { name: 'p/output_validator/validator.py', content: validator },
    ]);
    expect(up.status, JSON.stringify(up.body)).to.equal(201);
    stages.length = 0;
    const r = await syncRun(s, key.key, {
      compiler: PY,
      files: [
        { name: 'a.out', content: '21 2\n' },
        { name: 'b.out', content: '2 3\n' },
        { name: 'c.out', content: '1 1\n' },
      ],
      problem: up.body.id,
    });
    expect(r.tests!.map((t) => [t.verdict, t.checker_message])).to.deep.equal([
      ['accepted', 'another factoring'],
      ['wrong_answer', 'not another factoring'],
      ['wrong_answer', 'not another factoring'],
    ]);
    // The validator's stages only (built once, run per answer); no stage of the submission.
    expect(stages.length).to.be.at.least(3);
    expect(stages.every((st) => st.argv.some((a) => a.endsWith('validator.py')))).to.equal(true);
  });

  it('submit-answer with interactive or multi-pass is refused, as the format says', async () => {
    const { key } = await keyFor(s.db);
    const up = await upload(key.key, [
      { name: 'p/problem.yaml', content: 'problem_format_version: 2025-09\nname: Both\ntype: [submit-answer, multi-pass]\n' },
      ...data,
      { name: 'p/output_validator/validator.py', content: 'import sys\nsys.exit(42)\n' },
    ]);
    expect(up.status).to.equal(400);
    expect(up.body.error!.message).to.match(/submit-answer cannot be multi-pass/);
  });
});
