import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { NATIVE_BUILD_DIR } from '../../src/util/paths.js';

// The kafel half of the one seccomp policy (native/seccomp/generate.c), as nsjail gets
// it. The BPF half is exercised by running programs (hostile and parity suites).

describe('seccomp policy for nsjail (seccomp.kafel)', () => {
  const kafel = readFileSync(join(NATIVE_BUILD_DIR, 'seccomp.kafel'), 'utf8');

  it('answers unknown syscall numbers with ENOSYS, never by killing one thread', () => {
    expect(kafel.trim().split('\n').at(-1)).to.equal('USE runbox DEFAULT ERRNO(38)');
    expect(kafel).to.not.match(/\bKILL\b/);
  });

  it('allows socket() and socketpair() for AF_UNIX, AF_INET and AF_INET6 only, else EAFNOSUPPORT', () => {
    for (const nr of [41, 53]) {
      const allow = `  ALLOW { SYSCALL[${nr}](family) { family == 1 || family == 2 || family == 10 } },`;
      const lines = kafel.split('\n');
      const at = lines.indexOf(allow);
      expect(at, `syscall ${nr}`).to.be.greaterThan(0);
      expect(lines[at + 1]).to.equal(`  ERRNO(97) { SYSCALL[${nr}] },`);
    }
  });

  it('lets plain clone through but not clone with namespace flags', () => {
    expect(kafel).to.include('  ALLOW { SYSCALL[56](flags) { (flags & 0x7e020080) == 0 } },\n  ERRNO(1) { SYSCALL[56] },');
  });
});
