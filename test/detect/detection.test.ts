// End to end: telemetry with injected shifts goes in through OTLP (two hours backfilled), the
// scheduled pass closes the buckets and runs the detector, and GET /v1/anomalies answers with the
// right rows, ranked and grouped as the spec says. An improvement is never stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { postOtlp } from '../helpers/otlp.js';
import { rng } from '../../testkit/rng.js';
import { logsJson, tracesJson, type JsonLog, type JsonSpan } from '../../testkit/otlp-json.js';
import { TOOLS, callTool } from '../../src/mcp/tools.js';
import { MIN_TOOL_BYTES } from '../../src/mcp/budget.js';
import { apiClient, httpTransport } from '../../src/client/api.js';
import { clientFor, queryRows } from '../helpers/client.js';
import { anomalyPageSql } from '../../src/detect/incidents.js';

const B = 300_000_000; // 5 minutes in µs
const BUCKETS = 24;
const SHIFT_AT = 16; // first bucket of the new regime
const nowUs = Date.now() * 1000;
const firstBucket = Math.floor(nowUs / B) - BUCKETS; // every data bucket closed (grace 0)
const shiftBucket = firstBucket + SHIFT_AT;

let srv: TestServer;
interface Anomaly {
  service_name: string;
  operation: string;
  signal: string;
  before: number;
  after: number;
  ts_shift_us: number;
  ts_shift: string;
  incident_id: string | null;
  drill_down_sql: string;
  direction: string;
  detected_at: string;
}
let anomalies: Anomaly[] = [];

beforeAll(async () => {
  // Backfill with the detector idle, then restart: the pass at start takes in every closed bucket.
  const loader = await startTestServer({ SVC_DETECT_INTERVAL_S: '3600', SVC_DETECT_GRACE_S: '0' });
  srv = loader;
  const r = rng(7);
  for (let b = 0; b < BUCKETS; b++) {
    const t0 = (firstBucket + b) * B;
    const after = b >= SHIFT_AT;
    const spans: JsonSpan[] = [];
    for (let i = 0; i < 80; i++) {
      const ts = t0 + Math.floor(r() * (B - 2_000_000));
      // checkout: error rate 1% → 25%; search: latency ~20 ms → ~45 ms; catalog: errors 20% → 1% (an improvement).
      spans.push({ name: 'POST /pay', startUs: ts, durationUs: 15_000 + Math.floor(r() * 2000), error: r() < (after ? 0.25 : 0.01), attributes: { 'http.request.method': 'POST', 'http.route': '/pay' } });
      spans.push({ name: 'GET /search', startUs: ts + 1, durationUs: Math.floor((after ? 45_000 : 20_000) * (0.9 + 0.2 * r())), attributes: { 'http.request.method': 'GET', 'http.route': '/search' } });
      spans.push({ name: 'GET /catalog', startUs: ts + 2, durationUs: 5_000, error: r() < (after ? 0.01 : 0.2), attributes: { 'http.request.method': 'GET', 'http.route': '/catalog' } });
      // two more slow routes, so the rows outgrow one page of the MCP tool's smallest budget
      for (const route of ['/cart', '/stock']) {
        spans.push({ name: `GET ${route}`, startUs: ts + 3, durationUs: Math.floor((after ? 25_000 : 10_000) * (0.9 + 0.2 * r())), attributes: { 'http.request.method': 'GET', 'http.route': route } });
      }
    }
    expect((await postOtlp(srv.otlpHttp, 'traces', tracesJson('shop', spans))).status).toBe(200);
    const logs: JsonLog[] = [];
    for (let i = 0; i < 40; i++) logs.push({ timeUs: t0 + i * 1_000_000, body: `request ${i} served` });
    if (after) for (let i = 0; i < 30; i++) logs.push({ timeUs: t0 + i * 2_000_000 + 5, body: `payment ${i} failed: gateway timeout`, severity: 17, severityText: 'ERROR' });
    expect((await postOtlp(srv.otlpHttp, 'logs', logsJson('shop', logs))).status).toBe(200);
  }
  expect(await loader.stop()).toBe(0);
  srv = await startTestServer({ SVC_DETECT_INTERVAL_S: '1', SVC_DETECT_GRACE_S: '0' }, loader.dataDir);
  // The pass runs at start and then every second; wait until it has taken in every bucket.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const st = (await (await fetch(`${srv.api}/admin/status`)).json()) as { status: { detection: { last: { closed_before_bucket: number } | null; passes: number } } };
    const res = await fetch(`${srv.api}/v1/anomalies?from_ts=${firstBucket * B}&to_ts=${nowUs}`);
    anomalies = ((await res.json()) as { anomalies: Anomaly[] }).anomalies;
    if (anomalies.length >= 3 && st.status.detection.passes >= 2) break;
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 300));
  }
}, 90_000);

afterAll(async () => {
  await srv?.stop();
  rmSync(srv.dataDir, { recursive: true, force: true });
});

const find = (signal: string, operation: string) => anomalies.find((a) => a.signal === signal && a.operation === operation);

describe('detection end to end', () => {
  it('finds the error-rate rise at the right bucket with raw-unit means', () => {
    const a = find('error_rate', 'POST /pay');
    expect(a, JSON.stringify(anomalies, null, 1)).toBeDefined();
    expect(a!.ts_shift_us).toBe(shiftBucket * B);
    expect(a!.before).toBeLessThan(5);
    expect(a!.after).toBeGreaterThan(15);
    expect(a!.direction).toBe('worsening');
    expect(new Date(a!.ts_shift).getTime() * 1000).toBe(a!.ts_shift_us);
  });

  it('finds the latency doubling and the error logs appearing', () => {
    const lat = find('latency_p95', 'GET /search');
    expect(lat?.ts_shift_us).toBe(shiftBucket * B);
    expect(lat!.after / lat!.before).toBeGreaterThan(1.8);
    const logs = find('error_log_rate', 'shop');
    expect(logs?.ts_shift_us).toBe(shiftBucket * B);
    expect(logs!.before).toBe(0);
    // 30 error logs a bucket from the shift on; a closed bucket after the data (if the test crosses
    // a bucket boundary) counts as 0: no logs from a known service is a zero count.
    expect(logs!.after).toBeGreaterThan(20);
    expect(logs!.after).toBeLessThanOrEqual(30);
  });

  it('never stores an improvement', () => {
    expect(anomalies.filter((a) => a.operation === 'GET /catalog' && a.signal === 'error_rate')).toEqual([]);
    for (const a of anomalies) expect(a.after).toBeGreaterThan(a.before);
  });

  it('ranks by (after − before) / (after + before), descending', () => {
    const m = anomalies.map((a) => (a.after - a.before) / (a.after + a.before));
    for (let i = 1; i < m.length; i++) expect(m[i]!).toBeLessThanOrEqual(m[i - 1]! + 1e-12);
    expect(anomalies[0]!.signal).toBe('error_log_rate'); // from a zero baseline: magnitude 1.0
  });

  it('groups shifts of one service in the same bucket into one incident', () => {
    const same = anomalies.filter((a) => a.ts_shift_us === shiftBucket * B);
    expect(same.length).toBeGreaterThanOrEqual(3);
    const ids = new Set(same.map((a) => a.incident_id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^inc_/);
  });

  it('scopes grouping to the rows returned: a lone row has no incident', async () => {
    const res = await fetch(`${srv.api}/v1/anomalies?from_ts=${firstBucket * B}&to_ts=${nowUs}&service=nobody`);
    expect(await res.json()).toEqual({ anomalies: [], truncated: false });
    const one = anomalies.find((a) => a.signal === 'latency_p95')!;
    const res2 = await fetch(`${srv.api}/v1/anomalies?from_ts=${one.ts_shift_us}&to_ts=${one.ts_shift_us}&service=shop`);
    const body = (await res2.json()) as { anomalies: Anomaly[] };
    expect(body.anomalies.length).toBeGreaterThan(1); // still several at that bucket
    const lone = await fetch(`${srv.api}/v1/anomalies?from_ts=${one.ts_shift_us + 1}&to_ts=${nowUs}`);
    for (const a of ((await lone.json()) as { anomalies: Anomaly[] }).anomalies) expect(a.incident_id === null || typeof a.incident_id === 'string').toBe(true);
  });

  it('every drill_down_sql runs through /v1/query as it stands and returns the raw telemetry', async () => {
    for (const a of anomalies) {
      const rows = await queryRows(clientFor(srv.api), a.drill_down_sql);
      expect(rows.length, a.drill_down_sql).toBeGreaterThan(0);
    }
  });

  it('the rows from any offset on come, in the same order, from the page statement over /v1/query', async () => {
    expect(anomalies.length).toBeGreaterThanOrEqual(3);
    for (const [q, list] of [
      [{ from: firstBucket * B, to: nowUs }, anomalies],
      [{ from: firstBucket * B, to: nowUs, service: 'nobody' }, []],
    ] as const) {
      const rows = await queryRows(clientFor(srv.api), anomalyPageSql(q, 1));
      expect(rows.map((r) => [r['service_name'], r['operation'], r['signal'], r['ts_shift_us'], r['drill_down_sql']])).toEqual(
        list.slice(1).map((a) => [a.service_name, a.operation, a.signal, a.ts_shift_us, a.drill_down_sql]),
      );
    }
  });

  it('the MCP get_anomalies tool answers within its byte budget, and next_sql pages through the rest with the query tool', async () => {
    const api = apiClient(httpTransport({ baseUrl: srv.api, timeoutMs: 10_000 }));
    const tool = (name: string) => TOOLS.find((t) => t.name === name)!;
    // room for about half the rows: the answer must be cut, and the rest come through next_sql
    const budget = Math.max(MIN_TOOL_BYTES, Math.floor(Buffer.byteLength(JSON.stringify({ anomalies, truncated: false })) / 2));
    const first = await callTool(tool('get_anomalies'), { from_ts: firstBucket * B, to_ts: nowUs, max_bytes: budget }, api, nowUs);
    if (!first.ok) throw new Error(JSON.stringify(first.error));
    const page = first.value as { anomalies: Anomaly[]; truncated: boolean; next_sql: string };
    expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(budget);
    expect(page.truncated).toBe(true);
    expect(page.anomalies).toEqual(anomalies.slice(0, page.anomalies.length));
    const seen = page.anomalies.map((a) => a.drill_down_sql);
    let sql = page.next_sql;
    for (let i = 0; sql && i < 50; i++) {
      const next = await callTool(tool('query'), { sql, max_bytes: budget }, api, nowUs);
      if (!next.ok) throw new Error(JSON.stringify(next.error));
      const v = next.value as { rows: { drill_down_sql: string }[]; next_sql?: string };
      expect(Buffer.byteLength(JSON.stringify(v))).toBeLessThanOrEqual(budget);
      seen.push(...v.rows.map((r) => r.drill_down_sql));
      sql = v.next_sql!;
    }
    expect(seen).toEqual(anomalies.map((a) => a.drill_down_sql));
  });

  it('a later pass, which late data makes derive the series again, writes no duplicate', async () => {
    const passes = async () => ((await (await fetch(`${srv.api}/admin/status`)).json()) as { status: { detection: { passes: number } } }).status.detection.passes;
    const p0 = await passes();
    // a late span in a bucket before the shift: the next pass closes it again and refeeds the series
    const late: JsonSpan = { name: 'GET /search', startUs: (firstBucket + 2) * B + 100_000_000, durationUs: 20_000, attributes: { 'http.request.method': 'GET', 'http.route': '/search' } };
    expect((await postOtlp(srv.otlpHttp, 'traces', tracesJson('shop', [late]))).status).toBe(200);
    while ((await passes()) < p0 + 2) await new Promise((r) => setTimeout(r, 100)); // a pass that began after the span was stored has ended
    const res = await fetch(`${srv.api}/v1/anomalies?from_ts=${firstBucket * B}&to_ts=${nowUs}`);
    const again = ((await res.json()) as { anomalies: Anomaly[] }).anomalies;
    expect(again.map((a) => [a.signal, a.operation, a.ts_shift_us]).sort()).toEqual(anomalies.map((a) => [a.signal, a.operation, a.ts_shift_us]).sort());
  });

  it('fires alerts for the shifts and filters them by status', async () => {
    const all = (await (await fetch(`${srv.api}/v1/alerts`)).json()) as { alerts: { status: string; service_name: string; container_name: string; occurrence_count: number; rule_id: string }[] };
    expect(all.alerts.length).toBeGreaterThanOrEqual(3);
    for (const a of all.alerts) {
      expect(a.service_name).toBe('shop');
      expect(a.container_name).toBe('shop');
      expect(a.occurrence_count).toBeGreaterThanOrEqual(1);
      expect(a.rule_id).toMatch(/^builtin\./);
    }
    const firing = (await (await fetch(`${srv.api}/v1/alerts?status=firing`)).json()) as { alerts: { status: string }[] };
    expect(firing.alerts.every((a) => a.status === 'firing')).toBe(true);
  });
});

describe('anomalies and alerts reject bad input', () => {
  // [path, error code, what the message or hint must name]
  const cases: [string, string, RegExp][] = [
    ['/v1/anomalies', 'INVALID_TIMESTAMP', /from_ts/],
    [`/v1/anomalies?from_ts=${firstBucket * B}`, 'INVALID_TIMESTAMP', /to_ts/],
    ['/v1/anomalies?from_ts=1700000000&to_ts=1700000600', 'INVALID_TIMESTAMP', /seconds/],
    ['/v1/anomalies?from_ts=1700000000000&to_ts=1700000600000', 'INVALID_TIMESTAMP', /milliseconds/],
    ['/v1/anomalies?from_ts=1700000000000000000&to_ts=1700000600000000000', 'INVALID_TIMESTAMP', /nanoseconds/],
    ['/v1/anomalies?from_ts=abc&to_ts=1700000600000000', 'INVALID_TIMESTAMP', /from_ts/],
    ['/v1/anomalies?from_ts=1700000600000000&to_ts=1700000000000000', 'INVALID_WINDOW', /before from_ts/],
    ['/v1/alerts?status=pending', 'INVALID_STATUS', /firing/],
  ];
  for (const [path, code, msg] of cases) {
    it(`400 for ${path}`, async () => {
      const res = await fetch(srv.api + path);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string; hint: string } };
      expect(body.error.code).toBe(code);
      expect(body.error.message + ' ' + body.error.hint).toMatch(msg);
      expect(body.error.hint.length).toBeGreaterThan(0);
    });
  }
});
