import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { PROJECT_ROOT } from '../../src/util/paths.js';

// The previous release, built from this repository's history: the code just before the
// newest change of the schema (the parent of the newest commit that added a migration,
// along the first parents: a merge that brings migrations counts as adding them, and a
// branch's own intermediate commits, whose migrations may have been renumbered at the
// merge, are never taken for a release),
// or the commit RUNBOX_PREVIOUS_RELEASE names. It is exported with `git archive` into a
// directory of the temporary directory named by its commit, reuses this checkout's
// node_modules when its dependencies are the same (else `npm ci` there), and is built
// with its own `npm run build`; a later run finds it built.

export interface PreviousRelease {
  commit: string;
  dir: string;
  /** Its migrations, by name. */
  migrations: string[];
  /** Whether it runs against a schema a newer release migrated (src/db/migrate.ts newerMigrations). */
  toleratesNewerSchema: boolean;
}

async function git(...args: string[]): Promise<string> {
  return (await execa('git', ['-C', PROJECT_ROOT, ...args])).stdout.trim();
}

/** The commit of the previous release, or why there is none here (a shallow clone, no git). */
export async function previousReleaseCommit(): Promise<{ commit: string } | { missing: string }> {
  try {
    const named = process.env.RUNBOX_PREVIOUS_RELEASE;
    if (named) return { commit: await git('rev-parse', '--verify', `${named}^{commit}`) };
    const newest = await git('log', '-1', '--first-parent', '--format=%H', '--diff-filter=A', '--', 'src/db/migrations/');
    if (!newest) return { missing: 'no commit in this history added a migration' };
    return { commit: await git('rev-parse', '--verify', `${newest}^`) };
  } catch (err) {
    return { missing: `the history does not reach the previous release (${(err as Error).message.split('\n')[0]}); a full clone is needed` };
  }
}

const deps = (dir: string) => {
  const p = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies?: object; devDependencies?: object };
  return JSON.stringify([p.dependencies ?? {}, p.devDependencies ?? {}]);
};

/** The release in `dir` gets its packages: this checkout's, linked, when its dependencies are
 *  the same, else its own (npm ci); nothing when the ones it has still resolve. */
async function ensureModules(dir: string, say: (line: string) => void): Promise<void> {
  const modules = join(dir, 'node_modules');
  if (existsSync(modules)) return;
  rmSync(modules, { force: true }); // a link whose target is gone
  if (deps(dir) === deps(PROJECT_ROOT) && existsSync(join(PROJECT_ROOT, 'node_modules'))) {
    symlinkSync(join(PROJECT_ROOT, 'node_modules'), modules);
  } else {
    say(`its dependencies differ from this checkout's: npm ci in ${dir}`);
    await execa('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir });
  }
}

/** Exports and builds the previous release (once per commit); logs its steps through `say`. */
export async function buildPreviousRelease(commit: string, say: (line: string) => void = () => {}): Promise<PreviousRelease> {
  const dir = join(tmpdir(), `runbox-release-${commit.slice(0, 12)}`);
  if (!existsSync(join(dir, '.built'))) {
    const work = `${dir}.tmp-${process.pid}`;
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    try {
      const archive = join(work, '.source.tar');
      await execa('git', ['-C', PROJECT_ROOT, 'archive', '--format=tar', '-o', archive, commit]);
      await execa('tar', ['-xf', archive, '-C', work]);
      rmSync(archive);
      await ensureModules(work, say);
      say(`building ${commit.slice(0, 12)} in ${dir}`);
      await execa('npm', ['run', '-s', 'build'], { cwd: work });
      await execa('touch', [join(work, '.built')]);
      rmSync(dir, { recursive: true, force: true });
      renameSync(work, dir);
    } catch (err) {
      rmSync(work, { recursive: true, force: true });
      throw err;
    }
  }
  // A build kept from an earlier run may have linked the node_modules of a checkout since removed.
  await ensureModules(dir, say);
  const migrations = readdirSync(join(dir, 'src/db/migrations'))
    .filter((f) => /^\d{4}_.*\.ts$/.test(f))
    .map((f) => f.replace(/\.ts$/, ''))
    .sort();
  const toleratesNewerSchema = readFileSync(join(dir, 'src/db/migrate.ts'), 'utf8').includes('newerMigrations');
  return { commit, dir, migrations, toleratesNewerSchema };
}
