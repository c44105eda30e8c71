import { expect } from 'chai';
import { INTERACTOR_MARGIN_MS, wallTimeMsFor } from '../../src/limits.js';
import type { SandboxSpec } from '../../src/sandbox/spec.js';
import { keyFor, recordingSandbox, resultsStack, type ResultsStack, skipUnlessRealRuns, syncRun } from '../helpers/results-stack.js';

// Who ended first decides an interactive test, as problemtools decides it: an interactor
// that failed, or that ended first with a rejection, gives its verdict; otherwise the
// program's limit, then its runtime error, then the interactor's verdict. The programs
// and interactors here (C, testlib convention) end in a known order: the side that ends
// second does so the moment it reads its partner's end, as problemtools' guess_rte.c
// (which exits at once, its interactor rejecting on the end of its input) does.
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

/** An interactor that reads one number, and rejects as soon as its input (the program's output) ends. */
const REJECTS_AFTER_THE_END = String.raw`
#include <stdio.h>
int main(void) {
  long x;
  if (scanf("%ld", &x) != 1) return 1;
  while (scanf("%ld", &x) == 1) {}
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

/** Guesses 1, and crashes as soon as its input (the interactor's output) ends. */
const CRASHES_AFTER_THE_END = String.raw`
#include <stdio.h>
int main(void) {
  printf("1\n"); fflush(stdout);
  char line[64];
  while (fgets(line, sizeof line, stdin)) {}
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

/** Exits with 42 at once, saying nothing: problemtools' guess_rte.c. */
const EXITS_42 = 'int main(void) { return 42; }';

/** An interactor that rejects as soon as its input ends without a guess. */
const REJECTS_NO_GUESS = String.raw`
#include <stdio.h>
int main(void) {
  long x;
  if (scanf("%ld", &x) != 1) { fprintf(stderr, "wrong answer no guess\n"); return 1; }
  return 0;
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
    expect(r).to.include({ status: 'runtime_error', verdict: 'runtime_error', checker_message: 'wrong answer the program stopped' });
    // Exiting with 42 before a word, on every test (problemtools' guess_rte.c: run_time_error).
    const { key } = await keyFor(s.db);
    const five = await syncRun(s, key.key, { code: EXITS_42, compiler: GCC, interactor: interactor(REJECTS_NO_GUESS), tests: Array.from({ length: 5 }, () => ({ input: '5' })), limits: { wall_time: 3 } });
    expect(five.tests!.map((t) => [t.status, t.exit_code, t.verdict])).to.deep.equal(Array.from({ length: 5 }, () => ['runtime_error', 42, 'runtime_error']));
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
    // CPU time 1 s: the wall timeout of the rule (1.5 × 1 + 1 = 2.5 s; the program waits, using no CPU).
    // The interactor ends (rejecting) the moment the stopped program's output closes: on every test, still after it.
    const { key } = await keyFor(s.db);
    const r = await syncRun(s, key.key, { code: WAITS_FOR_A_QUESTION, compiler: GCC, interactor: interactor(WAITS), tests: [{ input: '5' }, { input: '5' }, { input: '5' }], limits: { time: 1 } });
    for (const t of r.tests!) {
      expect(t).to.include({ status: 'timeout', verdict: 'timeout', checker_message: 'wrong answer no guess' });
      expect(t.total).to.be.at.most((wallTimeMsFor(1000) + INTERACTOR_MARGIN_MS) / 1000);
    }
  });

  it('an interactor that outstays its program is stopped at the run\'s timeout and the margin, not the service\'s: checker_error', async () => {
    stages.length = 0;
    const r = await run(WAITS_FOR_A_QUESTION, OUTSTAYS, { time: 1 });
    expect(r).to.include({ status: 'timeout', verdict: 'checker_error', checker_message: 'the interactor was stopped: timeout' });
    const interactors = stages.filter((st) => st.lane === 1);
    expect(interactors).to.have.length(1);
    // The run's wall limit for 1 s of CPU time (src/limits.ts TIME_LIMIT_RULE), and the margin.
    expect(interactors[0]!.limits).to.deep.equal({ timeoutMs: wallTimeMsFor(1000) + INTERACTOR_MARGIN_MS });
  });
});
