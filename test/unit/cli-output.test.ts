import { expect } from 'chai';
import { asJson, asTable, snakeKeys, snakeName } from '../../src/cli/output.js';

describe('runbox-admin output', () => {
  it('names fields in snake_case, and leaves other names alone', () => {
    expect(snakeName('monthlyLimit')).to.equal('monthly_limit');
    expect(snakeName('testsPerRequest')).to.equal('tests_per_request');
    for (const same of ['monthly_limit', 'pending', 'python-3.9.7', 'g++-4.9', 'RUNBOX_PORT', 'Accept']) expect(snakeName(same)).to.equal(same);
    expect(snakeKeys({ limits: { perMinute: 30 }, compilers: { 'python-3.9.7': { version: '3.9.2' } }, list: [{ builtAt: 'x' }] })).to.deep.equal({
      limits: { per_minute: 30 },
      compilers: { 'python-3.9.7': { version: '3.9.2' } },
      list: [{ built_at: 'x' }],
    });
    expect(JSON.parse(asJson({ sizeBytes: 1, when: new Date(0) }))).to.deep.equal({ size_bytes: 1, when: '1970-01-01T00:00:00.000Z' });
  });

  it('draws a list as one table with a column per field', () => {
    const out = asTable([
      { id: '1', email: 'a@example.com', allowedOrigins: ['https://a.example', 'https://b.example'], plan: null },
      { id: '2', email: 'b@example.com', allowedOrigins: [], plan: 'pro' },
    ]);
    const lines = out.trim().split('\n');
    expect(lines[1]).to.match(/│ id\s+│ email\s+│ allowed_origins\s+│ plan\s+│/);
    expect(out).to.include('https://a.example, https://b.example');
    expect(out).to.match(/│ 2\s+│ b@example\.com\s+│\s+│ pro\s+│/);
    expect(asTable([])).to.equal('(none)\n');
  });

  it('draws a record as name and value rows, nested fields as a.b, lists of records after it', () => {
    const out = asTable({ id: '7', limits: { monthlyLimit: 100 }, keys: [{ id: '1', kind: 'api' }] });
    expect(out).to.match(/│ id\s+│ 7\s+│/);
    expect(out).to.match(/│ limits\.monthly_limit\s+│ 100\s+│/);
    expect(out).to.match(/keys:\n┌/);
    expect(out).to.match(/│ id\s+│ kind\s+│/);
  });

  it('draws a column of record lists as lines below their parent, and an empty list as (none)', () => {
    const out = asTable({
      problems: [],
      images: [
        { image: 'gcc', state: 'up to date', compilers: [{ id: 'gcc-4.9', judge0: 50 }, { id: 'g++-4.9', judge0: 54 }] },
        { image: 'ghc', state: 'not built', compilers: [{ id: 'haskell-9.2.7', judge0: null }] },
      ],
    });
    expect(out).to.match(/│ problems\s+│ \(none\)\s+│/);
    expect(out).to.not.include('{"id"');
    expect(out).to.match(/│ image\s+│ state\s+│ id\s+│ judge0\s+│/);
    expect(out).to.match(/│ gcc\s+│ up to date\s+│ gcc-4\.9\s+│ 50\s+│/);
    // The second compiler of gcc: its image's cells are left blank.
    expect(out).to.match(/│\s+│\s+│ g\+\+-4\.9\s+│ 54\s+│/);
    expect(out).to.match(/│ ghc\s+│ not built\s+│ haskell-9\.2\.7\s+│\s+│/);
  });

  it('writes a record inside a cell as fields, and a map of one-field records as name (value)', () => {
    const out = asTable([{ image: 'gcc-12', compilers: { 'gcc-12': { version: '12.2.0' }, 'g++-12': { version: '12.2.0' } }, sizes: { rootfs: 10, total: 12 } }]);
    expect(out).to.include('gcc-12 (12.2.0), g++-12 (12.2.0)');
    expect(out).to.include('rootfs: 10, total: 12');
    expect(out).to.not.include('{');
  });

  it('shortens digests, writes sizes in units and times as the portal does, at a terminal only', () => {
    const row = { image: 'gcc', recipe_hash: 'ab'.repeat(32), sizeBytes: 252_992_530, small_bytes: 512, built_at: '2026-11-24T20:38:05.123Z', note: 'deadbeef' };
    const out = asTable([row]);
    expect(out).to.include(`${'ab'.repeat(6)}…`).and.not.include('ab'.repeat(7));
    expect(out).to.include('253 MB').and.include('512 B');
    expect(out).to.include('2026-11-24 20:38 UTC');
    // Short hex is not a digest.
    expect(out).to.include('deadbeef');
    expect(JSON.parse(asJson([row]))[0]).to.deep.include({ recipe_hash: 'ab'.repeat(32), size_bytes: 252_992_530, built_at: '2026-11-24T20:38:05.123Z' });
  });
});
