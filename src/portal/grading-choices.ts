import type { Db } from '../db/connect.js';
import { listKeys } from '../accounts/keys.js';
import { listProblems } from '../problems/store.js';
import type { FilterChoices } from './views/grading.js';

/** What the grading filters offer: the account's problems and keys. */
export async function filterChoices(db: Db, accountId: string): Promise<FilterChoices> {
  const [{ problems }, keys] = await Promise.all([listProblems(db, accountId), listKeys(db, accountId)]);
  return { problems: problems.map((p) => ({ id: p.id, name: p.name })), keys: keys.map((k) => ({ id: k.id, key_prefix: k.key_prefix, app_name: k.app_name })) };
}
