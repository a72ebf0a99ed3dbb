// POST /v1/diagnose end to end on a real server: two hours of a three-service chain sent through
// OTLP (gateway → orders → payments, payments also calling PostgreSQL), payments failing for the
// last 40 minutes. Before any detection pass and after it, the first finding blames payments, not
// the gateway the agent asks about; every drill_down_sql and drill_all_sql runs through /v1/query
// as it stands and returns the rows its lead talks about; bad requests get 400 with a hint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { postOtlp } from '../helpers/otlp.js';
import { clientFor } from '../helpers/client.js';
import { gaugeJson, logsJson, tracesJson, type JsonLog, type JsonSpan } from '../../testkit/otlp-json.js';
import { rng } from '../../testkit/rng.js';

const B = 300_000_000;
const now = Date.now() * 1000;
const START = now - 2 * 3_600_000_000;
// The agent asks about the last 15 minutes, 40 minutes into the trouble. The fault begins on a bucket
// boundary, so that no bucket is mixed.
const FAULT = now - 40 * 60_000_000 - ((now - 40 * 60_000_000) % B);

let srv: TestServer;
/** The first diagnosis, before any detection pass: raw telemetry for every bucket. */
let beforePass: any;
const hex = (n: number) => randomBytes(n).toString('hex');

/** One request through the chain; payments fails (and its callers with it) after FAULT. */
function request(t: number, r: () => number, spans: Record<string, JsonSpan[]>, logs: Record<string, JsonLog[]>) {
  const traceId = hex(16);
  const failing = t >= FAULT && r() < 0.4;
  const dbUs = 2_000 + Math.floor(r() * 1_000);
  const payUs = dbUs + 3_000 + Math.floor(r() * 2_000);
  const ordUs = payUs + 4_000 + Math.floor(r() * 2_000);
  const gwUs = ordUs + 2_000;
  const [gw, gwc, ord, ordc, pay, db] = [hex(8), hex(8), hex(8), hex(8), hex(8), hex(8)];
  const http = (m: string, route: string, code: number) => ({ 'http.request.method': m, 'http.route': route, 'http.response.status_code': code });
  spans['gateway']!.push(
    { traceId, spanId: gw, name: 'GET /checkout', startUs: t, durationUs: gwUs, error: failing, attributes: http('GET', '/checkout', failing ? 502 : 200) },
    { traceId, spanId: gwc, parentSpanId: gw, kind: 3, name: 'POST', startUs: t + 500, durationUs: ordUs + 500, error: failing, attributes: { 'http.request.method': 'POST', 'server.address': 'orders' } },
  );
  spans['orders']!.push(
    { traceId, spanId: ord, parentSpanId: gwc, name: 'POST /orders', startUs: t + 700, durationUs: ordUs, error: failing, attributes: http('POST', '/orders', failing ? 502 : 201) },
    { traceId, spanId: ordc, parentSpanId: ord, kind: 3, name: 'POST', startUs: t + 900, durationUs: payUs + 200, error: failing, attributes: { 'http.request.method': 'POST', 'peer.service': 'payments' } },
  );
  spans['payments']!.push(
    { traceId, spanId: pay, parentSpanId: ordc, name: 'POST /charge', startUs: t + 1_000, durationUs: payUs, error: failing, attributes: { ...http('POST', '/charge', failing ? 500 : 200), ...(failing ? { 'error.type': 'CardProcessorTimeout' } : {}) } },
    { traceId, spanId: db, parentSpanId: pay, kind: 3, name: 'SELECT', startUs: t + 1_200, durationUs: dbUs, attributes: { 'db.system': 'postgresql', 'db.operation': 'SELECT' } },
  );
  logs['payments']!.push(
    failing
      ? { timeUs: t + 1_500, body: `charge ${Math.floor(r() * 1e6)} failed: card processor timeout after ${3000 + Math.floor(r() * 100)} ms`, severity: 17, severityText: 'ERROR' }
      : { timeUs: t + 1_500, body: `charge ${Math.floor(r() * 1e6)} captured in ${Math.floor(r() * 50)} ms`, severity: 9, severityText: 'INFO' },
  );
  logs['orders']!.push({ timeUs: t + 800, body: `order ${Math.floor(r() * 1e6)} received with ${1 + Math.floor(r() * 5)} items`, severity: 9, severityText: 'INFO' });
}

async function send(from: number, to: number, seed: number) {
  const r = rng(seed);
  for (let b0 = from; b0 < to; b0 += B) {
    const spans: Record<string, JsonSpan[]> = { gateway: [], orders: [], payments: [] };
    const logs: Record<string, JsonLog[]> = { gateway: [], orders: [], payments: [] };
    for (let t = b0; t < Math.min(b0 + B, to); t += 4_000_000) request(t + Math.floor(r() * 1_000_000), r, spans, logs);
    for (const s of Object.keys(spans)) {
      const res = { 'service.version': '1.4.2', 'service.instance.id': `${s}-1`, 'k8s.pod.name': `${s}-7d9f-1`, 'k8s.deployment.name': s, 'k8s.namespace.name': 'shop' };
      expect((await postOtlp(srv.otlpHttp, 'traces', tracesJson(s, spans[s]!, res))).status).toBe(200);
      if (logs[s]!.length) expect((await postOtlp(srv.otlpHttp, 'logs', logsJson(s, logs[s]!, res))).status).toBe(200);
    }
  }
}

const diagnose = async (body: unknown, path = '/v1/diagnose') => {
  const res = await fetch(`${srv.api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};
const query = async (sql: string) => {
  const out = await clientFor(srv.api).runQuery({ body: sql });
  return { status: out.status, body: out.body as any };
};

/** Every SQL string of a block with where it sits. */
function leads(block: any): { where: string; sql: string }[] {
  const out: { where: string; sql: string }[] = [];
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) (k === 'drill_down_sql' || k === 'drill_all_sql') && typeof x === 'string' ? out.push({ where: `${path}.${k}`, sql: x }) : walk(x, `${path}.${k}`);
  };
  walk(block, '');
  return out;
}

beforeAll(async () => {
  srv = await startTestServer({ SVC_DETECT_INTERVAL_S: '3600', SVC_DETECT_GRACE_S: '0' });
  await send(START, now - 30_000_000, 11);
}, 120_000);

afterAll(async () => {
  await srv?.stop();
  if (srv) rmSync(srv.dataDir, { recursive: true, force: true });
});

function checkBlame(block: any) {
  const top = block.findings[0];
  expect(top, JSON.stringify(block.findings, null, 1)).toBeDefined();
  expect(top.service).toBe('payments');
  expect(top.signal).toBe('error_rate');
  expect(top.kind).toBe('dependency_failure');
  expect(['critical', 'high']).toContain(top.severity);
  expect(top.after).toBeGreaterThan(20);
  expect(top.before).toBeLessThan(2);
  // The gateway's own error spike is listed as the symptom it is, below the cause.
  const symptom = block.findings.find((f: any) => f.service === 'gateway' && f.signal === 'error_rate');
  expect(symptom?.score ?? 0).toBeLessThan(top.score);
  for (const f of block.findings) {
    expect(f.score).toBeGreaterThanOrEqual(0);
    expect(f.score).toBeLessThanOrEqual(1);
  }
  expect(block.findings.map((f: any) => f.score)).toEqual([...block.findings.map((f: any) => f.score)].sort((a: number, b: number) => b - a));
}

describe('diagnose before any detection pass', () => {
  let block: any;
  beforeAll(async () => {
    const r = await diagnose({ services: ['gateway'] });
    expect(r.status).toBe(200);
    expect(r.body.errors).toEqual({});
    block = r.body.results.gateway;
    beforePass = block;
    if (process.env['DUMP_BLOCK']) (await import('node:fs')).writeFileSync(process.env['DUMP_BLOCK'], JSON.stringify(r.body, null, 1));
  });

  it('blames the failing downstream service, not the entry service', () => checkBlame(block));

  it('fills context, coverage, operations and samples from the data', () => {
    expect(block.context).toMatchObject({ service_name: 'gateway', deployment: 'gateway', namespace: 'shop', pod_count: 1, has_instance_id: true });
    expect(block.context.dependencies.map((d: any) => d.service_name)).toEqual(['orders']);
    expect(block.context.dependencies[0].error_count).toBeGreaterThan(10);
    expect(block.context.dependents).toEqual([]);
    expect(block.coverage).toMatchObject({ has_spans: true, has_logs: false });
    expect(block.coverage.span_count).toBeGreaterThan(300);
    const op = block.operation_summaries.find((o: any) => o.operation === 'GET /checkout');
    expect(op.is_anomalous).toBe(true);
    expect(op.anomaly_reason).toMatch(/error rate/);
    expect(op.baseline_count).toBeGreaterThan(600);
    expect(op.error_pct).toBeGreaterThan(20);
    expect(op.error_breakdown[0]).toMatchObject({ error_type: 'HTTP 502' });
    expect(op.exemplar_error_trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(block.error_traces_total).toBeGreaterThan(10);
    expect(block.spans.sample.length).toBeGreaterThan(0);
    expect(block.spans.sample[0].is_error).toBe(true);
    expect(block.spans.total).toBe(block.coverage.span_count);
    expect(Buffer.byteLength(JSON.stringify(block))).toBeLessThan(64 * 1024);
  });

  it('diagnoses the culprit itself with its logs, patterns, error types and database dependency', async () => {
    const r = await diagnose({ service: 'payments' });
    const p = r.body.results.payments;
    expect(p.findings[0]).toMatchObject({ service: 'payments', signal: 'error_rate', operation: 'POST /charge' });
    expect(['error_spike', 'new_error_type']).toContain(p.findings[0].kind);
    expect(p.context.dependents.map((d: any) => d.service_name)).toEqual(['orders']);
    expect(p.context.dependencies.map((d: any) => d.service_name)).toEqual(['postgresql']);
    expect(p.logs.sample[0].severity_text).toBe('ERROR');
    const newPattern = p.log_patterns[0];
    expect(newPattern.pattern).toMatch(/failed/);
    expect(newPattern.error_count).toBeGreaterThan(10);
    expect(p.events.some((e: any) => e.event_type === 'new_error_type' && /CardProcessorTimeout/.test(e.description)), JSON.stringify(p.events) + JSON.stringify(p.operation_summaries.map((o: any) => o.error_breakdown))).toBe(true);
    expect(p.findings.some((f: any) => f.kind === 'log_error_burst' && f.service === 'payments')).toBe(true);
  });

  it('every drill_down_sql and drill_all_sql runs as it stands and returns its rows', async () => {
    const all = [...leads(block), ...leads((await diagnose({ service: 'payments' })).body.results.payments)];
    expect(all.length).toBeGreaterThan(10);
    for (const { where, sql } of all) {
      expect(sql, where).toMatch(/timestamp >= TIMESTAMP '/);
      const r = await query(sql);
      expect(r.status, `${where}: ${sql}\n${JSON.stringify(r.body)}`).toBe(200);
      // A section with nothing in the window (the gateway sends no logs) has SQL that finds nothing.
      const empty = (where.startsWith('.logs.') && block.logs.total === 0 && !sql.includes("'payments'")) || where.includes('findings') && sql.includes("'svc_spans' AS table_name");
      if (!empty) expect(r.body.length, `${where} returned nothing: ${sql}`).toBeGreaterThan(0);
    }
    // The lead of the first finding returns payments' error spans.
    const top = await query(block.findings[0].drill_down_sql);
    expect(top.body.every((row: any) => row.service_name === 'payments' && row.status_code === 2)).toBe(true);
  });

  it('answers the same block for the same data, and investigate answers the same', async () => {
    const body = { services: ['gateway'], from_ts: block.window.from_ts, to_ts: block.window.to_ts };
    const a = await diagnose(body);
    const b = await diagnose(body);
    expect(a.body).toEqual(b.body);
    const inv = await diagnose(body, '/v1/investigate');
    expect(inv.body).toEqual(a.body);
    const quick = await diagnose({ service: 'gateway' }, '/v1/investigate');
    expect(quick.status).toBe(200);
    expect(quick.body.results.gateway.findings[0].service).toBe('payments');
  });

  it('answers each service of a call naming several as a call of its own would', async () => {
    // The services' own reads are shared by the call (one statement per kind for all of them):
    // each block must still hold its own samples, counts and metrics, and only its own.
    const window = { from_ts: block.window.from_ts, to_ts: block.window.to_ts };
    const names = ['payments', 'gateway', 'orders'];
    const together = await diagnose({ services: names, ...window });
    expect(Object.keys(together.body.results)).toEqual(names);
    for (const s of names) {
      const alone = await diagnose({ services: [s], ...window });
      expect(together.body.results[s], s).toEqual(alone.body.results[s]);
    }
    const pay = together.body.results.payments;
    expect(pay.spans.sample.length).toBeGreaterThan(0);
    expect(pay.logs.sample.length).toBeGreaterThan(0);
    expect(pay.spans.sample.every((r: any) => r.span_name !== 'GET /checkout')).toBe(true);
    expect(together.body.results.gateway.logs.sample).toEqual([]);
  });

  it('puts unknown and silent services in errors, not in the status', async () => {
    const r = await diagnose({ services: ['gateway', 'nope'], service: 'gateway' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.results)).toEqual(['gateway']);
    expect(r.body.errors.nope).toMatch(/no telemetry from 'nope'.*GET \/v1\/services/);
    const old = await diagnose({ services: ['gateway'], from_ts: START - 10 * 3_600_000_000, to_ts: START - 9 * 3_600_000_000 });
    expect(old.status).toBe(200);
    expect(old.body.errors.gateway).toMatch(/in the window/);
  });

  it('quotes hostile service and operation names in every lead', async () => {
    const name = "o'brien\"; DROP TABLE svc_spans; -- ✓";
    const t = now - 5 * 60_000_000;
    const spans: JsonSpan[] = Array.from({ length: 20 }, (_v, i) => ({ name: "GET /it's", startUs: t + i * 1000, durationUs: 500, error: i % 4 === 0, attributes: { 'http.route': "/it's/{id}'--" } }));
    expect((await postOtlp(srv.otlpHttp, 'traces', tracesJson(name, spans))).status).toBe(200);
    const r = await diagnose({ service: name });
    expect(r.status).toBe(200);
    const block = r.body.results[name];
    expect(block.coverage.span_count).toBe(20);
    for (const { where, sql } of leads(block)) {
      const q = await query(sql);
      expect(q.status, `${where}: ${sql}`).toBe(200);
      if (where.startsWith('.operation_summaries')) expect(q.body.every((row: any) => row.service_name === name)).toBe(true);
    }
    expect((await query(`SELECT count(*) AS n FROM svc_spans WHERE timestamp >= TIMESTAMP '2000-01-01 00:00:00'`)).body[0].n).toBeGreaterThan(1000);
  });

  it('compares with a named good stretch when the agent gives one, and with it alone', async () => {
    const from = now - 15 * 60_000_000;
    // The two hours before the fault were good: the same blame, the baseline the one named.
    const good = await diagnose({ services: ['gateway'], from_ts: from, to_ts: now, baseline_from_ts: START, baseline_to_ts: FAULT });
    expect(good.status).toBe(200);
    const block = good.body.results.gateway;
    checkBlame(block);
    expect([block.baseline.from_ts, block.baseline.to_ts, block.baseline.ends_at_onset]).toEqual([START, FAULT, false]);
    // A "good" stretch inside the fault: payments' errors are what they were then, no longer news.
    const bad = await diagnose({ services: ['gateway'], from_ts: from, to_ts: now, baseline_from_ts: FAULT + 5 * 60_000_000, baseline_to_ts: from });
    expect(bad.status).toBe(200);
    const errors = bad.body.results.gateway.findings.filter((f: any) => f.service === 'payments' && f.signal === 'error_rate');
    expect(errors.every((f: any) => f.score < 0.45), JSON.stringify(errors)).toBe(true);
    // Refused: one end only, or a stretch reaching into the window.
    expect((await diagnose({ services: ['gateway'], baseline_from_ts: START })).status).toBe(400);
    expect((await diagnose({ services: ['gateway'], from_ts: from, to_ts: now, baseline_from_ts: START, baseline_to_ts: now })).body.error.hint).toBeTruthy();
  });

  it('diagnoses a service whose window holds only its metrics: metrics are telemetry', async () => {
    // A worker that sends no spans or logs, only its pod's CPU once a minute: 0.2 for an hour, 0.9 since.
    const points = [];
    for (let t = now - 60 * 60_000_000; t < now; t += 60_000_000) points.push({ timeUs: t, value: t >= now - 4 * 60_000_000 ? 0.9 : 0.2 + 0.01 * Math.sin(t / 6e7) });
    expect((await postOtlp(srv.otlpHttp, 'metrics', gaugeJson('worker', 'container.cpu.utilization', points, { 'k8s.pod.name': 'worker-5c-1' }))).status).toBe(200);
    const r = await diagnose({ services: ['worker'], from_ts: now - 5 * 60_000_000, to_ts: now });
    expect(r.body.errors).toEqual({});
    const block = r.body.results.worker;
    expect(block.coverage).toMatchObject({ has_spans: false, has_metrics: true });
    expect(block.findings[0]).toMatchObject({ service: 'worker', signal: 'resource_saturation' });
  });

  it('refuses bad requests with 400 and a hint', async () => {
    for (const [body, code, hint] of [
      [{ services: ['gateway'], from_ts: Math.floor(now / 1e6) }, 'INVALID_TIMESTAMP', /seconds/],
      [{ services: ['gateway'], from_ts: Math.floor(now / 1e3) }, 'INVALID_TIMESTAMP', /milliseconds/],
      [{ services: ['gateway'], to_ts: now }, 'INVALID_WINDOW', /from_ts/],
      [{ services: ['gateway'], from_ts: now - 10, to_ts: now - 20 }, 'INVALID_WINDOW', /./],
      [{ services: Array.from({ length: 11 }, (_v, i) => `s${i}`) }, 'BAD_REQUEST', /split/],
    ] as const) {
      const r = await diagnose(body);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe(code);
      expect(r.body.error.hint).toMatch(hint);
    }
    const raw = await fetch(`${srv.api}/v1/diagnose`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"services": [' });
    expect(raw.status).toBe(400);
  });
});

describe('diagnose after the detection pass', () => {
  let block: any;
  beforeAll(async () => {
    const dataDir = srv.dataDir;
    expect(await srv.stop()).toBe(0);
    srv = await startTestServer({ SVC_DETECT_INTERVAL_S: '1', SVC_DETECT_GRACE_S: '0' }, dataDir);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const st = (await (await fetch(`${srv.api}/admin/status`)).json()) as any;
      if (st.status.detection.passes >= 2) break;
      if (Date.now() > deadline) throw new Error('the detection pass did not run');
      await new Promise((r) => setTimeout(r, 300));
    }
    block = (await diagnose({ services: ['gateway'] })).body.results.gateway;
  }, 60_000);

  it('reads the closed buckets from the rollups and answers as it did from raw telemetry', async () => {
    const w = beforePass.window;
    const after = (await diagnose({ services: ['gateway'], from_ts: w.from_ts, to_ts: w.to_ts })).body.results.gateway;
    expect(after.context).toEqual(beforePass.context);
    expect(after.events).toEqual(beforePass.events);
    // The window's counts are the same to the call.
    expect(after.operation_summaries.map((o: any) => [o.operation, o.count])).toEqual(beforePass.operation_summaries.map((o: any) => [o.operation, o.count]));
    // Where the baseline ends may move by a bucket: the pass's change points (one of its own on a
    // steady series, or a mixed bucket counted to the other side) against the split of raw
    // telemetry. A request every 4 s puts 75 ± 1 in any bucket, so 12 buckets hold 900 ± 2 whichever
    // they are, while a bucket read twice, or lost, from the rollups would be 75 off.
    expect(Math.abs(after.baseline.to_ts - beforePass.baseline.to_ts)).toBeLessThanOrEqual(B);
    const before = new Map(beforePass.operation_summaries.map((o: any) => [o.operation, o.baseline_count]));
    for (const o of after.operation_summaries) expect(Math.abs(o.baseline_count - (before.get(o.operation) as number)), o.operation).toBeLessThanOrEqual(2);
  });

  it('still blames payments, and lists the correlated shifts as incidents', async () => {
    checkBlame(block);
    const incidents = block.findings.filter((f: any) => f.kind === 'incident');
    const anomalies = await (await fetch(`${srv.api}/v1/anomalies?from_ts=${START}&to_ts=${now}`)).json();
    expect(incidents.length, JSON.stringify(anomalies) + JSON.stringify(block.findings)).toBeGreaterThan(0);
    const onPayments = incidents.find((f: any) => f.service === 'payments');
    expect(onPayments?.incident.shifts.length).toBeGreaterThan(0);
    expect(Math.abs(onPayments.incident.started_at - FAULT)).toBeLessThanOrEqual(2 * B);
    for (const f of incidents) {
      expect(f.incident.started_at_iso).toMatch(/Z$/);
      for (const s of f.incident.shifts) expect((await query(s.drill_down_sql)).status).toBe(200);
    }
  });
});

describe('diagnose of a window with more spans than it may scan', () => {
  it('reads slices of the window, scales their counts, and still blames payments with leads that run', async () => {
    const dataDir = srv.dataDir;
    expect(await srv.stop()).toBe(0);
    // The last 15 minutes hold about 1,300 spans; reading about 300 of them is a slice of 2 s in 10.
    srv = await startTestServer({ SVC_DETECT_INTERVAL_S: '3600', SVC_DETECT_GRACE_S: '0', SVC_DIAGNOSE_SCAN_SPANS: '300' }, dataDir);
    const w = beforePass.window;
    const sampled = (await diagnose({ services: ['gateway'], from_ts: w.from_ts, to_ts: w.to_ts })).body.results.gateway;
    expect(beforePass.window_sampled).toBeNull();
    expect(sampled.window_sampled.slices).toBeGreaterThanOrEqual(15);
    expect(sampled.window_sampled.counts_scaled_by).toBeGreaterThan(3);
    expect(sampled.window_sampled.seconds_read).toBeLessThan(300);
    checkBlame(sampled);
    // The scaled counts estimate the whole window's.
    const whole = new Map(beforePass.operation_summaries.map((o: any) => [o.operation, o.count]));
    for (const o of sampled.operation_summaries) {
      const n = whole.get(o.operation) as number;
      expect(o.count, o.operation).toBeGreaterThan(0.6 * n);
      expect(o.count, o.operation).toBeLessThan(1.4 * n);
    }
    for (const { where, sql } of leads(sampled)) expect((await query(sql)).status, `${where}: ${sql}`).toBe(200);
  }, 60_000);
});
