import nodemailer from 'nodemailer';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { Logger } from '../log.js';
import { emailsSent } from '../metrics/registry.js';
import type { RetryPolicy } from '../queue/outbox-backoff.js';
import { outboxWaker, startOutboxLoop, workerId } from '../queue/outbox-loop.js';
import { claimEmails } from './claim.js';
import { MAIL_CHANNEL } from './enqueue.js';
import { usageMessage, type MailMessage } from './message.js';
import { buryExhaustedEmails, markFailed, markSent } from './settle.js';

// The usage mailer, part of the sender component: claims unsent rows of the outbox,
// sends each over SMTP (RUNBOX_SMTP_URL), marks it sent, or puts it back with the
// callbacks' backoff until its last attempt (RUNBOX_MAIL_MAX_ATTEMPTS) leaves it dead.
// Without SMTP it sends nothing: the emails stay in the outbox and each is
// logged once, so an operator can configure SMTP later and they go out then.

export type SendMail = (m: MailMessage & { from: string }) => Promise<void>;

export interface MailerDeps {
  db: Db;
  config: Config;
  log: Logger;
  /** Replaces the SMTP transport (never used in production). */
  send?: SendMail;
}

export interface Mailer {
  readonly id: string;
  stop(): Promise<void>;
}

const BATCH = 10;
const LEASE_MS = 120_000;

export function smtpSender(url: string): SendMail {
  const transport = nodemailer.createTransport(url);
  return async (m) => {
    await transport.sendMail({ from: m.from, to: m.to, subject: m.subject, text: m.text });
  };
}

export async function startMailer(deps: MailerDeps): Promise<Mailer> {
  const { db, config } = deps;
  const id = workerId('mailer');
  const log = deps.log.child({ mailer: id });
  const policy: RetryPolicy = { maxAttempts: config.RUNBOX_MAIL_MAX_ATTEMPTS, backoffMs: config.RUNBOX_MAIL_BACKOFF_MS };
  const send = deps.send ?? (config.RUNBOX_SMTP_URL ? smtpSender(config.RUNBOX_SMTP_URL) : undefined);
  const waker = await outboxWaker(config, MAIL_CHANNEL, log, 'mail');
  const logged = new Set<string>();

  const outbox = startOutboxLoop({
    waker,
    log,
    outbox: 'usage email',
    pass: async () => {
      if (!send) {
        // No SMTP: report what waits, once per email and process.
        const waiting = await db
          .selectFrom('usage_emails')
          .select(['id', 'to_address', 'account_id', 'key_id', 'month', 'threshold'])
          .where('state', '=', 'pending')
          .orderBy('id')
          .limit(100)
          .execute();
        for (const e of waiting) {
          if (logged.has(e.id)) continue;
          logged.add(e.id);
          log.info({ email: e.id, to: e.to_address, account: e.account_id, key: e.key_id, month: e.month, threshold: e.threshold }, 'usage email kept in the outbox (RUNBOX_SMTP_URL is not set)');
        }
      } else {
        await buryExhaustedEmails(db, policy.maxAttempts);
        const claimed = await claimEmails(db, id, BATCH, LEASE_MS, policy.maxAttempts);
        for (const e of claimed) {
          const elog = log.child({ email: e.id, account: e.account_id, key: e.key_id, threshold: e.threshold });
          try {
            await send({ ...usageMessage(e), from: config.RUNBOX_MAIL_FROM });
            emailsSent.inc();
            if (await markSent(db, id, e.id)) elog.info({ to: e.to_address }, 'usage email sent');
            else elog.warn('usage email sent but its lease was gone');
          } catch (err) {
            const message = (err as Error).message;
            const state = await markFailed(db, id, e.id, message, policy);
            if (state === 'dead') elog.error({ err: message, attempt: e.attempts }, 'usage email not sent after its last attempt; dead (runbox-admin email resend)');
            else elog.warn({ err: message, attempt: e.attempts, lost: state === null }, 'usage email not sent; will retry');
          }
        }
        // A full batch: more may be waiting.
        return claimed.length === BATCH;
      }
      return false;
    },
    stopped: () => log.info('usage mailer stopped'),
  });

  log.info({ smtp: Boolean(send) }, 'usage mailer started');
  return { id, stop: outbox.stop };
}
