import busboy from 'busboy';
import type Koa from 'koa';
import { PortalError, type PortalState } from './state.js';

// Forms that send a file (multipart/form-data: the problem package), read with busboy
// for the pages that take one. Their fields go where the form fields of every other
// page go (the body, so the CSRF check reads _csrf as usual), the file to
// ctx.state.upload. Past `maxBytes` the request is refused with 413 and nothing is kept.
// Only a signed-in person's request gets here (the session is checked first).

export interface Upload {
  field: string;
  filename: string;
  content: Buffer;
}

const FIELDS_MAX = 20;
const FIELD_MAX_BYTES = 4096;

export function multipartBody(accepts: (path: string) => boolean, maxBytes: number, tooLarge: string, opts: { files?: number; fieldMaxBytes?: number } = {}): Koa.Middleware<PortalState> {
  const files = opts.files ?? 1;
  return async (ctx, next) => {
    if (ctx.method !== 'POST' || !accepts(ctx.path) || !ctx.is('multipart/form-data')) return next();
    const fields: Record<string, string> = {};
    const uploads: Upload[] = [];
    await new Promise<void>((resolve, reject) => {
      let bb: busboy.Busboy;
      try {
        // busboy says 'limit' on reaching its bound: one byte more than a file may have.
        bb = busboy({ headers: ctx.req.headers, limits: { files, fileSize: maxBytes + 1, fields: FIELDS_MAX, fieldSize: opts.fieldMaxBytes ?? FIELD_MAX_BYTES, parts: FIELDS_MAX + files } });
      } catch {
        return reject(new PortalError(400, 'The form could not be read.'));
      }
      let failed: PortalError | null = null;
      const fail = (e: PortalError) => {
        failed ??= e;
        // The rest of the body is not read: the connection closes with the answer.
        ctx.req.unpipe(bb);
        ctx.set('Connection', 'close');
        reject(failed);
      };
      bb.on('field', (name, value, info) => {
        if (info.valueTruncated) return fail(new PortalError(400, 'A field of the form is too long.'));
        fields[name] = value;
      });
      bb.on('file', (field, stream, info) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('limit', () => fail(new PortalError(413, tooLarge)));
        stream.on('end', () => {
          if (!failed) uploads.push({ field, filename: info.filename ?? '', content: Buffer.concat(chunks) });
        });
      });
      bb.on('partsLimit', () => fail(new PortalError(400, 'The form has too many parts.')));
      bb.on('error', () => fail(new PortalError(400, 'The form could not be read.')));
      bb.on('close', () => {
        if (!failed) resolve();
      });
      ctx.req.pipe(bb);
    });
    (ctx.request as unknown as { body: Record<string, string> }).body = fields;
    if (uploads.length > 0) [ctx.state.upload, ctx.state.uploads] = [uploads[0], uploads];
    await next();
  };
}
