import { expect } from 'chai';
import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import type { RunResult, TestResult } from '../../src/result.js';
import { groupTree, TestGroups } from '../../src/portal/views/test-groups.js';

// A package's test groups on the submission page: each group a details/summary with its
// verdict and score, its own tests folded under it in a table with headers, its
// subgroups nested inside it; groups not accepted open.

type Group = NonNullable<RunResult['groups']>[number];
const group = (name: string, verdict: Group['verdict'], score: number | null, max: number | null, tests: string[], message?: string): Group => ({ name, verdict, score, max_score: max, tests, ...(message ? { message } : {}) });
const test = (name: string, verdict: TestResult['verdict'], points?: number) => ({ name, verdict, ...(points !== undefined ? { points } : {}) }) as TestResult;

describe('portal: test groups of a submission', () => {
  const groups = [
    group('', 'partial', 50, 100, ['sample/1', 'secret/a/1', 'secret/b/1']),
    group('sample', 'accepted', 0, 0, ['sample/1']),
    group('secret', 'partial', 50, 100, ['secret/a/1', 'secret/b/1']),
    group('secret/a', 'accepted', 50, 50, ['secret/a/1']),
    group('secret/b', 'wrong_answer', 0, 50, ['secret/b/1'], 'not judged: an earlier item of its parent group was not accepted (on_reject: break)'),
  ];
  const tests = [test('sample/1', 'accepted', 0), test('secret/a/1', 'accepted', 50), test('secret/b/1', 'skipped')];

  it('the flat list as a tree: each group under the longest group name before it, its own tests only', () => {
    const roots = groupTree(groups);
    expect(roots.map((r) => r.group.name)).to.deep.equal(['']);
    expect(roots[0]!.children.map((c) => c.group.name)).to.deep.equal(['sample', 'secret']);
    expect(roots[0]!.tests).to.deep.equal([]);
    const secret = roots[0]!.children[1]!;
    expect(secret.children.map((c) => [c.group.name, c.tests])).to.deep.equal([
      ['secret/a', ['secret/a/1']],
      ['secret/b', ['secret/b/1']],
    ]);
    // 2025-09 results have no data/ group: sample and secret are the roots.
    expect(groupTree(groups.slice(1)).map((r) => r.group.name)).to.deep.equal(['sample', 'secret']);
  });

  it('renders nested details/summary with verdicts, scores and tables with headers; groups not accepted are open', () => {
    const html = renderToString(h(TestGroups, { groups, tests }));
    const accepted = /<details class="test-group" data-group="secret\/a">/;
    expect(html).to.match(accepted);
    expect(html).to.match(/<details class="test-group" data-group="secret\/b" open>/);
    expect(html).to.match(/<summary><span class="group-name">secret\/a<\/span><span data-field="verdict" class="ok"> [^<]+<\/span><span data-field="score"> · 50 \/ 50<\/span><\/summary>/);
    expect(html).to.include('<th scope="col">Test</th>');
    expect(html).to.match(/<tr data-test="secret\/b\/1"><th scope="row">secret\/b\/1<\/th><td data-field="verdict" class="muted">/);
    expect(html).to.include('not judged: an earlier item');
    // secret/a's details lie inside secret's, which lies inside data's.
    const at = (s: string) => html.indexOf(s);
    expect(at('data-group=""')).to.be.lessThan(at('data-group="secret"'));
    expect(at('data-group="secret"')).to.be.lessThan(at('data-group="secret/a"'));
    expect(html.slice(at('data-group="secret"'), at('data-group="secret/a"'))).to.not.include('</details>');
  });
});
