import { expect } from 'chai';
import { fmtCount, fmtKilobytes, fmtSeconds, fmtTime } from '../../src/portal/format.js';

// The portal's one form for moments, durations, sizes and counts.

describe('portal formats', () => {
  it('writes a moment as YYYY-MM-DD HH:MM UTC, from a Date or an ISO string', () => {
    expect(fmtTime(new Date('2026-12-01T00:00:00.000Z'))).to.equal('2026-12-01 00:00 UTC');
    expect(fmtTime('2026-11-24T15:07:59.999Z')).to.equal('2026-11-24 15:07 UTC');
    expect(fmtTime('2026-11-24T16:07:00+01:00')).to.equal('2026-11-24 15:07 UTC');
    expect(fmtTime(null)).to.equal('—');
  });
  it('writes durations in ms below a second and in seconds above', () => {
    expect(fmtSeconds(0.041)).to.equal('41 ms');
    expect(fmtSeconds(0)).to.equal('0 ms');
    expect(fmtSeconds(1.234)).to.equal('1.23 s');
    expect(fmtSeconds(null)).to.equal('—');
  });
  it('writes sizes given in KB as KB, MB or GB', () => {
    expect(fmtKilobytes(812)).to.equal('812 KB');
    expect(fmtKilobytes(2765)).to.equal('2.7 MB');
    expect(fmtKilobytes(3 * 1024 * 1024)).to.equal('3.0 GB');
    expect(fmtKilobytes(null)).to.equal('—');
  });
  it('writes counts with thousands separators', () => {
    expect(fmtCount(0)).to.equal('0');
    expect(fmtCount(999)).to.equal('999');
    expect(fmtCount(12500)).to.equal('12,500');
    expect(fmtCount(1234567)).to.equal('1,234,567');
  });
});
