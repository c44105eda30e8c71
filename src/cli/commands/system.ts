import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { catalogue, defaultImages } from '../../compilers/catalogue.js';
import { loadConfig } from '../../config.js';
import { connect } from '../../db/connect.js';
import { migrate } from '../../db/migrate.js';
import { NATIVE_BUILD_DIR } from '../../util/paths.js';
import type { Command } from '../command.js';
import { GENERATED_TABLES, tableInSync, writeTable } from '../readme-tables.js';

function onPath(name: string): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v "$1"', 'sh', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix: string;
}

async function doctorChecks(): Promise<Check[]> {
  const config = loadConfig();
  const checks: Check[] = [];
  const handle = connect(config.RUNBOX_DATABASE_URL, { max: 1, applicationName: 'runbox-doctor' });
  try {
    const row = await handle.db
      .selectFrom('kysely_migration' as never)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirst();
    checks.push({ name: 'database', ok: true, detail: `reachable, ${String(row?.n ?? 0)} migrations applied`, fix: '' });
  } catch (err) {
    checks.push({ name: 'database', ok: false, detail: (err as Error).message, fix: 'run `npm run setup` (or set RUNBOX_DATABASE_URL)' });
  } finally {
    await handle.close();
  }
  const launchers = ['bwrap', 'nsjail'].filter(onPath);
  checks.push({
    name: 'launcher',
    ok: launchers.length > 0,
    detail: launchers.length ? `found ${launchers.join(', ')}` : 'neither bwrap nor nsjail on PATH',
    fix: 'apt-get install bubblewrap (run `npm run setup`)',
  });
  const nativeOk = ['runbox-forkserver', 'init', 'runbox-seccomp'].every((f) => existsSync(join(NATIVE_BUILD_DIR, f)));
  checks.push({ name: 'native helpers', ok: nativeOk, detail: nativeOk ? 'built' : 'native/build is incomplete', fix: 'run `npm run build`' });
  for (const image of defaultImages(catalogue(config.RUNBOX_RECIPES_DIR))) {
    const ok = existsSync(join(config.RUNBOX_IMAGES_DIR, image, 'manifest.json'));
    checks.push({ name: `image ${image}`, ok, detail: ok ? 'installed' : 'not installed', fix: `runbox-admin image build ${image}` });
  }
  return checks;
}

export const systemCommands: Command[] = [
  {
    name: 'migrate',
    summary: 'Apply database migrations (idempotent), then build the indexes made without blocking writes.',
    needsDb: true,
    run: async ({ db }) => migrate(db),
  },
  {
    name: 'doctor',
    summary: 'Check that this host is set up: database, launcher, native helpers, default images.',
    help: '  --for-tests   print a short report and exit non-zero when anything is missing',
    options: { 'for-tests': { type: 'boolean' } },
    run: async ({ values }) => {
      const checks = await doctorChecks();
      const bad = checks.filter((c) => !c.ok);
      if (values['for-tests']) {
        for (const c of checks) process.stderr.write(`${c.ok ? 'ok     ' : 'MISSING'} ${c.name}: ${c.detail}${c.ok ? '' : ` -> ${c.fix}`}\n`);
        if (bad.length) throw new Error(`${bad.length} check(s) failed; run \`npm run setup\` first`);
        return undefined;
      }
      // A fix is advice for what failed; next to a passing check it reads as a to-do.
      return { ok: bad.length === 0, checks: checks.map(({ fix, ...c }) => (c.ok ? c : { ...c, fix })) };
    },
  },
  ...(['config', 'limits', 'libraries', 'verdicts'] as const).map(
    (what): Command => ({
      name: `${what} docs`,
      summary: `Print the ${what === 'config' ? 'configuration' : what} table (Markdown) of ${GENERATED_TABLES[`${what}-table`].file}; --write puts it there, --check fails when the file is out of date.`,
      help: 'options:\n  --write   replace the table between its markers in the file\n  --check   exit 1 when the file\'s table differs from the code',
      options: { write: { type: 'boolean' }, check: { type: 'boolean' } },
      run: async ({ values }) => {
        const name = `${what}-table` as const;
        const file = GENERATED_TABLES[name].file;
        if (values.write) {
          process.stdout.write(writeTable(name) ? `${file}: table updated\n` : `${file}: table already up to date\n`);
        } else if (values.check) {
          if (!tableInSync(name)) throw new Error(`${file}: the ${what} table is out of date; run \`runbox-admin ${what} docs --write\``);
          process.stdout.write(`${file}: table up to date\n`);
        } else {
          process.stdout.write(GENERATED_TABLES[name].render() + '\n');
        }
        return undefined;
      },
    }),
  ),
];
