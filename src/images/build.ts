import { execa } from 'execa';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readManifest, type ImageManifest } from '../compilers/availability.js';
import { imagePackages, type ImageRecipe } from '../compilers/recipe.js';
import { auditTree, cleanTree } from './clean.js';
import { installDotnetSdk } from './dotnet.js';
import { addLinks } from './links.js';
import { writeManifest } from './manifest.js';
import { mountsUnder } from './mounts.js';
import { probeLibraryVersion, probeVersion } from './probe.js';
import { builtFrom, recipeHash } from './recipes.js';
import { installStaging } from './store.js';
import { treeDigest, treeSize } from './tree.js';
import { makeWorkDir, removeStaleWorkDirs, removeWorkTree, type WorkDir } from './work-dirs.js';

// Builds one image from its recipe: debootstrap a minimal Debian tree with the recipe's
// packages, clean it (clean.ts), add the recipe's links (links.ts), probe each compiler's and library's real version inside it, write the
// manifest and install it atomically (store.ts).

export interface BuildOptions {
  imagesDir: string;
  /** The Debian mirror (RUNBOX_DEBIAN_MIRROR, else the host's): asked only when something is built. */
  mirror: () => string;
  /** Rebuild even when the installed image was built from this very recipe. */
  force?: boolean;
  /** Progress lines (stderr in the CLI). */
  log: (line: string) => void;
}

export interface BuildResult {
  image: string;
  status: 'built' | 'up to date';
  recipeHash: string;
  digest: string;
  compilers: ImageManifest['compilers'];
  sizeBytes?: number;
  seconds?: number;
  /** Compilers (or one of their libraries) whose recipe `version` differs from what the image really has. */
  versionMismatches?: { id: string; library?: string; recipe: string; image: string }[];
}

/** Work trees and debootstrap processes of builds under way, so that an interrupted build can remove its own. */
const workTrees = new Set<WorkDir>();
const children = new Set<ReturnType<typeof execa>>();

/** Stops the builds under way and removes their work trees (the CLI calls it on SIGINT/SIGTERM). */
export async function abandonBuilds(log: (line: string) => void): Promise<void> {
  // debootstrap is a shell script running wget, dpkg and friends: stop its whole process
  // group, or they go on writing into the tree while it is being removed.
  for (const child of children) {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGTERM');
    } catch {
      child.kill('SIGTERM');
    }
  }
  await Promise.allSettled([...children]);
  for (const dir of workTrees) {
    await removeWorkTree(dir.path).then(dir.done, (e: Error) => log(`could not remove ${dir.path}: ${e.message}`));
  }
  workTrees.clear();
}

async function debootstrap(recipe: ImageRecipe, rootfs: string, mirror: string, lockFd: number, log: (line: string) => void): Promise<void> {
  const args = ['--variant=minbase'];
  const packages = imagePackages(recipe);
  if (packages.length) args.push(`--include=${packages.join(',')}`);
  // debootstrap takes no `--`: the positionals are checked instead (suite is one of the
  // recipe schema's literals, rootfs is absolute).
  if (!/^(https?|file):\/\//.test(mirror)) throw new Error(`RUNBOX_DEBIAN_MIRROR must be an http(s):// or file:// URL, not ${JSON.stringify(mirror)}`);
  args.push(recipe.suite, rootfs, mirror);
  log(`debootstrap ${args.join(' ')}`);
  // The child's output is progress: it goes to our log (stderr), never to the JSON on stdout.
  // It is handed the work directory's lock (fd 3): should this process be killed,
  // debootstrap and its children go on writing into the tree, which must then count as
  // in use until they are gone too.
  const child = execa('debootstrap', args, { stdio: ['ignore', 'pipe', 'pipe', lockFd] as unknown as ['ignore', 'pipe', 'pipe'], reject: false, all: true, buffer: false, detached: true });
  children.add(child);
  void child.finally(() => children.delete(child));
  const tail: string[] = [];
  for await (const line of child.iterable({ from: 'all' })) {
    log(`  ${line}`);
    tail.push(line);
    if (tail.length > 25) tail.shift();
  }
  const result = await child;
  if (result.exitCode !== 0) {
    const logFile = await readFile(join(rootfs, 'debootstrap', 'debootstrap.log'), 'utf8').catch(() => '');
    throw new Error(`debootstrap failed (exit ${result.exitCode}):\n${(logFile ? logFile.split('\n').slice(-25) : tail).join('\n')}`);
  }
}

export async function buildImage(recipe: ImageRecipe, opts: BuildOptions): Promise<BuildResult> {
  // What killed builds and imports left behind goes first, whatever this build does.
  await removeStaleWorkDirs(opts.imagesDir, opts.log);
  const hash = recipeHash(recipe);
  const installed = readManifest(opts.imagesDir, recipe.image);
  if (!opts.force && installed && builtFrom(installed.recipeHash, recipe)) {
    opts.log(`${recipe.image}: up to date`);
    return { image: recipe.image, status: 'up to date', recipeHash: installed.recipeHash, digest: installed.digest, compilers: installed.compilers };
  }

  const started = Date.now();
  const log = (line: string) => opts.log(`${recipe.image}: ${line}`);
  const mirror = opts.mirror();
  const work = await makeWorkDir(opts.imagesDir, '.build-', recipe.image);
  const staging = work.path;
  workTrees.add(work);
  const rootfs = join(staging, 'rootfs');
  try {
    await mkdir(rootfs);
    await debootstrap(recipe, rootfs, mirror, work.lock.fd, log);
    if (mountsUnder(rootfs).length) throw new Error(`debootstrap left mounts inside ${rootfs}: ${mountsUnder(rootfs).join(', ')}`);
    if (recipe.dotnetSdk) await installDotnetSdk(rootfs, log);

    log('cleaning (setuid/setgid bits, device nodes, docs, caches)');
    const cleaned = await cleanTree(rootfs);
    if (cleaned.strippedSetid.length) log(`stripped setuid/setgid from ${cleaned.strippedSetid.length} files: ${cleaned.strippedSetid.join(', ')}`);
    if (cleaned.droppedCapabilities.length) log(`dropped file capabilities of ${cleaned.droppedCapabilities.join(', ')}`);
    if (recipe.links) await addLinks(rootfs, recipe.links, log);

    const compilers: ImageManifest['compilers'] = {};
    const versionMismatches: NonNullable<BuildResult['versionMismatches']> = [];
    for (const [id, compiler] of Object.entries(recipe.compilers)) {
      const { version } = await probeVersion(rootfs, compiler);
      compilers[id] = { version };
      log(`${id}: ${version}`);
      if (version !== compiler.version) {
        versionMismatches.push({ id, recipe: compiler.version, image: version });
        log(`WARNING ${id}: the recipe says version ${compiler.version}, the image has ${version}; fix rootfs/${recipe.image}.json`);
      }
      if (!compiler.libraries) continue;
      const libraries: Record<string, string> = {};
      for (const [name, library] of Object.entries(compiler.libraries)) {
        const { version: found } = await probeLibraryVersion(rootfs, compiler, library);
        libraries[name] = found;
        if (found !== library.version) {
          versionMismatches.push({ id, library: name, recipe: library.version, image: found });
          log(`WARNING ${id} ${name}: the recipe says version ${library.version}, the image has ${found}; fix rootfs/${recipe.image}.json`);
        }
      }
      compilers[id] = { version, libraries };
      log(`${id} libraries: ${Object.entries(libraries).map(([name, v]) => `${name} ${v}`).join(', ')}`);
    }
    // Probes may leave files in /tmp or the home directory; the mount points must be empty.
    await cleanTree(rootfs);
    const problems = await auditTree(rootfs);
    if (problems.length) throw new Error(`image tree is not clean: ${problems.slice(0, 10).join('; ')}`);

    log('computing digest');
    const digest = await treeDigest(rootfs);
    const manifest: ImageManifest = {
      image: recipe.image,
      suite: recipe.suite,
      recipeHash: hash,
      digest,
      builtAt: new Date().toISOString(),
      compilers,
    };
    await writeManifest(staging, manifest);
    await chmod(staging, 0o755);
    const sizeBytes = await treeSize(rootfs);
    await installStaging(opts.imagesDir, recipe.image, staging);
    await work.done();
    const seconds = Math.round((Date.now() - started) / 100) / 10;
    log(`installed (${(sizeBytes / 1e6).toFixed(0)} MB, ${seconds} s)`);
    return { image: recipe.image, status: 'built', recipeHash: hash, digest, compilers, sizeBytes, seconds, versionMismatches };
  } catch (err) {
    await removeWorkTree(staging).then(work.done, (e: Error) => log(`could not remove ${staging}: ${e.message}`));
    throw err;
  } finally {
    workTrees.delete(work);
  }
}
