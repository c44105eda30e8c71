import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A callback receiver for the tests that run whole processes (faults, PgBouncer,
// partitions): it counts every request per submission and the 2xx answers per delivery,
// and fails (503, or drops the connection) while `downFor` says it is down.

export class CallbackReceiver {
  server: Server;
  /** Whether the receiver is down for this submission's attempt number n (from 1). */
  downFor: (submission: string, n: number) => boolean = () => false;
  /** Requests received per submission (answered or not). */
  attemptsBySubmission = new Map<string, number>();
  okByDelivery = new Map<string, number>();
  okSubmissions = new Set<string>();
  requests = 0;
  constructor() {
    this.server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        this.requests++;
        const submission = String(req.headers['x-runbox-submission']);
        const n = (this.attemptsBySubmission.get(submission) ?? 0) + 1;
        this.attemptsBySubmission.set(submission, n);
        if (this.downFor(submission, n)) {
          if (this.requests % 2 === 0) res.socket?.destroy();
          else res.writeHead(503).end();
          return;
        }
        const delivery = String(req.headers['x-runbox-delivery']);
        this.okByDelivery.set(delivery, (this.okByDelivery.get(delivery) ?? 0) + 1);
        this.okSubmissions.add(submission);
        res.writeHead(204).end();
      });
    });
  }

  /** Listens on `host` (a free port); returns the callback URL. */
  async start(host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, host, r));
    return `http://${host}:${(this.server.address() as AddressInfo).port}/hook`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}
