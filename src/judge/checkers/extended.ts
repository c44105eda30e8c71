// x87 long double (a 64-bit mantissa, 15-bit exponent), as DOMjudge's compare.cc
// computes with it on x86-64 Linux: values exactly as m × 2^e with BigInt, each result
// rounded to 64 bits, ties to even, as the FPU rounds it. Only the comparisons near a
// tolerance, or past double's range, come here (kattis.ts decides): doubles answer the rest.

export type Extended = { kind: 'finite'; negative: boolean; m: bigint; e: number } | { kind: 'inf'; negative: boolean } | { kind: 'nan' };

/** m × 2^e with m ≥ 2^63 is normal from 2^-16382; below, subnormal with this e. */
const MIN_E = -16445;
/** The largest e of a finite value (m < 2^64): 2^16384 overflows. */
const MAX_E = 16384 - 64;
const TWO64 = 1n << 64n;
const TWO63 = 1n << 63n;

const bitLength = (n: bigint) => (n === 0n ? 0 : n.toString(2).length);

export const ZERO: Extended = { kind: 'finite', negative: false, m: 0n, e: 0 };

/** p / q (p ≥ 0, q > 0) as the nearest long double, ties to even. */
export function rounded(negative: boolean, p: bigint, q: bigint): Extended {
  if (p === 0n) return { kind: 'finite', negative, m: 0n, e: 0 };
  let k = Math.max(MIN_E, bitLength(p) - bitLength(q) - 64);
  for (;;) {
    const num = k >= 0 ? p : p << BigInt(-k);
    const den = k >= 0 ? q << BigInt(k) : q;
    let m = num / den;
    if (m >= TWO64) {
      k++;
      continue;
    }
    const twice = 2n * (num - m * den);
    if (twice > den || (twice === den && (m & 1n) === 1n)) m++;
    if (m === TWO64) {
      m = TWO63;
      k++;
    }
    if (k > MAX_E) return { kind: 'inf', negative };
    return { kind: 'finite', negative, m, e: k };
  }
}

/** digits × 10^exponent (a decimal token's), rounded once. */
export function fromDecimal(negative: boolean, digits: string, exponent: number): Extended {
  let d = digits.replace(/^0+/, '');
  if (d === '') return { kind: 'finite', negative, m: 0n, e: 0 };
  // Rounding to 64 bits needs at most some 11,500 significant digits; the rest is a sticky digit.
  const KEEP = 12_000;
  if (d.length > KEEP) {
    const sticky = /[1-9]/.test(d.slice(KEEP));
    exponent += d.length - KEEP;
    d = d.slice(0, KEEP);
    if (sticky) {
      d += '1';
      exponent -= 1;
    }
  }
  const magnitude = d.length + exponent;
  if (magnitude > 4934) return { kind: 'inf', negative };
  if (magnitude < -4953) return { kind: 'finite', negative, m: 0n, e: 0 };
  const n = BigInt(d);
  return exponent >= 0 ? rounded(negative, n * 10n ** BigInt(exponent), 1n) : rounded(negative, n, 10n ** BigInt(-exponent));
}

/** mantissa × 2^exponent (a hex token's), rounded once. */
export function fromBinary(negative: boolean, mantissa: bigint, exponent: number): Extended {
  if (mantissa === 0n) return { kind: 'finite', negative, m: 0n, e: 0 };
  const top = bitLength(mantissa) + exponent;
  if (top > 16385) return { kind: 'inf', negative };
  if (top < MIN_E - 2) return { kind: 'finite', negative, m: 0n, e: 0 };
  return exponent >= 0 ? rounded(negative, mantissa << BigInt(exponent), 1n) : rounded(negative, mantissa, 1n << BigInt(-exponent));
}

const signed = (x: Extended & { kind: 'finite' }, shift: number) => (x.negative ? -1n : 1n) * (x.m << BigInt(shift));

/** a − b, rounded (finite operands). */
export function minus(a: Extended & { kind: 'finite' }, b: Extended & { kind: 'finite' }): Extended {
  const e = Math.min(a.e, b.e);
  const d = signed(a, a.e - e) - signed(b, b.e - e);
  const abs = d < 0n ? -d : d;
  return e >= 0 ? rounded(d < 0n, abs << BigInt(e), 1n) : rounded(d < 0n, abs, 1n << BigInt(-e));
}

/** |a / b|, rounded; b = 0 gives inf, or nan for 0 / 0. */
export function absQuotient(a: Extended & { kind: 'finite' }, b: Extended & { kind: 'finite' }): Extended {
  if (b.m === 0n) return a.m === 0n ? { kind: 'nan' } : { kind: 'inf', negative: false };
  const d = a.e - b.e;
  return rounded(false, d >= 0 ? a.m << BigInt(d) : a.m, d >= 0 ? b.m : b.m << BigInt(-d));
}

/** x > y for x ≥ 0 (compare.cc's "difference > tolerance"); nan is never greater nor less. */
export function greater(x: Extended, y: Extended): boolean {
  if (x.kind === 'nan' || y.kind === 'nan') return false;
  if (y.kind === 'inf') return !y.negative ? false : true;
  if (x.kind === 'inf') return true;
  const e = Math.min(x.e, y.e);
  return signed(x, x.e - e) > signed(y, y.e - e);
}

/** printf's %Lg of it: six significant digits, trailing zeros dropped. */
export function formatG(x: Extended): string {
  if (x.kind === 'nan') return 'nan';
  if (x.kind === 'inf') return x.negative ? '-inf' : 'inf';
  const sign = x.negative ? '-' : '';
  if (x.m === 0n) return `${sign}0`;
  // The value m × 2^e as a rational p / q; six digits d.ddddd × 10^exp, rounded half to even.
  const p = x.e >= 0 ? x.m << BigInt(x.e) : x.m;
  const q = x.e >= 0 ? 1n : 1n << BigInt(-x.e);
  let exp = Math.floor((bitLength(x.m) - 1 + x.e) * Math.LOG10E * Math.LN2);
  let digits = 0n;
  for (let tries = 0; tries < 4; tries++) {
    const shift = exp - 5;
    const num = shift >= 0 ? p : p * 10n ** BigInt(-shift);
    const den = shift >= 0 ? q * 10n ** BigInt(shift) : q;
    digits = num / den;
    const twice = 2n * (num - digits * den);
    if (twice > den || (twice === den && (digits & 1n) === 1n)) digits++;
    if (digits >= 1_000_000n) exp++;
    else if (digits < 100_000n) exp--;
    else break;
  }
  const text = digits.toString();
  if (exp < -4 || exp >= 6) {
    const mantissa = `${text[0]}.${text.slice(1)}`.replace(/0+$/, '').replace(/\.$/, '');
    return `${sign}${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const point = exp + 1;
  const whole = point <= 0 ? `0.${'0'.repeat(-point)}${text}` : `${text.slice(0, point)}.${text.slice(point)}`;
  return sign + whole.replace(/0+$/, '').replace(/\.$/, '');
}
