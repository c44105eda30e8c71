import type { Db } from '../db/connect.js';
import { listen, type Listener } from '../queue/listen.js';
import { findKeyByHash, type KeyContext } from './accounts.js';

// API keys as each API process last read them, so that a request does not cost a key
// lookup. Every change of an api_keys row (revocation, a new limit) notifies
// runbox_keys with the key's hash in the changing transaction (migration 0011), and
// the entry goes as soon as the notification arrives; entries also expire after a
// short time, and nothing is cached while the notifications are not being received.
// Admission checks revocation again under its own lock, so a key revoked a moment ago
// never gets a run stored.

export const KEYS_CHANNEL = 'runbox_keys';

export interface KeyCache {
  /** The key with this hash, from the cache or the database. */
  find(keyHash: Buffer): Promise<KeyContext | undefined>;
  /** Drops the cached copy (the caller just changed or found the key changed). */
  forget(keyHash: Buffer): void;
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface KeyCacheOptions {
  db: Db;
  /** Where to LISTEN; null: nothing is cached (every lookup reads the key). */
  url: string | null;
  /** How long an entry is trusted even without a notification. */
  ttlMs?: number;
  /** Entries kept at most (least recently stored go first). */
  maxEntries?: number;
  /** Called with the key hash (hex) of each change notified. */
  onInvalidate?: (keyHashHex: string) => void;
}

export function createKeyCache(options: KeyCacheOptions): KeyCache {
  const ttlMs = options.ttlMs ?? 2000;
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, { key: KeyContext | undefined; expiresAt: number }>();
  // Bumped on every invalidation, so a lookup that started before one does not store a stale answer.
  let generation = 0;
  const listener: Listener = listen({
    url: options.url,
    channel: KEYS_CHANNEL,
    onNotify: (hashHex) => {
      generation++;
      entries.delete(hashHex);
      options.onInvalidate?.(hashHex);
    },
    onLost: () => {
      generation++;
      entries.clear();
    },
  });

  return {
    find: async (keyHash) => {
      const hex = keyHash.toString('hex');
      const hit = entries.get(hex);
      if (hit && hit.expiresAt > performance.now() && listener.listening) return hit.key;
      const seen = generation;
      const key = await findKeyByHash(options.db, keyHash);
      if (listener.listening && seen === generation) {
        entries.delete(hex);
        entries.set(hex, { key, expiresAt: performance.now() + ttlMs });
        if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
      }
      return key;
    },
    forget: (keyHash) => {
      generation++;
      entries.delete(keyHash.toString('hex'));
    },
    ready: () => listener.ready(),
    close: () => listener.close(),
  };
}
