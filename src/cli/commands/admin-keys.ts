import { createAdminKey, listAdminKeys, revokeAdminKey } from '../../accounts/admin-keys.js';
import { AccountInputError } from '../../accounts/errors.js';
import { type Command, requireString, UsageError } from '../command.js';

// Admin keys for /api/admin/* and the API's /metrics. The key is shown once.

export const adminKeyCommands: Command[] = [
  {
    name: 'admin-key create',
    summary: 'Create an admin key (printed once; only its hash is stored).',
    help: '  --label TEXT   who or what uses it (required)',
    options: { label: { type: 'string' } },
    needsDb: true,
    run: async (ctx) => {
      try {
        return await createAdminKey(ctx.db, requireString(ctx, 'label'));
      } catch (err) {
        if (err instanceof AccountInputError) throw new UsageError(err.message);
        throw err;
      }
    },
  },
  {
    name: 'admin-key list',
    summary: 'List admin keys (prefix, label, created, revoked).',
    needsDb: true,
    run: async ({ db }) => listAdminKeys(db),
  },
  {
    name: 'admin-key revoke',
    summary: 'Revoke an admin key at once.',
    help: '  --id N   the admin key id (from admin-key list)',
    options: { id: { type: 'string' } },
    needsDb: true,
    run: async (ctx) => {
      const id = requireString(ctx, 'id');
      if (!/^\d{1,18}$/.test(id)) throw new UsageError('--id must be a numeric id');
      try {
        return await revokeAdminKey(ctx.db, id);
      } catch (err) {
        if (err instanceof AccountInputError) throw new UsageError(err.message);
        throw err;
      }
    },
  },
];
