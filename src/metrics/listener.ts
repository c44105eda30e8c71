import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registry } from './registry.js';

// The admin listener (RUNBOX_ADMIN_HOST:RUNBOX_ADMIN_PORT): GET /metrics in the
// Prometheus text format, without a key. Bind it to a private address only.

export interface AdminListener {
  host: string;
  port: number;
  close(): Promise<void>;
}

export async function startAdminListener(host: string, port: number): Promise<AdminListener> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(path === '/metrics' ? 405 : 404, { 'Content-Type': 'text/plain' }).end('GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(err)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    host,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
