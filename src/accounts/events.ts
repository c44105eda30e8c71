// What happened to accounts and keys, for the service's log: sign-ups, log-ins and
// failed log-ins, key changes. The domain functions announce them here, whoever
// called them (portal, admin API); each API process subscribes its logger
// (src/api/server.ts). Events carry ids, addresses and names, never a key, secret or
// password.

export type AccountEvent =
  | { event: 'account created'; account: string; email: string | null }
  | { event: 'log-in'; email: string; ip: string }
  | { event: 'log-in failed'; email: string; ip: string }
  | { event: 'key created'; account: string; key_id: string; kind: string }
  | { event: 'key changed'; account: string; key_id: string; fields: string[] }
  | { event: 'key revoked'; account: string; key_id: string }
  | { event: 'key signing secret rolled'; account: string; key_id: string };

type Listener = (e: AccountEvent) => void;

const listeners = new Set<Listener>();

/** Subscribes; returns the unsubscribe function. */
export function onAccountEvent(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function announce(e: AccountEvent): void {
  for (const listener of listeners) {
    try {
      listener(e);
    } catch {
      // A failing log must not fail the change it reports.
    }
  }
}
