import { expect } from 'chai';
import { outputText, wholeCharacters } from '../../src/util/output-text.js';

// Output kept to a byte count is cut at the last whole UTF-8 character.

describe('output text', () => {
  const LIMIT = 16;
  for (const [name, char] of [
    ['2-byte', 'é'],
    ['3-byte', '€'],
    ['4-byte', '😀'],
  ] as const) {
    const size = Buffer.byteLength(char);
    for (let inside = 1; inside < size; inside++) {
      it(`a ${name} character with ${inside} of its ${size} bytes below the limit is dropped whole`, () => {
        const text = 'x'.repeat(LIMIT - inside) + char + 'tail';
        const kept = Buffer.from(text).subarray(0, LIMIT);
        expect(wholeCharacters(kept).toString()).to.equal('x'.repeat(LIMIT - inside));
        const shown = outputText(kept, true);
        expect(shown).to.equal('x'.repeat(LIMIT - inside));
        expect(Buffer.byteLength(shown)).to.be.at.most(LIMIT);
      });
    }
    it(`a ${name} character ending exactly at the limit stays`, () => {
      const kept = Buffer.from('x'.repeat(LIMIT - size) + char);
      expect(outputText(kept, true)).to.equal('x'.repeat(LIMIT - size) + char);
    });
  }

  it('an output that was not cut keeps its own broken end as U+FFFD', () => {
    expect(outputText(Buffer.from([0x61, 0xe2, 0x82]), false)).to.equal('a\uFFFD');
    expect(outputText(Buffer.from([0x61, 0xe2, 0x82]), true)).to.equal('a');
  });

  it('invalid bytes that are no cut character are left to the decoder', () => {
    expect(wholeCharacters(Buffer.from([0x61, 0x80, 0x80, 0x80, 0x80]))).to.have.length(5);
    expect(wholeCharacters(Buffer.from([0x61, 0xff]))).to.have.length(2);
    expect(wholeCharacters(Buffer.alloc(0))).to.have.length(0);
  });
});
