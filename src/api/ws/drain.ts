import { EventEmitter } from 'node:events';

// An API process stopping (SIGTERM during an upgrade): each WebSocket connection with no
// run going is closed at once, one with runs going when they have ended, both with 1012
// (Service Restart: RFC 6455's registered code for "the server is restarting; the
// client may reconnect"), which the widget answers by reconnecting. Run messages that
// arrive meanwhile are refused (error code unavailable) so the client sends them again
// on its new connection, to another API host.

/** RFC 6455 §7.4.1 registry: Service Restart. */
export const SERVICE_RESTART = 1012;
export const SERVICE_RESTART_REASON = 'service restart';
export const RESTARTING_MESSAGE = 'this server is restarting: reconnect and send the run again';

export class Draining extends EventEmitter {
  private begun = false;

  get active(): boolean {
    return this.begun;
  }

  /** Tells every connection to close as soon as it has no run going. */
  start(): void {
    if (this.begun) return;
    this.begun = true;
    this.emit('drain');
  }

  /** Calls fn now when draining has begun, else when it begins; returns the unsubscribe. */
  whenDraining(fn: () => void): () => void {
    if (this.begun) {
      fn();
      return () => {};
    }
    this.once('drain', fn);
    return () => this.off('drain', fn);
  }
}
