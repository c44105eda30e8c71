import { expect } from 'chai';
import { expectedInSandbox, parseSpeculation } from '../helpers/speculation.js';

// The sandbox host-bounds test expects the forced mitigations where the kernel gives a
// task control, and the host's own state elsewhere. Fed the lines of hosts this suite
// runs on, so the rule is checked on every host whatever the one at hand prints.

const status = (ssb: string, ib: string) => `Name:\tx\nSeccomp:\t0\nSpeculation_Store_Bypass:\t${ssb}\nSpeculationIndirectBranch:\t${ib}\nCpus_allowed:\t3\n`;

describe('speculation controls a sandboxed program must see', () => {
  it('an Intel host (per-task controls): both forced', () => {
    const host = parseSpeculation(status('thread vulnerable', 'conditional enabled'));
    expect(host).to.deep.equal({ store_bypass: 'thread vulnerable', indirect_branch: 'conditional enabled' });
    expect(expectedInSandbox(host)).to.deep.equal({ store_bypass: 'thread force mitigated', indirect_branch: 'conditional force disabled' });
  });

  it('an AMD host whose kernel decides for every task: unchanged', () => {
    const host = parseSpeculation(status('vulnerable', 'always enabled'));
    expect(expectedInSandbox(host)).to.deep.equal({ store_bypass: 'vulnerable', indirect_branch: 'always enabled' });
  });

  it('an AMD host with per-task store bypass only', () => {
    const host = parseSpeculation(status('thread vulnerable', 'always enabled'));
    expect(expectedInSandbox(host)).to.deep.equal({ store_bypass: 'thread force mitigated', indirect_branch: 'always enabled' });
  });

  it('a host process that already mitigated itself: still the forced form', () => {
    expect(expectedInSandbox(parseSpeculation(status('thread mitigated', 'conditional disabled'))))
      .to.deep.equal({ store_bypass: 'thread force mitigated', indirect_branch: 'conditional force disabled' });
  });

  it('states no task can change stay as they are', () => {
    for (const [ssb, ib] of [['not vulnerable', 'not affected'], ['globally mitigated', 'always disabled'], ['unknown', 'unsupported']] as const) {
      expect(expectedInSandbox(parseSpeculation(status(ssb, ib)))).to.deep.equal({ store_bypass: ssb, indirect_branch: ib });
    }
  });

  it('a kernel that prints no such lines: none expected', () => {
    expect(expectedInSandbox(parseSpeculation('Name:\tx\n'))).to.deep.equal({ store_bypass: null, indirect_branch: null });
  });
});
