import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type Koa from 'koa';
import { availabilityCache } from '../compilers/deployment.js';
import { ApiError } from '../api/errors.js';
import type { MaintenanceFlag } from '../api/maintenance.js';
import { runAdmitter } from '../api/middleware/admission.js';
import { apiKeyContext, keyFromHeader } from '../api/middleware/authenticate.js';
import { readJsonBody } from '../api/middleware/json-body.js';
import { refuseInMaintenance } from '../api/middleware/maintenance.js';
import type { ApiDeps, ApiState } from '../api/route.js';
import { mcpServer } from './server.js';

// POST /mcp: MCP's Streamable HTTP transport, stateless (a server and a transport for
// each request, no session), answered in JSON. The caller's API key comes in
// Authorization as for the REST API (401 JSON error otherwise); the body is read with
// the REST API's JSON rules and limits before the transport sees it. GET and DELETE
// (a standalone event stream, a session's end) have no meaning without sessions:
// 405, which MCP clients take as "no stream".

export const MCP_PATH = '/mcp';

export const isMcpPath = (path: string): boolean => path === MCP_PATH || path === `${MCP_PATH}/`;

export function mcpHttp(deps: ApiDeps, maintenance: MaintenanceFlag): Koa.Middleware<ApiState> {
  const admit = runAdmitter(deps);
  const available = availabilityCache(deps.db, deps.config);
  return async (ctx) => {
    // Named in the access log as a route of the router is (src/api/middleware/access-log.ts).
    (ctx as { _matchedRoute?: string })._matchedRoute = MCP_PATH;
    if (ctx.method !== 'POST') {
      throw new ApiError(405, 'method_not_allowed', `${ctx.method} is not allowed here; allowed: POST (this MCP server keeps no sessions)`, { Allow: 'POST' });
    }
    const auth = await apiKeyContext(deps.db, keyFromHeader(ctx.get('Authorization')), deps.keys);
    ctx.state.auth = auth;
    const body = await readJsonBody(ctx);
    const server = mcpServer({
      deps,
      auth,
      admit,
      res: ctx.res,
      available,
      assertNotInMaintenance: () => refuseInMaintenance(maintenance),
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // The transport writes the answer itself.
    ctx.respond = false;
    await transport.handleRequest(ctx.req, ctx.res, body);
  };
}
