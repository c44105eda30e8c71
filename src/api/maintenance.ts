import type { Db } from '../db/connect.js';

// Maintenance mode: the settings row name='maintenance' (value true/false), switched by
// `runbox-admin maintenance on|off`. Each API process re-reads it at most once per
// cache period, so switching it reaches every process within that period.

const SETTING = 'maintenance';

export async function readMaintenance(db: Db): Promise<boolean> {
  const row = await db.selectFrom('settings').select('value').where('name', '=', SETTING).executeTakeFirst();
  return row?.value === true;
}

export async function setMaintenance(db: Db, on: boolean): Promise<void> {
  await db
    .insertInto('settings')
    .values({ name: SETTING, value: JSON.stringify(on) })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: JSON.stringify(on), updated_at: new Date() }))
    .execute();
}

export class MaintenanceFlag {
  private value = false;
  private readAt = -Infinity;
  private pending: Promise<boolean> | undefined;

  constructor(
    private readonly db: Db,
    private readonly cacheMs = 1000,
  ) {}

  async isOn(): Promise<boolean> {
    if (performance.now() - this.readAt < this.cacheMs) return this.value;
    // One read at a time per process, however many requests arrive together.
    this.pending ??= readMaintenance(this.db).then(
      (on) => {
        this.value = on;
        this.readAt = performance.now();
        this.pending = undefined;
        return on;
      },
      (err: unknown) => {
        this.pending = undefined;
        throw err;
      },
    );
    return this.pending;
  }
}
