import type { Static } from 'typebox';
import { deploymentAvailability, type AvailabilityConfig } from '../../compilers/deployment.js';
import type { Db } from '../../db/connect.js';
import { optionForms } from '../../program/compiler-options.js';
import type { RouteDef } from '../route.js';
import { CompilerList } from '../schemas.js';

// GET /api/compilers/: every identifier of the catalogue, with what the deployment's
// runners can run (src/compilers/deployment.ts) and its names in the compatible APIs.

/** The catalogue as GET /api/compilers/ answers it (the MCP face lists the same). */
export async function compilerList(db: Db, config: AvailabilityConfig): Promise<Static<typeof CompilerList>> {
  return (await deploymentAvailability(db, config)).map(({ id, language, version, available, libraries, entry }) => ({
    id,
    language,
    version,
    available,
    piston: entry.piston?.language ?? null,
    judge0: entry.judge0?.id ?? null,
    libraries,
    compiler_options: optionForms(entry),
    ...(entry.retired ? { successor: entry.retired.successor } : {}),
  }));
}

export const compilersRoute: RouteDef = {
  method: 'GET',
  path: '/api/compilers/',
  operationId: 'listCompilers',
  summary: 'Compiler identifiers with language, installed toolchain version, libraries and availability.',
  auth: 'none',
  responses: { 200: { description: 'The compilers.', schema: CompilerList } },
  errors: [405, 406, 500],
  handler:
    ({ db, config }) =>
    async (ctx) => {
      ctx.body = await compilerList(db, config);
    },
};
