import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../api/errors.js';
import { databaseUnavailable } from '../api/middleware/errors.js';
import { plain, withCompilerEnum } from '../api/openapi.js';
import type { ApiLog } from '../api/route.js';
import { RUNBOX_MCP } from './identity.js';
import { listResources, readResource, RESOURCE_TEMPLATES } from './resources.js';
import { TOOLS, type ToolCall } from './tools.js';

// runbox's MCP server for one caller: the low-level SDK Server, so that each tool's
// inputSchema is the JSON Schema of its TypeBox schema as it stands (the SDK's
// registerTool wants zod), its arguments checked by runbox's own validate().

/** A refusal as the text of a tool error: `code: message`, as a REST error body says it. */
function refusal(err: unknown, log?: ApiLog): string {
  if (err instanceof ApiError) return `${err.code}: ${err.message}`;
  if (databaseUnavailable(err)) return 'unavailable: the service cannot reach its database; try again shortly';
  log?.error({ err }, 'MCP tool call failed');
  return 'internal_error: internal server error; try again later';
}

export function mcpServer(call: ToolCall): Server {
  const { deps } = call;
  const server = new Server(RUNBOX_MCP, {
    capabilities: { tools: {}, resources: {} },
    instructions:
      'runbox runs code in a sandbox. list_compilers says which compilers are installed; run_code runs a program and returns its output; judge runs it against tests with expected outputs (or a stored problem) and gives verdicts; session_open opens a workspace kept between runs (session_run, session_files, session_close).',
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    // Compiler ids as an enum of the ones installed now, as the OpenAPI document lists the catalogue's.
    const installed = [...(await call.available())].sort();
    return {
      tools: TOOLS.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        // No compiler installed: no enum, rather than one nothing can match.
        inputSchema: (installed.length > 0 ? withCompilerEnum(plain(t.input), installed) : plain(t.input)) as { type: 'object' },
      })),
    };
  });
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const tool = TOOLS.find((t) => t.name === req.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `no tool ${req.params.name}; the tools are ${TOOLS.map((t) => t.name).join(', ')}`);
    try {
      return { content: await tool.call(call, req.params.arguments ?? {}) };
    } catch (err) {
      return { isError: true, content: [{ type: 'text', text: refusal(err, deps.log) }] };
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await listResources(deps, call.auth) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    try {
      return { contents: [await readResource(deps, call.auth, req.params.uri)] };
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw new McpError(ErrorCode.InvalidParams, `${err.code}: ${err.message}`);
      throw new McpError(ErrorCode.InternalError, refusal(err, deps.log));
    }
  });
  return server;
}
