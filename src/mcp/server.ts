// The MCP server over any transport: tools, the tables resource and the triage prompt, all calling
// the API through `api`. Built on the SDK's low-level Server rather than McpServer because the input
// schemas are JSON Schema taken from the API description, not zod; McpServer would also answer
// invalid input with zod's message instead of the service's code and hint.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { SERVICE_VERSION } from '../core/version.js';
import type { ApiClient } from '../client/api.js';
import { callTool, TOOLS, type ToolAnswer } from './tools.js';
import { TABLES_URI, TRIAGE_PROMPT, tablesDoc, triageText } from './guide.js';

export const SERVER_NAME = 'telemetry-diagnosis-service';

const INSTRUCTIONS =
  'Observability backend for OpenTelemetry data. Loop: list_services → diagnose (findings ranked, cause first) → run each lead\'s drill_down_sql verbatim with query → get_trace for a named trace. ' +
  'Timestamps (*_ts) are microseconds since the Unix epoch; last_minutes avoids computing them. Errors carry {code, message, hint}: follow the hint.';

/** A tool answer as MCP content: the service's JSON as text; errors flagged isError with the error body. */
export function toolResult(a: ToolAnswer): CallToolResult {
  if (a.ok) return { content: [{ type: 'text', text: JSON.stringify(a.value) }] };
  return { content: [{ type: 'text', text: JSON.stringify(a.error) }], isError: true };
}

export function createMcpServer(api: ApiClient, now: () => number = Date.now): Server {
  const server = new Server({ name: SERVER_NAME, version: SERVICE_VERSION }, { capabilities: { tools: {}, resources: {}, prompts: {} }, instructions: INSTRUCTIONS });

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOLS.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, annotations: { readOnlyHint: true, openWorldHint: false } })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const tool = TOOLS.find((t) => t.name === req.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(req.params.name)}; tools: ${TOOLS.map((t) => t.name).join(', ')}`);
    return toolResult(await callTool(tool, req.params.arguments ?? {}, api, now() * 1000));
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [{ uri: TABLES_URI, name: 'tables', title: 'Queryable tables and columns', description: 'The tables the query tool can read, their columns and types, and the SQL rules.', mimeType: 'application/json' }],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, (req) => {
    if (req.params.uri !== TABLES_URI) throw new McpError(ErrorCode.InvalidParams, `unknown resource ${JSON.stringify(req.params.uri)}; resources: ${TABLES_URI}`);
    return { contents: [{ uri: TABLES_URI, mimeType: 'application/json', text: JSON.stringify(tablesDoc()) }] };
  });

  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [TRIAGE_PROMPT] }));

  server.setRequestHandler(GetPromptRequestSchema, (req) => {
    if (req.params.name !== TRIAGE_PROMPT.name) throw new McpError(ErrorCode.InvalidParams, `unknown prompt ${JSON.stringify(req.params.name)}; prompts: ${TRIAGE_PROMPT.name}`);
    const args = req.params.arguments ?? {};
    return {
      description: TRIAGE_PROMPT.description,
      messages: [{ role: 'user', content: { type: 'text', text: triageText(args['service'] || undefined, args['last_minutes']) } }],
    };
  });

  return server;
}
