import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { onAccountEvent } from '../accounts/events.js';
import { listenUrl } from '../db/connections.js';
import { createKeyCache } from '../accounts/key-cache.js';
import { createApp, type ApiDeps } from './app.js';
import { onClientError } from './client-error.js';
import { createLiveResults } from './live.js';
import { attachWebSocket } from './ws/attach.js';

// The API listening on RUNBOX_HOST:RUNBOX_PORT (port 0: any free port, reported back).

export interface RunningApi {
  port: number;
  host: string;
  close(): Promise<void>;
}

export async function startApi(given: ApiDeps): Promise<RunningApi> {
  // Run ends, live output and key changes, heard on the process's one LISTEN connection
  // (or polled for without one: src/db/connections.ts).
  const url = listenUrl(given.config);
  const live = given.live ?? createLiveResults({ url, db: given.db, pollMs: given.config.RUNBOX_POLL_MS });
  // Keys as last read, dropped when a change is notified.
  const keys = given.keys ?? createKeyCache({ db: given.db, url });
  const deps = { ...given, live, keys };
  const app = createApp(deps);
  // Slow clients must not hold sockets forever: the whole request (headers and body)
  // within RUNBOX_REQUEST_TIMEOUT_MS, checked every second rather than Node's 30 s.
  const timeoutMs = deps.config.RUNBOX_REQUEST_TIMEOUT_MS;
  // Idle keep-alive connections stay open longer than a load balancer's idle timeout
  // (RUNBOX_KEEP_ALIVE_TIMEOUT_MS). The headers timeout need not be above it: Node 20
  // times headers from a request's first byte, never across the idle time between
  // requests, and it refuses a headers timeout above the request timeout, which would
  // have to grow with it and give slow clients a minute.
  const server = createServer(
    { requestTimeout: timeoutMs, headersTimeout: timeoutMs, keepAliveTimeout: deps.config.RUNBOX_KEEP_ALIVE_TIMEOUT_MS, connectionsCheckingInterval: 1000 },
    app.callback(),
  );
  server.on('clientError', onClientError);
  const ws = attachWebSocket(server, deps);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.config.RUNBOX_PORT, deps.config.RUNBOX_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Sign-ups, log-ins and key changes made through this process, one line each.
  const stopEvents = onAccountEvent((e) => given.log?.info?.({ ...e }, e.event));
  const address = server.address() as AddressInfo;
  return {
    port: address.port,
    host: deps.config.RUNBOX_HOST,
    close: async () => {
      stopEvents();
      ws.close();
      await new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeIdleConnections();
      });
      if (!given.live) await live.close();
      if (!given.keys) await keys.close();
    },
  };
}
