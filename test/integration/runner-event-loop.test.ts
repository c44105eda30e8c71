import { expect } from 'chai';
import { keyFor, postJson, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';

// A runner in the same process as the API (as `npm start` runs them) must not stall
// the API: the runner's own work on a submission (placing the source, naming the
// class files javac may write) is bounded by the source's size, so /api/health keeps
// answering while the largest, most awkward submission is processed.

/** About 100 KB of Java: thousands of classes, each with a `new`. */
function manyClasses(): string {
  const lines = ['public class Main {', '  public static void main(String[] args) { System.out.println(new C0().o != null); }', '}'];
  for (let i = 0; lines.join('\n').length < 99_000; i++) lines.push(`class C${i} { Object o = new Object(); }`);
  return lines.join('\n');
}

describe('a runner beside the API', function () {
  let s: ResultsStack;
  before(async function () {
    const why = realRunsUnavailable(['openjdk-11']);
    if (why) {
      console.log(`      PENDING: ${why}`);
      this.skip();
    }
    s = await resultsStack('runner_event_loop');
    await s.startRunner();
  });
  after(async () => s?.close());

  it('/api/health answers within a second while 100 KB of Java with thousands of classes and `new`s is processed', async () => {
    const code = manyClasses();
    expect(Buffer.byteLength(code)).to.be.within(98_000, 100_000);
    const { key } = await keyFor(s.db);
    const res = await postJson(`${s.url}/api/v2/run-code/`, key.key, { compiler: 'openjdk-11', code });
    expect(res.status).to.equal(200);
    const submission = res.headers.get('X-Submission-Id')!;

    let checksWhileRunning = 0;
    for (;;) {
      const row = await s.db.db.selectFrom('submissions').select('state').where('id', '=', submission).executeTakeFirstOrThrow();
      if (row.state !== 'queued' && row.state !== 'running') break;
      const started = performance.now();
      const health = await fetch(`${s.url}/api/health`, { signal: AbortSignal.timeout(1000) }).catch((err: Error) => err);
      expect(health, `health after ${Math.round(performance.now() - started)} ms`).to.be.instanceOf(Response);
      expect((health as Response).status).to.equal(200);
      if (row.state === 'running') checksWhileRunning++;
      await new Promise((r) => setTimeout(r, 50));
    }
    // The health checks overlapped the run, or the test proved nothing.
    expect(checksWhileRunning).to.be.above(0);
  });
});
