import type { Db } from '../../db/connect.js';
import { getProblem } from '../../problems/store.js';
import type { WsProblemMessage } from './messages.js';

// The answer to a problem message: a stored problem as an exercise shows it (the
// widget's problem="ID"): its name, statement, limits, feedback and samples whole; of its other
// tests only how many there are. A problem of another account that is not public is
// not found, as over REST.

export type ProblemAnswer =
  | {
      type: 'problem';
      id: string;
      problem: {
        id: string;
        name: string;
        version: number;
        feedback: string;
        limits: { time?: number; memory?: number };
        statement: string | null;
        statement_format: 'markdown' | 'latex' | null;
        samples: { name: string; input: string; expected_output: string }[];
        hidden_tests: number;
      };
    }
  | undefined;

export async function problemAnswer(db: Db, accountId: string, m: WsProblemMessage): Promise<ProblemAnswer> {
  const p = await getProblem(db, accountId, m.problem, 'and public');
  if (!p) return undefined;
  const samples = p.tests.filter((t) => t.sample && t.input !== undefined && t.expected_output !== undefined);
  return {
    type: 'problem',
    id: m.id,
    problem: {
      id: p.id,
      name: p.name,
      version: p.version,
      feedback: p.feedback,
      limits: p.limits,
      statement: p.statement?.text ?? null,
      statement_format: p.statement?.format ?? null,
      samples: samples.map((t) => ({ name: t.name, input: t.input!, expected_output: t.expected_output! })),
      hidden_tests: p.tests.filter((t) => !t.sample).length,
    },
  };
}
