import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { createApp, type ApiDeps } from './app.js';

// The API listening on RUNBOX_HOST:RUNBOX_PORT (port 0: any free port, reported back).

export interface RunningApi {
  port: number;
  host: string;
  close(): Promise<void>;
}

export async function startApi(deps: ApiDeps): Promise<RunningApi> {
  const app = createApp(deps);
  const server = createServer(app.callback());
  // Slow clients must not hold sockets forever.
  server.requestTimeout = 60_000;
  server.headersTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.config.RUNBOX_PORT, deps.config.RUNBOX_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    port: address.port,
    host: deps.config.RUNBOX_HOST,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeIdleConnections();
      }),
  };
}
