import { expect } from 'chai';
import { decodeStageOut, encodeStageIn, escapedName, isCollectPath, isWorkspacePath } from '../../src/sandbox/archive.js';

// The stage archive is the only channel between the runner and the sandbox's init;
// what comes back was writable by the program, so the decoder must refuse anything odd.

function exitRecord(code: number): Buffer {
  const b = Buffer.alloc(5);
  b[0] = 0x58;
  b.writeUInt32BE(code, 1);
  return b;
}

/** A file record ('F') or an omitted one ('O') with a name of raw bytes. */
function record(type: 'F' | 'O', name: Buffer, content = Buffer.alloc(0), size = content.length): Buffer {
  const head = Buffer.alloc(3 + name.length + (type === 'F' ? 8 : 4));
  head[0] = type.charCodeAt(0);
  head.writeUInt16BE(name.length, 1);
  name.copy(head, 3);
  if (type === 'F') {
    head.writeUInt32BE(0o644, 3 + name.length);
    head.writeUInt32BE(content.length, 7 + name.length);
  } else head.writeUInt32BE(size, 3 + name.length);
  return Buffer.concat([head, type === 'F' ? content : Buffer.alloc(0)]);
}

describe('sandbox stage archive', () => {
  it('round-trips the end record and files', () => {
    const files = [
      { name: 'main.c', mode: 0o644, content: Buffer.from('int main(){}') },
      { name: 'a.out', mode: 0o755, content: Buffer.from([0, 1, 2, 255]) },
      { name: 'empty', mode: 0o600, content: Buffer.alloc(0) },
      { name: 'src/util/Parser.java', mode: 0o644, content: Buffer.from('class Parser {}') },
    ];
    const out = decodeStageOut(Buffer.concat([exitRecord(3), encodeStageIn(files)]), 1 << 20);
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
    const out = decodeStageOut(Buffer.concat([exitRecord(0), rec]), 1 << 20);
    expect(out.error).to.equal(undefined);
    expect(out.omitted).to.deep.equal([{ name: 'out/big.bin', size: 2_000_000, reason: 'limits' }]);
  });

  it('refuses a traversal name planted in the stream, keeping the end and the files before it', () => {
    const good = record('F', Buffer.from('out/a'), Buffer.from('A'));
    const out = decodeStageOut(Buffer.concat([exitRecord(0), good, record('F', Buffer.from('../etc'), Buffer.from('x'))]), 1 << 20);
    expect(out.error).to.equal('bad file name');
    expect(out.end).to.deep.equal({ kind: 'exited', code: 0 });
    expect(out.files.map((f) => f.name)).to.deep.equal(['out/a']);
  });

  it('drops a file whose name is not UTF-8, listed escaped, and keeps the stage', () => {
    const stream = Buffer.concat([
      exitRecord(0),
      record('F', Buffer.from('out/a.txt'), Buffer.from('A')),
      record('F', Buffer.from([0x6f, 0x75, 0x74, 0x2f, 0xff, 0xfe]), Buffer.from('secret')),
      record('O', Buffer.concat([Buffer.from('judge-feedback/x\\'), Buffer.from([0xc3])]), Buffer.alloc(0), 12),
      record('F', Buffer.concat([Buffer.from('out/'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('.txt')]), Buffer.from('sur')),
      record('F', Buffer.from('out/z\u00e9.txt'), Buffer.from('Z')),
    ]);
    const out = decodeStageOut(stream, 1 << 20);
    expect(out.error).to.equal(undefined);
    expect(out.end).to.deep.equal({ kind: 'exited', code: 0 });
    expect(out.files.map((f) => [f.name, f.content.toString()])).to.deep.equal([['out/a.txt', 'A'], ['out/z\u00e9.txt', 'Z']]);
    expect(out.omitted).to.deep.equal([
      { name: 'out/\\xff\\xfe', size: 6, reason: 'name' },
      { name: 'judge-feedback/x\\\\\\xc3', size: 12, reason: 'name' },
      { name: 'out/\\xed\\xa0\\x80.txt', size: 3, reason: 'name' },
    ]);
  });

  it('escapes the bytes outside UTF-8 and a backslash, nothing else', () => {
    expect(escapedName(Buffer.from([0xff, 0xfe]))).to.equal('\\xff\\xfe');
    expect(escapedName(Buffer.from('caf\u00e9 \u{1f600}'))).to.equal('caf\u00e9 \u{1f600}');
    // Overlong, truncated and past U+10FFFF sequences are bytes, not characters.
    expect(escapedName(Buffer.from([0xc0, 0xaf, 0xe2, 0x82, 0xf4, 0x90, 0x80, 0x80, 0x41]))).to.equal('\\xc0\\xaf\\xe2\\x82\\xf4\\x90\\x80\\x80A');
    expect(escapedName(Buffer.from('a\\xff'))).to.equal('a\\\\xff');
  });

  it('keeps the program\'s end when the files after it are cut or malformed', () => {
    const big = encodeStageIn([{ name: 'big', mode: 0o644, content: Buffer.alloc(100) }]);
    for (const [tail, why] of [
      [big.subarray(0, big.length - 1), 'truncated file content'],
      [big.subarray(0, 2), 'truncated file record'],
      [Buffer.from([0x51]), 'unknown record type 81'],
      [exitRecord(1), 'a second end record'],
    ] as const) {
      const out = decodeStageOut(Buffer.concat([exitRecord(7), tail]), 1000);
      expect(out.error, why).to.equal(why);
      expect(out.end, why).to.deep.equal({ kind: 'exited', code: 7 });
    }
  });

  it('bounds the collected bytes and refuses a stream that does not start with the end', () => {
    const big = encodeStageIn([{ name: 'big', mode: 0o644, content: Buffer.alloc(100) }]);
    expect(decodeStageOut(Buffer.concat([exitRecord(0), big]), 99).error).to.equal('collected files too large');
    for (const [stream, why] of [
      [Buffer.concat([big, exitRecord(0)]), 'a file record before the end record'],
      [Buffer.from([0x51]), 'unknown record type 81'],
      [exitRecord(256), 'end record out of range'],
      [exitRecord(0).subarray(0, 3), 'truncated end record'],
    ] as const) {
      const out = decodeStageOut(stream, 1000);
      expect(out.error, why).to.equal(why);
      expect(out.end, why).to.equal(null);
    }
    expect(decodeStageOut(Buffer.alloc(0), 1000)).to.deep.equal({ files: [], omitted: [], end: null });
  });

  it('decodes a signal end', () => {
    const b = Buffer.from([0x53, 0, 0, 0, 9]);
    expect(decodeStageOut(b, 0).end).to.deep.equal({ kind: 'signaled', signal: 9 });
  });
});
