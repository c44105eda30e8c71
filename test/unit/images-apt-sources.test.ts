import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { debianMirror, hostDebianMirror, readAptSources } from '../../src/images/apt-sources.js';

// The host's Debian mirror, read from apt's sources under a root directory made here:
// one-line and deb822 files as Debian and Ubuntu hosts have them.

describe('apt sources: the Debian mirror image builds use', () => {
  let root: string;
  const write = (rel: string, text: string) => {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'runbox-apt-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('reads a one-line sources.list with options, comments and deb-src lines', () => {
    write(
      'etc/apt/sources.list',
      [
        '# the local mirror',
        'deb-src http://mirror.example.test/debian bookworm main',
        'deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example.test/debian/ bookworm main contrib # trailing comment',
        'deb http://mirror.example.test/debian-security bookworm-security main',
        '',
      ].join('\n'),
    );
    expect(readAptSources(root).map((s) => [s.type, s.uri, s.suites, s.components])).to.deep.equal([
      ['deb-src', 'http://mirror.example.test/debian', ['bookworm'], ['main']],
      ['deb', 'http://mirror.example.test/debian/', ['bookworm'], ['main', 'contrib']],
      ['deb', 'http://mirror.example.test/debian-security', ['bookworm-security'], ['main']],
    ]);
    expect(hostDebianMirror(root)).to.equal('http://mirror.example.test/debian');
  });

  it('reads deb822 .sources files (Debian 12 and later), skipping disabled stanzas and other archives', () => {
    write(
      'etc/apt/sources.list.d/debian.sources',
      [
        'Types: deb',
        'URIs: http://disabled.example.test/debian',
        'Suites: bookworm',
        'Components: main',
        'Enabled: no',
        '',
        'Types: deb',
        '# a comment inside the stanza',
        'URIs: http://security.example.test/debian-security',
        'Suites: bookworm-security',
        'Components: main',
        '',
        'Types: deb deb-src',
        'URIs: http://apt-cache.internal.test:3142/debian',
        'Suites: bookworm',
        '  bookworm-updates',
        'Components: main',
        'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg',
        '',
      ].join('\n'),
    );
    const sources = readAptSources(root);
    expect(sources.map((s) => [s.type, s.uri, s.suites])).to.deep.equal([
      ['deb', 'http://security.example.test/debian-security', ['bookworm-security']],
      ['deb', 'http://apt-cache.internal.test:3142/debian', ['bookworm', 'bookworm-updates']],
      ['deb-src', 'http://apt-cache.internal.test:3142/debian', ['bookworm', 'bookworm-updates']],
    ]);
    expect(sources[1]!.file).to.equal('etc/apt/sources.list.d/debian.sources');
    expect(hostDebianMirror(root)).to.equal('http://apt-cache.internal.test:3142/debian');
  });

  it("takes sources.list first, then sources.list.d in apt's order, ignoring other files there", () => {
    write('etc/apt/sources.list', '# nothing here but a comment\n');
    write('etc/apt/sources.list.d/10-vendor.list', 'deb https://vendor.example.test/apt cloud-sdk-bookworm main\n');
    write('etc/apt/sources.list.d/20-debian.list', 'deb file:///srv/mirror/debian stable main\n');
    write('etc/apt/sources.list.d/30-other.sources', 'Types: deb\nURIs: http://later.example.test/debian\nSuites: bookworm\nComponents: main\n');
    write('etc/apt/sources.list.d/05-old.list.disabled', 'deb http://disabled.example.test/debian bookworm main\n');
    expect(hostDebianMirror(root)).to.equal('file:///srv/mirror/debian');
  });

  it('finds none on a host without a Debian source (Ubuntu, a CD-ROM, a mirror+ method) and says to set RUNBOX_DEBIAN_MIRROR', () => {
    write('etc/apt/sources.list', 'deb http://archive.ubuntu.test/ubuntu jammy main restricted\ndeb cdrom:[Debian]/ bookworm main\n');
    write('etc/apt/sources.list.d/mirrors.sources', 'Types: deb\nURIs: mirror+file:/etc/apt/mirrors/debian.list\nSuites: bookworm\nComponents: main\n');
    write('etc/apt/sources.list.d/contrib-only.list', 'deb http://contrib.example.test/debian bookworm contrib\n');
    expect(hostDebianMirror(root)).to.equal(undefined);
    expect(() => debianMirror('', root)).to.throw(/no Debian mirror found in .*sources\.list.*set RUNBOX_DEBIAN_MIRROR/);
    // Nothing at all under the root: the same clear error.
    expect(() => debianMirror('', join(root, 'empty'))).to.throw(/set RUNBOX_DEBIAN_MIRROR/);
  });

  it('RUNBOX_DEBIAN_MIRROR, when set, wins over the host', () => {
    write('etc/apt/sources.list', 'deb http://host.example.test/debian bookworm main\n');
    expect(debianMirror('http://configured.example.test/debian', root)).to.equal('http://configured.example.test/debian');
    expect(debianMirror('', root)).to.equal('http://host.example.test/debian');
  });
});
