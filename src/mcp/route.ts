// POST /mcp: the MCP tools over Streamable HTTP on the API port. Stateless: each request gets a fresh
// SDK server and transport (JSON answers, no SSE stream, no session), so nothing outlives a request;
// GET and DELETE get the router's 405, which the SDK's client takes as "no standalone stream".
//
// The tools call the API over loopback with the caller's bearer key, the same code path as
// `tds mcp` over the network: each tool call is authorised exactly as a direct call of its endpoint.
// /mcp itself declares the bearer requirement in its doc (auth: true), like the other read
// endpoints, so the router's one auth check covers it too.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { toApiError } from '../core/errors.js';
import { API } from '../api/endpoints.js';
import { errorReply } from '../api/http.js';
import { createMcpServer } from './server.js';
import { httpApi } from './api.js';
import { type Reply, type Request, type RouteSpec } from '../api/route.js';

/** Largest JSON-RPC body: a tools/call with a long SQL statement fits many times over. */
export const MCP_MAX_BODY = 512 * 1024;
/** A loopback call may run a diagnosis of 10 services on a busy machine. */
const LOOPBACK_TIMEOUT_MS = 120_000;
const FORWARDED = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

/** Where this process reaches its own API: the bound address, or loopback for a wildcard bind. */
export function loopbackUrl(host: string, port: number): string {
  const h = host === '' || host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${h.includes(':') ? `[${h}]` : h}:${port}`;
}

/** The key of an `Authorization: Bearer <key>` header. */
export function bearer(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
}

/**
 * False for a browser page of a non-loopback origin. The MCP specification requires Streamable HTTP
 * servers to check Origin against DNS rebinding; MCP clients outside browsers send none.
 */
export function originAllowed(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  try {
    return ['localhost', '127.0.0.1', '[::1]'].includes(new URL(origin).hostname);
  } catch {
    return false;
  }
}

/** A JSON-RPC error answer (id null: the request could not be read), carrying the service's code and hint. */
export function jsonRpcError(status: number, code: number, message: string, data?: unknown): Reply {
  const error = data === undefined ? { code, message } : { code, message, data };
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: null, error }) };
}

function mcpErrorReply(err: unknown): Reply {
  const e = toApiError(err);
  // A refused key is the HTTP layer's answer, the same on every endpoint (clients look at the status).
  if (e.code === 'UNAUTHORIZED') return errorReply(e);
  // -32600 Invalid Request for what the client sent; -32603 Internal error for the server's own failures.
  return jsonRpcError(e.status, e.status < 500 ? -32600 : -32603, e.message, { code: e.code, hint: e.hint });
}

function webRequest(req: Request): globalThis.Request {
  const headers = new Headers();
  for (const k of FORWARDED) if (req.headers[k] !== undefined) headers.set(k, req.headers[k]!);
  return new globalThis.Request(`http://localhost${req.path}`, { method: req.method, headers, body: new Uint8Array(req.body) });
}

export function mcpRoute(apiUrl: () => string): RouteSpec {
  return {
    method: API.mcp.method,
    path: API.mcp.path,
    doc: API.mcp,
    maxBody: MCP_MAX_BODY,
    errorReply: mcpErrorReply,
    async handler(req) {
      if (!originAllowed(req.headers['origin'])) {
        return jsonRpcError(403, -32600, `Origin ${JSON.stringify(req.headers['origin'])} is not allowed`, { code: 'FORBIDDEN_ORIGIN', hint: 'browser pages may reach /mcp only from localhost; MCP clients send no Origin header' });
      }
      const server = createMcpServer(httpApi({ baseUrl: apiUrl(), apiKey: bearer(req.headers['authorization']), timeoutMs: LOOPBACK_TIMEOUT_MS }));
      const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
      await server.connect(transport);
      try {
        const res = await transport.handleRequest(webRequest(req));
        const headers: Record<string, string> = {};
        const type = res.headers.get('content-type');
        if (type) headers['content-type'] = type;
        return { status: res.status, headers, body: await res.text() };
      } finally {
        await server.close();
      }
    },
  };
}
