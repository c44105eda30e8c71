import type { IncomingMessage } from 'node:http';
import type { Config } from '../../config.js';
import { publicUrl } from '../../config.js';

// What one client may hold of an API process through WebSocket connections, and who
// may open one with which key. Each open connection costs a descriptor and memory, so
// they are counted per key and per client address (RUNBOX_WS_MAX_PER_KEY,
// RUNBOX_WS_MAX_PER_ADDRESS); pings, the idle timeout and the unread-output bound live
// in the session (src/api/ws/session.ts).

/** The client's address as the REST API sees it (ctx.ip): the first X-Forwarded-For entry behind a trusted proxy. */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? req.headers['x-forwarded-for'] : undefined;
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return first || req.socket.remoteAddress || 'unknown';
}

/** Open connections per key and per address, against their caps. */
export class ConnectionCounts {
  private readonly byKey = new Map<string, number>();
  private readonly byAddress = new Map<string, number>();

  constructor(
    readonly maxPerKey: number,
    readonly maxPerAddress: number,
  ) {}

  /** Takes a place for one more connection, or names the cap reached (nothing taken). */
  take(key: string, address: string): { release(): void } | { over: 'key' | 'address' } {
    if ((this.byKey.get(key) ?? 0) >= this.maxPerKey) return { over: 'key' };
    if ((this.byAddress.get(address) ?? 0) >= this.maxPerAddress) return { over: 'address' };
    bump(this.byKey, key, 1);
    bump(this.byAddress, address, 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        bump(this.byKey, key, -1);
        bump(this.byAddress, address, -1);
      },
    };
  }
}

function bump(counts: Map<string, number>, name: string, by: number): void {
  const n = (counts.get(name) ?? 0) + by;
  if (n <= 0) counts.delete(name);
  else counts.set(name, n);
}

/**
 * Whether a page at `origin` is the service's own: the portal's playground, reached
 * at RUNBOX_PUBLIC_URL or at the address the request names (Host). Browsers set both
 * headers themselves, so a page elsewhere cannot pass for the portal.
 */
export function isOwnOrigin(origin: string, req: IncomingMessage, config: Pick<Config, 'RUNBOX_PUBLIC_URL' | 'RUNBOX_HOST' | 'RUNBOX_PORT'>): boolean {
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (parsed.origin === new URL(publicUrl(config)).origin) return true;
  const host = req.headers.host;
  return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && host !== undefined && parsed.host === host.toLowerCase();
}
