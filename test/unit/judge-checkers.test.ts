import { expect } from 'chai';
import { BUILTIN_CHECKER_TYPES, checkBuiltin, type BuiltinChecker, type CheckResult } from '../../src/judge/checkers/index.js';
import { firstDifference } from '../../src/judge/checkers/text.js';

// The built-in comparisons as pure functions: every verdict each one can give, the
// messages that say where, and outputs of megabytes compared in full.

const check = (checker: BuiltinChecker, output: string | Buffer, answer: string | Buffer, input = ''): CheckResult =>
  checkBuiltin(checker, { input: Buffer.from(input), output: Buffer.from(output), answer: Buffer.from(answer) });

const verdict = (checker: BuiltinChecker, output: string | Buffer, answer: string | Buffer) => check(checker, output, answer).verdict;

describe('judge: built-in checkers', () => {
  it('are lines, exact, tokens, floats, unordered_lines, kattis, domjudge', () => {
    expect(BUILTIN_CHECKER_TYPES).to.deep.equal(['lines', 'exact', 'tokens', 'floats', 'unordered_lines', 'kattis', 'domjudge']);
  });

  describe('case_sensitive on tokens and floats', () => {
    it('is true unless given: case counts, as before', () => {
      expect(verdict({ type: 'tokens' }, 'Hello World!', 'Hello world!')).to.equal('wrong_answer');
      expect(verdict({ type: 'floats' }, 'NaN 1.0', 'nan 1')).to.equal('wrong_answer');
    });
    it('false: ASCII letters compare without their case; other bytes and the tokens themselves still count', () => {
      expect(verdict({ type: 'tokens', case_sensitive: false }, 'Hello World!', 'hello world!')).to.equal('accepted');
      expect(verdict({ type: 'tokens', case_sensitive: false }, 'YES\n', 'yes')).to.equal('accepted');
      expect(verdict({ type: 'tokens', case_sensitive: false }, 'É', 'é')).to.equal('wrong_answer');
      expect(check({ type: 'tokens', case_sensitive: false }, 'yes no', 'yes yes').message).to.equal('token 2 (line 1): expected "yes", found "no"');
      expect(verdict({ type: 'floats', case_sensitive: false }, 'NaN 1.0000001', 'nan 1')).to.equal('accepted');
      expect(verdict({ type: 'floats', case_sensitive: false }, 'NaN 1.1', 'nan 1')).to.equal('wrong_answer');
      expect(verdict({ type: 'tokens', case_sensitive: true }, 'A', 'a')).to.equal('wrong_answer');
    });
  });

  describe('firstDifference', () => {
    it('finds the first differing byte across block boundaries, or the shorter length, or -1', () => {
      const a = Buffer.alloc(200_000, 0x61);
      const b = Buffer.from(a);
      expect(firstDifference(a, b)).to.equal(-1);
      b[131_073] = 0x62;
      expect(firstDifference(a, b)).to.equal(131_073);
      expect(firstDifference(a, a.subarray(0, 70_000))).to.equal(70_000);
      expect(firstDifference(Buffer.alloc(0), Buffer.from('x'))).to.equal(0);
    });
  });

  describe('lines (the default, as Judge0 compares)', () => {
    const lines: BuiltinChecker = { type: 'lines' };
    it('accepted: the same lines, trailing whitespace, \\r\\n line ends and trailing empty lines aside', () => {
      expect(check(lines, '1 2\n3\n', '1 2\n3\n')).to.deep.equal({ verdict: 'accepted', score: 1, message: '' });
      expect(verdict(lines, '1 2  \r\n3\t\r\n\n\n', '1 2\n3')).to.equal('accepted');
      expect(verdict(lines, '1 2\n3', '1 2\n3\n\n  \n')).to.equal('accepted');
      expect(verdict(lines, '', '\n')).to.equal('accepted');
    });
    it('leading whitespace and empty lines in the middle count', () => {
      expect(verdict(lines, ' 1\n', '1\n')).to.equal('presentation_error');
      expect(verdict(lines, '1\n\n2\n', '1\n2\n')).to.equal('presentation_error');
    });
    it('presentation_error: the right tokens on other lines, with the line that differs', () => {
      const r = check(lines, '1\n2 3\n', '1\n2\n3\n');
      expect(r.verdict).to.equal('presentation_error');
      expect(r.score).to.equal(0);
      expect(r.message).to.equal('the tokens are right but not their lines: line 2: expected "2", found "2 3"');
    });
    it('wrong_answer: says which line, what was expected and what was found', () => {
      expect(check(lines, '1\n2\n4\n', '1\n2\n3\n')).to.deep.equal({ verdict: 'wrong_answer', score: 0, message: 'line 3: expected "3", found "4"' });
      expect(check(lines, '1\n2\n', '1\n2\n3\n').message).to.equal('line 3: expected "3", found the end of the output');
      expect(check(lines, '1\n2\n3\n', '1\n2\n').message).to.equal('line 3: expected the end of the output, found "3"');
      expect(check(lines, 'x\n', '').message).to.equal('line 1: expected the end of the output, found "x"');
    });
    it('quotes control characters and cuts long lines', () => {
      const r = check(lines, `${'a'.repeat(200)}\u0001\n`, 'b\n');
      expect(r.message).to.equal(`line 1: expected "b", found "${'a'.repeat(80)}…"`);
      expect(check(lines, 'a\u0007\n', 'a\n').message).to.equal('line 1: expected "a", found "a\\u0007"');
    });
  });

  describe('exact', () => {
    const exact: BuiltinChecker = { type: 'exact' };
    it('accepted only byte for byte', () => {
      expect(verdict(exact, 'a b\n', 'a b\n')).to.equal('accepted');
    });
    it('presentation_error when only whitespace differs: a missing final newline, \\r\\n, double spaces', () => {
      expect(verdict(exact, 'a b', 'a b\n')).to.equal('presentation_error');
      expect(verdict(exact, 'a b\r\n', 'a b\n')).to.equal('presentation_error');
      const r = check(exact, 'x\na  b\n', 'x\na b\n');
      expect(r.verdict).to.equal('presentation_error');
      expect(r.message).to.equal('the output differs from the answer only in whitespace, first at line 2, byte 3: expected "a b", found "a  b"');
    });
    it('wrong_answer otherwise, at the line and byte of the first difference', () => {
      expect(check(exact, 'x\nab\n', 'x\naB\n')).to.deep.equal({ verdict: 'wrong_answer', score: 0, message: 'line 2, byte 2: expected "aB", found "ab"' });
    });
  });

  describe('tokens', () => {
    const tokens: BuiltinChecker = { type: 'tokens' };
    it('accepted across line breaks and runs of whitespace', () => {
      expect(verdict(tokens, '1 2\n3\n', '1\n2\t3')).to.equal('accepted');
      expect(verdict(tokens, '\n\n  1   2 3  \n', '1 2 3')).to.equal('accepted');
      expect(verdict(tokens, '', ' \n')).to.equal('accepted');
    });
    it('wrong_answer names the token and the output line it is on', () => {
      expect(check(tokens, '1 2\n3 5\n', '1 2 3 4').message).to.equal('token 4 (line 2): expected "4", found "5"');
      expect(check(tokens, '1 2\n', '1 2 3').message).to.equal('token 3: expected "3", found the end of the output (line 2)');
      expect(check(tokens, '1 2 3 4', '1 2 3').message).to.equal('token 4 (line 1): expected the end of the output, found "4"');
      expect(verdict(tokens, '12', '1 2')).to.equal('wrong_answer');
      expect(verdict(tokens, 'abc', 'abcd')).to.equal('wrong_answer');
    });
  });

  describe('floats', () => {
    const floats: BuiltinChecker = { type: 'floats' };
    it('accepted at the default tolerance (1e-6 absolute or relative), also exactly at it', () => {
      expect(verdict(floats, '1.000001\n', '1\n')).to.equal('accepted');
      expect(verdict(floats, '0.9999990', '1.0')).to.equal('accepted');
      expect(verdict(floats, '1000000.9', '1000000')).to.equal('accepted'); // relative: 1e-6 x 1e6 = 1
      expect(verdict(floats, '3.14159265 2.5e3', '3.141592 2500')).to.equal('accepted');
      expect(verdict(floats, '-0', '0.0000004')).to.equal('accepted');
    });
    it('wrong_answer past it, with the difference and both tolerances', () => {
      const r = check(floats, '1.0000011\n', '1\n');
      expect(r.verdict).to.equal('wrong_answer');
      expect(r.message).to.equal('token 1 (line 1): expected "1", found "1.0000011": off by 0.0000011, more than the absolute tolerance 0.000001 and the relative 0.000001 (0.000001 here)');
      expect(verdict(floats, '1000001.1', '1000000')).to.equal('wrong_answer');
    });
    it('takes its own tolerances; zero turns one off', () => {
      const loose: BuiltinChecker = { type: 'floats', absolute: 0.01, relative: 0 };
      expect(verdict(loose, '2.009', '2')).to.equal('accepted');
      expect(verdict(loose, '2.011', '2')).to.equal('wrong_answer');
      const relative: BuiltinChecker = { type: 'floats', absolute: 0, relative: 0.1 };
      expect(verdict(relative, '109', '100')).to.equal('accepted');
      expect(verdict(relative, '0.0001', '0')).to.equal('wrong_answer');
      expect(verdict({ type: 'floats', absolute: 0, relative: 0 }, '1.0', '1')).to.equal('accepted');
    });
    it('other tokens as tokens; a number against a word is wrong', () => {
      expect(verdict(floats, 'YES 0.5', 'YES 0.5000001')).to.equal('accepted');
      expect(check(floats, 'NO 0.5', 'YES 0.5').message).to.equal('token 1 (line 1): expected "YES", found "NO"');
      expect(check(floats, 'abc', '1.5').message).to.equal('token 1 (line 1): expected the number "1.5", found "abc"');
      expect(verdict(floats, '0x10', '16')).to.equal('wrong_answer');
      expect(verdict(floats, 'inf', '1e400')).to.equal('wrong_answer');
      expect(verdict(floats, '1 2', '1 2 3')).to.equal('wrong_answer');
    });
  });

  describe('unordered_lines', () => {
    const unordered: BuiltinChecker = { type: 'unordered_lines' };
    it('accepted: the same lines in any order, trailing whitespace and trailing empty lines aside', () => {
      expect(verdict(unordered, 'c\na\nb\n', 'a\nb\nc\n')).to.equal('accepted');
      expect(verdict(unordered, 'b \r\na\n\n', 'a\nb')).to.equal('accepted');
    });
    it('wrong_answer: a line of the answer missing, or one that is not in it; repeats count', () => {
      expect(check(unordered, 'a\nc\n', 'a\nb\n').message).to.equal('line 2 of the answer, "b", is not in the output (the output has 2 lines, the answer 2)');
      expect(check(unordered, 'a\nb\nb\n', 'b\na\n').message).to.equal('line 3 of the output, "b", is not in the answer (the output has 3 lines, the answer 2)');
      expect(verdict(unordered, 'a\nb\n', 'a\na\nb\n')).to.equal('wrong_answer');
    });
  });

  describe('megabytes of output, compared in full', () => {
    // 8 MB of lines "i\n": a difference in the very last line is found and named.
    const big = (n: number, last?: string) => {
      const parts: string[] = [];
      for (let i = 0; i < n; i++) parts.push(`${i} ${i * 7}\n`);
      if (last !== undefined) parts[n - 1] = last;
      return Buffer.from(parts.join(''));
    };
    let answer: Buffer;
    const n = 600_000;
    before(() => {
      answer = big(n);
      expect(answer.length).to.be.greaterThan(8 * 1024 * 1024);
    });
    it('equal outputs are accepted by every checker', () => {
      for (const type of BUILTIN_CHECKER_TYPES) expect(verdict({ type } as BuiltinChecker, Buffer.from(answer), answer), type).to.equal('accepted');
    });
    it('a difference in the last line, past 8 MB, is found by every checker and the line named', () => {
      const output = big(n, `${n - 1} 0\n`);
      expect(check({ type: 'lines' }, output, answer).message).to.equal(`line ${n}: expected "${n - 1} ${(n - 1) * 7}", found "${n - 1} 0"`);
      expect(check({ type: 'exact' }, output, answer).message).to.match(new RegExp(`^line ${n}, byte 8: `));
      expect(check({ type: 'tokens' }, output, answer).message).to.equal(`token ${2 * n} (line ${n}): expected "${(n - 1) * 7}", found "0"`);
      expect(check({ type: 'floats' }, output, answer).verdict).to.equal('wrong_answer');
      expect(check({ type: 'unordered_lines' }, output, answer).verdict).to.equal('wrong_answer');
    });
    it('\\r\\n line ends all through are still lines-accepted and exact-presentation', () => {
      const crlf = Buffer.from(answer.toString('latin1').replaceAll('\n', '\r\n'), 'latin1');
      expect(verdict({ type: 'lines' }, crlf, answer)).to.equal('accepted');
      expect(verdict({ type: 'exact' }, crlf, answer)).to.equal('presentation_error');
      expect(verdict({ type: 'unordered_lines' }, crlf, answer)).to.equal('accepted');
    });
  });
});
