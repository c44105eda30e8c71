import { expect } from 'chai';
import { INTERACTOR_MARGIN_MS } from '../../src/limits.js';
import type { SandboxSpec } from '../../src/sandbox/spec.js';
import { keyFor, recordingSandbox, resultsStack, type ResultsStack, skipUnlessRealRuns, syncRun } from '../helpers/results-stack.js';

// Who ended first decides an interactive test, as problemtools decides it: an interactor
// that failed, or that ended first with a rejection, gives its verdict; otherwise the
// program's limit, then its runtime error, then the interactor's verdict. The programs
// and interactors here (C, testlib convention) end in a known order: the side that must
// end second waits a little after its partner has gone, so the order is never a toss-up.
// And a pair where both sides wait for each other ends at the test's own timeout; an
// interactor that outstays its program is stopped at the run's timeout and a margin.

const GCC = 'gcc-9';

/** An interactor that reads one number, then rejects it at once (exit 1) and leaves. */
const REJECTS_AT_ONCE = String.raw`
#include <stdio.h>
int main(void) {
  long x;
  if (scanf("%ld", &x) != 1) { fprintf(stderr, "wrong answer no guess\n"); return 1; }
  fprintf(stderr, "wrong answer %ld is not it\n", x);
  return 1;
}`;

/** An interactor that reads one number, waits for the program's end (its input's), waits a little more, and rejects. */
const REJECTS_AFTER_THE_END = String.raw`
#include <stdio.h>
#include <unistd.h>
int main(void) {
  long x;
  if (scanf("%ld", &x) != 1) return 1;
  while (scanf("%ld", &x) == 1) {}
  usleep(500000);
  fprintf(stderr, "wrong answer the program stopped\n");
  return 1;
}`;

/** An interactor that reads one number and crashes. */
const CRASHES = String.raw`
#include <stdio.h>
int main(void) {
  long x;
  if (scanf("%ld", &x) != 1) return 1;
  fflush(stderr);
  volatile int* p = 0;
  return *p;
}`;

/** An interactor that waits for a guess that never comes, and says so once its input ends. */
const WAITS = String.raw`
#include <stdio.h>
int main(void) {
  long x;
  if (scanf("%ld", &x) != 1) { fprintf(stderr, "wrong answer no guess\n"); return 1; }
  return 0;
}`;

/** An interactor that waits for a guess, and then for nothing, never ending by itself. */
const OUTSTAYS = String.raw`
#include <stdio.h>
#include <unistd.h>
int main(void) {
  long x;
  if (scanf("%ld", &x) == 1) return 0;
  for (;;) pause();
}`;

/** Guesses 1, waits for its input to end, waits a little more, and crashes. */
const CRASHES_AFTER_THE_END = String.raw`
#include <stdio.h>
#include <unistd.h>
int main(void) {
  printf("1\n"); fflush(stdout);
  char line[64];
  while (fgets(line, sizeof line, stdin)) {}
  usleep(500000);
  volatile int* p = 0;
  return *p;
}`;

/** Guesses 1 and crashes at once. */
const CRASHES_AT_ONCE = String.raw`
#include <stdio.h>
int main(void) {
  printf("1\n"); fflush(stdout);
  volatile int* p = 0;
  return *p;
}`;

/** Guesses 1 and then spins, never reading again. */
const SPINS = String.raw`
#include <stdio.h>
int main(void) {
  printf("1\n"); fflush(stdout);
  for (volatile unsigned long i = 0;; i++) {}
}`;

/** Waits for a question that never comes. */
const WAITS_FOR_A_QUESTION = String.raw`
#include <stdio.h>
int main(void) {
  long x;
  if (scanf("%ld", &x) != 1) return 0;
  return 0;
}`;

describe('judged runs (interactors): who ended first', function () {
  let s: ResultsStack;
  const stages: SandboxSpec[] = [];
  before(async function () {
    skipUnlessRealRuns(this, ['gcc']);
    s = await resultsStack('judge_interactive_order');
    await s.startRunner({ sandbox: await recordingSandbox(stages) });
  });
  after(async () => s?.close());

  const interactor = (code: string) => ({ compiler: GCC, code, convention: 'testlib' });
  const run = async (code: string, interactorCode: string, limits: object = { wall_time: 3 }) => {
    const { key } = await keyFor(s.db);
    return syncRun(s, key.key, { code, compiler: GCC, interactor: interactor(interactorCode), input: '5', limits });
  };

  it('the interactor rejects and leaves, then the program crashes: the rejection is the verdict', async () => {
    const r = await run(CRASHES_AFTER_THE_END, REJECTS_AT_ONCE);
    expect(r).to.include({ status: 'runtime_error', verdict: 'wrong_answer', checker_message: 'wrong answer 1 is not it' });
  });

  it('the program crashes, then the interactor rejects: runtime_error', async () => {
    const r = await run(CRASHES_AT_ONCE, REJECTS_AFTER_THE_END);
    expect(r).to.include({ status: 'runtime_error', verdict: 'runtime_error' });
  });

  it('the interactor rejected and left, the program then ran out of time: wrong_answer', async () => {
    const r = await run(SPINS, REJECTS_AT_ONCE);
    expect(r).to.include({ status: 'timeout', verdict: 'wrong_answer', checker_message: 'wrong answer 1 is not it' });
  });

  it('an interactor that crashes gives checker_error, whatever the program did after', async () => {
    const r = await run(SPINS, CRASHES);
    expect(r).to.include({ status: 'timeout', verdict: 'checker_error' });
    expect(r.checker_message).to.match(/^the interactor was killed by signal 11/);
  });

  it("both wait for each other: the program's timeout at the test's limit, not the service's", async () => {
    // CPU time 1 s: a wall timeout of 2 x 1 + 1 = 3 s (the program waits, using no CPU).
    const r = await run(WAITS_FOR_A_QUESTION, WAITS, { time: 1 });
    expect(r).to.include({ status: 'timeout', verdict: 'timeout' });
    expect(r.total).to.be.at.most((3000 + INTERACTOR_MARGIN_MS) / 1000);
  });

  it('an interactor that outstays its program is stopped at the run\'s timeout and the margin, not the service\'s: checker_error', async () => {
    stages.length = 0;
    const r = await run(WAITS_FOR_A_QUESTION, OUTSTAYS, { time: 1 });
    expect(r).to.include({ status: 'timeout', verdict: 'checker_error', checker_message: 'the interactor was stopped: timeout' });
    const interactors = stages.filter((st) => st.lane === 1);
    expect(interactors).to.have.length(1);
    expect(interactors[0]!.limits).to.deep.equal({ timeoutMs: 3000 + INTERACTOR_MARGIN_MS });
  });
});
