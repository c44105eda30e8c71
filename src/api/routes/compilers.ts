import { deploymentAvailability } from '../../compilers/deployment.js';
import type { RouteDef } from '../route.js';
import { CompilerList } from '../schemas.js';

// GET /api/compilers/: the ten identifiers, with what the deployment's runners can run
// (src/compilers/deployment.ts).
export const compilersRoute: RouteDef = {
  method: 'GET',
  path: '/api/compilers/',
  operationId: 'listCompilers',
  summary: 'Compiler identifiers with language, installed toolchain version and availability.',
  auth: 'none',
  responses: { 200: { description: 'The compilers.', schema: CompilerList } },
  errors: [405, 406, 500],
  handler:
    ({ db, config }) =>
    async (ctx) => {
      ctx.body = (await deploymentAvailability(db, config.RUNBOX_IMAGES_DIR, config.RUNBOX_LEASE_SECONDS)).map(({ id, language, version, available }) => ({
        id,
        language,
        version,
        available,
      }));
    },
};
