import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { findKeyByHash, type KeyContext } from '../../accounts/accounts.js';
import { hashKey, originAllowed } from '../../accounts/keys.js';
import { REQUEST_LIMITS } from '../../limits.js';
import { MaintenanceFlag } from '../maintenance.js';
import { availabilityCache } from '../../compilers/deployment.js';
import { KEY_CARRIERS, KEY_REFUSALS } from '../../accounts/errors.js';
import { keyFromHeader } from '../middleware/authenticate.js';
import type { ApiDeps } from '../route.js';
import type { LiveResults } from '../live.js';
import { clientAddress, ConnectionCounts, isOwnOrigin } from './bounds.js';
import { Draining, SERVICE_RESTART, SERVICE_RESTART_REASON } from './drain.js';
import { portalSessionKey } from './portal-key.js';
import { startSession } from './session.js';
import { startPistonConnect } from '../../compat/piston/connect.js';
import { keyRefusalText, originRefusalText } from './widget-text.js';

// GET /api/v2/ws/ upgraded to a WebSocket on the API's own HTTP server. The key comes
// from the Authorization header or, for browsers (which cannot set headers on a
// WebSocket; widget keys are meant for this), from ?key=.
//
// Widget keys sit in public pages, so one works only from the browser origins its
// owner listed: any other Origin (or none) is told so on the socket, which is then
// closed (1008, policy violation) before anything is admitted or counted. The refusal
// travels over an accepted socket because a page cannot read the body of a refused
// handshake, and the widget shows this message to its reader.
//
// An ordinary API key is a secret: from a browser page other than the portal's own
// (its playground) it is refused and the page told to use a widget key. A missing,
// wrong or revoked key is answered 401 to a server-side client (no Origin); a browser
// page gets these refusals on an accepted socket too, so that a widget can tell its
// page's author what to fix. The portal's playground names one of the signed-in
// person's keys by id instead (?key_id=, src/api/ws/portal-key.ts). Connections over
// the caps per key and per client address are refused with 429 (src/api/ws/bounds.ts).
//
// Piston's interactive WebSocket (/piston/api/v2/connect, src/compat/piston/connect.ts)
// is served here too, with the key as the other Piston routes take it (Authorization,
// or the path segment after /piston/), API keys only, and refusals in Piston's shape
// (HTTP statuses: its clients are not widgets).

export const WS_PATHS = new Set(['/api/v2/ws/', '/api/v2/ws']);

/** /piston/api/v2/connect, or /piston/{key}/api/v2/connect (the key, still URL-encoded). */
const PISTON_CONNECT = /^\/piston\/(?:(?!api\/)([^/]+)\/)?api\/v2\/connect\/?$/;

function refuse(socket: Duplex, status: number, code: string, message: string, piston = false): void {
  const body = JSON.stringify(piston ? { message } : { error: { code, message } });
  const reason = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests' }[status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

export interface AttachedWebSocket {
  /** Closes each connection (1012) once its runs have ended; resolves when none is left. */
  drain(): Promise<void>;
  /** Closes what is left at once (1012; the runs still going are stopped). */
  close(): void;
}

export function attachWebSocket(server: Server, deps: ApiDeps & { live: LiveResults }): AttachedWebSocket {
  const wss = new WebSocketServer({ noServer: true, maxPayload: REQUEST_LIMITS.bodyMaxBytes });
  const maintenance = new MaintenanceFlag(deps.db, deps.maintenanceCacheMs);
  const counts = new ConnectionCounts(deps.config.RUNBOX_WS_MAX_PER_KEY, deps.config.RUNBOX_WS_MAX_PER_ADDRESS);
  const available = availabilityCache(deps.db, deps.config);
  const draining = new Draining();

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node's HTTP server stops listening for errors on an upgraded socket; a reset
    // during the key lookup below would otherwise take the whole process down.
    socket.on('error', () => socket.destroy());
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      return refuse(socket, 400, 'bad_request', 'the request target is not a valid URL');
    }
    const pistonPath = PISTON_CONNECT.exec(url.pathname);
    const piston = pistonPath !== null;
    if (!WS_PATHS.has(url.pathname) && !piston) return refuse(socket, 404, 'not_found', `no WebSocket at ${url.pathname}`);
    let key: string;
    try {
      key = pistonPath?.[1] !== undefined ? decodeURIComponent(pistonPath[1]) : keyFromHeader(req.headers.authorization ?? '') || (piston ? '' : (url.searchParams.get('key') ?? ''));
    } catch {
      return refuse(socket, 400, 'bad_request', 'the key in the path is not valid percent-encoding', piston);
    }
    const keyId = key === '' && !piston ? url.searchParams.get('key_id') : null;
    const origin = req.headers.origin;
    /** A refusal told on an accepted socket, closed at once (1008): a page can read it there. */
    const refuseOnSocket = (code: string, message: string) =>
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.send(JSON.stringify({ type: 'error', id: null, code, message }));
        ws.close(1008, code.replaceAll('_', ' '));
      });
    void (async () => {
      let found: KeyContext | undefined;
      if (keyId !== null) {
        if (origin === undefined || !isOwnOrigin(origin, req, deps.config)) {
          return refuse(socket, 403, 'origin_not_allowed', "key_id works only from the portal's own pages; send the key itself");
        }
        found = await portalSessionKey(deps.db, req, keyId);
        if (!found || found.revoked) return refuseOnSocket('invalid_key', 'This key is not one of your active keys (revoked, or you were logged out). Reload the page and choose another.');
      } else {
        found = /^[\x21-\x7e]{1,256}$/.test(key) ? await findKeyByHash(deps.db, hashKey(key)) : undefined;
      }
      if (!found || found.revoked) {
        const code = key === '' ? 'missing_key' : 'invalid_key';
        if (origin !== undefined && !piston) return refuseOnSocket(code, keyRefusalText(code, origin));
        // The REST API's words for the same refusals.
        const text = code === 'missing_key' ? KEY_REFUSALS.missing(piston ? KEY_CARRIERS.piston : KEY_CARRIERS.websocket) : found?.revoked ? KEY_REFUSALS.revoked : KEY_REFUSALS.wrong;
        return refuse(socket, 401, code, text, piston);
      }
      if (piston && found.kind === 'widget') {
        return refuse(socket, 403, 'widget_key', 'this is a widget key: it works only in the <runbox-widget> element (WebSocket /api/v2/ws/); use an API key here', true);
      }
      if (found.kind === 'widget' && !originAllowed(found.allowedOrigins, origin)) {
        return refuseOnSocket('origin_not_allowed', originRefusalText(origin));
      }
      if (found.kind === 'api' && origin !== undefined && !isOwnOrigin(origin, req, deps.config)) {
        if (!piston) return refuseOnSocket('origin_not_allowed', keyRefusalText('api_key', origin));
        return refuse(
          socket,
          403,
          'origin_not_allowed',
          `API keys are secrets and do not work from web pages (this one is on ${origin}): use a widget key, which lists the sites it may be used on`,
          true,
        );
      }
      const place = counts.take(found.keyId, clientAddress(req, deps.config.RUNBOX_TRUST_PROXY));
      if ('over' in place) {
        const [max, per] = place.over === 'key' ? [counts.maxPerKey, 'key'] : [counts.maxPerAddress, 'client address'];
        return refuse(socket, 429, 'too_many_connections', `at most ${max} WebSocket connections may be open at once per ${per}; close one first`, piston);
      }
      // The socket's own close: also when the handshake below fails and no session starts.
      socket.once('close', place.release);
      const start = piston ? startPistonConnect : startSession;
      wss.handleUpgrade(req, socket, head, (ws) => start(ws, found, { ...deps, maintenance, available, draining }));
    })().catch(() => refuse(socket, 500, 'internal_error', 'try again later', piston));
  };
  server.on('upgrade', onUpgrade);
  const gone = () => new Promise<void>((resolve) => {
    const check = () => (wss.clients.size === 0 ? resolve() : setTimeout(check, 50));
    check();
  });
  return {
    drain: async () => {
      server.off('upgrade', onUpgrade);
      draining.start();
      await gone();
    },
    close: () => {
      server.off('upgrade', onUpgrade);
      draining.start();
      for (const ws of wss.clients) {
        ws.close(SERVICE_RESTART, SERVICE_RESTART_REASON);
        // A client that does not answer the close frame is not waited for.
        setTimeout(() => ws.terminate(), 1000).unref();
      }
      wss.close();
    },
  };
}
