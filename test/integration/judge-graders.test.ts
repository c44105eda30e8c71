import { expect } from 'chai';
import { keyFor, resultsStack, type ResultsStack, skipUnlessRealRuns, syncRun } from '../helpers/results-stack.js';
import { makeZip } from '../helpers/zip.js';

// Function problems (the CMS and IOI style), packages written for these tests: the
// package's include/cpp/ holds a C++ grader with main and the header the submission
// implements, include/python3/ a driver (__main__.py) that imports the submission;
// a request names the problem and sends only the function. Included files overwrite the
// submission's of the same name.

const PY = 'python-3.9.7';
const GXX = 'g++-9';

const GRADER = `#include <cstdio>
#include "sum.h"
int main() {
  long long a, b;
  if (std::scanf("%lld %lld", &a, &b) != 2) return 1;
  std::printf("%lld\\n", sum(a, b));
}
`;

describe('judged runs (function problems with a grader)', function () {
  let s: ResultsStack;
  before(async function () {
    skipUnlessRealRuns(this, ['python3.9', 'gcc']);
    s = await resultsStack('judge_graders');
    await s.startRunner();
  });
  after(async () => s?.close());

  const files = [
    { name: 'sum/problem.yaml', content: 'name: Sum as a function\n' },
    { name: 'sum/data/sample/1.in', content: '2 3\n' },
    { name: 'sum/data/sample/1.ans', content: '5\n' },
    { name: 'sum/data/secret/1.in', content: '4000000000 2\n' },
    { name: 'sum/data/secret/1.ans', content: '4000000002\n' },
    { name: 'sum/include/cpp/grader.cpp', content: GRADER },
    { name: 'sum/include/cpp/sum.h', content: 'long long sum(long long a, long long b);\n' },
    { name: 'sum/include/python3/__main__.py', content: 'from solution import solve\nprint(solve(*map(int, input().split())))\n' },
  ];
  type Problem = { id: string; include?: Record<string, string[]> };

  const upload = async () => {
    const { key } = await keyFor(s.db);
    const up = await fetch(`${s.url}/api/v2/problems`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/zip' }, body: new Uint8Array(makeZip(files)) });
    expect(up.status, await up.clone().text()).to.equal(201);
    return { key: key.key, problem: (await up.json()) as Problem };
  };

  it("the problem shows its included files by language; a C++ submission of sum() alone is built with include/cpp's grader and accepted", async () => {
    const { key, problem } = await upload();
    expect(problem.include).to.deep.equal({ cpp: ['grader.cpp', 'sum.h'], python3: ['__main__.py'] });
    const r = await syncRun(s, key, { compiler: GXX, code: '#include "sum.h"\nlong long sum(long long a, long long b) { return a + b; }\n', problem: problem.id });
    expect(r.tests!.map((t) => [t.name, t.verdict, t.output])).to.deep.equal([
      ['sample/1', 'accepted', '5\n'],
      ['secret/1', 'accepted', '4000000002\n'],
    ]);
    // An int sum overflows on the second test: judged by the same grader.
    const narrow = await syncRun(s, key, { compiler: GXX, code: 'long long sum(long long a, long long b) { return (int)a + (int)b; }\n', problem: problem.id });
    expect(narrow.tests!.map((t) => t.verdict)).to.deep.equal(['accepted', 'wrong_answer']);
  });

  it("included files overwrite the submission's of the same name: its own grader.cpp is replaced", async () => {
    const { key, problem } = await upload();
    const r = await syncRun(s, key, {
      compiler: GXX,
      files: [
        { name: 'sum.cpp', content: 'long long sum(long long a, long long b) { return a + b; }\n' },
        { name: 'grader.cpp', content: '#include <cstdio>\nint main() { std::puts("42"); }\n' },
      ],
      main: 'sum.cpp',
      problem: problem.id,
    });
    expect(r).to.include({ verdict: 'accepted' });
  });

  it("a Python submission's solve() is imported by the package's driver (__main__.py), which runs as the program", async () => {
    const { key, problem } = await upload();
    const r = await syncRun(s, key, { compiler: PY, files: [{ name: 'solution.py', content: 'def solve(a, b):\n    return a + b\n' }], problem: problem.id });
    expect(r.tests!.map((t) => [t.verdict, t.output])).to.deep.equal([
      ['accepted', '5\n'],
      ['accepted', '4000000002\n'],
    ]);
  });

  it('without include/<language>/ for a language, include/default/ is copied', async () => {
    const { key } = await keyFor(s.db);
    const zip = makeZip([
      { name: 'p/problem.yaml', content: 'name: Default include\n' },
      { name: 'p/data/secret/1.in', content: '\n' },
      { name: 'p/data/secret/1.ans', content: 'from the package\n' },
      { name: 'p/include/default/message.txt', content: 'from the package\n' },
    ]);
    const up = await fetch(`${s.url}/api/v2/problems`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/zip' }, body: new Uint8Array(zip) });
    expect(up.status).to.equal(201);
    const { id } = (await up.json()) as { id: string };
    const r = await syncRun(s, key.key, { compiler: PY, code: "print(open('message.txt').read(), end='')\n", problem: id });
    expect(r).to.include({ verdict: 'accepted' });
  });

  it('an include directory that is not a language code is refused, naming it', async () => {
    const { key } = await keyFor(s.db);
    const zip = makeZip([...files, { name: 'sum/include/C++/x.h', content: '\n' }]);
    const up = await fetch(`${s.url}/api/v2/problems`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/zip' }, body: new Uint8Array(zip) });
    expect(up.status).to.equal(400);
    expect(((await up.json()) as { error: { message: string } }).error.message).to.match(/^include\/C\+\+\//);
  });
});
