import { expect } from 'chai';
import { compareVersionsNewestFirst, newestFirst } from '../../src/compilers/order.js';

// The playground's compiler list: each language where it first appears, newest first
// within it, versions compared as numbers.
describe('compilers newest first', () => {
  const c = (id: string, language: string, version: string) => ({ id, language, version, entry: { version } });

  it('compares versions as numbers, not text', () => {
    expect(compareVersionsNewestFirst('12.2.0', '9.4.0')).to.be.below(0);
    expect(compareVersionsNewestFirst('3.9.7', '3.10.1')).to.be.above(0);
    expect(compareVersionsNewestFirst('4.9', '4.9.3')).to.be.above(0);
    expect(compareVersionsNewestFirst('1.0', '1.0')).to.equal(0);
  });

  it('keeps the languages in their order, the newest of each first', () => {
    const list = [c('gcc-4.9', 'C', '4.9.3'), c('python-3.9.7', 'Python', '3.9.7'), c('gcc-9', 'C', '9.4.0'), c('gcc-12', 'C', '12.2.0'), c('python-3.10', 'Python', '3.10.4')];
    expect(newestFirst(list).map((x) => x.id)).to.deep.equal(['gcc-12', 'gcc-9', 'gcc-4.9', 'python-3.10', 'python-3.9.7']);
  });
});
