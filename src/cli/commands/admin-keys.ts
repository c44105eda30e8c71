import { createAdminKey, listAdminKeys, revokeAdminKey } from '../../accounts/admin-keys.js';
import { type Command, Listed, pageHelp, pageOptions, pageRequest, requireString } from '../command.js';
import { asUsage, numericId } from './account-input.js';

// Admin keys for /api/admin/* and the API's /metrics. The key is shown once.

export const adminKeyCommands: Command[] = [
  {
    name: 'admin-key create',
    summary: 'Create an admin key (printed once; only its hash is stored).',
    help: '  --label TEXT   who or what uses it (required)',
    options: { label: { type: 'string' } },
    needsDb: true,
    run: (ctx) => asUsage(() => createAdminKey(ctx.db, requireString(ctx, 'label'))),
  },
  {
    name: 'admin-key list',
    summary: 'List admin keys, newest first (prefix, label, created, revoked).',
    help: pageHelp('admin keys', 100),
    options: pageOptions,
    needsDb: true,
    run: async (ctx) => new Listed(await listAdminKeys(ctx.db, pageRequest(ctx, 100)), 'admin keys'),
  },
  {
    name: 'admin-key revoke',
    summary: 'Revoke an admin key at once.',
    help: '  --id N   the admin key id (from admin-key list)',
    options: { id: { type: 'string' } },
    needsDb: true,
    run: (ctx) => asUsage(() => revokeAdminKey(ctx.db, numericId(ctx, 'id'))),
  },
];
