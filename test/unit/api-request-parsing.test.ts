import { expect } from 'chai';
import { keyFromHeader } from '../../src/api/middleware/authenticate.js';
import { jsonDepth } from '../../src/api/json-text.js';

describe('api request parsing', () => {
  it('measures JSON nesting without parsing, ignoring brackets inside strings', () => {
    expect(jsonDepth('{"a":1}')).to.equal(1);
    expect(jsonDepth('{"a":[{"b":[]}]}')).to.equal(4);
    expect(jsonDepth('{"code":"[[[[{{{{"}')).to.equal(1);
    expect(jsonDepth('{"code":"\\"[[[["}')).to.equal(1);
    expect(jsonDepth('[' .repeat(100_000) + ']'.repeat(100_000))).to.equal(100_000);
  });

  it('takes the key from a bare Authorization value or a Bearer one', () => {
    expect(keyFromHeader('rbx_abc')).to.equal('rbx_abc');
    expect(keyFromHeader('  rbx_abc  ')).to.equal('rbx_abc');
    expect(keyFromHeader('Bearer rbx_abc')).to.equal('rbx_abc');
    expect(keyFromHeader('bearer   rbx_abc')).to.equal('rbx_abc');
    expect(keyFromHeader('')).to.equal('');
  });
});
