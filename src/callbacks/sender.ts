import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import { callbackAttempts } from '../metrics/registry.js';
import { outboxWaker, startOutboxLoop, workerId } from '../queue/outbox-loop.js';
import { buryExhausted, settleDelivery, type RetryPolicy } from './settle.js';
import { claimDeliveries, nextDueAt } from './claim.js';
import { CALLBACKS_CHANNEL, type ClaimedDelivery } from './delivery.js';
import { renderBodyFor } from './formats.js';
import { postCallback } from './post.js';
import { signatureHeader } from './sign.js';

// The callback sender: claims due deliveries from the outbox, POSTs (or PUTs) each signed result
// and records the outcome. Woken by NOTIFY when a delivery is enqueued, by a timer at
// the next retry's time, and by a poll behind both. Any number of senders may run
// (one per API host): claims are leased and SKIP LOCKED. Everything it needs is in
// Postgres, so pending deliveries survive restarts.

export interface SenderDeps {
  db: Db;
  config: Config;
  log: Logger;
}

export interface Sender {
  readonly id: string;
  stop(): Promise<void>;
}

export async function startSender(deps: SenderDeps): Promise<Sender> {
  const { db, config } = deps;
  const id = workerId('sender');
  const log = deps.log.child({ sender: id });
  const policy: RetryPolicy = { maxAttempts: config.RUNBOX_CALLBACK_MAX_ATTEMPTS, backoffMs: config.RUNBOX_CALLBACK_BACKOFF_MS };
  const timeoutMs = config.RUNBOX_CALLBACK_TIMEOUT_MS;
  // An attempt ends within its timeout; the lease leaves room for a slow database.
  const leaseMs = 2 * timeoutMs + 30_000;
  const concurrency = config.RUNBOX_CALLBACK_CONCURRENCY;
  const inFlight = new Set<Promise<void>>();

  const waker = await outboxWaker(config, CALLBACKS_CHANNEL, log, 'callback');

  const deliver = async (d: ClaimedDelivery) => {
    const dlog = log.child({ submission: d.submission_id, delivery: d.id, attempt: d.attempts });
    const body = await renderBodyFor(db, d);
    const outcome = await postCallback(d.url, body, {
      method: d.method,
      timeoutMs,
      allowPrivate: config.RUNBOX_CALLBACK_ALLOW_PRIVATE,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'runbox-callbacks',
        'X-Runbox-Submission': d.submission_id,
        'X-Runbox-Delivery': d.id,
        'X-Runbox-Signature': signatureHeader(d.signing_secret, body, Math.floor(Date.now() / 1000)),
      },
    });
    callbackAttempts.inc({ outcome: outcome.ok ? 'delivered' : outcome.permanent ? 'refused' : 'failed' });
    try {
      const ours = await settleDelivery(db, id, d.id, outcome, policy);
      if (!ours) dlog.warn('delivery lease was lost before its outcome was recorded');
      else if (outcome.ok) dlog.info({ status: outcome.status }, 'callback delivered');
      else dlog.warn({ status: outcome.status, err: outcome.error, permanent: outcome.permanent }, 'callback attempt failed');
    } catch (err) {
      // The lease runs out and the delivery is attempted again: at-least-once.
      dlog.error({ err: (err as Error).message }, 'could not record a callback outcome');
    }
  };

  let timer: NodeJS.Timeout | undefined;
  const outbox = startOutboxLoop({
    waker,
    log,
    outbox: 'callback',
    pass: async (reached) => {
      await buryExhausted(db, policy.maxAttempts);
      const free = concurrency - inFlight.size;
      const claimed = free > 0 ? await claimDeliveries(db, id, free, leaseMs, policy.maxAttempts) : [];
      reached();
      for (const d of claimed) {
        const p: Promise<void> = deliver(d).finally(() => {
          inFlight.delete(p);
          waker.kick();
        });
        inFlight.add(p);
      }
      if (claimed.length > 0 && inFlight.size < concurrency) return true;
      // Sleep until woken or until the next retry falls due.
      const due = inFlight.size < concurrency ? await nextDueAt(db) : null;
      if (due) {
        const ms = Math.max(0, new Date(due).getTime() - Date.now()) + 5;
        clearTimeout(timer);
        timer = setTimeout(() => waker.kick(), ms);
      }
      return false;
    },
    stopped: async () => {
      // After the loop's last pass, so a retry timer that pass set is cleared too.
      clearTimeout(timer);
      // Attempts in flight end within their timeout; their outcome is recorded.
      await Promise.all([...inFlight]);
      log.info('callback sender stopped');
    },
  });

  log.info({ concurrency }, 'callback sender started');
  if (config.RUNBOX_CALLBACK_ALLOW_PRIVATE) {
    // Meant for local use and tests: on a public host it lets any key's callback URL reach this network.
    log.warn(
      { RUNBOX_CALLBACK_ALLOW_PRIVATE: true },
      'RUNBOX_CALLBACK_ALLOW_PRIVATE is set: callbacks may go to loopback, private and metadata addresses (local use and tests only)',
    );
  }
  return { id, stop: outbox.stop };
}
