import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { claim, heartbeat, markStopped } from '../../src/queue/index.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { enqueue, expireLease, makeAccount, stateOf } from '../helpers/queue-rows.js';

const run = promisify(execFile);

describe('runbox-admin queue', () => {
  let t: TestDatabase;
  before(async () => {
    t = await freshDatabase('queue_cli');
  });
  after(async () => {
    await t?.drop();
  });

  const admin = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [join(PROJECT_ROOT, 'dist/src/cli/admin.js'), ...args], {
      env: { ...process.env, RUNBOX_DATABASE_URL: t.url },
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  };

  it('status shows submissions by state and runners with their running jobs; reap requeues expired leases', async () => {
    const acct = await makeAccount(t.db, { running: 5 });
    const first = await enqueue(t.db, acct, { createdAt: new Date(Date.now() - 60_000), runAt: new Date(Date.now() - 60_000) });
    const second = await enqueue(t.db, acct);
    const third = await enqueue(t.db, acct);
    await heartbeat(t.db, { id: 'cli-runner', hostname: 'h', slots: 2, launcher: 'bwrap' }, 60);
    await claim(t.db, 'cli-runner', 2, 60);

    // A runner that has stopped is counted, and listed only with --all.
    await heartbeat(t.db, { id: 'gone-runner', hostname: 'h', slots: 1, launcher: 'bwrap' }, 60);
    await markStopped(t.db, 'gone-runner');

    const status = await admin('queue', 'status');
    expect(status.submissions).to.deep.equal({ queued: 1, running: 2, finished: 0, failed: 0 });
    expect((status.oldest_queued as { id: string }).id).to.equal(third);
    expect(status.runners).to.have.length(1);
    expect((status.runners as Record<string, unknown>[])[0]).to.include({ id: 'cli-runner', slots: 2, running: 2 });
    expect(status.stopped_runners).to.equal(1);
    const all = await admin('queue', 'status', '--all');
    expect((all.runners as { id: string }[]).map((r) => r.id)).to.deep.equal(['cli-runner', 'gone-runner']);

    await expireLease(t.db, first);
    expect(await admin('queue', 'reap')).to.deep.equal({ requeued: [first], failed: [] });
    expect((await stateOf(t.db, first)).state).to.equal('queued');
    expect((await stateOf(t.db, second)).state).to.equal('running');
  });
});
