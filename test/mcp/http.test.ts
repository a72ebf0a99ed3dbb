// POST /mcp on the real server: the shared suite with the SDK's Streamable HTTP client, then raw
// requests a hostile or broken client could send. Each gets a JSON-RPC error (or the documented
// status) and leaves the server serving.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { useTestServer } from '../helpers/server.js';
import { call, mcpSuite, seed } from './suite.js';
import { MCP_MAX_BODY } from '../../src/mcp/route.js';

const srv = useTestServer();
let client: Client;
let traceId = '';

async function connect(): Promise<Client> {
  const c = new Client({ name: 'tds-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${srv.api}/mcp`)));
  return c;
}

beforeAll(async () => {
  ({ traceId } = await seed(srv));
  client = await connect();
});

afterAll(async () => {
  await client?.close();
});

mcpSuite('Streamable HTTP (/mcp)', { client: () => client, traceId: () => traceId });

const ACCEPT = 'application/json, text/event-stream';
const PROTOCOL = '2025-06-18';

async function post(body: string | Uint8Array, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${srv.api}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': PROTOCOL, ...headers }, body: body as BodyInit });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const rpc = (id: number, method: string, params: unknown = {}) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

function expectRpcError(r: { status: number; body: any }, status: number, code: number, message: RegExp) {
  expect(r.status).toBe(status);
  expect(r.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code } });
  expect(r.body.error.message).toMatch(message);
}

describe('/mcp against malformed and hostile JSON-RPC', () => {
  it('not JSON, not JSON-RPC, an empty body: 400 with a JSON-RPC parse error', async () => {
    expectRpcError(await post('{"jsonrpc": "2.0", "id": 1, "method": '), 400, -32700, /Parse error/);
    expectRpcError(await post('{"hello": "world"}'), 400, -32700, /JSON-RPC/);
    expectRpcError(await post(''), 400, -32700, /Parse error/);
  });

  it('a body over the limit: 413 with a JSON-RPC error carrying the service\'s code and hint, before it is parsed', async () => {
    const huge = rpc(1, 'tools/call', { name: 'query', arguments: { sql: `SELECT '${'x'.repeat(MCP_MAX_BODY)}'` } });
    const r = await post(huge);
    expectRpcError(r, 413, -32600, /exceeds the limit/);
    expect(r.body.error.data).toMatchObject({ code: 'TOO_LARGE' });
  });

  it('a batch over the SDK\'s limit, a deeply nested message and a wrong media type get clear errors', async () => {
    const batch = `[${Array.from({ length: 101 }, (_v, i) => rpc(i, 'tools/list')).join(',')}]`;
    expectRpcError(await post(batch), 400, -32600, /Batch/);
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect((await post(deep)).status).toBe(400);
    expectRpcError(await post(rpc(1, 'tools/list'), { 'content-type': 'text/plain' }), 415, -32000, /Content-Type/);
    expectRpcError(await post(rpc(1, 'tools/list'), { accept: 'application/json' }), 406, -32000, /Not Acceptable/);
  });

  it('an unknown method, tool arguments that are not an object, or absurdly nested ones: errors in a 200 answer, not a crash', async () => {
    expect((await post(rpc(6, 'tables/drop'))).body).toEqual({ jsonrpc: '2.0', id: 6, error: { code: -32601, message: 'Method not found' } });
    const bad = await post(rpc(7, 'tools/call', { name: 'query', arguments: 'SELECT 1' }));
    expect(bad.status).toBe(200);
    // The SDK's own validation of params: -32603 with a message naming the field.
    expect(bad.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32603 } });
    expect(bad.body.error.message).toMatch(/arguments/);
    // Written by hand: JSON.stringify itself overflows the stack on it.
    const nested = '['.repeat(50_000) + '"x"' + ']'.repeat(50_000);
    const deep = await post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"diagnose","arguments":{"services":${nested}}}}`);
    expect(deep.status).toBe(200);
    expect(deep.body).toMatchObject({ id: 8, result: { isError: true } });
    expect(JSON.parse(deep.body.result.content[0].text).error).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/nest deeper/) });
  });

  it('a notification is accepted with 202 and no body; GET (no stream in stateless mode) is 405', async () => {
    const r = await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    expect(r).toEqual({ status: 202, body: undefined });
    expect((await fetch(`${srv.api}/mcp`, { headers: { accept: 'text/event-stream' } })).status).toBe(405);
  });

  it('a browser page from another origin is refused (DNS rebinding); localhost is not', async () => {
    const r = await post(rpc(1, 'tools/list'), { origin: 'http://evil.example' });
    expectRpcError(r, 403, -32600, /Origin/);
    expect(r.body.error.data.hint).toMatch(/localhost/);
    const local = await post(rpc(2, 'tools/list'), { origin: 'http://localhost:5173' });
    expect(local.status).toBe(200);
    expect(local.body.result.tools).toHaveLength(6);
  });

  it('after all of that the server is healthy and a new client works', async () => {
    expect((await fetch(`${srv.api}/healthz`)).status).toBe(200);
    const c = await connect();
    try {
      expect((await call(c, 'list_services')).isError).toBe(false);
    } finally {
      await c.close();
    }
  });
});
