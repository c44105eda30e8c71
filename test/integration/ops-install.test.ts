import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/util/paths.js';

// scripts/install into a temporary root (--prefix) and as a dry run: what a bare host
// would get, checked file by file, without touching this host.

const script = join(PROJECT_ROOT, 'scripts/install');

function install(args: string[], env: NodeJS.ProcessEnv = process.env): { status: number | null; out: string } {
  const r = spawnSync('bash', [script, ...args], { encoding: 'utf8', env });
  return { status: r.status, out: r.stdout + r.stderr };
}

/** A PATH whose first `node` reports `version` (and fails at anything else, as an unusable node would). */
function fakeNodePath(dir: string, version: string): NodeJS.ProcessEnv {
  const bin = join(dir, 'fake-node-bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'node'), `#!/bin/sh\n[ "$1" = --version ] && echo ${version} && exit 0\nexit 1\n`, { mode: 0o755 });
  return { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` };
}

describe('scripts/install', function () {
  this.timeout(120_000);
  const roots: string[] = [];
  const fresh = () => {
    const d = mkdtempSync(join(tmpdir(), 'runbox-install-'));
    roots.push(d);
    return d;
  };
  after(() => {
    for (const d of roots) rmSync(d, { recursive: true, force: true });
  });

  it('--role all lays out the app, units, admin link, env file and images dir', () => {
    const root = fresh();
    const r = install(['--prefix', root, '--role', 'all']);
    expect(r.status, r.out).to.equal(0);
    const app = join(root, 'opt/runbox');
    for (const f of ['dist/src/cli/start.js', 'dist/src/cli/admin.js', 'dist/browser/widget.js', 'dist/browser/portal.js', 'native/build/runbox-forkserver', 'native/build/init', 'package.json', 'scripts/runbox-admin']) {
      expect(existsSync(join(app, f)), f).to.equal(true);
    }
    expect(readdirSync(join(app, 'rootfs')).filter((f) => f.endsWith('.json')).length).to.be.greaterThan(0);
    // Production dependencies only.
    for (const dep of ['koa', 'kysely', 'pg', 'pino', 'nodemailer', 'prom-client']) expect(existsSync(join(app, 'node_modules', dep)), dep).to.equal(true);
    for (const dev of ['mocha', 'chai', 'typescript', 'smtp-server']) expect(existsSync(join(app, 'node_modules', dev)), dev).to.equal(false);
    expect(existsSync(join(app, 'dist/test'))).to.equal(false);
    expect(readlinkSync(join(root, 'usr/local/bin/runbox-admin'))).to.equal('/opt/runbox/scripts/runbox-admin');
    for (const u of ['runbox-api.service', 'runbox-runner.service']) {
      const text = readFileSync(join(root, 'etc/systemd/system', u), 'utf8');
      expect(text).to.match(new RegExp(`^ExecStart=${process.execPath.replace(/[/.]/g, '\\$&')} /opt/runbox/dist/src/cli/start.js$`, 'm'));
    }
    const env = join(root, 'etc/runbox/runbox.env');
    expect(readFileSync(env, 'utf8')).to.match(/^RUNBOX_DATABASE_URL=/m);
    expect(readFileSync(env, 'utf8')).not.to.match(/^RUNBOX_COMPONENTS=/m);
    expect(statSync(env).mode & 0o777).to.equal(0o640);
    // The template names what to review before a host faces the internet.
    const template = readFileSync(env, 'utf8');
    expect(template).to.match(/^#RUNBOX_PUBLIC_URL=https:\/\//m);
    expect(template).to.match(/^#RUNBOX_SIGNUP=open$/m);
    expect(template).to.match(/on a public host,\n# anyone who reaches it can sign up/);
    expect(template).to.include('`runbox-admin account invite`');
    expect(template).to.match(/^#RUNBOX_TRUST_PROXY=false$/m);
    expect(statSync(join(root, 'var/lib/runbox/images')).isDirectory()).to.equal(true);
    // The installed copy runs on its own.
    const limits = spawnSync(process.execPath, [join(app, 'dist/src/cli/admin.js'), 'limits', 'docs'], { encoding: 'utf8', cwd: tmpdir() });
    expect(limits.status, limits.stderr).to.equal(0);
    expect(limits.stdout).to.match(/^\| limit \| value \|/);
  });

  it('--role api installs only the API unit and no images dir; --role runner only the runner unit', () => {
    const api = fresh();
    expect(install(['--prefix', api, '--role', 'api']).status).to.equal(0);
    expect(readdirSync(join(api, 'etc/systemd/system'))).to.deep.equal(['runbox-api.service']);
    expect(existsSync(join(api, 'var/lib/runbox/images'))).to.equal(false);
    const runner = fresh();
    expect(install(['--prefix', runner, '--role', 'runner']).status).to.equal(0);
    expect(readdirSync(join(runner, 'etc/systemd/system'))).to.deep.equal(['runbox-runner.service']);
    expect(existsSync(join(runner, 'var/lib/runbox/images'))).to.equal(true);
  });

  it('a second install keeps the edited env file and replaces the code', () => {
    const root = fresh();
    expect(install(['--prefix', root]).status).to.equal(0);
    const env = join(root, 'etc/runbox/runbox.env');
    writeFileSync(env, 'RUNBOX_DATABASE_URL=postgresql://db.internal/runbox\n');
    const stale = join(root, 'opt/runbox/dist/src/stale.js');
    writeFileSync(stale, '');
    // An editor file of the release installed before (a page may hold the loader naming it), and a bundle no build makes.
    const earlierEditor = join(root, 'opt/runbox/dist/browser/editor/chunk-EARLIER1.js');
    writeFileSync(earlierEditor, 'export {};\n');
    const staleBundle = join(root, 'opt/runbox/dist/browser/gone.js');
    writeFileSync(staleBundle, '');
    const again = install(['--prefix', root]);
    expect(again.status, again.out).to.equal(0);
    expect(again.out).to.match(/exists; left as it is/);
    expect(readFileSync(env, 'utf8')).to.equal('RUNBOX_DATABASE_URL=postgresql://db.internal/runbox\n');
    expect(existsSync(stale)).to.equal(false);
    expect(existsSync(staleBundle)).to.equal(false);
    expect(readFileSync(earlierEditor, 'utf8')).to.equal('export {};\n');
    const superseded = JSON.parse(readFileSync(join(root, 'opt/runbox/dist/browser/editor/superseded.json'), 'utf8')) as Record<string, string>;
    expect(Object.keys(superseded)).to.deep.equal(['chunk-EARLIER1.js']);
  });

  it('--dry-run prints the steps and writes nothing', () => {
    const root = fresh();
    const r = install(['--prefix', root, '--dry-run']);
    expect(r.status, r.out).to.equal(0);
    expect(r.out).to.include(`cp -a ${PROJECT_ROOT}/dist/src ${root}/opt/runbox/dist/src.new`);
    expect(r.out).to.include('/etc/systemd/system/runbox-runner.service');
    expect(readdirSync(root)).to.deep.equal([]);
  });

  for (const [script_, run] of [
    ['scripts/install', (env: NodeJS.ProcessEnv, root: string) => install(['--prefix', root], env)],
    ['scripts/setup', (env: NodeJS.ProcessEnv) => {
      const r = spawnSync('bash', [join(PROJECT_ROOT, 'scripts/setup')], { encoding: 'utf8', env });
      return { status: r.status, out: r.stdout + r.stderr };
    }],
  ] as const) {
    it(`${script_} stops first when Node.js is older than 20.5, saying how to get it on Debian 12`, () => {
      for (const old of ['v18.19.0', 'v20.4.1']) {
        const root = fresh();
        const r = run(fakeNodePath(root, old), root);
        expect(r.status, r.out).to.equal(1);
        expect(r.out).to.include(`Node.js 20.5 or later is needed; this is ${old}`);
        expect(r.out).to.include("Debian 12's own nodejs package is 18");
        expect(r.out).to.include('https://deb.nodesource.com/setup_22.x');
        // Nothing was done before the check: no step printed, nothing written.
        expect(r.out).not.to.match(/==>/);
        expect(readdirSync(root)).to.deep.equal(['fake-node-bin']);
      }
    });
  }

  it('scripts/install takes Node.js 20.5 and later past the check', () => {
    const root = fresh();
    const r = install(['--prefix', root, '--dry-run'], fakeNodePath(root, 'v20.5.0'));
    expect(r.out).not.to.include('Node.js 20.5 or later is needed');
    expect(r.out).to.match(/==> runbox all into/);
  });

  it('refuses an unknown role', () => {
    const r = install(['--prefix', fresh(), '--role', 'everything']);
    expect(r.status).to.equal(2);
    expect(r.out).to.match(/--role must be api, runner or all/);
  });
});
