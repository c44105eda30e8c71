import { expect } from 'chai';
import { checkBuiltin, type CheckResult } from '../../src/judge/checkers/index.js';
import { cFloat, kattisOptions, ValidatorFlagsError } from '../../src/judge/checkers/kattis.js';

// The `kattis` comparison is Kattis' default output validator (problemtools'
// default_validator.cc): each case here is what that program answers (exit 42 or 43 and
// its judgemessage.txt) for the same answer, output and flags.

const judge = (output: string | Buffer, answer: string | Buffer, flags: string[] = []): CheckResult =>
  checkBuiltin({ type: 'kattis', flags }, { input: Buffer.alloc(0), output: Buffer.from(output), answer: Buffer.from(answer) });
const verdict = (output: string | Buffer, answer: string | Buffer, flags: string[] = []) => judge(output, answer, flags).verdict;
const TOL = ['float_tolerance', '1e-6'];

describe('judge: the kattis comparison (Kattis\' default validator)', () => {
  describe('case', () => {
    it('tokens compare without ASCII case unless case_sensitive', () => {
      expect(verdict('Hello World!', 'Hello world!')).to.equal('accepted');
      expect(verdict('NaN', 'nan')).to.equal('accepted');
      expect(verdict('YES', 'yes')).to.equal('accepted');
      expect(verdict('Hello World!', 'Hello world!', ['case_sensitive'])).to.equal('wrong_answer');
      expect(verdict('NaN', 'nan', ['case_sensitive'])).to.equal('wrong_answer');
      expect(verdict('yes', 'yes', ['case_sensitive'])).to.equal('accepted');
    });
    it('only A-Z fold: other bytes compare as they are', () => {
      expect(verdict('É', 'é')).to.equal('wrong_answer');
      expect(verdict('[', '{')).to.equal('wrong_answer');
    });
    it('a mismatch says it as the validator does', () => {
      expect(judge('a b\nc X', 'a b\nc d').message).to.equal(
        'Wrong answer on line 2 of output (corresponding to line 2 in answer file)\nString tokens mismatch\nJudge: "d"\nUser: "X"',
      );
    });
  });

  describe('whitespace', () => {
    it('amounts and kinds do not matter, nor leading or trailing whitespace and newlines', () => {
      expect(verdict('1 2\n3\n', '1\n2 3')).to.equal('accepted');
      expect(verdict('  1\t\t2\r\n\r\n3\n\n\n', '1 2 3\n')).to.equal('accepted');
      expect(verdict('1 2 3', '1 2 3\n')).to.equal('accepted');
      expect(verdict('\x0b1\x0c2', '1 2')).to.equal('accepted');
      expect(verdict('', '')).to.equal('accepted');
      expect(verdict('\n\n', '')).to.equal('accepted');
      expect(verdict('', '\n')).to.equal('accepted');
    });
    it('a byte outside C\'s six whitespace bytes is part of a token', () => {
      expect(verdict('1\u00a02', '1 2')).to.equal('wrong_answer');
    });
    it('space_change_sensitive: every whitespace byte must be the answer\'s, leading and trailing too', () => {
      const S = ['space_change_sensitive'];
      expect(verdict('1 2\n', '1 2\n', S)).to.equal('accepted');
      expect(verdict('1  2\n', '1 2\n', S)).to.equal('wrong_answer');
      expect(verdict('1\t2\n', '1 2\n', S)).to.equal('wrong_answer');
      expect(verdict('1 2', '1 2\n', S)).to.equal('wrong_answer');
      expect(verdict('1 2\n\n', '1 2\n', S)).to.equal('wrong_answer');
      expect(verdict('1 2\r\n', '1 2\n', S)).to.equal('wrong_answer');
      expect(verdict(' 1 2\n', '1 2\n', S)).to.equal('wrong_answer');
      expect(verdict('A B\n', 'a b\n', S)).to.equal('accepted');
      expect(judge('1 2', '1 2\n', S).message).to.equal('Wrong answer on line 1 of output (corresponding to line 1 in answer file)\nSpace change error: got -1 expected 10');
      expect(judge('1\n2\n\n', '1\n2\n', S).message).to.equal('Wrong answer on line 3 of output (corresponding to line 3 in answer file)\nSpace change error: judge out of space, got 10 from user');
    });
  });

  describe('extra and missing tokens', () => {
    it('trailing output is wrong, as is an output that ends early', () => {
      expect(judge('1 2 3', '1 2').message).to.equal('Wrong answer on line 1 of output (corresponding to line 1 in answer file)\nTrailing output:\n3');
      expect(judge('1', '1 2').message).to.equal('Wrong answer on line 1 of output (corresponding to line 1 in answer file)\nUser EOF while judge had more output\n(Next judge token: 2)');
      expect(judge('', '1').message).to.match(/user output was empty\.\n\(Next judge token: 1\)$/);
      expect(judge(' \n', '1').message).to.match(/user output contained only whitespace\./);
    });
    it('long tokens are cut in the message as the validator cuts them', () => {
      const long = 'x'.repeat(50);
      expect(judge(`${long}a`, `${long}b`).message).to.contain('Judge: "xxxxxxxxxxxxxxx...b"\nUser: "xxxxxxxxxxxxxxx...a"');
    });
  });

  describe('tolerances', () => {
    it('without a tolerance, numbers are tokens: 1.0 is not 1, 3.14000000e-2 is not 0.0314', () => {
      expect(verdict('1.0', '1')).to.equal('wrong_answer');
      expect(verdict('3.14000000e-2', '0.0314')).to.equal('wrong_answer');
      expect(verdict('1E5', '1e5')).to.equal('accepted');
    });
    it('once a tolerance is given, any float formatting is accepted', () => {
      expect(verdict('3.14000000e-2', '0.0314', TOL)).to.equal('accepted');
      expect(verdict('1', '1.0000000', TOL)).to.equal('accepted');
      expect(verdict('+5', '5', TOL)).to.equal('accepted');
      expect(verdict('.5', '0.5', TOL)).to.equal('accepted');
      expect(verdict('5.', '5', TOL)).to.equal('accepted');
      expect(verdict('0x1p-1', '0.5', TOL)).to.equal('accepted');
      expect(verdict('-0', '0', TOL)).to.equal('accepted');
      expect(verdict('1E+2', '100', TOL)).to.equal('accepted');
    });
    it('absolute: |output - answer| <= ε', () => {
      const A = ['float_absolute_tolerance', '0.01'];
      expect(verdict('1.009', '1', A)).to.equal('accepted');
      expect(verdict('1.02', '1', A)).to.equal('wrong_answer');
      expect(verdict('1000.009', '1000', A)).to.equal('accepted');
      expect(verdict('1000.02', '1000', A)).to.equal('wrong_answer');
    });
    it('relative: |output - answer| <= ε |answer|; an answer of 0 takes only 0', () => {
      const R = ['float_relative_tolerance', '0.01'];
      expect(verdict('1009', '1000', R)).to.equal('accepted');
      expect(verdict('1011', '1000', R)).to.equal('wrong_answer');
      expect(verdict('1.02', '1', R)).to.equal('wrong_answer');
      expect(verdict('0', '0', R)).to.equal('accepted');
      expect(verdict('1e-300', '0', R)).to.equal('wrong_answer');
    });
    it('both given: either suffices', () => {
      const B = ['float_absolute_tolerance', '0.5', 'float_relative_tolerance', '0.001'];
      expect(verdict('1.4', '1', B)).to.equal('accepted');
      expect(verdict('1000.9', '1000', B)).to.equal('accepted');
      expect(verdict('1.6', '1', B)).to.equal('wrong_answer');
      expect(verdict('1001.1', '1000', B)).to.equal('wrong_answer');
    });
    it('float_tolerance sets both; no slack: 2.000001 against 2 is off by a hair over 1e-6 in binary', () => {
      expect(verdict('1.0000009', '1', TOL)).to.equal('accepted');
      expect(verdict('1.000001', '1', TOL)).to.equal('accepted');
      expect(verdict('2.000001', '2', ['float_absolute_tolerance', '1e-6'])).to.equal('wrong_answer');
      expect(verdict('2.000001', '2', TOL)).to.equal('accepted');
      expect(verdict('1000.0009', '1000', TOL)).to.equal('accepted');
      expect(judge('1.1', '1', TOL).message).to.equal(
        'Wrong answer on line 1 of output (corresponding to line 1 in answer file)\nToo large difference.\n Judge: 1\n User:  1.1\n' +
          ' Absolute error: 1.000000e-01 (abs tolerance 1.000000e-06)\n Relative error: 1.000000e-01 (rel tolerance 1.000000e-06)',
      );
      expect(judge('1', '0', TOL).message).to.contain('Relative error: undefined, judge value is 0 (rel tolerance 1.000000e-06)');
    });
    it('a tolerance of 0 is exact comparison of values; a negative one is none', () => {
      expect(verdict('1.0', '1', ['float_tolerance', '0'])).to.equal('accepted');
      expect(verdict('1.0', '1', ['float_tolerance', '-1'])).to.equal('wrong_answer');
    });
    it('an answer token that is a float wants a float; one that is not compares as text', () => {
      expect(judge('abc', '1.5', TOL).message).to.equal('Wrong answer on line 1 of output (corresponding to line 1 in answer file)\nExpected float, got: abc');
      expect(verdict('nan', '1', TOL)).to.equal('wrong_answer');
      expect(verdict('inf', '1e308', TOL)).to.equal('wrong_answer');
      expect(verdict('Yes 1.0', 'yes 1', TOL)).to.equal('accepted');
    });
    it('nan and inf in the answer are not floats to it: they compare as text, without case', () => {
      expect(verdict('NaN', 'nan', TOL)).to.equal('accepted');
      expect(verdict('INF', 'inf', TOL)).to.equal('accepted');
      expect(verdict('Infinity', 'inf', TOL)).to.equal('wrong_answer');
      expect(verdict('nan', 'nan', [...TOL, 'case_sensitive'])).to.equal('accepted');
      expect(verdict('NaN', 'nan', [...TOL, 'case_sensitive'])).to.equal('wrong_answer');
      // An answer past double's range reads as inf: text.
      expect(verdict('1e999', '1E999', TOL)).to.equal('accepted');
      expect(verdict('2e999', '1e999', TOL)).to.equal('wrong_answer');
    });
  });

  describe('what it reads as a float (sscanf "%lf", whole, finite)', () => {
    it('decimals, exponents, hex floats; glibc reads an exponent mark without digits and ignores it', () => {
      expect(cFloat(Buffer.from('0.0314'))).to.equal(0.0314);
      expect(cFloat(Buffer.from('3.14000000e-2'))).to.equal(0.0314);
      expect(cFloat(Buffer.from('-.5E+1'))).to.equal(-5);
      expect(cFloat(Buffer.from('0x1.8p1'))).to.equal(3);
      expect(cFloat(Buffer.from('0X.8'))).to.equal(0.5);
      expect(cFloat(Buffer.from('0x1p-1074'))).to.equal(5e-324);
      expect(cFloat(Buffer.from('0x1p-1075'))).to.equal(0);
      expect(cFloat(Buffer.from('0x1.8p-1074'))).to.equal(1e-323);
      expect(cFloat(Buffer.from('0x.'))).to.equal(0);
      expect(cFloat(Buffer.from('1e'))).to.equal(1);
      expect(cFloat(Buffer.from('1.5e+'))).to.equal(1.5);
      expect(cFloat(Buffer.from('1e-400'))).to.equal(0);
    });
    it('not: inf, nan, overflow, trailing bytes, a lone sign or point, 0x without digits', () => {
      for (const t of ['inf', '-Infinity', 'nan', 'NAN', '1e999', '1e5x', '1,5', '1.2.3', '+', '-', '.', '', 'e5', '0x', '0xg', '0x.p1', '1ee', '--1', '1-2', 'nan(1)', 'x']) {
        expect(cFloat(Buffer.from(t)), t).to.equal(null);
      }
    });
    it('long tokens cost linear time: a hex float of megabytes of digits, an exponent of trillions', () => {
      expect(cFloat(Buffer.from(`0x1${'0'.repeat(2_000_000)}p-8000000`))).to.equal(1);
      expect(cFloat(Buffer.from('0x1p99999999999999'))).to.equal(null);
      expect(cFloat(Buffer.from('0x1p-99999999999999'))).to.equal(0);
      expect(cFloat(Buffer.from(`1${'0'.repeat(2_000_000)}e-2000000`))).to.equal(1);
    });
    it('a NUL ends a token for it, as a C string', () => {
      expect(cFloat(Buffer.from('1\u0000x'))).to.equal(1);
      expect(verdict(Buffer.from('abc\u0000def'), 'abc')).to.equal('accepted');
    });
  });

  describe('flags', () => {
    it('are read as the validator reads its argv', () => {
      expect(kattisOptions([])).to.deep.equal({ dialect: 'kattis', caseSensitive: false, spaceChangeSensitive: false, absolute: -1, relative: -1 });
      expect(kattisOptions(['float_tolerance', '1e-4', 'case_sensitive'])).to.deep.equal({ dialect: 'kattis', caseSensitive: true, spaceChangeSensitive: false, absolute: 1e-4, relative: 1e-4 });
      expect(kattisOptions(['float_absolute_tolerance', '0x1p-2', 'space_change_sensitive'])).to.include({ absolute: 0.25, relative: -1, spaceChangeSensitive: true });
      // A later flag overrides an earlier one.
      expect(kattisOptions(['float_tolerance', '1', 'float_relative_tolerance', '2'])).to.include({ absolute: 1, relative: 2 });
    });
    it('an unknown flag or a tolerance that is not a float stops it with its usage', () => {
      for (const flags of [['ignore_case'], ['float_tolerance'], ['float_tolerance', 'small'], ['float_tolerance', 'inf'], ['float_absolute_tolerance', '1e-6x'], ['case_sensitive', '1']]) {
        expect(() => kattisOptions(flags), flags.join(' ')).to.throw(ValidatorFlagsError, /default validator/);
      }
    });
    it('a kept checker with flags the validator refuses is a checker error, not a crash', () => {
      expect(verdict('1', '1', ['bogus'])).to.equal('checker_error');
    });
  });

  it('megabytes: equal 8 MB outputs are accepted, a change in the last token found, with floats too', () => {
    const parts: string[] = [];
    for (let i = 0; i < 600_000; i++) parts.push(`${i} ${i / 7}\n`);
    const answer = parts.join('');
    expect(verdict(answer, answer, TOL)).to.equal('accepted');
    expect(verdict(answer.toUpperCase(), answer)).to.equal('accepted');
    const changed = `${answer.slice(0, answer.lastIndexOf('599999 '))}599999 0\n`;
    expect(judge(changed, answer, TOL).message).to.match(/^Wrong answer on line 600000 of output/);
  });

  describe("domjudge: DOMjudge's compare.cc", () => {
    const dj = (output: string | Buffer, answer: string | Buffer, flags: string[] = []) =>
      checkBuiltin({ type: 'domjudge', flags }, { input: Buffer.alloc(0), output: Buffer.from(output), answer: Buffer.from(answer) });
    it('tokens, case and whitespace as Kattis', () => {
      expect(dj('Hello World!', 'Hello world!').verdict).to.equal('accepted');
      expect(dj('Hello World!', 'Hello world!', ['case_sensitive']).verdict).to.equal('wrong_answer');
      expect(dj('1  2', '1 2', ['space_change_sensitive']).message).to.equal('Wrong answer on line 1 of output (corresponding to line 1 in answer file)\nSpace change error: judge out of space, got 32 from team');
    });
    it('with a tolerance, nan matches nan and inf an inf of its sign, in any spelling', () => {
      expect(dj('-nan', 'nan', TOL).verdict).to.equal('accepted');
      expect(dj('Infinity', 'inf', TOL).verdict).to.equal('accepted');
      expect(dj('-inf', 'inf', TOL).message).to.equal('Wrong answer on line 1 of output (corresponding to line 1 in answer file)\nExpected float inf, got: -inf');
      expect(dj('1', 'nan', TOL).verdict).to.equal('wrong_answer');
      // Kattis reads them as words.
      expect(verdict('-nan', 'nan', TOL)).to.equal('wrong_answer');
      expect(verdict('Infinity', 'inf', TOL)).to.equal('wrong_answer');
    });
    it('its messages: Team, %Lg figures, tokens whole', () => {
      expect(dj('1.1', '1', TOL).message).to.equal(
        'Wrong answer on line 1 of output (corresponding to line 1 in answer file)\nToo large difference.\n Judge: 1\n Team: 1.1\n' +
          ' Absolute difference: 0.1 (tolerance: 1e-06)\n Relative difference: 0.1 (tolerance: 1e-06)',
      );
      expect(dj('2', '1', ['float_relative_tolerance', '0.5']).message).to.contain('\n Relative difference: 1 (tolerance: 0.5)');
      expect(dj('a', 'b').message).to.equal('Wrong answer on line 1 of output (corresponding to line 1 in answer file)\nString tokens mismatch\nJudge: "b"\nTeam: "a"');
      expect(dj('a\u0001', 'b').message).to.match(/\nNote: team token contains non-printable characters$/);
      expect(dj('', '1').message).to.match(/User EOF while judge had more output\n\(Next judge token: 1\)$/);
    });
    it('a NUL byte is part of a token it compares', () => {
      expect(dj(Buffer.from('abc\u0000def'), 'abc').verdict).to.equal('wrong_answer');
    });
    it('in long double, as compare.cc computes: 1.000001 against 1 is past float_tolerance 1e-6 there (and within it in double, as Kattis computes)', () => {
      expect(dj('1.000001', '1', TOL).verdict).to.equal('wrong_answer');
      expect(verdict('1.000001', '1', TOL)).to.equal('accepted');
      expect(dj('1.0000009', '1', TOL).verdict).to.equal('accepted');
      expect(dj('0.1000001', '0.1', ['float_absolute_tolerance', '1e-7']).verdict).to.equal('accepted');
      expect(verdict('0.1000001', '0.1', ['float_absolute_tolerance', '1e-7'])).to.equal('accepted');
      // Past double's range, still finite in long double: compared, with its figures.
      expect(dj('1e400', '1.0000001e400', TOL).verdict).to.equal('accepted');
      expect(dj('2', '1e400', ['float_absolute_tolerance', '1']).message).to.contain('Absolute difference: 1e+400 (tolerance: 1)');
      expect(dj('1e5000', '1e5000', ['float_absolute_tolerance', '1']).verdict).to.equal('accepted');
    });
    it('tolerance flags may be inf', () => {
      expect(dj('5', '1', ['float_absolute_tolerance', 'inf']).verdict).to.equal('accepted');
      expect(() => kattisOptions(['float_tolerance', 'inf'])).to.throw(ValidatorFlagsError);
    });
  });
});
