import type { AddressInfo } from 'node:net';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { onAccountEvent } from '../accounts/events.js';
import { listenUrl } from '../db/connections.js';
import { createKeyCache } from '../accounts/key-cache.js';
import { createApp, type ApiDeps } from './app.js';
import { onClientError } from './client-error.js';
import { createLiveResults } from './live.js';
import { feedSettings } from './routes/batches.js';
import { startBatchFeeder } from '../batches/store.js';
import { attachWebSocket } from './ws/attach.js';
import { VERIFY_LIMITS } from '../limits.js';
import { runAdmitter } from './middleware/admission.js';
import { advanceChecks } from './problem-checks.js';

// The API listening on RUNBOX_HOST:RUNBOX_PORT (port 0: any free port, reported back).

export interface RunningApi {
  port: number;
  host: string;
  close(): Promise<void>;
}

function connectionCount(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((err, n) => resolve(err ? -1 : n)));
}

export async function startApi(given: ApiDeps): Promise<RunningApi> {
  // Run ends, live output and key changes, heard on the process's one LISTEN connection
  // (or polled for without one: src/db/connections.ts).
  const url = listenUrl(given.config);
  const live = given.live ?? createLiveResults({ url, db: given.db, pollMs: given.config.RUNBOX_POLL_MS });
  // Keys as last read, dropped when a change is notified.
  const keys = given.keys ?? createKeyCache({ db: given.db, url });
  // Batches' items admitted as their accounts' limits free up (src/batches/store.ts).
  const batches = given.batches ?? startBatchFeeder(given.db, feedSettings(given), (err) => given.log?.error({ err: err.message }, 'admitting the items of batches failed'));
  const deps = { ...given, live, keys, batches };
  const app = createApp(deps);
  // Slow clients must not hold sockets forever: the whole request (headers and body)
  // within RUNBOX_REQUEST_TIMEOUT_MS, checked every second rather than Node's 30 s.
  const timeoutMs = deps.config.RUNBOX_REQUEST_TIMEOUT_MS;
  // Idle keep-alive connections stay open longer than a load balancer's idle timeout
  // (RUNBOX_KEEP_ALIVE_TIMEOUT_MS). The headers timeout need not be above it: Node 20
  // times headers from a request's first byte, never across the idle time between
  // requests, and it refuses a headers timeout above the request timeout, which would
  // have to grow with it and give slow clients a minute.
  // Stopping (close()): every answer says Connection: close, so keep-alive clients (a load
  // balancer) take their next request to another host rather than to a closed listener.
  let draining = false;
  const inFlight = new Set<ServerResponse>();
  const handle = app.callback();
  const server = createServer(
    { requestTimeout: timeoutMs, headersTimeout: timeoutMs, keepAliveTimeout: deps.config.RUNBOX_KEEP_ALIVE_TIMEOUT_MS, connectionsCheckingInterval: 1000 },
    (req, res) => {
      if (draining) res.setHeader('Connection', 'close');
      else {
        inFlight.add(res);
        res.once('close', () => inFlight.delete(res));
      }
      void handle(req, res);
    },
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
  // Problems' verifications and rejudges move on in the background (src/api/problem-checks.ts).
  const admit = runAdmitter(deps);
  let advancing: Promise<void> | null = null;
  const checks = setInterval(() => {
    advancing ??= advanceChecks(deps.db, admit, deps.config.RUNBOX_RECIPES_DIR)
      .then(() => undefined)
      .catch((err: unknown) => given.log?.error({ err }, 'advancing problem checks failed'))
      .finally(() => (advancing = null));
  }, VERIFY_LIMITS.advanceEveryMs);
  checks.unref();
  // Sign-ups, log-ins and key changes made through this process, one line each.
  const stopEvents = onAccountEvent((e) => given.log?.info?.({ ...e }, e.event));
  const address = server.address() as AddressInfo;
  return {
    port: address.port,
    host: deps.config.RUNBOX_HOST,
    close: async () => {
      // Stops accepting, lets the requests in flight (synchronous runs included) and the
      // WebSocket runs going finish within RUNBOX_DRAIN_SECONDS, then closes what is left.
      const t0 = performance.now();
      stopEvents();
      clearInterval(checks);
      await advancing;
      draining = true;
      // Requests already being answered (a synchronous run waiting for its result) too.
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      const closed = new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const drained = await Promise.race([
        Promise.all([closed, ws.drain()]).then(() => true),
        new Promise<false>((r) => (timer = setTimeout(() => r(false), deps.config.RUNBOX_DRAIN_SECONDS * 1000))),
      ]);
      clearTimeout(timer);
      if (!drained) {
        given.log?.info?.({ connections: await connectionCount(server) }, 'requests still going at the drain bound; closing them');
        ws.close();
        server.closeAllConnections();
        await closed;
      }
      given.log?.info?.({ ms: Math.round(performance.now() - t0), drained }, 'API stopped');
      if (!given.live) await live.close();
      if (!given.keys) await keys.close();
      if (!given.batches) await batches.close();
    },
  };
}
