import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// The Debian mirror image builds bootstrap from, when RUNBOX_DEBIAN_MIRROR is unset:
// the one the host's own apt uses, so a host behind a local mirror or a caching proxy
// (apt-cacher-ng and the like, written as the mirror's URL) builds through it too.
// Both source formats are read: one-line (sources.list, sources.list.d/*.list) and
// deb822 (sources.list.d/*.sources), in apt's order.

export interface AptSource {
  /** deb or deb-src. */
  type: string;
  uri: string;
  suites: string[];
  components: string[];
  /** The file it was read from, relative to the root. */
  file: string;
}

/** Debian's release names and aliases: a source for one of these serves the Debian archive itself. */
const DEBIAN_SUITES = new Set([
  'buster',
  'bullseye',
  'bookworm',
  'trixie',
  'forky',
  'duke',
  'sid',
  'oldoldstable',
  'oldstable',
  'stable',
  'testing',
  'unstable',
]);

function oneLineSources(text: string, file: string): AptSource[] {
  const out: AptSource[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) continue;
    // deb [opt=value ...] uri suite [component ...]
    const m = /^(deb|deb-src)\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)((?:\s+\S+)*)$/.exec(line);
    if (!m) continue;
    out.push({ type: m[1]!, uri: m[2]!, suites: [m[3]!], components: m[4]!.trim().split(/\s+/).filter(Boolean), file });
  }
  return out;
}

function deb822Sources(text: string, file: string): AptSource[] {
  const out: AptSource[] = [];
  // Stanzas are separated by blank lines; a line starting with space or tab continues the field.
  for (const stanza of text.replace(/\r/g, '').split(/\n[ \t]*\n/)) {
    const fields = new Map<string, string>();
    let last: string | undefined;
    for (const line of stanza.split('\n')) {
      if (line.startsWith('#')) continue;
      if (/^[ \t]/.test(line)) {
        if (last) fields.set(last, `${fields.get(last)!} ${line.trim()}`);
        continue;
      }
      const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
      if (!m) continue;
      last = m[1]!.toLowerCase();
      fields.set(last, m[2]!.trim());
    }
    if ((fields.get('enabled') ?? 'yes').toLowerCase() === 'no') continue;
    const list = (name: string) => (fields.get(name) ?? '').split(/\s+/).filter(Boolean);
    for (const type of list('types')) {
      for (const uri of list('uris')) out.push({ type, uri, suites: list('suites'), components: list('components'), file });
    }
  }
  return out;
}

/** Every source apt on the host under `root` reads, in apt's order. */
export function readAptSources(root = '/'): AptSource[] {
  const read = (rel: string) => {
    try {
      return readFileSync(join(root, rel), 'utf8');
    } catch {
      return undefined;
    }
  };
  const sources: AptSource[] = [];
  const main = read('etc/apt/sources.list');
  if (main !== undefined) sources.push(...oneLineSources(main, 'etc/apt/sources.list'));
  let names: string[] = [];
  try {
    names = readdirSync(join(root, 'etc/apt/sources.list.d')).sort();
  } catch {
    // no sources.list.d
  }
  for (const name of names) {
    const rel = `etc/apt/sources.list.d/${name}`;
    if (name.endsWith('.list')) sources.push(...oneLineSources(read(rel) ?? '', rel));
    else if (name.endsWith('.sources')) sources.push(...deb822Sources(read(rel) ?? '', rel));
  }
  return sources;
}

/**
 * The URL of the host's Debian archive mirror: the first binary (`deb`) source over
 * http(s) or file whose suites include a Debian release (bookworm, stable, ...; not
 * -security or -updates, which are other archives) and whose components include main.
 * Undefined when there is none (an Ubuntu host, say).
 */
export function hostDebianMirror(root = '/'): string | undefined {
  const found = readAptSources(root).find(
    (s) =>
      s.type === 'deb' &&
      /^(https?|file):\/\//.test(s.uri) &&
      s.suites.some((suite) => DEBIAN_SUITES.has(suite)) &&
      s.components.includes('main'),
  );
  return found?.uri.replace(/\/+$/, '');
}

/** RUNBOX_DEBIAN_MIRROR when set, else the host's mirror; a clear error when neither exists. */
export function debianMirror(configured: string, root = '/'): string {
  if (configured) return configured;
  const mirror = hostDebianMirror(root);
  if (mirror) return mirror;
  throw new Error(
    `no Debian mirror found in ${join(root, 'etc/apt/sources.list')} or ${join(root, 'etc/apt/sources.list.d')}/*.list|*.sources ` +
      '(a "deb" source of a Debian release with component main, over http(s) or file); ' +
      'set RUNBOX_DEBIAN_MIRROR to the Debian mirror image builds should use',
  );
}
