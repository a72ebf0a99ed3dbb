// One conformance suite for the MCP server, run by each transport's test file (stdio.test.ts,
// http.test.ts) with the SDK's own Client against a real server: every tool with valid and invalid
// input, the resource, the prompt, and the triage loop end to end (OTLP in, diagnose, a finding's
// drill_down_sql through the query tool, its rows back).
import { beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { postOtlp } from '../helpers/otlp.js';
import { tracesJson, type JsonSpan } from '../../testkit/otlp-json.js';
import type { TestServer } from '../helpers/server.js';
import { QUERYABLE_TABLES } from '../../src/store/schema.js';

export const SERVICE = 'mcp-shop';
const MIN = 60_000_000;
const hex = (n: number) => randomBytes(n).toString('hex');

/** An hour of healthy GET /cart calls, then ten minutes in which every other call fails; one known trace. */
export async function seed(srv: TestServer): Promise<{ traceId: string }> {
  const now = Date.now() * 1000;
  const spans: JsonSpan[] = [];
  const http = (code: number) => ({ 'http.request.method': 'GET', 'http.route': '/cart', 'http.response.status_code': code });
  for (let t = now - 70 * MIN; t < now - 10 * MIN; t += 30_000_000) spans.push({ name: 'GET /cart', startUs: t, durationUs: 3_000, attributes: http(200) });
  let i = 0;
  for (let t = now - 10 * MIN; t < now - 5_000_000; t += 10_000_000, i++) {
    const failing = i % 2 === 0;
    spans.push({ name: 'GET /cart', startUs: t, durationUs: 3_000, error: failing, attributes: { ...http(failing ? 500 : 200), ...(failing ? { 'error.type': 'CartStoreTimeout' } : {}) } });
  }
  const traceId = hex(16);
  const root = hex(8);
  spans.push(
    { traceId, spanId: root, name: 'GET /cart', startUs: now - 60_000_000, durationUs: 8_000, attributes: http(200) },
    { traceId, spanId: hex(8), parentSpanId: root, kind: 3, name: 'SELECT', startUs: now - 59_999_000, durationUs: 5_000, attributes: { 'db.system': 'postgresql' } },
  );
  expect((await postOtlp(srv.otlpHttp, 'traces', tracesJson(SERVICE, spans))).status).toBe(200);
  return { traceId };
}

interface ToolOut {
  isError: boolean;
  value: any;
}

export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolOut> {
  const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[] };
  expect(r.content).toHaveLength(1);
  expect(r.content[0]!.type).toBe('text');
  return { isError: r.isError === true, value: JSON.parse(r.content[0]!.text) };
}

/** A tool error carrying the service's error body: code, message and a hint to act on. */
function expectToolError(out: ToolOut, code: string, hint?: RegExp) {
  expect(out.isError, JSON.stringify(out.value)).toBe(true);
  expect(out.value.error.code).toBe(code);
  expect(out.value.error.message.length).toBeGreaterThan(0);
  expect(out.value.error.hint).toMatch(hint ?? /./);
}

export function mcpSuite(transport: string, ctx: { client: () => Client; traceId: () => string }) {
  describe(`MCP over ${transport}`, () => {
    let client: Client;
    beforeAll(() => {
      client = ctx.client();
    });

    it('lists the six tools, each with a description and an object input schema', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['diagnose', 'get_anomalies', 'get_trace', 'list_alerts', 'list_services', 'query']);
      for (const t of tools) {
        expect(t.description!.length, t.name).toBeGreaterThan(80);
        expect(t.inputSchema.type).toBe('object');
        expect(JSON.stringify(t.inputSchema)).not.toMatch(/"x-/);
      }
      const query = tools.find((t) => t.name === 'query')!;
      for (const table of QUERYABLE_TABLES) expect(query.description).toContain(table.name);
      expect(query.description).toMatch(/WITH/);
      expect(query.description).toMatch(/TIMESTAMP '/);
    });

    it('list_services: the seeded service; an unknown argument is a tool error naming the arguments', async () => {
      const ok = await call(client, 'list_services');
      expect(ok.isError).toBe(false);
      expect(ok.value.services.map((s: any) => s.service_name)).toContain(SERVICE);
      expectToolError(await call(client, 'list_services', { service: SERVICE }), 'BAD_REQUEST', /takes no arguments/);
    });

    it('get_anomalies: the endpoint\'s answer with its truncated flag; a timestamp in seconds is refused with the unit hint', async () => {
      const ok = await call(client, 'get_anomalies', { service: SERVICE, last_minutes: 120 });
      expect(ok).toEqual({ isError: false, value: { anomalies: [], truncated: false } });
      expectToolError(await call(client, 'get_anomalies', { from_ts: Math.floor(Date.now() / 1000) }), 'INVALID_TIMESTAMP', /seconds/);
      expectToolError(await call(client, 'get_anomalies', { last_minutes: 60, to_ts: Date.now() * 1000 }), 'BAD_REQUEST', /either last_minutes or the timestamps/);
    });

    it('diagnose: the compact view per service within its default budget, the full block on asking, errors for an unknown one; no service is refused with the hint', async () => {
      const ok = await call(client, 'diagnose', { services: [SERVICE, 'no-such-service'], last_minutes: 15 });
      expect(ok.isError).toBe(false);
      expect(ok.value.detail).toBe('findings');
      expect(ok.value.results[SERVICE].coverage.has_spans).toBe(true);
      expect(ok.value.results[SERVICE].omitted.full_call).toMatchObject({ detail: 'full', services: [SERVICE] });
      expect(ok.value.budget).toMatchObject({ max_bytes: 32 * 1024, fits: true });
      expect(ok.value.budget.bytes).toBe(Buffer.byteLength(JSON.stringify(ok.value)));
      expect(ok.value.errors['no-such-service']).toMatch(/no telemetry/);
      const { full_call } = ok.value.results[SERVICE].omitted;
      const full = await call(client, 'diagnose', full_call);
      expect(full.isError).toBe(false);
      expect(full.value.detail).toBeUndefined();
      expect(full.value.results[SERVICE].operation_summaries.length).toBeGreaterThan(0);
      expect(full.value.results[SERVICE].findings).toEqual(ok.value.results[SERVICE].findings);
      const small = await call(client, 'diagnose', { service: SERVICE, max_bytes: 2048 });
      expect(Buffer.byteLength(JSON.stringify(small.value))).toBeLessThanOrEqual(2048);
      expectToolError(await call(client, 'diagnose', { service: SERVICE, detail: 'full', max_bytes: 4096 }), 'BAD_REQUEST', /detail.*findings/);
      expectToolError(await call(client, 'diagnose', { services: [] }), 'BAD_REQUEST', /services/);
      expectToolError(await call(client, 'diagnose', { service: SERVICE, from_ts: 1_700_000_000_000 }), 'INVALID_TIMESTAMP', /milliseconds/);
    });

    it('query: rows with the row count; WITH is refused with the rewrite hint; no sql is refused', async () => {
      const sql = `SELECT operation, count(*) AS n FROM svc_spans WHERE service_name = '${SERVICE}' AND timestamp >= TIMESTAMP '2000-01-01 00:00:00' GROUP BY ALL ORDER BY n DESC`;
      const ok = await call(client, 'query', { sql });
      expect(ok.isError).toBe(false);
      expect(ok.value.truncated).toBe(false);
      expect(ok.value.rows[0]).toMatchObject({ operation: 'GET /cart' });
      expect(ok.value.row_count).toBe(ok.value.rows.length);
      const cut = await call(client, 'query', { sql: `SELECT span_id FROM svc_spans WHERE timestamp >= TIMESTAMP '2000-01-01 00:00:00'`, max_rows: 3 });
      expect(cut.value.rows).toHaveLength(3);
      expect(cut.value.truncated).toBe(true);
      expect(cut.value.row_count).toBeGreaterThan(3);
      expectToolError(await call(client, 'query', { sql: 'WITH t AS (SELECT 1 AS x) SELECT x FROM t' }), 'CTE_NOT_ALLOWED', /derived-table subquery/);
      expectToolError(await call(client, 'query', { sql: 'SELECT 1', max_bytes: 100 }), 'BAD_REQUEST', /leave it out/);
      expectToolError(await call(client, 'query', { sql: "SELECT * FROM read_csv('/etc/passwd')" }), 'FUNCTION_NOT_ALLOWED');
      expectToolError(await call(client, 'query', {}), 'BAD_REQUEST', /SELECT/);
      expectToolError(await call(client, 'query', { sql: 'SELECT 1', max_rows: 0 }), 'BAD_REQUEST');
    });

    it('query: a byte budget cuts the rows, and next_sql pages through the rest in order until none is left', async () => {
      const sql = `SELECT span_id, timestamp, span_name FROM svc_spans WHERE service_name = '${SERVICE}' AND timestamp >= TIMESTAMP '2000-01-01 00:00:00' ORDER BY timestamp, span_id`;
      const all = await call(client, 'query', { sql, max_rows: 10_000, max_bytes: 256 * 1024 });
      expect(all.value.truncated).toBe(false);
      expect(all.value.rows.length).toBeGreaterThan(100);
      const paged: unknown[] = [];
      let page = await call(client, 'query', { sql, max_rows: 10_000, max_bytes: 4096 });
      for (let i = 0; i < 100; i++) {
        expect(page.isError, JSON.stringify(page.value)).toBe(false);
        expect(Buffer.byteLength(JSON.stringify(page.value))).toBeLessThanOrEqual(4096);
        paged.push(...page.value.rows);
        if (!page.value.truncated) break;
        page = await call(client, 'query', { sql: page.value.next_sql, max_rows: 10_000, max_bytes: 4096 });
      }
      expect(paged).toEqual(all.value.rows);
    });

    it('get_trace: the whole trace; a malformed id and an unknown one are tool errors with hints', async () => {
      const ok = await call(client, 'get_trace', { trace_id: ctx.traceId() });
      expect(ok.isError).toBe(false);
      expect(ok.value.span_count).toBe(2);
      expect(ok.value.root_span.span_name).toBe('GET /cart');
      expectToolError(await call(client, 'get_trace', { trace_id: 'not-a-trace' }), 'INVALID_TRACE_ID', /32 hex digits/);
      expectToolError(await call(client, 'get_trace', { trace_id: 'ab'.repeat(16) }), 'NOT_FOUND', /retention|ingested/);
      expectToolError(await call(client, 'get_trace', {}), 'BAD_REQUEST', /32 hex digits/);
    });

    it('list_alerts: the instances; an unknown status is refused naming the allowed ones', async () => {
      expect(await call(client, 'list_alerts', { status: 'firing' })).toEqual({ isError: false, value: { alerts: [] } });
      expectToolError(await call(client, 'list_alerts', { status: 'open' }), 'INVALID_STATUS', /firing/);
    });

    it('an unknown tool is a protocol error, and the server keeps serving', async () => {
      await expect(client.callTool({ name: 'drop_tables', arguments: {} })).rejects.toThrow(/unknown tool/);
      expect((await call(client, 'list_services')).isError).toBe(false);
    });

    it('the tables resource lists every queryable table with its columns, from the schema definition', async () => {
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(['tds://schema/tables']);
      const { contents } = await client.readResource({ uri: 'tds://schema/tables' });
      const doc = JSON.parse((contents[0] as { text: string }).text);
      expect(doc.tables.map((t: any) => t.name)).toEqual(QUERYABLE_TABLES.map((t) => t.name));
      expect(doc.tables[0].columns.map((c: any) => c.name)).toEqual(QUERYABLE_TABLES[0]!.columns.map((c) => c.name));
      await expect(client.readResource({ uri: 'tds://nope' })).rejects.toThrow(/unknown resource/);
    });

    it('the triage prompt walks through services, diagnose and drill_down_sql', async () => {
      const { prompts } = await client.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(['triage']);
      const p = await client.getPrompt({ name: 'triage', arguments: { service: SERVICE, last_minutes: '30' } });
      const text = (p.messages[0]!.content as { text: string }).text;
      for (const step of ['list_services', 'diagnose', 'drill_down_sql', 'query', SERVICE, 'last_minutes 30']) expect(text).toContain(step);
    });

    it('the triage loop: diagnose blames the failing operation and its drill_down_sql returns the error spans', async () => {
      const d = await call(client, 'diagnose', { services: [SERVICE] });
      expect(d.isError).toBe(false);
      const block = d.value.results[SERVICE];
      const finding = block.findings.find((f: any) => f.drill_down_sql && f.signal === 'error_rate');
      expect(finding, JSON.stringify(block.findings)).toBeDefined();
      expect(finding.operation).toBe('GET /cart');
      expect(finding.after).toBeGreaterThan(finding.before);
      const rows = await call(client, 'query', { sql: finding.drill_down_sql });
      expect(rows.isError, JSON.stringify(rows.value)).toBe(false);
      expect(rows.value.rows.length).toBeGreaterThan(0);
      for (const r of rows.value.rows) expect(r).toMatchObject({ service_name: SERVICE, operation: 'GET /cart', error_type: 'CartStoreTimeout' });
      const flagged = block.anomalous_operations.find((o: any) => o.operation === 'GET /cart');
      const ops = await call(client, 'query', { sql: flagged.drill_down_sql, max_bytes: 256 * 1024 });
      expect(ops.value.rows.length).toBe(Math.min(flagged.count, 200));
    });
  });
}
