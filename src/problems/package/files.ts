import { PROBLEM_LIMITS } from '../../limits.js';
import type { DataSource } from '../draft.js';
import { parsePackageYaml } from '../yaml.js';
import type { ZipFileEntry } from '../zip.js';
import { refuse } from './report.js';

// A package's files by path (its top-level directory taken off), and reading its small
// files of its own: problem.yaml, testdata.yaml and the like, bounded before inflating.

export type PackageFiles = Map<string, ZipFileEntry>;

/** A small file of the package's own (problem.yaml, .timelimit), refused from its declared size before it is inflated. */
export async function metadataFile(file: ZipFileEntry, name: string): Promise<Buffer> {
  const max = PROBLEM_LIMITS.metadataFileMaxBytes;
  if (file.size > max) throw refuse(`${name} is ${file.size} bytes; the package's ${name} may have at most ${max}`);
  return file.read();
}

/** A YAML file of the package as a mapping ({} when empty), or null when absent; `transform` rewrites its text first (constants). */
export async function yamlMapping(files: PackageFiles, path: string, transform?: (text: string) => string): Promise<Record<string, unknown> | null> {
  const file = files.get(path);
  if (!file) return null;
  let bytes = await metadataFile(file, path);
  if (transform) bytes = Buffer.from(transform(bytes.toString('utf8')), 'utf8');
  const value = parsePackageYaml(bytes, path);
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw refuse(`${path} must be a mapping`);
  return value as Record<string, unknown>;
}

export const source = (f: ZipFileEntry): DataSource => ({ size: f.size, key: `crc32:${f.crc32}:${f.size}`, read: () => f.read() });
