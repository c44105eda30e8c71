import type { IncomingMessage } from 'node:http';
import { findKeyById, type KeyContext } from '../../accounts/accounts.js';
import type { Db } from '../../db/connect.js';
import { cookieFromHeader } from '../../portal/cookies.js';
import { findSession, SESSION_COOKIE } from '../../portal/sessions.js';

// The portal's playground runs through one of the signed-in person's keys, named by its
// id (`?key_id=`): keys are stored only as hashes, so the page cannot hold the key
// itself. The portal's session cookie says whose keys may be named. The caller accepts
// this only from the portal's own pages (Origin), so another site cannot borrow a
// visitor's session this way.

/** The key `keyId` when it belongs to the account logged in with this request's session cookie. */
export async function portalSessionKey(db: Db, req: IncomingMessage, keyId: string): Promise<KeyContext | undefined> {
  if (!/^[1-9][0-9]{0,17}$/.test(keyId)) return undefined;
  const sessionId = cookieFromHeader(req.headers.cookie, SESSION_COOKIE);
  const session = sessionId ? await findSession(db, sessionId) : undefined;
  if (!session) return undefined;
  const found = await findKeyById(db, keyId);
  // The owner's own session sees every run in full, whatever the key's student mark.
  return found?.accountId === session.accountId ? { ...found, student: false } : undefined;
}
