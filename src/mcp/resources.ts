import { ApiError } from '../api/errors.js';
import type { RunCaller } from '../api/middleware/admission.js';
import type { ApiDeps } from '../api/route.js';
import { compilerList } from '../api/routes/compilers.js';
import { getProblem, isProblemId, listProblems } from '../problems/store.js';

// The MCP resources: the compiler catalogue as GET /api/compilers/ answers it, the
// account's problems as GET /api/v2/problems/ does, and each problem as GET
// /api/v2/problems/:id does. Another account's problem is not found, as over REST.

const COMPILERS = 'runbox://compilers';
const PROBLEMS = 'runbox://problems';
const PROBLEM = /^runbox:\/\/problems\/([^/]+)$/;
const JSON_TYPE = 'application/json';

export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: `${PROBLEMS}/{id}`,
    name: 'problem',
    title: 'A stored problem',
    description: "A stored problem of the account: its limits, checker and tests (samples with their content), by the id judge's problem takes.",
    mimeType: JSON_TYPE,
  },
];

export async function listResources(deps: ApiDeps, auth: RunCaller) {
  const { problems } = await listProblems(deps.db, auth.accountId);
  return [
    {
      uri: COMPILERS,
      name: 'compilers',
      title: 'Compilers',
      description: 'Every compiler identifier of the catalogue: language, installed version, libraries, whether it is installed here (available).',
      mimeType: JSON_TYPE,
    },
    { uri: PROBLEMS, name: 'problems', title: 'Problems', description: "The account's stored problems, newest first, and the test data they keep.", mimeType: JSON_TYPE },
    ...problems.map((p) => ({ uri: `${PROBLEMS}/${p.id}`, name: `problem ${p.id}`, title: p.name, description: `${p.test_count} tests, version ${p.version}.`, mimeType: JSON_TYPE })),
  ];
}

export async function readResource(deps: ApiDeps, auth: RunCaller, uri: string): Promise<{ uri: string; mimeType: string; text: string }> {
  const json = (value: unknown) => ({ uri, mimeType: JSON_TYPE, text: JSON.stringify(value, null, 2) });
  if (uri === COMPILERS) return json(await compilerList(deps.db, deps.config));
  if (uri === PROBLEMS) return json(await listProblems(deps.db, auth.accountId));
  const id = PROBLEM.exec(uri)?.[1];
  const problem = id !== undefined && isProblemId(id) ? await getProblem(deps.db, auth.accountId, id) : undefined;
  if (!problem) throw new ApiError(404, 'not_found', id !== undefined ? `no problem ${id}` : `no resource ${uri}; the resources are ${COMPILERS}, ${PROBLEMS} and ${PROBLEMS}/{id}`);
  return json(problem);
}
