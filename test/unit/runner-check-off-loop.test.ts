import { expect } from 'chai';
import { checkBuiltin, type BuiltinChecker } from '../../src/judge/checkers/index.js';
import { compare } from '../../src/runner/check-off-loop.js';

// Large comparisons leave the runner's event loop for a worker thread, with the same
// verdicts as inline; the loop keeps turning meanwhile.

describe('runner: comparisons off the event loop', () => {
  const lines = (n: number, last?: string) => Buffer.from(Array.from({ length: n }, (_, i) => (i === n - 1 && last !== undefined ? last : `${i} ${i * 3}`)).join('\n') + '\n');
  const answer = lines(400_000);
  const wrong = lines(400_000, 'nope');

  it('gives the verdicts the inline comparison gives, for each checker', async () => {
    for (const checker of [{ type: 'lines' }, { type: 'tokens' }, { type: 'floats' }, { type: 'unordered_lines' }, { type: 'exact' }] as BuiltinChecker[]) {
      for (const output of [answer, wrong]) {
        const data = { input: Buffer.alloc(0), output, answer };
        expect(await compare(checker, data), checker.type).to.deep.equal(checkBuiltin(checker, data));
      }
    }
  });

  it('the event loop turns while a large comparison runs', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      const r = await compare({ type: 'unordered_lines' }, { input: Buffer.alloc(0), output: wrong, answer });
      expect(r.verdict).to.equal('wrong_answer');
    } finally {
      clearInterval(timer);
    }
    expect(ticks).to.be.greaterThan(0);
  });

  it("leaves the caller's buffers whole (the thread is handed copies)", async () => {
    const output = Buffer.from(wrong);
    const expected = Buffer.from(answer);
    const r = await compare({ type: 'exact' }, { input: Buffer.alloc(0), output, answer: expected });
    expect(r.verdict).to.equal('wrong_answer');
    expect(output.equals(wrong) && expected.equals(answer)).to.equal(true);
  });

  it('small comparisons stay inline', async () => {
    expect(await compare({ type: 'lines' }, { input: Buffer.alloc(0), output: Buffer.from('1\n'), answer: Buffer.from('1') })).to.deep.equal({ verdict: 'accepted', score: 1, message: '' });
  });
});
