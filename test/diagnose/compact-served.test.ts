// The compact view (`"detail": "findings"`) of real diagnoses on a real server: an hour of a
// three-service chain sent through OTLP (shop → orders → stock), stock failing and slow for the last
// 20 minutes with error logs. For each service the compact view carries every finding and every lead
// of its full block; the default answer is the full block, byte for byte; a byte budget is met to
// the byte; the CLI asks for the view with --detail and --max-bytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { postOtlp } from '../helpers/otlp.js';
import { logsJson, tracesJson, type JsonLog, type JsonSpan } from '../../testkit/otlp-json.js';
import { rng } from '../../testkit/rng.js';
import { run } from '../../src/cli/main.js';
import { leadsOf, missingFromCompact } from '../../testkit/compact-check.js';

const MIN = 60_000_000;
// The hour ends at the start of the current 5-minute bucket, so every bucket of it has ended and one
// detection pass after sending closes them all (beforeAll).
const now = Math.floor((Date.now() * 1000) / (5 * MIN)) * 5 * MIN;
const FAULT = now - 20 * MIN;
const SERVICES = ['shop', 'orders', 'stock'];
const hex = (n: number) => randomBytes(n).toString('hex');

let srv: TestServer;
let window: { from_ts: number; to_ts: number };

async function seed() {
  const r = rng(47);
  const spans: Record<string, JsonSpan[]> = { shop: [], orders: [], stock: [] };
  const logs: JsonLog[] = [];
  for (let t = now - 60 * MIN; t < now - 10_000_000; t += 3_000_000) {
    const failing = t >= FAULT && r() < 0.5;
    const stockUs = (t >= FAULT ? 40_000 : 3_000) + Math.floor(r() * 1_000);
    const traceId = hex(16);
    const [a, ac, b, bc, c] = [hex(8), hex(8), hex(8), hex(8), hex(8)];
    const http = (m: string, route: string, code: number) => ({ 'http.request.method': m, 'http.route': route, 'http.response.status_code': code });
    spans['shop']!.push(
      { traceId, spanId: a, name: 'GET /buy', startUs: t, durationUs: stockUs + 6_000, error: failing, attributes: http('GET', '/buy', failing ? 502 : 200) },
      { traceId, spanId: ac, parentSpanId: a, kind: 3, name: 'POST', startUs: t + 200, durationUs: stockUs + 5_000, error: failing, attributes: { 'http.request.method': 'POST', 'peer.service': 'orders' } },
    );
    spans['orders']!.push(
      { traceId, spanId: b, parentSpanId: ac, name: 'POST /orders', startUs: t + 300, durationUs: stockUs + 4_000, error: failing, attributes: http('POST', '/orders', failing ? 502 : 201) },
      { traceId, spanId: bc, parentSpanId: b, kind: 3, name: 'GET', startUs: t + 400, durationUs: stockUs + 500, error: failing, attributes: { 'http.request.method': 'GET', 'peer.service': 'stock' } },
    );
    spans['stock']!.push({
      traceId,
      spanId: c,
      parentSpanId: bc,
      name: 'GET /reserve',
      startUs: t + 500,
      durationUs: stockUs,
      error: failing,
      attributes: { ...http('GET', '/reserve', failing ? 500 : 200), ...(failing ? { 'error.type': 'StockLockTimeout' } : {}) },
    });
    logs.push(
      failing
        ? { timeUs: t + 600, body: `reserve ${Math.floor(r() * 1e6)} failed: lock timeout after ${40 + Math.floor(r() * 9)} ms`, severity: 17, severityText: 'ERROR' }
        : { timeUs: t + 600, body: `reserve ${Math.floor(r() * 1e6)} held ${1 + Math.floor(r() * 4)} items`, severity: 9, severityText: 'INFO' },
    );
  }
  for (const s of SERVICES) expect((await postOtlp(srv.otlpHttp, 'traces', tracesJson(s, spans[s]!, { 'k8s.pod.name': `${s}-1`, 'service.version': '2.0.1' }))).status).toBe(200);
  expect((await postOtlp(srv.otlpHttp, 'logs', logsJson('stock', logs))).status).toBe(200);
}

const post = async (body: unknown) => {
  const res = await fetch(`${srv.api}/v1/diagnose`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) as any, length: Number(res.headers.get('content-length')) };
};

beforeAll(async () => {
  srv = await startTestServer({ SVC_DETECT_INTERVAL_S: '3600', SVC_DETECT_GRACE_S: '0' });
  await seed();
  // Detected before the first diagnosis: a scheduled pass at a bucket's end during this file would
  // otherwise write anomaly rows between two answers the tests compare.
  expect((await fetch(`${srv.api}/admin/detect?until_idle=true`, { method: 'POST' })).status).toBe(200);
  window = { from_ts: now - 15 * MIN, to_ts: now };
}, 120_000);

afterAll(async () => {
  await srv?.stop();
  srv?.cleanup();
});

describe('the compact view of real diagnoses', () => {
  let full: any;
  let compact: any;
  beforeAll(async () => {
    full = await post({ services: SERVICES, ...window });
    compact = await post({ services: SERVICES, ...window, detail: 'findings' });
    expect(full.status).toBe(200);
    expect(compact.status).toBe(200);
  });

  it('the default answer is the full block, byte for byte the answer of detail full', async () => {
    const explicit = await post({ services: SERVICES, ...window, detail: 'full' });
    expect(explicit.text).toBe(full.text);
    expect(Object.keys(full.body)).toEqual(['results', 'errors']);
    expect(full.body.results.shop.findings[0].service).toBe('stock');
  });

  it('carries, for each service, every finding of its full block as it is, every lead and every anomalous operation', () => {
    expect(Object.keys(compact.body.results)).toEqual(SERVICES);
    let leads = 0;
    for (const s of SERVICES) {
      const f = full.body.results[s];
      const c = compact.body.results[s];
      expect(c.findings, s).toEqual(f.findings);
      leads += leadsOf(f).length;
      expect(c.anomalous_operations.map((o: any) => o.operation)).toEqual(f.operation_summaries.filter((o: any) => o.is_anomalous).map((o: any) => o.operation));
      expect([c.coverage, c.events, c.window]).toEqual([f.coverage, f.events, f.window]);
      expect(c.omitted.operations?.count ?? 0).toBe(f.operations_total - c.anomalous_operations.length);
      expect(c.omitted.spans).toEqual({ count: f.spans.total, sql: f.spans.drill_all_sql });
    }
    expect(leads).toBeGreaterThan(10);
    expect(missingFromCompact(full.body, compact.body)).toEqual([]);
    // The check itself finds a lead that is not there.
    const without = structuredClone(compact.body);
    without.results.stock.anomalous_operations.pop();
    expect(missingFromCompact(full.body, without)).toHaveLength(1);
    expect(compact.body.results.stock.omitted.logs.count).toBeGreaterThan(100);
    expect(compact.body.budget).toEqual({ max_bytes: null, bytes: compact.length, dropped: 0, fits: true });
    expect(compact.length).toBeLessThan(full.length / 3);
  });

  it('names the call that gives the full block, and that call gives it', async () => {
    const call = compact.body.results.orders.omitted.full_call;
    const again = await post(call);
    expect(again.body.results.orders).toEqual(full.body.results.orders);
  });

  it('meets a byte budget to the byte, dropping the lowest-ranked entries and counting them', async () => {
    for (const max_bytes of [2048, 4096, Math.floor(compact.length / 2), compact.length - 1]) {
      const a = await post({ services: SERVICES, ...window, detail: 'findings', max_bytes });
      expect(a.status).toBe(200);
      expect(a.length).toBe(Buffer.byteLength(a.text));
      expect(a.body.budget.bytes).toBe(a.length);
      if (a.body.budget.fits) expect(a.length, String(max_bytes)).toBeLessThanOrEqual(max_bytes);
      else expect(Object.values(a.body.results).every((b: any) => b.findings.length === 0)).toBe(true);
      for (const s of SERVICES) {
        const f = full.body.results[s];
        const c = a.body.results[s];
        expect(c.findings).toEqual(f.findings.slice(0, c.findings.length));
        expect(c.findings.length + (c.omitted.findings?.count ?? 0)).toBe(f.findings_total);
      }
    }
    // The budget's own digits take the place of null: a few bytes more than the answer without one.
    expect((await post({ services: SERVICES, ...window, detail: 'findings', max_bytes: compact.length + 8 })).body.budget.dropped).toBe(0);
  });

  it('refuses a bad view or budget with 400 and a hint', async () => {
    for (const body of [{ detail: 'summary' }, { detail: 'findings', max_bytes: 10 }, { max_bytes: 4096 }, { detail: 'full', max_bytes: 4096 }]) {
      const r = await post({ service: 'shop', ...body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('BAD_REQUEST');
      expect(r.body.error.hint).toMatch(/findings/);
    }
  });

  it('tds diagnose --detail findings --max-bytes prints the view within the budget', async () => {
    let stdout = '';
    const code = await run(['diagnose', 'shop', '--from-ts', String(window.from_ts), '--to-ts', String(window.to_ts), '--detail', 'findings', '--max-bytes', '4096'], {
      stdout: { write: (s: string) => void (stdout += s) },
      stderr: { write: () => {} },
      env: { SVC_URL: srv.api },
    } as never);
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.detail).toBe('findings');
    expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(4096);
    expect(out.results.shop.findings[0]).toEqual(full.body.results.shop.findings[0]);
  });
});
