import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { GENERATED_TABLES, renderTable, type TableName, tablePath } from '../../src/cli/readme-tables.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';

describe('README and generated tables', () => {
  for (const name of Object.keys(GENERATED_TABLES) as TableName[]) {
    it(`${GENERATED_TABLES[name].file}: the ${name} matches the code (runbox-admin ${name.replace(/-table$/, '')} docs --write)`, () => {
      const text = readFileSync(tablePath(name), 'utf8');
      expect(renderTable(name, text)).to.equal(text);
    });
  }

  it('each generated table lives in one file only', () => {
    for (const name of Object.keys(GENERATED_TABLES) as TableName[]) {
      for (const other of ['README.md', 'docs/api.md', 'docs/operating.md', 'docs/limits.md', 'docs/configuration.md', 'docs/compilers.md']) {
        if (other === GENERATED_TABLES[name].file) continue;
        expect(readFileSync(join(PROJECT_ROOT, other), 'utf8'), other).not.to.include(`<!-- ${name}:start -->`);
      }
    }
  });

  it('a table out of date is replaced between its markers, and the rest is kept', () => {
    const stale = 'before\n<!-- limits-table:start -->\n| old |\n<!-- limits-table:end -->\nafter\n';
    const fresh = renderTable('limits-table', stale);
    expect(fresh).to.match(/^before\n<!-- limits-table:start -->\n\| limit \| value \|/);
    expect(fresh).to.match(/\n<!-- limits-table:end -->\nafter\n$/);
    expect(() => renderTable('config-table', 'no markers')).to.throw(/docs\/configuration.md lacks the config-table markers/);
  });

  it('quick start is exactly the two documented commands', () => {
    const text = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    const block = /## Quick start[\s\S]*?```sh\n([\s\S]*?)```/.exec(text)?.[1];
    expect(block).to.equal('npm run setup && npm start\nnpm test\n');
  });

  it('names the prerequisites: Debian 12, root and Node 20.5 or later', () => {
    const text = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    const section = /## Prerequisites\n([\s\S]*?)\n## /.exec(text)?.[1] ?? '';
    expect(section).to.include('Debian 12').and.include('root').and.include('Node.js ≥ 20.5');
  });
});
