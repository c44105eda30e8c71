import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.js';

// Migrations in order. A new migration is a new file, added here; a shipped one never changes.
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
};
