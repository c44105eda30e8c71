import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { refusedAddress } from './address.js';
import type { AttemptOutcome } from './delivery.js';

// One callback attempt: resolve the host once, check every address it resolves to,
// connect to the checked address (a custom lookup hands it to the socket, so a DNS
// answer that changes between check and connect cannot redirect the request), POST,
// and judge the status. Redirects are not followed: a 3xx is a failed attempt.

export interface PostOptions {
  /** POST unless the delivery asks otherwise. */
  method?: 'POST' | 'PUT';
  timeoutMs: number;
  allowPrivate: boolean;
  headers: Record<string, string>;
}

/** Refused addresses are permanent failures: see docs/security.md, "Callbacks and private addresses". */
export class RefusedAddress extends Error {}

async function resolveChecked(host: string, allowPrivate: boolean): Promise<{ address: string; family: 4 | 6 }> {
  const bare = host.replace(/^\[|\]$/g, '');
  const found = isIP(bare) ? [{ address: bare, family: isIP(bare) as 4 | 6 }] : await lookup(bare, { all: true, verbatim: true });
  if (found.length === 0) throw new Error(`${host} did not resolve`);
  if (!allowPrivate) {
    // Every address must be public: a name with one public and one private record
    // would otherwise be a way in.
    for (const a of found) {
      const why = refusedAddress(a.address);
      if (why) throw new RefusedAddress(`callback host ${host} resolves to a non-public address: ${why} (an operator allows such addresses, for local use, with RUNBOX_CALLBACK_ALLOW_PRIVATE=true)`);
    }
  }
  return { address: found[0]!.address, family: found[0]!.family as 4 | 6 };
}

export async function postCallback(url: string, body: string, options: PostOptions): Promise<AttemptOutcome> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { ok: false, status: null, error: `invalid callback URL ${JSON.stringify(url)}`, permanent: true };
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return { ok: false, status: null, error: `callback URL scheme ${target.protocol} is not http or https`, permanent: true };
  }
  const signal = AbortSignal.timeout(options.timeoutMs);
  let checked: { address: string; family: 4 | 6 };
  try {
    checked = await Promise.race([
      resolveChecked(target.hostname, options.allowPrivate),
      new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('DNS lookup timed out')), { once: true })),
    ]);
  } catch (err) {
    if (err instanceof RefusedAddress) return { ok: false, status: null, error: err.message, permanent: true };
    return { ok: false, status: null, error: `DNS: ${(err as Error).message}`, permanent: false };
  }
  const pinned: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [checked]);
    else cb(null, checked.address, checked.family);
  };
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const done = (o: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      resolve(o);
    };
    const req = transport.request(
      target,
      {
        method: options.method ?? 'POST',
        lookup: pinned,
        signal,
        agent: false,
        headers: { ...options.headers, 'Content-Length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        // The answer's body is not needed; do not let a receiver stream one forever.
        res.destroy();
        if (status >= 200 && status < 300) done({ ok: true, status });
        else done({ ok: false, status, error: `receiver answered ${status}`, permanent: false });
      },
    );
    req.on('error', (err) => {
      const timedOut = signal.aborted;
      done({ ok: false, status: null, error: timedOut ? `no answer within ${options.timeoutMs} ms` : `connection: ${err.message}`, permanent: false });
    });
    req.end(body);
  });
}
