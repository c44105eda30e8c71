import { once } from 'node:events';
import { WebSocket } from 'ws';

// A WebSocket test client that records every message and waits for one matching a predicate.

export type Msg = Record<string, unknown> & { type: string; id?: string };

export class WsClient {
  messages: Msg[] = [];
  /** The close code and reason, once closed. */
  closed: { code: number; reason: string } | undefined;
  private waiters: (() => void)[] = [];
  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.messages.push(JSON.parse(data.toString()) as Msg);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  static async open(url: string, headers: Record<string, string> = {}, origin?: string): Promise<WsClient> {
    const ws = new WebSocket(url, { headers, ...(origin ? { origin } : {}) });
    const c = new WsClient(ws);
    await once(ws, 'open');
    return c;
  }
  /** The first message matching `pred`; fails once the socket is closed without one. */
  async until(pred: (m: Msg) => boolean): Promise<Msg> {
    for (;;) {
      const found = this.messages.find(pred);
      if (found) return found;
      if (this.closed) throw new Error(`closed (${this.closed.code} ${this.closed.reason}) before the message; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }
  /** Resolves once the socket is closed. */
  async untilClosed(): Promise<{ code: number; reason: string }> {
    while (!this.closed) await new Promise<void>((r) => this.waiters.push(r));
    return this.closed;
  }
  /** The stdout sent so far for run `id` (runbox output messages). */
  stdout(id: string): string {
    return this.messages.filter((m) => m.type === 'output' && m.id === id && m.stream === 'stdout').map((m) => m.data).join('');
  }
  send(m: unknown): void {
    this.ws.send(typeof m === 'string' ? m : JSON.stringify(m));
  }
  close(): void {
    this.ws.close();
  }
}
