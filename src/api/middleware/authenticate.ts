import type Koa from 'koa';
import { findKeyByHash, type KeyContext } from '../../accounts/accounts.js';
import { findAdminKey } from '../../accounts/admin-keys.js';
import { KEY_CARRIERS, KEY_REFUSALS } from '../../accounts/errors.js';
import type { KeyCache } from '../../accounts/key-cache.js';
import { hashKey } from '../../accounts/keys.js';
import { MARKETPLACE_HEADERS, subscriberAccount, validSubscriber, type Marketplace } from '../../accounts/marketplace.js';
import type { Db } from '../../db/connect.js';
import { ApiError } from '../errors.js';
import type { ApiState, RouteDef } from '../route.js';

/** The key from `Authorization: <key>` or `Authorization: Bearer <key>`. */
export function keyFromHeader(header: string): string {
  const value = header.trim();
  const bearer = /^bearer\s+(\S+)$/i.exec(value);
  return bearer ? bearer[1]! : value;
}

/**
 * A call through the API marketplace: with the marketplace configured, any of its
 * headers makes the request one, and then only the right proxy secret lets it in
 * (401 otherwise, whatever else it carries). Without the configuration the headers
 * mean nothing and undefined is returned.
 */
async function marketplaceCaller(ctx: Koa.Context, db: Db, marketplace: Marketplace | null): Promise<ApiState['auth'] | undefined> {
  if (!marketplace) return undefined;
  const secret = ctx.get(MARKETPLACE_HEADERS.secret);
  const user = ctx.get(MARKETPLACE_HEADERS.user);
  const subscription = ctx.get(MARKETPLACE_HEADERS.subscription);
  if (secret === '' && user === '' && subscription === '') return undefined;
  if (!marketplace.secretMatches(secret)) {
    throw new ApiError(401, 'invalid_proxy_secret', `the ${MARKETPLACE_HEADERS.secret} header is missing or wrong`);
  }
  if (!validSubscriber(user)) {
    throw new ApiError(401, 'invalid_marketplace_user', `${MARKETPLACE_HEADERS.user} must name the subscriber (1 to 200 printable characters)`);
  }
  const { accountId, plan } = await subscriberAccount(db, user, marketplace.planFor(subscription));
  return { kind: 'marketplace', keyId: null, accountId, keyMonthlyLimit: null, revoked: false, allowedOrigins: [], subscriber: user, plan };
}

/**
 * The context of a working API key for the REST API (runbox's own and the compatible
 * ones): 401 for a missing, unknown or revoked key, 403 for a widget key. `carriers`
 * names where the route takes the key, for the message when there is none.
 */
export async function apiKeyContext(db: Db, key: string, keys?: KeyCache, carriers: string = KEY_CARRIERS.rest): Promise<KeyContext> {
  const challenge = { 'WWW-Authenticate': 'Bearer realm="runbox"' };
  if (key === '') throw new ApiError(401, 'missing_key', KEY_REFUSALS.missing(carriers), challenge);
  // Keys are printable ASCII; anything else cannot match and is not worth a lookup.
  const hash = /^[\x21-\x7e]{1,256}$/.test(key) ? hashKey(key) : undefined;
  // The process's key cache when there is one (src/accounts/key-cache.ts).
  const found = hash === undefined ? undefined : await (keys ? keys.find(hash) : findKeyByHash(db, hash));
  if (!found) throw new ApiError(401, 'invalid_key', KEY_REFUSALS.wrong, challenge);
  if (found.revoked) throw new ApiError(401, 'revoked_key', KEY_REFUSALS.revoked, challenge);
  // Widget keys sit in public pages: they work only over the WebSocket, from their
  // allowed origins (src/api/ws/attach.ts), never on a REST API.
  if (found.kind === 'widget') {
    throw new ApiError(
      403,
      'widget_key',
      'this is a widget key: it works only in the <runbox-widget> element (WebSocket /api/v2/ws/) on its allowed origins; use an API key for the REST API',
    );
  }
  return found;
}

export interface AuthenticateOptions {
  /** The process's key cache (src/accounts/key-cache.ts); without it every call looks the key up. */
  keys?: KeyCache;
  /** The API marketplace, when configured: its calls authenticate by its proxy headers. */
  marketplace?: Marketplace | null;
}

// 401 for a missing, unknown or revoked key on routes that take one (or a marketplace
// call without the right proxy secret), 403 for a widget key; sets ctx.state.auth.
export function authenticate(route: RouteDef, db: Db, options: AuthenticateOptions = {}): Koa.Middleware<ApiState> {
  const { keys, marketplace = null } = options;
  return async (ctx, next) => {
    if (route.auth === 'key') {
      ctx.state.auth =
        (await marketplaceCaller(ctx, db, marketplace)) ?? (await apiKeyContext(db, keyFromHeader(ctx.get('Authorization')), keys));
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
