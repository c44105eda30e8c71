import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { MCP_PATH } from '../../mcp/http.js';
import { RUNBOX_MCP } from '../../mcp/identity.js';
import { type Command, requireString, UsageError } from '../command.js';

// runbox-admin mcp --url URL: an MCP server on stdin/stdout for desktop clients, which
// start it as a process. A thin proxy: every request goes on to the service's /mcp
// (src/mcp/http.ts) with the key from RUNBOX_API_KEY, so the tools, their limits and
// their bills are the service's own, and this process holds no state of its own.

/** How long a forwarded call may take: a run waits for a slot, compiles and runs every test. */
const CALL_TIMEOUT_MS = 15 * 60 * 1000;

/** The service's /mcp from what --url gives: the service's base URL, or its /mcp already. */
export function mcpUrl(given: string): URL {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(`--url must be the service's URL (https://runbox.example.com), not ${given}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--url must be an http or https URL');
  if (!url.pathname.replace(/\/+$/, '').endsWith(MCP_PATH)) url.pathname = `${url.pathname.replace(/\/+$/, '')}${MCP_PATH}`;
  return url;
}

async function proxy(url: URL, key: string): Promise<void> {
  const remote = new Client(RUNBOX_MCP);
  // Connecting first makes a wrong URL or key an error at start, not a failure of each call.
  await remote.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  const options = { timeout: CALL_TIMEOUT_MS };
  const local = new Server(remote.getServerVersion() ?? RUNBOX_MCP, {
    capabilities: { tools: {}, resources: {} },
    ...(remote.getInstructions() ? { instructions: remote.getInstructions()! } : {}),
  });
  local.setRequestHandler(ListToolsRequestSchema, (req) => remote.listTools(req.params, options));
  local.setRequestHandler(CallToolRequestSchema, (req) => remote.callTool(req.params, undefined, options));
  local.setRequestHandler(ListResourcesRequestSchema, (req) => remote.listResources(req.params, options));
  local.setRequestHandler(ListResourceTemplatesRequestSchema, (req) => remote.listResourceTemplates(req.params, options));
  local.setRequestHandler(ReadResourceRequestSchema, (req) => remote.readResource(req.params, options));
  const closed = new Promise<void>((resolve) => (local.onclose = resolve));
  await local.connect(new StdioServerTransport());
  // The client closing stdin ends the server, and this process with it.
  process.stdin.once('end', () => void local.close());
  await closed;
  await remote.close();
}

export const mcpCommands: Command[] = [
  {
    name: 'mcp',
    summary: "An MCP server on stdin/stdout for desktop AI clients, forwarding every call to a runbox service's /mcp",
    help: [
      '  --url URL    the runbox service (https://runbox.example.com); its /mcp is called',
      '  The API key comes from RUNBOX_API_KEY. Nothing but MCP messages is written to stdout.',
    ].join('\n'),
    options: { url: { type: 'string' } },
    run: async (ctx) => {
      const url = mcpUrl(requireString(ctx, 'url'));
      const key = process.env['RUNBOX_API_KEY'] ?? '';
      if (key.trim() === '') throw new UsageError('RUNBOX_API_KEY must hold the API key the calls are made with');
      await proxy(url, key.trim());
      return undefined;
    },
  },
];
