import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { expect } from 'chai';
import Koa from 'koa';
import { PortalError, type PortalState } from '../../src/portal/state.js';
import { multipartBody } from '../../src/portal/upload.js';

// The portal's file upload (multipart/form-data, the problem package) over real HTTP,
// with a small bound: the fields and the file as the routes see them; a file past the
// bound, too many parts and a body that is not multipart as it says are refused with
// their status and end the request at once (nothing hangs, nothing is kept).

describe('portal file upload (multipart)', () => {
  let server: Server;
  let url = '';
  const seen: { fields: unknown; upload: { field: string; filename: string; size: number } | null }[] = [];

  before(async () => {
    const app = new Koa<PortalState>();
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (err) {
        ctx.status = err instanceof PortalError ? err.status : 500;
        ctx.body = (err as Error).message;
      }
    });
    app.use(multipartBody((path) => path === '/up', 1000, 'The package is larger than 1000 bytes.'));
    app.use((ctx) => {
      const u = ctx.state.upload;
      seen.push({ fields: (ctx.request as unknown as { body?: unknown }).body ?? null, upload: u ? { field: u.field, filename: u.filename, size: u.content.length } : null });
      ctx.body = 'ok';
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const send = (path: string, form: FormData) => fetch(url + path, { method: 'POST', body: form });

  it('gives the routes the fields and the file', async () => {
    const form = new FormData();
    form.append('_csrf', 'token');
    form.append('package', new Blob([new Uint8Array(1000)]), 'p.zip');
    const res = await send('/up', form);
    expect([res.status, await res.text()]).to.deep.equal([200, 'ok']);
    expect(seen.pop()).to.deep.equal({ fields: { _csrf: 'token' }, upload: { field: 'package', filename: 'p.zip', size: 1000 } });
  });

  it('refuses a file past the bound with 413, and too many parts or a broken body with 400', async () => {
    const big = new FormData();
    big.append('package', new Blob([new Uint8Array(1001)]), 'p.zip');
    const res = await send('/up', big);
    expect([res.status, await res.text()]).to.deep.equal([413, 'The package is larger than 1000 bytes.']);
    const many = new FormData();
    for (let i = 0; i < 30; i++) many.append(`f${i}`, 'x');
    expect((await send('/up', many)).status).to.equal(400);
    const broken = await fetch(`${url}/up`, { method: 'POST', body: 'not multipart at all', headers: { 'Content-Type': 'multipart/form-data; boundary=xyz' } });
    expect(broken.status).to.equal(400);
    const noBoundary = await fetch(`${url}/up`, { method: 'POST', body: 'x', headers: { 'Content-Type': 'multipart/form-data' } });
    expect(noBoundary.status).to.equal(400);
    expect(seen, 'no refused request reached the route').to.deep.equal([]);
  });

  it('leaves other paths and other bodies alone', async () => {
    const form = new FormData();
    form.append('package', new Blob([new Uint8Array(5000)]), 'p.zip');
    expect((await send('/elsewhere', form)).status).to.equal(200);
    expect(seen.pop()).to.deep.equal({ fields: null, upload: null });
  });
});
