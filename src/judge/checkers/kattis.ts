import { equalIgnoringCase, firstDifference, isSpace, lowerAscii as lower } from './text.js';
import { absQuotient, type Extended, formatG, fromBinary, fromDecimal, greater, minus, ZERO } from './extended.js';
import { accepted, type CheckData, type CheckResult, wrongAnswer } from './types.js';

// `kattis`: the default output validator of the Kattis / ICPC problem package format, as
// problemtools' default_validator.cc judges; `domjudge`: DOMjudge's compare.cc, the same
// program changed in its floats (inf and nan are floats: nan matches nan, inf an inf of
// its sign; the relative error is |o - a| / |a|) and its strings (compared whole, NUL
// bytes too), with its own messages, in long double (extended.ts) where doubles could
// answer otherwise.
// Its flags: case_sensitive, space_change_sensitive, float_absolute_tolerance ε,
// float_relative_tolerance ε, float_tolerance ε (both). Tokens are split on C's six
// whitespace bytes and compared case-insensitively (ASCII) unless case_sensitive; with
// space_change_sensitive every whitespace byte, leading and trailing too, must be the
// answer's. Once a tolerance is given, an answer token that sscanf's "%lf" reads whole
// (hex floats, "1e" and "5." included; inf and nan not) is a number, the output's token
// must be one too, within the absolute or the relative tolerance, no slack. The program
// compares tokens as C strings: a NUL byte ends a token for the comparison, as there.

export class ValidatorFlagsError extends Error {}

export type Dialect = 'kattis' | 'domjudge';

export interface KattisOptions {
  dialect: Dialect;
  caseSensitive: boolean;
  spaceChangeSensitive: boolean;
  /** A tolerance the flags did not give is -1, as there: no tolerance of that kind. */
  absolute: number;
  relative: number;
  /** domjudge: the tolerances as compare.cc reads them, in long double. */
  absoluteExtended?: Extended;
  relativeExtended?: Extended;
}

export const KATTIS_FLAGS = ['case_sensitive', 'space_change_sensitive', 'float_absolute_tolerance', 'float_relative_tolerance', 'float_tolerance'] as const;

const USAGE = 'Usage: default_validator judge_in judge_ans feedback_dir [options] < user_out';

/** The default validator's flags, read as it reads its argv; throws ValidatorFlagsError where it stops with its usage. */
export function kattisOptions(flags: readonly string[], dialect: Dialect = 'kattis'): KattisOptions {
  const o: KattisOptions = { dialect, caseSensitive: false, spaceChangeSensitive: false, absolute: -1, relative: -1 };
  for (let i = 0; i < flags.length; i++) {
    const flag = flags[i]!;
    if (flag === 'case_sensitive') o.caseSensitive = true;
    else if (flag === 'space_change_sensitive') o.spaceChangeSensitive = true;
    else if (flag === 'float_absolute_tolerance' || flag === 'float_relative_tolerance' || flag === 'float_tolerance') {
      const scanned = i + 1 < flags.length ? scanFloat(Buffer.from(flags[i + 1]!, 'latin1'), dialect === 'domjudge') : null;
      if (scanned === null) throw new ValidatorFlagsError(`the default validator's ${flag} needs a number after it (${USAGE})`);
      i++;
      const extended = dialect === 'domjudge' ? scanned.extended() : undefined;
      if (flag !== 'float_absolute_tolerance') {
        o.relative = scanned.value;
        if (extended) o.relativeExtended = extended;
      }
      if (flag !== 'float_relative_tolerance') {
        o.absolute = scanned.value;
        if (extended) o.absoluteExtended = extended;
      }
    } else {
      throw new ValidatorFlagsError(`${JSON.stringify(flag)} is not a flag of the default validator (${KATTIS_FLAGS.join(', ')}; ${USAGE})`);
    }
  }
  return o;
}

const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
const isHex = (c: number | undefined) => c !== undefined && (isDigit(c) || (lower(c) >= 0x61 && lower(c) <= 0x66));

/** Significant hex digits of a hex float read exactly (120 bits: more than rounding to 53, or 64, needs). */
const HEX_KEPT = 30;

/** Whether `s` from `at` spells `word` (lower case), ignoring ASCII case. */
function spells(s: Buffer, at: number, word: string): boolean {
  if (at + word.length > s.length) return false;
  for (let i = 0; i < word.length; i++) if (lower(s[at + i]!) !== word.charCodeAt(i)) return false;
  return true;
}

/** A float token as scanf read it: its double, and how to get its exact long double. */
interface Scanned {
  value: number;
  extended(): Extended;
}

/**
 * A token as default_validator.cc's isfloat reads it: `sscanf(s, "%lf%10s")` must convert
 * one number and leave nothing, and the number must be finite. glibc's scanf reads the
 * longest prefix that could start a number (an exponent mark or its sign without digits
 * is read and ignored: "1e" is 1), and strtod's value of what it read. Null when it is not a float.
 * `special`: compare.cc's isfloat, where inf, infinity and nan are floats.
 */
export function cFloat(token: Buffer, special = false): number | null {
  return scanFloat(token, special)?.value ?? null;
}

function scanFloat(token: Buffer, special: boolean): Scanned | null {
  const s = token.indexOf(0) === -1 ? token : token.subarray(0, token.indexOf(0));
  let at = 0;
  const negative = s[at] === 0x2d;
  if (s[at] === 0x2b || s[at] === 0x2d) at++;
  // inf, infinity and nan (any case) are read; compare.cc takes them (`special`), default_validator.cc does not.
  if (spells(s, at, 'inf') || spells(s, at, 'nan')) {
    if (!special) return null;
    const rest = s.subarray(at).toString('latin1').toLowerCase();
    if (rest === 'nan') return { value: NaN, extended: () => ({ kind: 'nan' }) };
    if (rest === 'inf' || rest === 'infinity') return { value: negative ? -Infinity : Infinity, extended: () => ({ kind: 'inf', negative }) };
    return null;
  }
  let value: number;
  let extended: () => Extended;
  if (s[at] === 0x30 && lower(s[at + 1] ?? 0) === 0x78) {
    at += 2;
    // The first HEX_KEPT significant digits make the mantissa; a nonzero one past them is a
    // sticky bit below it (all rounding needs), so a long token costs linear time.
    let mantissa = 0n;
    let kept = 0;
    let sticky = false;
    let digits = 0;
    let exponent = 0;
    const digit = (fraction: boolean) => {
      const d = parseInt(String.fromCharCode(s[at]!), 16);
      if (kept < HEX_KEPT) {
        mantissa = mantissa * 16n + BigInt(d);
        if (mantissa > 0n) kept++;
        if (fraction) exponent -= 4;
      } else {
        sticky ||= d !== 0;
        if (!fraction) exponent += 4;
      }
    };
    for (; isHex(s[at]); at++, digits++) digit(false);
    if (s[at] === 0x2e) {
      at++;
      for (; isHex(s[at]); at++, digits++) digit(true);
    }
    if (sticky) {
      mantissa = mantissa * 2n + 1n;
      exponent -= 1;
    }
    // glibc reads "0x." alone as 0 (and nothing else without a hex digit).
    if (digits === 0) return at === s.length && s[at - 1] === 0x2e ? { value: negative ? -0 : 0, extended: () => ({ ...ZERO, negative }) } : null;
    if (lower(s[at] ?? 0) === 0x70) {
      at++;
      let sign = 1;
      if (s[at] === 0x2b || s[at] === 0x2d) sign = s[at++] === 0x2d ? -1 : 1;
      let e = 0;
      for (; isDigit(s[at]); at++) e = Math.min(e * 10 + s[at]! - 0x30, 1e12);
      exponent += sign * e;
    }
    value = binaryValue(mantissa, exponent);
    extended = () => fromBinary(negative, mantissa, exponent);
  } else {
    const start = at;
    let digits = 0;
    for (; isDigit(s[at]); at++) digits++;
    const point = at;
    let fraction = 0;
    if (s[at] === 0x2e) for (at++; isDigit(s[at]); at++, fraction++) digits++;
    if (digits === 0) return null;
    let text = s.subarray(start, at).toString('latin1');
    let exponent = 0;
    if (lower(s[at] ?? 0) === 0x65) {
      at++;
      const signAt = at;
      if (s[at] === 0x2b || s[at] === 0x2d) at++;
      const digitsAt = at;
      for (; isDigit(s[at]); at++) exponent = Math.min(exponent * 10 + s[at]! - 0x30, 1e12);
      if (s[signAt] === 0x2d) exponent = -exponent;
      if (at > digitsAt) text += `e${s.subarray(signAt, at).toString('latin1')}`;
      else exponent = 0;
    }
    value = Number(text);
    const all = s.subarray(start, point).toString('latin1') + s.subarray(point + 1, point + 1 + fraction).toString('latin1');
    const exp10 = exponent - fraction;
    extended = () => fromDecimal(negative, all, exp10);
  }
  if (at !== s.length || (!special && !Number.isFinite(value))) return null;
  let once: Extended | undefined;
  return { value: negative ? -value : value, extended: () => (once ??= extended()) };
}

/** mantissa × 2^exponent as the nearest double (ties to even), subnormals rounded once, as strtod does. */
function binaryValue(mantissa: bigint, exponent: number): number {
  if (mantissa === 0n) return 0;
  const bits = mantissa.toString(2).length;
  // Past double's range either way: no loop over a huge exponent.
  if (bits + exponent > 1025) return Infinity;
  if (bits + exponent < -1076) return 0;
  // Below 2^-1074 a bit is lost: round at that place, once.
  const shift = -1074 - exponent;
  if (shift > 0 && bits + exponent - 1 < -1022) {
    if (shift > bits + 1) return 0;
    const kept = mantissa >> BigInt(shift);
    const rest = mantissa - (kept << BigInt(shift));
    const half = 1n << BigInt(shift - 1);
    const up = rest > half || (rest === half && (kept & 1n) === 1n);
    return Number(kept + (up ? 1n : 0n)) * 2 ** -1074;
  }
  // Number(bigint) rounds to 53 bits; scaling by a power of two is then exact (or overflows).
  let v = Number(mantissa);
  let e = exponent;
  while (e > 0) {
    const step = Math.min(e, 1000);
    v *= 2 ** step;
    e -= step;
  }
  while (e < 0) {
    const step = Math.min(-e, 1000);
    v /= 2 ** step;
    e += step;
  }
  return v;
}

/** A token as a C string sees it: up to its first NUL. */
const cString = (t: Buffer) => (t.indexOf(0) === -1 ? t : t.subarray(0, t.indexOf(0)));

/** Its message's cut of a long token (30 bytes, not inside a UTF-8 character, and "..."). */
function truncate(t: Buffer, limit = 30): Buffer {
  if (t.length <= limit + 5) return t;
  let cut = limit;
  while (cut < t.length && cut < limit + 4 && (t[cut]! & 0xc0) === 0x80) cut++;
  return Buffer.concat([t.subarray(0, cut), Buffer.from('...')]);
}

/** Two tokens cut around where they differ: their common start, then each one's rest. */
function truncatePair(a: Buffer, b: Buffer): [Buffer, Buffer] {
  let d = 0;
  while (d < a.length && d < b.length && a[d] === b[d]) d++;
  const prefix = truncate(a.subarray(0, d), 15);
  return [Buffer.concat([prefix, truncate(a.subarray(d), 15)]), Buffer.concat([prefix, truncate(b.subarray(d), 15)])];
}

/** printf's %le. */
function cExp(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
  return x.toExponential(6).replace(/e([+-])(\d)$/, 'e$10$2');
}

/** A piece of a message, printed as C prints a string (to its first NUL). */
const str = (b: Buffer) => cString(b).toString('utf8');

/** compare.cc's note on a token with a byte C's isprint refuses. */
function nonPrintable(judge: Buffer, team: Buffer): string {
  const bad = (t: Buffer) => t.some((c) => c < 0x20 || c > 0x7e);
  const who = [...(bad(judge) ? ['judge'] : []), ...(bad(team) ? ['team'] : [])];
  return who.length === 0 ? '' : `\nNote: ${who.join(',')} token contains non-printable characters`;
}

/** Within double's range, where a double holds a long double's value to 1 part in 2^53. */
const safe = (v: number) => v === 0 || (Math.abs(v) >= 1e-290 && Math.abs(v) <= 1e290);
/** Doubles tell `x > y` as long doubles would unless the two are this close (their errors are some 1e-16). */
const near = (x: number, y: number, scale: number) => Math.abs(x - y) <= 1e-12 * scale;
const NEGATIVE_ONE = fromDecimal(true, '1', 0);

/**
 * compare.cc's float comparison, in its long doubles: null when the output's float
 * matches, else what is wrong. Doubles decide unless a value is past their range or a
 * difference is within 1e-12 of a tolerance; then the exact long double values do.
 */
function domjudgeFloats(judge: Buffer, team: Buffer, want: Scanned, got: Scanned, o: KattisOptions, note: string): string | null {
  const kind = (x: Scanned) => (Number.isFinite(x.value) ? 'finite' : x.extended().kind);
  const wk = kind(want);
  const gk = kind(got);
  if (wk === 'finite' && gk === 'finite') {
    const useAbs = o.absolute >= 0;
    const useRel = o.relative >= 0;
    const w = want.value;
    const g = got.value;
    const absdiff = Math.abs(g - w);
    const reldiff = Math.abs((g - w) / w);
    const scale = Math.abs(w) + Math.abs(g);
    const exact =
      !safe(w) || !safe(g) || !Number.isFinite(absdiff) ||
      (useAbs && (!safe(o.absolute) || near(absdiff, o.absolute, scale + o.absolute))) ||
      (useRel && (!safe(o.relative) || (w !== 0 && near(reldiff, o.relative, scale / Math.abs(w) + o.relative))));
    let failsAbs = absdiff > o.absolute;
    let failsRel = reldiff > o.relative;
    const figures = () => {
      const d = minus(got.extended() as Extended & { kind: 'finite' }, want.extended() as Extended & { kind: 'finite' });
      const abs: Extended = d.kind === 'finite' ? { ...d, negative: false } : { kind: 'inf', negative: false };
      const rel = d.kind === 'finite' ? absQuotient(d, want.extended() as Extended & { kind: 'finite' }) : ({ kind: 'inf', negative: false } as Extended);
      return { abs, rel };
    };
    if (exact) {
      const f = figures();
      failsAbs = greater(f.abs, o.absoluteExtended ?? NEGATIVE_ONE);
      failsRel = greater(f.rel, o.relativeExtended ?? NEGATIVE_ONE);
    }
    const fails = useAbs && useRel ? failsAbs && failsRel : useAbs ? failsAbs : useRel ? failsRel : false;
    if (!fails) return null;
    const f = figures();
    const head = `Too large difference.\n Judge: ${str(judge)}\n Team: ${str(team)}\n`;
    const absText = ` Absolute difference: ${formatG(f.abs)} (tolerance: ${formatG(o.absoluteExtended ?? NEGATIVE_ONE)})`;
    const relText = ` Relative difference: ${formatG(f.rel)} (tolerance: ${formatG(o.relativeExtended ?? NEGATIVE_ONE)})`;
    if (useAbs && useRel) return `${head}${absText}\n${relText}${note}`;
    return `${head}${useAbs ? absText : relText}${note}`;
  }
  if (wk === 'nan' && gk === 'nan') return null;
  if (wk === 'inf' && gk === 'inf' && (want.extended() as { negative: boolean }).negative === (got.extended() as { negative: boolean }).negative) return null;
  return `Expected float ${str(judge)}, got: ${str(team)}${note}`;
}

export function kattis(data: CheckData, o: KattisOptions): CheckResult {
  const ans = data.answer;
  const out = data.output;
  const dj = o.dialect === 'domjudge';
  const user = dj ? 'team' : 'user';
  const useFloats = o.absolute >= 0 || o.relative >= 0;
  // Identical tokens (and whitespace) pass in every mode: start after the last token
  // before the first byte that differs, where the validator's loop would be, so equal
  // megabytes cost a memcmp and a count of newlines.
  const diff = firstDifference(out, ans);
  if (diff === -1) return accepted();
  let start = diff;
  while (start > 0 && !isSpace(ans[start - 1]!)) start--;
  while (start > 0 && isSpace(ans[start - 1]!)) start--;
  let a = start;
  let u = start;
  let ansLine = 1;
  for (let nl = ans.indexOf(0x0a); nl !== -1 && nl < start; nl = ans.indexOf(0x0a, nl + 1)) ansLine++;
  let outLine = ansLine;
  const wrong = (detail: string) => wrongAnswer(`Wrong answer on line ${outLine} of output (corresponding to line ${ansLine} in answer file)\n${detail}`);
  // DOMjudge prints tokens whole; Kattis cuts long ones.
  const cut = (t: Buffer) => (dj ? t : truncate(t));
  for (let token = start > 0 ? 1 : 0; ; token++) {
    while (a < ans.length && isSpace(ans[a]!)) {
      const c = ans[a]!;
      if (o.spaceChangeSensitive) {
        const d = u < out.length ? out[u]! : -1;
        if (c !== d) return wrong(`Space change error: got ${d} expected ${c}`);
        if (d === 0x0a) outLine++;
        u++;
      }
      if (c === 0x0a) ansLine++;
      a++;
    }
    while (u < out.length && isSpace(out[u]!)) {
      if (o.spaceChangeSensitive) return wrong(`Space change error: judge out of space, got ${out[u]} from ${user}`);
      if (out[u] === 0x0a) outLine++;
      u++;
    }
    if (a >= ans.length) break;
    const aStart = a;
    while (a < ans.length && !isSpace(ans[a]!)) a++;
    const judge = ans.subarray(aStart, a);
    if (u >= out.length) {
      const next = `(Next judge token: ${str(cut(judge))})`;
      if (token > 0 || dj) return wrong(`User EOF while judge had more output\n${next}`);
      return wrong(`User EOF while judge had more output; user output ${u === 0 ? 'was empty' : 'contained only whitespace'}.\n${next}`);
    }
    const uStart = u;
    while (u < out.length && !isSpace(out[u]!)) u++;
    const team = out.subarray(uStart, u);
    const note = dj ? nonPrintable(judge, team) : '';
    const scanned = useFloats ? scanFloat(judge, dj) : null;
    if (scanned !== null) {
      const other = scanFloat(team, dj);
      if (other === null) return wrong(`Expected float, got: ${str(cut(team))}${note}`);
      if (dj) {
        const problem = domjudgeFloats(judge, team, scanned, other, o, note);
        if (problem !== null) return wrong(problem);
        continue;
      }
      const want = scanned.value;
      const got = other.value;
      const diff = Math.abs(want - got);
      if (!(diff <= o.absolute) && !(diff <= o.relative * Math.abs(want))) {
        const relative = want === 0 ? `undefined, judge value is 0 (rel tolerance ${cExp(o.relative)})` : `${cExp(diff / Math.abs(want))} (rel tolerance ${cExp(o.relative)})`;
        return wrong(`Too large difference.\n Judge: ${str(truncate(judge))}\n User:  ${str(truncate(team))}\n Absolute error: ${cExp(diff)} (abs tolerance ${cExp(o.absolute)})\n Relative error: ${relative}`);
      }
    } else {
      // Kattis compares C strings (to a NUL), DOMjudge std::strings (whole).
      const j = dj ? judge : cString(judge);
      const t = dj ? team : cString(team);
      if (!(o.caseSensitive ? j.equals(t) : equalIgnoringCase(j, t))) {
        const [jt, tt] = dj ? [judge, team] : truncatePair(judge, team);
        return wrong(`String tokens mismatch\nJudge: "${str(jt)}"\n${dj ? 'Team' : 'User'}: "${str(tt)}"${note}`);
      }
    }
  }
  while (u < out.length && isSpace(out[u]!)) u++;
  if (u < out.length) {
    const start = u;
    while (u < out.length && !isSpace(out[u]!)) u++;
    return wrong(`Trailing output:\n${str(cut(out.subarray(start, u)))}`);
  }
  return accepted();
}
