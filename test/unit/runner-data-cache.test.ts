import { expect } from 'chai';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256 } from '../../src/problems/test-data.js';
import { DataCache } from '../../src/runner/data-cache.js';

// The runner host's cache of test data: filled once per file, shared by concurrent
// readers, bounded (least recently used first), and never trusting what it fetched
// or what it finds on disk beyond the file's name and size.

describe('runner: test data cache', () => {
  let dir: string;
  const store = new Map<string, Buffer>();
  let fetches: string[] = [];
  const put = (text: string) => {
    const content = Buffer.from(text);
    store.set(sha256(content).toString('hex'), content);
    return { hash: sha256(content), size: content.length };
  };
  const cache = (maxBytes = 1 << 20) =>
    new DataCache({
      dir,
      maxBytes,
      touchEveryMs: 0,
      fetch: async (hash) => {
        fetches.push(hash.toString('hex'));
        await new Promise((r) => setTimeout(r, 5));
        return store.get(hash.toString('hex'));
      },
    });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'runbox-cache-'));
    fetches = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("gives a file's path on disk (0644 in the 0700 directory): fetched, written back when another process evicted it, its mode made readable", async () => {
    const a = put('a test input\n');
    const c = cache();
    const path = await c.file(a.hash, a.size);
    expect(readFileSync(path, 'utf8')).to.equal('a test input\n');
    expect(statSync(path).mode & 0o777).to.equal(0o644);
    expect(statSync(dir).mode & 0o777).to.equal(0o700);
    expect(fetches).to.have.length(1);
    // Gone from the disk while this process still holds it in memory: written back, not fetched.
    unlinkSync(path);
    expect(await c.file(a.hash, a.size)).to.equal(path);
    expect(readFileSync(path, 'utf8')).to.equal('a test input\n');
    expect(fetches).to.have.length(1);
    // A file cached before inputs were given as files (0600) is made readable.
    chmodSync(path, 0o600);
    await c.file(a.hash, a.size);
    expect(statSync(path).mode & 0o777).to.equal(0o644);
    // A file of the wrong size on disk is replaced.
    writeFileSync(path, 'short');
    await c.file(a.hash, a.size);
    expect(readFileSync(path, 'utf8')).to.equal('a test input\n');
  });

  it('fetches a file once, even for readers asking at the same time; then reads it from disk', async () => {
    const a = put('alpha');
    const c = cache();
    const [x, y] = await Promise.all([c.get(a.hash, a.size), c.get(a.hash, a.size)]);
    expect(x.toString()).to.equal('alpha');
    expect(y.toString()).to.equal('alpha');
    expect(fetches).to.have.length(1);
    expect((await c.get(a.hash, a.size)).toString()).to.equal('alpha');
    expect(fetches).to.have.length(1);
    // Another process sharing the directory finds it too.
    expect((await cache().get(a.hash, a.size)).toString()).to.equal('alpha');
    expect(fetches).to.have.length(1);
    expect(statSync(dir).mode & 0o777).to.equal(0o700);
    expect(readdirSync(dir)).to.deep.equal([a.hash.toString('hex')]);
  });

  it('keeps to its bound, dropping the least recently used files', async () => {
    const c = cache(2500);
    const files = ['a', 'b', 'c', 'd'].map((l) => put(l.repeat(1000)));
    await c.get(files[0]!.hash, 1000);
    await new Promise((r) => setTimeout(r, 20));
    await c.get(files[1]!.hash, 1000);
    await new Promise((r) => setTimeout(r, 20));
    await c.get(files[0]!.hash, 1000); // used again: now the newest of the two
    await new Promise((r) => setTimeout(r, 20));
    await c.get(files[2]!.hash, 1000); // 3000 > 2500: evicts down to 2000
    const left = readdirSync(dir).sort();
    expect(left).to.deep.equal([files[0]!.hash.toString('hex'), files[2]!.hash.toString('hex')].sort());
  });

  it('keeps recent files in memory too: a file removed from disk meanwhile is still served, without a fetch', async () => {
    const a = put('in memory');
    const c = cache();
    await c.get(a.hash, a.size);
    rmSync(join(dir, a.hash.toString('hex')));
    expect((await c.get(a.hash, a.size)).toString()).to.equal('in memory');
    expect(fetches).to.have.length(1);
  });

  it('refuses data that does not match its hash, and a file gone from the store', async () => {
    const a = put('genuine');
    store.set(a.hash.toString('hex'), Buffer.from('tampered'));
    let err = await cache().get(a.hash, a.size).catch((e: Error) => e);
    expect((err as Error).message).to.match(/does not match its hash/);
    store.clear();
    err = await cache().get(a.hash, a.size).catch((e: Error) => e);
    expect((err as Error).message).to.match(/is no longer stored/);
    expect(readdirSync(dir)).to.deep.equal([]);
  });

  it('fetches again a cached file of the wrong size', async () => {
    const a = put('right content');
    writeFileSync(join(dir, a.hash.toString('hex')), 'short');
    expect((await cache().get(a.hash, a.size)).toString()).to.equal('right content');
    expect(fetches).to.have.length(1);
  });
});
