import { expect } from 'chai';
import { sql } from 'kysely';
import type { RunResult } from '../../src/result.js';
import { billedSubmissions, keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { TEST_SLOT_BASE } from '../helpers/sandbox.js';

// Batches end to end: the real API (its feeder), a real runner, real sandboxed runs.

const PY = 'python-3.9.7';

interface Line {
  offset: number;
  index: number;
  submission_id: string;
  result?: RunResult;
  error?: { code: string; message: string };
}

describe('batches', function () {
  let s: ResultsStack;
  const post = (key: string, body: string) =>
    fetch(`${s.url}/api/v2/batches`, { method: 'POST', headers: { Authorization: key, 'Content-Type': 'application/jsonl' }, body });
  const results = async (key: string, id: string, offset?: number): Promise<Line[]> => {
    const res = await fetch(`${s.url}/api/v2/batches/${id}/results${offset === undefined ? '' : `?offset=${offset}`}`, { headers: { Authorization: key } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/jsonl/);
    const text = await res.text();
    return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line);
  };
  const jsonl = (runs: unknown[]) => runs.map((r) => JSON.stringify(r)).join('\n') + '\n';

  before(async function () {
    const why = realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    s = await resultsStack('batches', { RUNBOX_RUNNER_SLOTS: '2', RUNBOX_SANDBOX_UID_BASE: String(TEST_SLOT_BASE + 64100) });
    await s.startRunner();
  });
  after(async () => s?.close());

  it('runs 120 runs queued behind the pending limit, every result once in completion order, each billed as a run', async () => {
    // The per-minute limit high enough not to pace the test (a batch waits for it as for the pending limit).
    const { accountId, key } = await keyFor(s.db, { limits: { pending: 7, perMinute: 10_000 } });
    const n = 120;
    const runs = Array.from({ length: n }, (_, i) =>
      i % 10 === 0 ? { compiler: PY, code: 'x = int(input())\nassert x * x == int(input())\nprint("ok")', tests: [{ input: `${i}\n${i * i}\n`, expected_output: 'ok\n' }] } : { compiler: PY, code: `print(${i} * ${i})`, extra_params: { i } },
    );
    const res = await post(key.key, jsonl(runs));
    expect(res.status).to.equal(201);
    const batch = (await res.json()) as { id: string; total: number; admitted: number };
    expect(batch.total).to.equal(n);
    // Queued behind the pending limit, not refused.
    expect(batch.admitted).to.be.at.most(7);
    const lines = await results(key.key, batch.id);
    expect(lines.map((l) => l.offset)).to.deep.equal(Array.from({ length: n }, (_, i) => i + 1));
    expect(lines.map((l) => l.index).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: n }, (_, i) => i));
    for (const l of lines) {
      const r = l.result!;
      if (l.index % 10 === 0) expect(r.verdict, JSON.stringify(r)).to.equal('accepted');
      else {
        expect(r.output, JSON.stringify(r)).to.equal(`${l.index * l.index}\n`);
        expect(r.extra_params).to.deep.equal({ i: l.index });
      }
    }
    expect(await billedSubmissions(s, accountId)).to.equal(n);
    const view = (await (await fetch(`${s.url}/api/v2/batches/${batch.id}`, { headers: { Authorization: key.key } })).json()) as Record<string, unknown>;
    expect(view).to.include({ total: n, admitted: n, done: n, state: 'done' });
    // Resumed from an offset: the later lines, each once.
    const rest = await results(key.key, batch.id, 100);
    expect(rest.map((l) => l.offset)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 101 + i));
    expect(rest).to.deep.equal(lines.slice(100));
    // No callback deliveries for a batch's runs.
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM callback_deliveries d JOIN submissions s ON s.id = d.submission_id WHERE s.account_id = ${accountId}`.execute(s.db.db);
    expect(rows[0]!.n).to.equal(0);
  });

  it('gives a run refused for good its refusal as its result', async () => {
    const { key } = await keyFor(s.db, { limits: { monthlyLimit: 2 } });
    const res = await post(key.key, jsonl([0, 1, 2].map((i) => ({ compiler: PY, code: `print(${i})` }))));
    expect(res.status).to.equal(201);
    const { id } = (await res.json()) as { id: string };
    const lines = await results(key.key, id);
    expect(lines).to.have.length(3);
    expect(lines.filter((l) => l.result?.status === 'success')).to.have.length(2);
    expect(lines.filter((l) => l.error).map((l) => l.error!.code)).to.deep.equal(['monthly_limit']);
  });

  it('refuses a bad line naming it and stores nothing; shows a batch to its account only', async () => {
    const { accountId, key } = await keyFor(s.db);
    const bad = await post(key.key, jsonl([{ compiler: PY, code: 'print(1)' }, { compiler: PY, code: 'print(2)' }, { compiler: PY, stdin: 'x', code: '' }]));
    expect(bad.status).to.equal(400);
    const err = ((await bad.json()) as { error: { code: string; message: string } }).error;
    expect(err.code).to.equal('unknown_field');
    expect(err.message).to.match(/^line 3: /);
    const broken = await post(key.key, '{"compiler": "python-3.9.7", "code": "print(1)"}\n{not json\n');
    expect(broken.status).to.equal(400);
    expect(((await broken.json()) as { error: { message: string } }).error.message).to.match(/line 2/);
    const wrongType = await fetch(`${s.url}/api/v2/batches`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/json' }, body: '{}' });
    expect(wrongType.status).to.equal(400);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM batches WHERE account_id = ${accountId}`.execute(s.db.db);
    expect(rows[0]!.n).to.equal(0);
    expect(await billedSubmissions(s, accountId)).to.equal(0);

    const ok = await post(key.key, jsonl([{ compiler: PY, code: 'print(1)' }]));
    const { id } = (await ok.json()) as { id: string };
    const other = await keyFor(s.db);
    expect((await fetch(`${s.url}/api/v2/batches/${id}`, { headers: { Authorization: other.key.key } })).status).to.equal(404);
    expect((await fetch(`${s.url}/api/v2/batches/${id}/results`, { headers: { Authorization: other.key.key } })).status).to.equal(404);
    expect((await results(key.key, id)).map((l) => l.result!.output)).to.deep.equal(['1\n']);
  });
});
