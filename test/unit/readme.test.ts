import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { README_PATH, renderReadme } from '../../src/cli/readme-tables.js';

describe('README', () => {
  it('generated tables match the code (run scripts/update-readme-tables)', () => {
    const text = readFileSync(README_PATH, 'utf8');
    expect(renderReadme(text)).to.equal(text);
  });

  it('quick start is exactly the two documented commands', () => {
    const text = readFileSync(README_PATH, 'utf8');
    const block = /## Quick start[\s\S]*?```sh\n([\s\S]*?)```/.exec(text)?.[1];
    expect(block).to.equal('npm run setup && npm start\nnpm test\n');
  });
});
