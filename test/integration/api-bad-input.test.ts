import { expect } from 'chai';
import { REQUEST_LIMITS } from '../../src/limits.js';
import { accountWithKey, counters, errorOf, fakeImagesDir, postRun, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

// Every malformed request is a 400 with a clear message, and moves no counter.

describe('api bad input', () => {
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;
  let accountId: string;
  let key: string;
  const valid = { code: 'print(1)', input: '', compiler: 'python-3.9.7' };

  before(async () => {
    t = await freshDatabase('api_bad_input');
    images = fakeImagesDir(['python-3.9.7']);
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock: new TestClock() });
    const made = await accountWithKey(t.db, { limits: { pending: 1000, perMinute: 1000 } });
    accountId = made.accountId;
    key = made.key.key;
  });
  after(async () => {
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  /** Sends the request and checks: 400, the code, a message matching, nothing counted. */
  async function rejects(res: Promise<Response>, code: string, message: RegExp): Promise<void> {
    const before = await counters(t.db, accountId);
    const r = await res;
    expect(r.status, `status for ${code}`).to.equal(400);
    expect(r.headers.get('content-type')).to.match(/^application\/json/);
    const err = await errorOf(r);
    expect(err.code).to.equal(code);
    expect(err.message).to.match(message);
    expect(await counters(t.db, accountId)).to.deep.equal(before);
  }

  const euros = (bytes: number): string => '€'.repeat(Math.floor(bytes / 3)) + 'a'.repeat(bytes % 3);

  it('accepts code and input of exactly 100,000 encoded bytes of multibyte characters', async () => {
    const code = euros(REQUEST_LIMITS.codeMaxBytes);
    expect(Buffer.byteLength(code)).to.equal(100_000);
    const before = await counters(t.db, accountId);
    const res = await postRun(api.url, key, { ...valid, code, input: euros(REQUEST_LIMITS.inputMaxBytes) });
    expect(res.status).to.equal(200);
    expect((await counters(t.db, accountId)).accountUsage).to.equal(before.accountUsage + 1);
  });

  it('refuses code of 100,001 encoded bytes (fewer characters than that)', async () => {
    const code = euros(100_001);
    expect(code.length).to.be.below(100_000);
    await rejects(postRun(api.url, key, { ...valid, code }), 'invalid_request', /code must be at most 100000 UTF-8 encoded bytes \(it has 100001\)/);
  });

  it('refuses input of 100,001 encoded bytes, also inside tests', async () => {
    await rejects(postRun(api.url, key, { ...valid, input: euros(100_001) }), 'invalid_request', /input must be at most 100000 UTF-8/);
    await rejects(
      postRun(api.url, key, { code: 'x', compiler: 'python-3.9.7', tests: [{ input: 'ok' }, { input: euros(100_001) }] }),
      'invalid_request',
      /tests\.1\.input must be at most 100000/,
    );
  });

  it('refuses a NUL character in code or input', async () => {
    await rejects(postRun(api.url, key, { ...valid, code: 'print(1)\u0000' }), 'invalid_request', /code must not contain NUL/);
    await rejects(postRun(api.url, key, { ...valid, input: 'a\u0000b' }), 'invalid_request', /input must not contain NUL/);
  });

  it('refuses invalid UTF-8 bytes instead of replacing them', async () => {
    const raw = Buffer.concat([Buffer.from('{"code":"print(1)'), Buffer.from([0xff, 0xfe]), Buffer.from('","compiler":"python-3.9.7"}')]);
    await rejects(postRun(api.url, key, new Uint8Array(raw)), 'invalid_utf8', /not valid UTF-8/);
    const overlong = Buffer.concat([Buffer.from('{"code":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('","compiler":"python-3.9.7"}')]);
    await rejects(postRun(api.url, key, new Uint8Array(overlong)), 'invalid_utf8', /not valid UTF-8/);
  });

  it('refuses wrong types', async () => {
    await rejects(postRun(api.url, key, { ...valid, code: 5 }), 'invalid_request', /code must be a string/);
    await rejects(postRun(api.url, key, { ...valid, input: ['a'] }), 'invalid_request', /input must be a string/);
    await rejects(postRun(api.url, key, { ...valid, compiler: 7 }), 'invalid_request', /compiler must be one of/);
    await rejects(postRun(api.url, key, { ...valid, tests: 'x' }), 'invalid_request', /tests must be an array/);
    await rejects(postRun(api.url, key, [valid]), 'invalid_request', /the body must be a JSON object/);
    await rejects(postRun(api.url, key, 'null'), 'invalid_request', /the body must be a JSON object/);
  });

  it('refuses missing fields', async () => {
    await rejects(postRun(api.url, key, { input: '', compiler: 'python-3.9.7' }), 'invalid_request', /missing required field code/);
    await rejects(postRun(api.url, key, { code: 'x' }), 'invalid_request', /missing required field compiler/);
    await rejects(postRun(api.url, key, { code: 'x', compiler: 'python-3.9.7', tests: [{}] }), 'invalid_request', /missing required field input/);
    await rejects(postRun(api.url, key, { code: 'x', compiler: 'python-3.9.7', tests: [] }), 'invalid_request', /tests/);
  });

  it("refuses an unknown field by name, and another service's name for one of ours says ours, on both run endpoints", async () => {
    for (const path of ['/api/v2/run-code/', '/api/v2/run-code-sync/']) {
      const post = (body: unknown) =>
        fetch(`${api.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: key }, body: typeof body === 'string' ? body : JSON.stringify(body) });
      await rejects(post({ code: 'x', compiler: 'python-3.9.7', stdin: '1' }), 'unknown_field', /^unknown field stdin: runbox calls it input$/);
      // Named even when required fields are missing: the foreign name is the likelier mistake.
      await rejects(post({ code: 'x', language: 'python' }), 'unknown_field', /^unknown field language: runbox calls it compiler: an id .*GET \/api\/compilers\//);
      await rejects(post({ ...valid, timeout: 5 }), 'unknown_field', /^unknown field timeout: runbox takes limits: \{"time": CPU seconds, "wall_time": seconds, "memory": KB\} for each run, at most the service's 30 s and 524288 KB$/);
      await rejects(post({ ...valid, command_line_arguments: '1 2' }), 'unknown_field', /^unknown field command_line_arguments: runbox calls it args: an array of strings$/);
      await rejects(post({ ...valid, source_code: 'x' }), 'unknown_field', /^unknown field source_code: runbox calls it code$/);
      // A whole body of another service's shape names the compatible route that takes it.
      await rejects(post({ language: 'python', version: '*', files: [{ content: 'print(1)' }] }), 'unknown_field', /^unknown field language: .*; this is a Piston body: POST \/piston\/api\/v2\/execute takes it as it is$/);
      await rejects(post({ source_code: 'print(1)', language_id: 71 }), 'unknown_field', /; this is a Judge0 body: POST \/judge0\/submissions takes it as it is$/);
      await rejects(post({ ...valid, colour: 'blue' }), 'unknown_field', /^unknown field colour: the fields are code, files, main, args, compiler_options, limits, return_files, input, compiler, extra_params, tests, expected_output, checker, interactor, stop_on_failure, problem$/);
      await rejects(post(`{"code":"x","compiler":"python-3.9.7","__proto__":{"input":"1"}}`), 'unknown_field', /^unknown field __proto__: the fields are/);
      await rejects(
        post({ code: 'x', compiler: 'python-3.9.7', tests: [{ input: '1' }, { stdin: '2' }] }),
        'unknown_field',
        /^unknown field tests\.1\.stdin: runbox calls it input$/,
      );
    }
    // extra_params is the client's own: any members, echoed back.
    expect((await postRun(api.url, key, { ...valid, extra_params: { stdin: 1, timeout: 2 } })).status).to.equal(200);
  });

  it('refuses an unknown compiler, naming the valid ones', async () => {
    // The ones installed here (this API's images: python only), not every identifier of the catalogue.
    await rejects(postRun(api.url, key, { ...valid, compiler: 'cobol-85' }), 'invalid_request', /^compiler must be one of: python-3\.9\.7 \(the ones installed here; GET \/api\/compilers\/ lists every identifier\)$/);
  });

  it('refuses extra_params that is not an object or is over 4 KB serialized', async () => {
    for (const bad of [[1, 2], 'x', null, 3]) {
      await rejects(postRun(api.url, key, { ...valid, extra_params: bad }), 'invalid_request', /extra_params must be a JSON object/);
    }
    const big = { blob: 'x'.repeat(REQUEST_LIMITS.extraParamsMaxBytes) };
    await rejects(postRun(api.url, key, { ...valid, extra_params: big }), 'invalid_request', /extra_params must be at most 4096 bytes as JSON/);
  });

  it('refuses deeply nested JSON, but not brackets inside strings', async () => {
    let nested: unknown = 1;
    for (let i = 0; i < 40; i++) nested = { n: nested };
    await rejects(postRun(api.url, key, { ...valid, extra_params: nested }), 'too_deeply_nested', /nested deeper than 16 levels/);
    const huge = '{"code":' + '['.repeat(200_000) + ']'.repeat(200_000) + '}';
    await rejects(postRun(api.url, key, huge), 'too_deeply_nested', /nested deeper/);
    const res = await postRun(api.url, key, { ...valid, code: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[' });
    expect(res.status).to.equal(200);
  });

  it('refuses a lone surrogate escape in code, input, tests or extra_params, naming the field (run and sync)', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...valid, code: 'print(1)\ud800' }, /^code contains a lone surrogate/],
      [{ ...valid, input: '\udc00x' }, /^input contains a lone surrogate/],
      [{ code: valid.code, compiler: valid.compiler, tests: [{ input: 'a' }, { input: '\ud83d' }] }, /^tests\[1\]\.input contains a lone surrogate/],
      [{ ...valid, extra_params: { note: 'x\ud800y' } }, /^extra_params\.note contains a lone surrogate/],
      [{ ...valid, extra_params: { ['k\udfff']: 1 } }, /^extra_params contains a lone surrogate/],
    ];
    for (const path of ['/api/v2/run-code/', '/api/v2/run-code-sync/']) {
      for (const [body, message] of cases) {
        // JSON.stringify writes a lone surrogate as the escape \udXXX, as a client would.
        expect(JSON.stringify(body)).to.match(/\\ud[89a-f]/);
        const res = fetch(`${api.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: key }, body: JSON.stringify(body) });
        await rejects(res, 'invalid_unicode', message);
      }
    }
    // A pair is a character like any other.
    const res = await postRun(api.url, key, { ...valid, input: '\ud83d\ude00', extra_params: { face: '\ud83d\ude00' } });
    expect(res.status).to.equal(200);
  });

  it('refuses a 5 MB body with body_too_large', async () => {
    const body = JSON.stringify({ ...valid, code: 'x'.repeat(5 * 1024 * 1024) });
    await rejects(postRun(api.url, key, body), 'body_too_large', /larger than/);
  });

  it('refuses a non-JSON Content-Type, invalid JSON and an empty body', async () => {
    await rejects(postRun(api.url, key, JSON.stringify(valid), { 'Content-Type': 'text/plain' }), 'unsupported_content_type', /Content-Type must be application\/json/);
    await rejects(
      postRun(api.url, key, 'code=x&compiler=python-3.9.7', { 'Content-Type': 'application/x-www-form-urlencoded' }),
      'unsupported_content_type',
      /application\/json/,
    );
    await rejects(postRun(api.url, key, '{"code": "x", "compiler": '), 'invalid_json', /not valid JSON/);
    await rejects(postRun(api.url, key, ''), 'invalid_json', /empty/);
    // No body at all (curl -X POST with no data): the body is named, not its type.
    await rejects(fetch(`${api.url}/api/v2/run-code-sync/`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: key } }), 'invalid_json', /^the body is empty/);
    await rejects(postRun(api.url, key, JSON.stringify(valid), { 'Content-Type': 'application/json; charset=latin1' }), 'unsupported_charset', /UTF-8/);
  });
});
