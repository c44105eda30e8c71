import { userInfo } from 'node:os';
import { parseIntoClientConfig } from 'pg-connection-string';
import type pg from 'pg';

/**
 * pg client settings for a RUNBOX_DATABASE_URL. Over the local socket with peer
 * authentication the role is this OS user, even where $USER is unset (systemd, CI).
 */
export function clientConfig(url: string): pg.ClientConfig {
  const parsed = parseIntoClientConfig(url);
  return { ...parsed, user: parsed.user || process.env.PGUSER || userInfo().username } as pg.ClientConfig;
}
