// The MCP server's pure pieces: loopback address, bearer, Origin check, schemas taken from the API
// description, the row bound, the window, hostile nesting, the tables resource and the prompt text.
import { describe, expect, it } from 'vitest';
import { bearer, loopbackUrl, mcpRoute, originAllowed } from '../../src/mcp/route.js';
import { ApiError } from '../../src/core/errors.js';
import { boundRows, lastWindow, nestedDeeperThan, plainSchema, TOOLS } from '../../src/mcp/tools.js';
import { tablesDoc, triageText } from '../../src/mcp/guide.js';
import { toolResult } from '../../src/mcp/server.js';
import { API } from '../../src/api/endpoints.js';
import { DiagnoseRequest } from '../../src/api/schemas.js';
import { resolved } from '../../src/core/schema.js';
import { QUERYABLE_TABLES } from '../../src/store/schema.js';

const tool = (name: string) => TOOLS.find((t) => t.name === name)!;

describe('the /mcp route helpers', () => {
  it('loopbackUrl: wildcard binds become loopback, IPv6 is bracketed', () => {
    expect(loopbackUrl('127.0.0.1', 9999)).toBe('http://127.0.0.1:9999');
    expect(loopbackUrl('0.0.0.0', 1)).toBe('http://127.0.0.1:1');
    expect(loopbackUrl('::', 2)).toBe('http://[::1]:2');
    expect(loopbackUrl('fd00::5', 3)).toBe('http://[fd00::5]:3');
    expect(loopbackUrl('10.1.2.3', 4)).toBe('http://10.1.2.3:4');
  });

  it('bearer: the key of a Bearer header, nothing else', () => {
    expect(bearer('Bearer tds_abc')).toBe('tds_abc');
    expect(bearer('bearer  tds_abc ')).toBe('tds_abc');
    expect(bearer('Basic dXNlcg==')).toBeUndefined();
    expect(bearer('Bearer a b')).toBeUndefined();
    expect(bearer(undefined)).toBeUndefined();
  });

  it('originAllowed: no Origin (non-browser clients) and localhost pass; other sites and junk do not', () => {
    expect(originAllowed(undefined)).toBe(true);
    for (const o of ['http://localhost:3000', 'http://127.0.0.1', 'http://[::1]:8080']) expect(originAllowed(o), o).toBe(true);
    for (const o of ['http://evil.example', 'null', 'http://localhost.evil.example', '']) expect(originAllowed(o), o).toBe(false);
  });
});

describe('/mcp error answers', () => {
  const render = mcpRoute(() => '').errorReply!;
  it('are JSON-RPC errors carrying the service\'s code and hint, but a refused key keeps the one error body', () => {
    const big = render(new ApiError('TOO_LARGE', 'too big', 'send less'));
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body as string)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'too big', data: { code: 'TOO_LARGE', hint: 'send less' } } });
    expect(JSON.parse(render(new Error('boom')).body as string).error).toMatchObject({ code: -32603, data: { code: 'INTERNAL' } });
    const denied = render(new ApiError('UNAUTHORIZED', 'no key', 'pass a key'));
    expect([denied.status, JSON.parse(denied.body as string)]).toEqual([401, { error: { code: 'UNAUTHORIZED', message: 'no key', hint: 'pass a key' } }]);
  });
});

describe('tool definitions', () => {
  it('input schemas come from the API description, without OpenAPI extensions', () => {
    expect(tool('list_alerts').inputSchema['properties']).toEqual({ status: expect.objectContaining({ enum: ['firing', 'resolved'] }) });
    const diag = tool('diagnose').inputSchema['properties'] as Record<string, unknown>;
    expect(Object.keys(diag).sort()).toEqual([...Object.keys((resolved(DiagnoseRequest) as any).properties), 'last_minutes'].sort());
    expect(diag['from_ts']).toMatchObject({ type: ['integer', 'null'], minimum: 1_000_000_000_000_000 });
    const trace = (tool('get_trace').inputSchema['properties'] as any).trace_id;
    expect(trace.pattern).toBe(API.getTrace.params.trace_id.schema.pattern);
    for (const t of TOOLS) expect(JSON.stringify(t.inputSchema)).not.toContain('"x-');
    expect(plainSchema({ a: { 'x-unit': 'us', type: 'integer' }, b: [{ 'x-k': 1, c: 2 }] })).toEqual({ a: { type: 'integer' }, b: [{ c: 2 }] });
  });

  it('boundRows keeps at most max rows and says when it cut', () => {
    expect(boundRows([1, 2, 3], 2)).toEqual({ rows: [1, 2], row_count: 3, truncated: true });
    expect(boundRows([1, 2], 2)).toEqual({ rows: [1, 2], row_count: 2, truncated: false });
    expect(boundRows({}, 2)).toEqual({ rows: [], row_count: 0, truncated: false });
  });

  it('lastWindow: N minutes until now, absent without last_minutes, refused beside timestamps or out of range', () => {
    const now = 1_750_000_000_000_000;
    expect(lastWindow({ last_minutes: 30 }, now)).toEqual([now - 30 * 60_000_000, now]);
    expect(lastWindow({}, now)).toBeUndefined();
    expect(() => lastWindow({ last_minutes: 30, from_ts: now }, now)).toThrow(/cannot be combined/);
    for (const bad of [0, 1.5, '30', 7 * 24 * 60 + 1]) expect(() => lastWindow({ last_minutes: bad }, now), String(bad)).toThrow(/whole number/);
  });

  it('nestedDeeperThan counts levels without recursion', () => {
    expect(nestedDeeperThan({ services: ['a', 'b'] }, 3)).toBe(false);
    expect(nestedDeeperThan({ a: { b: { c: {} } } }, 3)).toBe(true);
    let deep: unknown = 'x';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(nestedDeeperThan(deep, 8)).toBe(true);
    expect(nestedDeeperThan('text', 0)).toBe(false);
  });

  it('toolResult: the JSON as text; errors flagged isError with the error body', () => {
    expect(toolResult({ ok: true, value: { services: [] } })).toEqual({ content: [{ type: 'text', text: '{"services":[]}' }] });
    const err = { error: { code: 'ROW_CAP', message: 'm', hint: 'h' } };
    expect(toolResult({ ok: false, error: err })).toEqual({ content: [{ type: 'text', text: JSON.stringify(err) }], isError: true });
  });
});

describe('resource and prompt', () => {
  it('tablesDoc lists exactly the queryable tables with every column and whether it may be null', () => {
    const doc = tablesDoc();
    expect(doc.tables.map((t) => t.name)).toEqual(QUERYABLE_TABLES.map((t) => t.name));
    for (const [i, t] of QUERYABLE_TABLES.entries()) {
      expect(doc.tables[i]!.columns).toEqual(t.columns.map((c) => ({ name: c.name, type: c.type, nullable: !c.required })));
    }
    expect(doc.rules.join(' ')).toMatch(/WITH/);
    expect(tablesDoc([{ name: 't', retentionColumn: null, columns: [{ name: 'c', type: 'BIGINT', required: true }] }]).tables).toEqual([{ name: 't', columns: [{ name: 'c', type: 'BIGINT', nullable: false }] }]);
  });

  it('triageText names the service and window, or starts from anomalies without one', () => {
    const one = triageText('checkout', '45');
    expect(one).toContain('"checkout"');
    expect(one).toContain('last_minutes 45');
    expect(one).not.toContain('get_anomalies');
    const none = triageText(undefined, 'soon');
    expect(none).toContain('get_anomalies');
    expect(none).toContain('last 15 minutes');
  });
});
