import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { RUN_LIMITS } from '../../src/limits.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';

// The shipped systemd units: systemd's own verifier, plus the options this service
// depends on, read from the files (so a dropped hardening line fails here).

const dir = join(PROJECT_ROOT, 'systemd');
const UNITS = ['runbox-api.service', 'runbox-runner.service'];

/** Directive name → every value it is given, in order (sections flattened). */
function directives(file: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const raw of readFileSync(join(dir, file), 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('[')) continue;
    const eq = line.indexOf('=');
    expect(eq, `not a directive: ${line}`).to.be.greaterThan(0);
    const name = line.slice(0, eq);
    out.set(name, [...(out.get(name) ?? []), line.slice(eq + 1)]);
  }
  return out;
}

const one = (d: Map<string, string[]>, name: string) => d.get(name)?.at(-1);

function hasAnalyze(): boolean {
  return spawnSync('systemd-analyze', ['--version'], { stdio: 'ignore' }).status === 0;
}

describe('systemd units', () => {
  it('pass systemd-analyze verify without a single warning', function () {
    if (!hasAnalyze()) {
      console.log('      SKIPPED: systemd-analyze is not installed (apt-get install systemd); the directive checks below still run');
      this.skip();
    }
    const r = spawnSync('systemd-analyze', ['verify', ...UNITS.map((u) => join(dir, u))], { encoding: 'utf8' });
    expect(r.status, r.stderr).to.equal(0);
    // Unknown or misspelt keys are only warnings for systemd: any output is a failure here.
    expect(r.stderr.trim(), r.stderr).to.equal('');
  });

  it('systemd-analyze would catch a misspelt directive (the check above can fail)', function () {
    if (!hasAnalyze()) {
      console.log('      SKIPPED: systemd-analyze is not installed');
      this.skip();
    }
    const tmp = execFileSync('mktemp', ['-d']).toString().trim();
    const bad = join(tmp, 'runbox-bad.service');
    execFileSync('sh', ['-c', 'sed s/NoNewPrivileges/NoNewPrivilege/ "$1" > "$2"', 'sh', join(dir, 'runbox-api.service'), bad]);
    const r = spawnSync('systemd-analyze', ['verify', bad], { encoding: 'utf8' });
    execFileSync('rm', ['-rf', tmp]);
    expect(r.stderr).to.match(/Unknown key.*NoNewPrivilege/);
  });

  it('the API unit runs unprivileged and locked down', () => {
    const d = directives('runbox-api.service');
    expect(one(d, 'User')).to.equal('runbox');
    expect(one(d, 'EnvironmentFile')).to.equal('/etc/runbox/runbox.env');
    expect(d.get('Environment')).to.include('RUNBOX_COMPONENTS=api,sender');
    expect(one(d, 'ExecStart')).to.equal('/usr/bin/node /opt/runbox/dist/src/cli/start.js');
    for (const [name, value] of [
      ['NoNewPrivileges', 'yes'],
      ['ProtectSystem', 'strict'],
      ['ProtectHome', 'yes'],
      ['PrivateTmp', 'yes'],
      ['PrivateDevices', 'yes'],
      ['ProtectKernelTunables', 'yes'],
      ['ProtectKernelModules', 'yes'],
      ['ProtectKernelLogs', 'yes'],
      ['ProtectControlGroups', 'yes'],
      ['RestrictNamespaces', 'yes'],
      ['LockPersonality', 'yes'],
      ['SystemCallArchitectures', 'native'],
      ['RestrictAddressFamilies', 'AF_INET AF_INET6 AF_UNIX'],
      ['CapabilityBoundingSet', ''],
    ]) {
      expect(one(d, name!), name).to.equal(value);
    }
    // Node's JIT maps memory writable and executable.
    expect(d.has('MemoryDenyWriteExecute')).to.equal(false);
  });

  it('the runner unit runs as root, owns its cgroup subtree and outlasts its drain on stop', () => {
    const d = directives('runbox-runner.service');
    expect(one(d, 'User')).to.equal('root');
    expect(one(d, 'Delegate')).to.equal('yes');
    expect(one(d, 'KillMode')).to.equal('mixed');
    expect(one(d, 'Restart')).to.equal('on-failure');
    expect(d.get('Environment')).to.include('RUNBOX_COMPONENTS=runner');
    // Above the drain bound (RUNBOX_DRAIN_SECONDS), with room for the sandboxes' teardown.
    const stopSeconds = Number(one(d, 'TimeoutStopSec'));
    expect(stopSeconds).to.be.greaterThan(loadConfig({}).RUNBOX_DRAIN_SECONDS + 10);
    // The drain bound covers a run stage at its timeout.
    expect(loadConfig({}).RUNBOX_DRAIN_SECONDS * 1000).to.be.at.least(RUN_LIMITS.timeoutMs);
  });

  it('the API unit outlasts its drain on stop: requests and WebSocket runs finish first', () => {
    const d = directives('runbox-api.service');
    expect(one(d, 'KillMode')).to.equal('mixed');
    expect(Number(one(d, 'TimeoutStopSec'))).to.be.greaterThan(loadConfig({}).RUNBOX_DRAIN_SECONDS + 10);
  });
});
