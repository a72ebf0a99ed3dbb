// The MCP server's pure pieces: loopback address, bearer, Origin check, schemas taken from the API
// description, the row bound and byte budgets, the page SQL, the window, hostile nesting, the tables resource and the prompt text.
import { describe, expect, it } from 'vitest';
import { bearer, loopbackUrl, mcpRoute, originAllowed } from '../../src/mcp/route.js';
import { ApiError } from '../../src/core/errors.js';
import { boundRows, lastWindow, nestedDeeperThan, plainSchema, TOOLS } from '../../src/mcp/tools.js';
import { fitRows, pageSql, rowsWithin } from '../../src/mcp/budget.js';
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

  it('boundRows keeps at most max rows and says when it cut, with the statement for the next rows', () => {
    const big = 1 << 20;
    expect(boundRows('SELECT 1', [1, 2, 3], 2, big)).toEqual({ rows: [1, 2], row_count: 3, truncated: true, next_sql: pageSql('SELECT 1', 2) });
    expect(boundRows('SELECT 1', [1, 2], 2, big)).toEqual({ rows: [1, 2], row_count: 2, truncated: false });
    expect(boundRows('SELECT 1', {}, 2, big)).toEqual({ rows: [], row_count: 0, truncated: false });
  });

  it('boundRows keeps the first rows that fit the byte budget, and says why when not even one does', () => {
    const rows = Array.from({ length: 100 }, (_v, i) => ({ i, text: 'x'.repeat(90) }));
    for (const budget of [2048, 3000, 5000, 9000]) {
      const out = boundRows('SELECT i FROM t ORDER BY i', rows, 200, budget);
      expect(Buffer.byteLength(JSON.stringify(out)), String(budget)).toBeLessThanOrEqual(budget);
      // The most that fit: one row more would not.
      const more = { ...out, rows: rows.slice(0, out.rows.length + 1), next_sql: pageSql('SELECT i FROM t ORDER BY i', out.rows.length + 1) };
      expect(Buffer.byteLength(JSON.stringify(more))).toBeGreaterThan(budget);
      expect(out).toMatchObject({ row_count: 100, truncated: true, next_sql: pageSql('SELECT i FROM t ORDER BY i', out.rows.length) });
      expect(out.rows).toEqual(rows.slice(0, out.rows.length));
    }
    const huge = boundRows('SELECT body FROM svc_logs', [{ body: 'y'.repeat(5000) }], 200, 2048);
    expect(huge).toMatchObject({ rows: [], row_count: 1, truncated: true });
    expect(huge.next_sql).toBeUndefined();
    expect(huge.hint).toMatch(/first row alone takes 5\d{3} bytes.*max_bytes/);
  });

  it('rowsWithin says truncated when rows were cut before it, and fitRows measures the envelope it is given', () => {
    const out = rowsWithin([{ a: 1 }], 4096, true, (kept) => ({ anomalies: kept }), (o) => `page ${o}`);
    expect(out).toEqual({ anomalies: [{ a: 1 }], truncated: true, next_sql: 'page 1' });
    // An envelope that grows with the rows it keeps is measured whole.
    const { kept } = fitRows([1, 2, 3, 4], 30, (k) => ({ pad: 'p'.repeat(k * 5), rows: [1, 2, 3, 4].slice(0, k) }));
    expect(Buffer.byteLength(JSON.stringify({ pad: 'p'.repeat(kept * 5), rows: [1, 2, 3, 4].slice(0, kept) }))).toBeLessThanOrEqual(30);
    expect(Buffer.byteLength(JSON.stringify({ pad: 'p'.repeat((kept + 1) * 5), rows: [1, 2, 3, 4].slice(0, kept + 1) }))).toBeGreaterThan(30);
  });

  it('pageSql wraps the statement as a derived table on lines of its own, and pages a page by moving its offset', () => {
    expect(pageSql('SELECT a FROM t ORDER BY a;  ', 10)).toBe('SELECT * FROM (\nSELECT a FROM t ORDER BY a\n) AS page OFFSET 10');
    expect(pageSql('SELECT a FROM t -- last line comment', 1)).toBe('SELECT * FROM (\nSELECT a FROM t -- last line comment\n) AS page OFFSET 1');
    expect(pageSql(pageSql('SELECT a FROM t ORDER BY a', 10), 5)).toBe(pageSql('SELECT a FROM t ORDER BY a', 15));
  });

  it('the diagnose tool defaults to the compact view within its budget; query and get_anomalies take max_bytes', () => {
    const diag = tool('diagnose').inputSchema['properties'] as Record<string, any>;
    expect(diag['detail']).toMatchObject({ enum: ['full', 'findings'], default: 'findings' });
    expect(diag['max_bytes']).toMatchObject({ type: 'integer', default: 32 * 1024 });
    expect(tool('diagnose').description).toMatch(/detail: full/);
    for (const name of ['query', 'get_anomalies']) {
      expect((tool(name).inputSchema['properties'] as any).max_bytes, name).toMatchObject({ type: 'integer', minimum: 2048 });
      expect(tool(name).description, name).toMatch(/next_sql/);
    }
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
