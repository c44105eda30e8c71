import { expect } from 'chai';
import { createKey } from '../../src/accounts/keys.js';
import { claim, complete } from '../../src/queue/index.js';
import type { RunResult } from '../../src/result.js';
import { keyFor, postJson, resultsStack, type ResultsStack } from '../helpers/results-stack.js';

// GET /api/v2/submissions/:id through the real API and database; the job is ended
// through the queue's own transitions (no runner needed to look a row up).

describe('submission lookup', () => {
  let s: ResultsStack;
  before(async () => {
    s = await resultsStack('submissions');
  });
  after(async () => s?.close());

  const get = (id: string, key: string) => fetch(`${s.url}/api/v2/submissions/${id}`, { headers: { Authorization: key } });

  it('shows the own account its submission from queued to finished, with result and callback; others get 404', async () => {
    const { key } = await keyFor(s.db, { redirectUrl: 'https://example.com/hook' });
    const posted = await postJson(`${s.url}/api/v2/run-code/`, key.key, { code: 'print(1)', compiler: 'python-3.9.7', extra_params: { n: 1 } });
    expect(posted.status).to.equal(200);
    const id = posted.headers.get('x-submission-id')!;
    expect(posted.headers.get('location')).to.equal(`/api/v2/submissions/${id}`);

    const queued = await get(id, key.key);
    expect(queued.status).to.equal(200);
    const q = (await queued.json()) as Record<string, unknown>;
    expect(q).to.include({ id, state: 'queued', started_at: null, finished_at: null, callback: null });
    expect(q).to.not.have.property('result');
    expect(Date.parse(q['created_at'] as string)).to.be.a('number').and.not.NaN;

    const [job] = await claim(s.db.db, 'lookup-runner', 1, 60);
    expect(job!.id).to.equal(id);
    const running = (await (await get(id, key.key)).json()) as Record<string, unknown>;
    expect(running['state']).to.equal('running');
    expect(running['started_at']).to.be.a('string');

    const result: RunResult = {
      id,
      compiler: 'python-3.9.7',
      status: 'success',
      output: '1\n',
      error: '',
      exit_code: 0,
      signal: null,
      time: 0.01,
      total: 0.02,
      memory: 900,
      limit_exceeded: null,
      truncated: false,
      stdout_truncated: false,
      stderr_truncated: false,
      compile_output: null,
      extra_params: { n: 1 },
    };
    await complete(s.db.db, 'lookup-runner', id, result);
    const done = (await (await get(id, key.key)).json()) as Record<string, unknown>;
    expect(done['state']).to.equal('finished');
    expect(done['finished_at']).to.be.a('string');
    expect(done['result']).to.deep.equal(result);
    expect(done['callback']).to.deep.include({ state: 'pending', attempts: 0, last_status: null, last_error: null });
    expect((done['callback'] as { next_attempt_at: string }).next_attempt_at).to.be.a('string');

    const other = await keyFor(s.db);
    const foreign = await get(id, other.key.key);
    expect(foreign.status).to.equal(404);
    expect(((await foreign.json()) as { error: { code: string } }).error.code).to.equal('not_found');
    // The same key of the same account sees it; an unknown or malformed id is 404 too.
    expect((await get('00000000-0000-4000-8000-000000000000', key.key)).status).to.equal(404);
    expect((await get('not-a-uuid', key.key)).status).to.equal(404);
    expect((await get(`${id}'--`, key.key)).status).to.equal(404);
    expect((await fetch(`${s.url}/api/v2/submissions/${id}`)).status).to.equal(401);
  });

  it('a second key of the same account sees the submission', async () => {
    const { accountId, key } = await keyFor(s.db);
    const posted = await postJson(`${s.url}/api/v2/run-code/`, key.key, { code: 'print(2)', compiler: 'python-3.9.7' });
    const id = posted.headers.get('x-submission-id')!;
    const second = await createKey(s.db.db, { accountId, appName: 'second' });
    const res = await get(id, second.key);
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { id: string }).id).to.equal(id);
  });
});
