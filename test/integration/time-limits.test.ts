import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { RUN_LIMITS, VERDICT_CODES, wallTimeMsFor } from '../../src/limits.js';
import type { RunResult } from '../../src/result.js';
import { findNsjail } from '../../src/sandbox/index.js';
import { imageRootfs, LAUNCHERS } from '../helpers/sandbox.js';
import { keyFor, realRunsUnavailable, resultsStack, syncRun, type ResultsStack } from '../helpers/results-stack.js';

// Time limits through the API, as judges give them, under each launcher: limits.time is
// CPU time (a busy loop past a whole second is a timeout, never a runtime error), a
// wall-clock limit stands beside it (a program that sleeps is stopped), and the result
// says which limit it was and what the limits were.

const PY = 'python-3.9.7';
const C = 'gcc-9';
const PY_LOOP = 'while True: pass';
const C_LOOP = 'int main(void) { volatile unsigned long n = 0; for (;;) n++; }\n';
const KB = RUN_LIMITS.memoryBytes / 1024;

const timedOut = (r: RunResult) => [r.status, r.limit_exceeded, r.exit_code, r.signal];

for (const launcher of LAUNCHERS) {
  describe(`time limits through the API (${launcher})`, function () {
    this.timeout(300_000);
    let s: ResultsStack;
    let key: string;
    let gcc = false;

    before(async function () {
      const why = realRunsUnavailable(['python3.9']) ?? (launcher === 'nsjail' && !(await findNsjail(loadConfig())) ? 'nsjail not found (RUNBOX_NSJAIL or PATH)' : null);
      if (why) {
        console.log(`      SKIPPED: ${why}`);
        this.skip();
      }
      gcc = !('skip' in imageRootfs('gcc'));
      s = await resultsStack(`time_limits_${launcher}`, { RUNBOX_LAUNCHER: launcher });
      await s.startRunner();
      key = (await keyFor(s.db)).key.key;
    });
    after(() => s?.close());

    // A wall-clock limit far away: only the CPU time can stop these.
    for (const seconds of [1, 5]) {
      it(`a Python busy loop at a ${seconds} s time limit: timeout, limit_exceeded cpu, its time past the limit`, async () => {
        const r = await syncRun(s, key, { compiler: PY, code: PY_LOOP, limits: { time: seconds, wall_time: 30 } });
        expect(timedOut(r), r.error).to.deep.equal(['timeout', 'cpu', VERDICT_CODES.killedExitCode, VERDICT_CODES.killedSignal]);
        expect(r.time).to.be.a('number').and.greaterThan(seconds);
        expect(r.limits).to.deep.equal({ time: seconds, wall_time: 30, memory: KB });
      });

      it(`a C busy loop at a ${seconds} s time limit: timeout, limit_exceeded cpu, its time past the limit`, async function () {
        if (!gcc) {
          console.log('      SKIPPED: the gcc image is not installed');
          return this.skip();
        }
        const r = await syncRun(s, key, { compiler: C, code: C_LOOP, limits: { time: seconds, wall_time: 30 } });
        expect(timedOut(r), r.error).to.deep.equal(['timeout', 'cpu', VERDICT_CODES.killedExitCode, VERDICT_CODES.killedSignal]);
        expect(r.time).to.be.a('number').and.greaterThan(seconds);
      });
    }

    it('{"limits": {"time": 1}} alone: a busy loop is a timeout with the stated wall-clock limit beside it', async () => {
      const r = await syncRun(s, key, { compiler: PY, code: PY_LOOP, limits: { time: 1 } });
      expect(r.status, r.error).to.equal('timeout');
      // Whichever comes first on a busy host: the CPU time, or the wall-clock limit beside it.
      expect(r.limit_exceeded).to.be.oneOf(['cpu', 'wall']);
      expect(r.limits).to.deep.equal({ time: 1, wall_time: wallTimeMsFor(1000) / 1000, memory: KB });
    });

    it('a 10 s sleep under a 5 s time limit (DOMjudge\'s test-suspend-ppid) is a timeout past the wall-clock limit, not a finished run', async () => {
      const r = await syncRun(s, key, { compiler: PY, code: 'import time\ntime.sleep(10)\nprint("woke")', limits: { time: 5 } });
      expect(timedOut(r)).to.deep.equal(['timeout', 'wall', VERDICT_CODES.killedExitCode, VERDICT_CODES.killedSignal]);
      expect(r.output).to.equal('');
      expect(r.limits).to.deep.equal({ time: 5, wall_time: 8.5, memory: KB });
    });

    it('a judged test: a busy loop under a stored-style time limit is verdict timeout (TLE), the others\' fields null', async () => {
      const r = await syncRun(s, key, { compiler: PY, code: PY_LOOP, tests: [{ input: '', expected_output: 'x' }], limits: { time: 1, wall_time: 30 } });
      expect([r.verdict, r.tests![0]!.verdict, r.tests![0]!.limit_exceeded]).to.deep.equal(['timeout', 'timeout', 'cpu']);
      const ok = await syncRun(s, key, { compiler: PY, code: 'print("x")', tests: [{ input: '', expected_output: 'x' }], limits: { time: 1 } });
      expect([ok.verdict, ok.tests![0]!.limit_exceeded, ok.limit_exceeded]).to.deep.equal(['accepted', null, null]);
    });
  });
}
