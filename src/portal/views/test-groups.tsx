import type { RunResult, TestResult } from '../../result.js';
import { verdictWords } from '../verdicts.js';
import { TableBox } from './layout.js';

// A stored package's test groups on the submission page: each group a disclosure
// (details/summary) whose summary is its verdict and score, and whose body folds its own
// tests (a table with headers) and its subgroups under it, data/ outermost.

type Group = NonNullable<RunResult['groups']>[number];

interface GroupNodeView {
  group: Group;
  children: GroupNodeView[];
  /** Its own tests, not its subgroups'. */
  tests: string[];
}

/** The flat list of groups (names are paths) as a tree: a group's parent is the longest other group name before a slash of it. */
export function groupTree(groups: readonly Group[]): GroupNodeView[] {
  const nodes = groups.map((group) => ({ group, children: [] as GroupNodeView[], tests: [] as string[] }));
  const roots: GroupNodeView[] = [];
  for (const node of nodes) {
    const parent = nodes
      .filter((o) => o !== node && (o.group.name === '' ? node.group.name !== '' : node.group.name.startsWith(`${o.group.name}/`)))
      .sort((a, b) => b.group.name.length - a.group.name.length)[0];
    (parent ? parent.children : roots).push(node);
  }
  for (const node of nodes) {
    const below = new Set(node.children.flatMap((c) => c.group.tests));
    node.tests = node.group.tests.filter((t) => !below.has(t));
  }
  return roots;
}

const scoreText = (g: Group) => (g.score === null ? '' : ` · ${g.score}${g.max_score !== null ? ` / ${g.max_score}` : ''}`);

function GroupView(p: { node: GroupNodeView; byName: Map<string, TestResult> }) {
  const { group } = p.node;
  const label = group.name === '' ? 'data (the whole problem)' : group.name;
  return (
    <details class="test-group" data-group={group.name} open={group.verdict !== 'accepted'}>
      <summary>
        <span class="group-name">{label}</span>
        <span data-field="verdict" class={group.verdict === 'accepted' ? 'ok' : 'bad'}>{` ${verdictWords(group.verdict)}`}</span>
        <span data-field="score">{scoreText(group)}</span>
      </summary>
      {group.message && <p class="group-message">{group.message}</p>}
      {p.node.tests.length > 0 && (
        <TableBox label={`Tests of ${label}`}>
          <table>
            <thead>
              <tr>
                <th scope="col">Test</th>
                <th scope="col">Verdict</th>
                <th scope="col" class="num">Points</th>
              </tr>
            </thead>
            <tbody>
              {p.node.tests.map((name) => {
                const t = p.byName.get(name);
                return (
                  <tr data-test={name}>
                    <th scope="row">{name}</th>
                    <td data-field="verdict" class={t?.verdict === 'accepted' ? 'ok' : t?.verdict === 'skipped' ? 'muted' : 'bad'}>
                      {t?.verdict ? verdictWords(t.verdict) : '—'}
                    </td>
                    <td class="num">{t?.points !== undefined ? String(t.points) : '—'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableBox>
      )}
      {p.node.children.map((c) => (
        <GroupView node={c} byName={p.byName} />
      ))}
    </details>
  );
}

export function TestGroups(p: { groups: readonly Group[]; tests: readonly TestResult[] }) {
  const byName = new Map(p.tests.filter((t) => t.name !== undefined).map((t) => [t.name!, t]));
  return (
    <div class="test-groups">
      {groupTree(p.groups).map((node) => (
        <GroupView node={node} byName={byName} />
      ))}
    </div>
  );
}
