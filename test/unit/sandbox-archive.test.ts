import { expect } from 'chai';
import { decodeStageOut, encodeStageIn, isCollectPath, isWorkspacePath } from '../../src/sandbox/archive.js';

// The stage archive is the only channel between the runner and the sandbox's init;
// what comes back was writable by the program, so the decoder must refuse anything odd.

function exitRecord(code: number): Buffer {
  const b = Buffer.alloc(5);
  b[0] = 0x58;
  b.writeUInt32BE(code, 1);
  return b;
}

describe('sandbox stage archive', () => {
  it('round-trips files and the end record', () => {
    const files = [
      { name: 'main.c', mode: 0o644, content: Buffer.from('int main(){}') },
      { name: 'a.out', mode: 0o755, content: Buffer.from([0, 1, 2, 255]) },
      { name: 'empty', mode: 0o600, content: Buffer.alloc(0) },
      { name: 'src/util/Parser.java', mode: 0o644, content: Buffer.from('class Parser {}') },
    ];
    const out = decodeStageOut(Buffer.concat([encodeStageIn(files), exitRecord(3)]), 1 << 20);
    expect(out.error).to.equal(undefined);
    expect(out.end).to.deep.equal({ kind: 'exited', code: 3 });
    expect(out.files.map((f) => [f.name, f.mode, f.content.toString('hex')])).to.deep.equal(
      files.map((f) => [f.name, f.mode, f.content.toString('hex')]),
    );
  });

  it("reads the program's end time before its end record; a second one, or a short one, is refused", () => {
    const at = (ns: bigint) => {
      const b = Buffer.alloc(9);
      b[0] = 0x54;
      b.writeUInt32BE(Number(ns >> 32n), 1);
      b.writeUInt32BE(Number(ns & 0xffffffffn), 5);
      return b;
    };
    // Past 2^53: nanoseconds of a host up for more than 104 days stay exact.
    const ns = 12_345_678_901_234_567_891n;
    const out = decodeStageOut(Buffer.concat([at(ns), exitRecord(0)]), 1 << 20);
    expect(out.error).to.equal(undefined);
    expect(out.endedAtNs).to.equal(ns);
    expect(decodeStageOut(exitRecord(0), 1 << 20).endedAtNs).to.equal(undefined);
    expect(decodeStageOut(Buffer.concat([at(1n), at(2n), exitRecord(0)]), 1 << 20).error).to.equal('bad end time record');
    expect(decodeStageOut(at(1n).subarray(0, 5), 1 << 20).error).to.equal('bad end time record');
  });

  it('accepts only relative workspace paths, for files and directories', () => {
    for (const bad of ['', '.', '..', '/etc/passwd', '../x', 'a/../b', 'a//b', 'a/', './a', 'a\0b', 'x'.repeat(256), `${'d/'.repeat(2048)}x`]) {
      expect(isWorkspacePath(bad), JSON.stringify(bad)).to.equal(false);
      expect(() => encodeStageIn([{ name: bad, mode: 0o644, content: Buffer.alloc(0) }])).to.throw();
      expect(() => encodeStageIn([], undefined, [bad])).to.throw();
    }
    for (const good of ['.hidden', 'x'.repeat(255), 'a/b', `${'d/'.repeat(100)}x`, 'include/list.h']) expect(isWorkspacePath(good), good).to.equal(true);
    for (const good of ['out/', './', 'classes/', 'main']) expect(isCollectPath(good), good).to.equal(true);
    for (const bad of ['/', '../', 'a//', '.']) expect(isCollectPath(bad), bad).to.equal(false);
  });

  it('decodes files left out past the bounds, by path and size', () => {
    const name = Buffer.from('out/big.bin');
    const rec = Buffer.alloc(3 + name.length + 4);
    rec[0] = 0x4f;
    rec.writeUInt16BE(name.length, 1);
    name.copy(rec, 3);
    rec.writeUInt32BE(2_000_000, 3 + name.length);
    const out = decodeStageOut(Buffer.concat([rec, exitRecord(0)]), 1 << 20);
    expect(out.error).to.equal(undefined);
    expect(out.omitted).to.deep.equal([{ name: 'out/big.bin', size: 2_000_000 }]);
  });

  it('rejects a traversal name planted in the stream', () => {
    const name = Buffer.from('../etc');
    const rec = Buffer.alloc(3 + name.length + 8);
    rec[0] = 0x46;
    rec.writeUInt16BE(name.length, 1);
    name.copy(rec, 3);
    const out = decodeStageOut(Buffer.concat([rec, exitRecord(0)]), 1 << 20);
    expect(out.error).to.equal('bad file name');
    expect(out.files).to.have.length(0);
  });

  it('bounds the collected bytes and refuses truncated or unknown records', () => {
    const big = encodeStageIn([{ name: 'big', mode: 0o644, content: Buffer.alloc(100) }]);
    expect(decodeStageOut(big, 99).error).to.equal('collected files too large');
    expect(decodeStageOut(big.subarray(0, big.length - 1), 1000).error).to.equal('truncated file content');
    expect(decodeStageOut(Buffer.from([0x51]), 1000).error).to.match(/unknown record/);
    expect(decodeStageOut(Buffer.concat([exitRecord(0), exitRecord(1)]), 1000).error).to.equal('data after the end record');
    expect(decodeStageOut(exitRecord(256), 1000).error).to.equal('end record out of range');
  });

  it('decodes a signal end', () => {
    const b = Buffer.from([0x53, 0, 0, 0, 9]);
    expect(decodeStageOut(b, 0).end).to.deep.equal({ kind: 'signaled', signal: 9 });
  });
});
