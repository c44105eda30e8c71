import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { findKeyByHash } from '../../accounts/accounts.js';
import { hashKey, originAllowed } from '../../accounts/keys.js';
import { REQUEST_LIMITS } from '../../limits.js';
import { MaintenanceFlag } from '../maintenance.js';
import { availabilityCache } from '../../compilers/deployment.js';
import { keyFromHeader } from '../middleware/authenticate.js';
import type { ApiDeps } from '../route.js';
import type { LiveResults } from '../live.js';
import { startSession } from './session.js';
import { originRefusalText } from './widget-text.js';

// GET /api/v2/ws/ upgraded to a WebSocket on the API's own HTTP server. The key comes
// from the Authorization header or, for browsers (which cannot set headers on a
// WebSocket; widget keys are meant for this), from ?key=.
//
// Widget keys sit in public pages, so one works only from the browser origins its
// owner listed: any other Origin (or none) is told so on the socket, which is then
// closed (1008, policy violation) before anything is admitted or counted. The refusal
// travels over an accepted socket because a page cannot read the body of a refused
// handshake, and the widget shows this message to its reader.

export const WS_PATHS = new Set(['/api/v2/ws/', '/api/v2/ws']);

function refuse(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  const reason = { 401: 'Unauthorized', 404: 'Not Found' }[status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

export function attachWebSocket(server: Server, deps: ApiDeps & { live: LiveResults }): { close(): void } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: REQUEST_LIMITS.bodyMaxBytes });
  const maintenance = new MaintenanceFlag(deps.db, deps.maintenanceCacheMs);
  const available = availabilityCache(deps.db, deps.config);

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node's HTTP server stops listening for errors on an upgraded socket; a reset
    // during the key lookup below would otherwise take the whole process down.
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!WS_PATHS.has(url.pathname)) return refuse(socket, 404, 'not_found', `no WebSocket at ${url.pathname}`);
    const key = keyFromHeader(req.headers.authorization ?? '') || (url.searchParams.get('key') ?? '');
    void (async () => {
      const found = /^[\x21-\x7e]{1,256}$/.test(key) ? await findKeyByHash(deps.db, hashKey(key)) : undefined;
      if (!found || found.revoked) return refuse(socket, 401, key === '' ? 'missing_key' : 'invalid_key', 'a valid API key is required');
      if (found.kind === 'widget' && !originAllowed(found.allowedOrigins, req.headers.origin)) {
        return wss.handleUpgrade(req, socket, head, (ws) => {
          ws.send(JSON.stringify({ type: 'error', id: null, code: 'origin_not_allowed', message: originRefusalText(req.headers.origin) }));
          ws.close(1008, 'origin not allowed');
        });
      }
      wss.handleUpgrade(req, socket, head, (ws) => startSession(ws, found, { ...deps, maintenance, available }));
    })().catch(() => refuse(socket, 500, 'internal_error', 'try again later'));
  };
  server.on('upgrade', onUpgrade);
  return {
    close: () => {
      server.off('upgrade', onUpgrade);
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}
