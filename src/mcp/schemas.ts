import Type, { type TSchema } from 'typebox';
import { RunCodeRequest } from '../api/schemas.js';

// The tools' input schemas, taken field by field from the REST API's (src/api/schemas.ts):
// the same names, rules and descriptions, checked by the same validate().

type RunField = keyof typeof RunCodeRequest.properties;

/** An object of RunCodeRequest's fields `names`, no other field taken. */
function runFields(names: readonly RunField[], description: string) {
  const properties: Record<string, TSchema> = Object.fromEntries(names.map((n) => [n, RunCodeRequest.properties[n]]));
  return Type.Object(properties, { additionalProperties: false, description });
}

const PROGRAM = ['compiler', 'code', 'files', 'main', 'args', 'compiler_options', 'limits'] as const;

export const RunCodeInput = runFields([...PROGRAM, 'input', 'return_files'], 'A program to run once: compiler and code (or files), with its standard input and arguments.');
export type RunCodeInput = Pick<RunCodeRequest, (typeof PROGRAM)[number] | 'input' | 'return_files'>;

export const JudgeInput = runFields(
  [...PROGRAM, 'tests', 'problem', 'checker', 'interactor', 'stop_on_failure'],
  'A program to judge: tests with their expected outputs, or a stored problem of the account.',
);
export type JudgeInput = Pick<RunCodeRequest, (typeof PROGRAM)[number] | 'tests' | 'problem' | 'checker' | 'interactor' | 'stop_on_failure'>;

export const GetSubmissionInput = Type.Object(
  { id: Type.String({ description: 'The submission id a run_code or judge result named (a UUID).' }) },
  { additionalProperties: false },
);

export const NoInput = Type.Object({}, { additionalProperties: false });
