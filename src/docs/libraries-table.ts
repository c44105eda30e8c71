import { catalogue } from '../compilers/catalogue.js';

// The libraries table of docs/compilers.md, generated from the built-in recipes
// (rootfs/*.json) so the two cannot drift (a unit test compares them). Versions are the
// recipes' stated ones, which the image build and the compiler tests check against the
// images; GET /api/compilers/ gives those the deployment has installed.

const cell = (text: string) => text.replace(/\|/g, '\\|');

export function librariesTableMarkdown(): string {
  const rows: string[] = [];
  for (const entry of catalogue().entries.values()) {
    if (entry.retired) continue;
    for (const [name, library] of Object.entries(entry.libraries ?? {})) {
      rows.push(`| \`${entry.id}\` | ${name} | ${library.version} | \`${cell(library.use)}\` | ${library.package} |`);
    }
  }
  return ['| identifier | library | version | a program writes | Debian package |', '|---|---|---|---|---|', ...rows].join('\n');
}
