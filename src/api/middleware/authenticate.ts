import type Koa from 'koa';
import { findKeyByHash } from '../../accounts/accounts.js';
import { findAdminKey } from '../../accounts/admin-keys.js';
import { hashKey } from '../../accounts/keys.js';
import type { Db } from '../../db/connect.js';
import { ApiError } from '../errors.js';
import type { ApiState, RouteDef } from '../route.js';

/** The key from `Authorization: <key>` or `Authorization: Bearer <key>`. */
export function keyFromHeader(header: string): string {
  const value = header.trim();
  const bearer = /^bearer\s+(\S+)$/i.exec(value);
  return bearer ? bearer[1]! : value;
}

// 401 for a missing, unknown or revoked key on routes that take one; sets ctx.state.auth.
export function authenticate(route: RouteDef, db: Db): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    if (route.auth === 'key') {
      const key = keyFromHeader(ctx.get('Authorization'));
      const challenge = { 'WWW-Authenticate': 'Bearer realm="runbox"' };
      if (key === '') throw new ApiError(401, 'missing_key', 'the Authorization header with an API key is required', challenge);
      // Keys are printable ASCII; anything else cannot match and is not worth a lookup.
      const found = /^[\x21-\x7e]{1,256}$/.test(key) ? await findKeyByHash(db, hashKey(key)) : undefined;
      if (!found) throw new ApiError(401, 'invalid_key', 'the API key is wrong', challenge);
      if (found.revoked) throw new ApiError(401, 'revoked_key', 'the API key has been revoked', challenge);
      // Widget keys sit in public pages: they work only over the WebSocket, from their
      // allowed origins (src/api/ws/attach.ts), never on the REST API.
      if (found.kind === 'widget') {
        throw new ApiError(
          403,
          'widget_key',
          'this is a widget key: it works only in the <runbox-widget> element (WebSocket /api/v2/ws/) on its allowed origins; use an API key for the REST API',
        );
      }
      ctx.state.auth = found;
    }
    if (route.auth === 'admin') {
      const key = keyFromHeader(ctx.get('Authorization'));
      const challenge = { 'WWW-Authenticate': 'Bearer realm="runbox-admin"' };
      if (key === '') throw new ApiError(401, 'missing_key', 'the Authorization header with an admin key is required', challenge);
      const hash = /^[\x21-\x7e]{1,256}$/.test(key) ? hashKey(key) : undefined;
      const admin = hash ? await findAdminKey(db, hash) : undefined;
      if (!admin) {
        // A working API key is known but not allowed here; anything else is not a key.
        const apiKey = hash ? await findKeyByHash(db, hash) : undefined;
        if (apiKey && !apiKey.revoked) throw new ApiError(403, 'forbidden', 'this resource is restricted to administrators');
        throw new ApiError(401, 'invalid_key', 'the admin key is wrong or revoked', challenge);
      }
      ctx.state.admin = admin;
    }
    await next();
  };
}
