import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';
import { catalogue } from '../../src/compilers/catalogue.js';
import { INTERFACE_IDS } from '../../src/compilers/ids.js';

describe('configuration', () => {
  it('uses documented defaults when nothing is set', () => {
    const c = loadConfig({});
    expect(c.RUNBOX_PORT).to.equal(8080);
    expect(c.RUNBOX_HOST).to.equal('127.0.0.1');
    expect(c.RUNBOX_CALLBACK_ALLOW_PRIVATE).to.equal(false);
    expect(c.RUNBOX_RUNNER_SLOTS).to.be.at.least(1);
  });

  it('parses numbers and booleans', () => {
    const c = loadConfig({ RUNBOX_PORT: '9000', RUNBOX_CALLBACK_ALLOW_PRIVATE: '1' });
    expect(c.RUNBOX_PORT).to.equal(9000);
    expect(c.RUNBOX_CALLBACK_ALLOW_PRIVATE).to.equal(true);
  });

  for (const [name, value] of [
    ['RUNBOX_PORT', 'eighty'],
    ['RUNBOX_PORT', '70000'],
    ['RUNBOX_LAUNCHER', 'docker'],
    ['RUNBOX_CALLBACK_ALLOW_PRIVATE', 'maybe'],
    ['RUNBOX_COMPONENTS', 'api,web'],
  ] as const) {
    it(`rejects ${name}=${value} naming the variable`, () => {
      expect(() => loadConfig({ [name]: value })).to.throw(ConfigError, name);
    });
  }
});

describe('compiler catalogue', () => {
  it('serves every identifier of the contract, listed first in its order', () => {
    expect([...catalogue().entries.keys()].slice(0, INTERFACE_IDS.length)).to.deep.equal([...INTERFACE_IDS]);
  });
});
