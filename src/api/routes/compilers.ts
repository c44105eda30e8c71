import { compilerAvailability } from '../../compilers/availability.js';
import type { RouteDef } from '../route.js';
import { CompilerList } from '../schemas.js';

// GET /api/compilers/: the ten identifiers, with what is installed here.
export const compilersRoute: RouteDef = {
  method: 'GET',
  path: '/api/compilers/',
  operationId: 'listCompilers',
  summary: 'Compiler identifiers with language, installed toolchain version and availability.',
  auth: 'none',
  responses: { 200: { description: 'The compilers.', schema: CompilerList } },
  errors: [405, 406, 500],
  handler:
    ({ config }) =>
    async (ctx) => {
      ctx.body = compilerAvailability(config.RUNBOX_IMAGES_DIR).map(({ id, language, version, available }) => ({
        id,
        language,
        version,
        available,
      }));
    },
};
