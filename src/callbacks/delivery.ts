// What the sender works on: one row of callback_deliveries, claimed under a lease.

/** Notified with the delivery id when a delivery is enqueued (by the trigger of migration 0002) or redelivered. */
export const CALLBACKS_CHANNEL = 'runbox_callbacks';

export interface ClaimedDelivery {
  id: string;
  submission_id: string;
  url: string;
  /** POST for the key's redirect URL; a submission's own target may ask for PUT (Judge0). */
  method: 'POST' | 'PUT';
  /** How the body is rendered from the payload (src/callbacks/formats.ts). */
  format: string;
  payload: unknown;
  /** The submission's extra_params as the client sent it (JSON text), echoed verbatim. */
  extra_params_json: string | null;
  /** This attempt's number, from 1. */
  attempts: number;
  /** The key's signing secret, read at send time (never copied into the outbox). */
  signing_secret: string;
  /** The key the result goes to, whose problems' feedback it is under (src/problems/feedback.ts). */
  key_account_id: string;
  key_kind: 'api' | 'widget';
  key_student: boolean;
}

/** How one attempt went. */
export type AttemptOutcome =
  | { ok: true; status: number }
  | { ok: false; status: number | null; error: string; permanent: boolean };
