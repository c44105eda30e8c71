// The widget's WebSocket to runbox (/api/v2/ws/): opened on the first run, kept for
// the next ones, and opened again after it drops (with a growing delay while the
// server cannot be reached; not after the server closed it for being idle, the next
// run opens it again). A refusal by policy (close code 1008: a key that is not valid
// or not a widget key, a page the widget key does not allow) is final: the widget
// says why and does not keep retrying.

export interface ServerMessage {
  type: 'output' | 'result' | 'error' | 'problem';
  id?: string | null;
  [field: string]: unknown;
}

export interface ConnectionEvents {
  message(m: ServerMessage): void;
  /** The socket closed; `final` when the server refused by policy (no reconnect). */
  dropped(final: boolean): void;
  /** A reconnect after a drop succeeded. */
  restored(): void;
}

const NORMAL_CLOSURE = 1000;
const POLICY_VIOLATION = 1008;
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;

export class Connection {
  private socket: WebSocket | null = null;
  private opening: Promise<WebSocket> | null = null;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Whether the socket has ever been open: only then is a drop worth a reconnect. */
  private everOpen = false;
  private stopped = false;

  constructor(
    private readonly url: string,
    private readonly on: ConnectionEvents,
  ) {}

  /** The open socket, opening it when needed; rejects when it cannot be opened. */
  open(): Promise<WebSocket> {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) return Promise.resolve(this.socket);
    if (this.opening) return this.opening;
    clearTimeout(this.retryTimer);
    this.stopped = false;
    this.opening = new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(this.url);
      let opened = false;
      ws.addEventListener('open', () => {
        opened = true;
        this.everOpen = true;
        this.retryMs = FIRST_RETRY_MS;
        this.socket = ws;
        this.opening = null;
        resolve(ws);
      });
      ws.addEventListener('message', (e: MessageEvent) => {
        if (typeof e.data !== 'string') return;
        try {
          this.on.message(JSON.parse(e.data) as ServerMessage);
        } catch {
          // Not JSON: not from runbox; ignored.
        }
      });
      ws.addEventListener('close', (e: CloseEvent) => {
        if (this.socket === ws) this.socket = null;
        if (!opened) {
          this.opening = null;
          reject(new Error('could not connect'));
          return;
        }
        // A normal close is the server ending a connection left idle (never one with a
        // run going): nothing is lost, and the next run opens a new one.
        if (e.code === NORMAL_CLOSURE) return;
        const final = e.code === POLICY_VIOLATION;
        this.on.dropped(final);
        if (!final && this.everOpen && !this.stopped) this.scheduleReconnect();
      });
    });
    return this.opening;
  }

  send(m: object): void {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) throw new Error('not connected');
    this.socket.send(JSON.stringify(m));
  }

  close(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.socket?.close(1000);
    this.socket = null;
  }

  private scheduleReconnect(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.open().then(
        () => this.on.restored(),
        () => {
          this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
          if (!this.stopped) this.scheduleReconnect();
        },
      );
    }, this.retryMs);
  }
}
