// The real server's /openapi.json: valid OpenAPI 3.1, exactly buildOpenApi() of the routes it
// mounts, and every answer it gives (success and error) matches it.
import { beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildOpenApi } from '../../src/api/openapi.js';
import { API } from '../../src/api/endpoints.js';

const ENDPOINTS = Object.values(API);
import { useTestServer } from '../helpers/server.js';
import { postOtlp } from '../helpers/otlp.js';
import { apiFetch, checkResponse, documentedRoutes } from '../helpers/api.js';

const srv = useTestServer();
const SERVICE = 'openapi-check';
const traceId = randomBytes(16).toString('hex');
const rootId = randomBytes(8).toString('hex');
const childId = randomBytes(8).toString('hex');
const T0 = BigInt(Date.now() - 60_000) * 1_000_000n; // ns, recent (retention deletes old data)

function otlpJson(): string {
  const attr = (key: string, v: string | number) => ({ key, value: typeof v === 'string' ? { stringValue: v } : { intValue: String(v) } });
  const span = (spanId: string, parentSpanId: string, name: string, startNs: bigint, durNs: bigint, code: number) => ({
    traceId,
    spanId,
    parentSpanId,
    name,
    kind: 2,
    startTimeUnixNano: String(startNs),
    endTimeUnixNano: String(startNs + durNs),
    attributes: [attr('http.route', '/orders/{id}'), attr('http.response.status_code', code === 2 ? 500 : 200)],
    events: [{ timeUnixNano: String(startNs + 1000n), name: 'ev', attributes: [attr('k', 'v')] }],
    status: { code },
  });
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [attr('service.name', SERVICE)] },
        scopeSpans: [
          {
            scope: { name: 'test', version: '1.0' },
            spans: [span(rootId, '', 'GET /orders/{id}', T0, 5_000_000n, 0), span(childId, rootId, 'SELECT orders', T0 + 1_000_000n, 2_000_000n, 2)],
          },
        ],
      },
    ],
  });
}

/** Method+path pairs of the spec that the server mounts: a PATCH (used by no route) is 405 on a known path, 404 otherwise. */
async function mounted(): Promise<Set<string>> {
  const out = new Set<string>();
  for (const e of ENDPOINTS) {
    const concrete = e.path.replace('{trace_id}', traceId).replace('{short_token}', 'abcdef0123');
    const res = await fetch(srv.api + concrete, { method: 'PATCH' });
    const body = (await res.json()) as { error: { code: string; hint: string } };
    if (res.status === 405 && body.error.hint.split(/[:,]\s*/).includes(e.method)) out.add(`${e.method} ${e.path}`);
    else expect([404, 405]).toContain(res.status);
  }
  return out;
}

beforeAll(async () => {
  const res = await postOtlp(srv.otlpHttp, 'traces', otlpJson());
  expect(res.status).toBe(200);
});

describe('GET /openapi.json on the real server', () => {
  it('is a valid OpenAPI 3.1 document, equal to buildOpenApi() of the mounted routes', async () => {
    const res = await fetch(`${srv.api}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const served = (await res.json()) as Record<string, any>;
    const v = new Validator();
    const result = await v.validate(served);
    expect(result.errors ?? []).toEqual([]);
    expect(v.version).toBe('3.1');

    // Each described operation is exactly its route table entry through buildOpenApi, and is really mounted.
    const ops = new Set(Object.entries(served['paths'] as Record<string, object>).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`)));
    const expected = buildOpenApi(documentedRoutes().filter((r) => ops.has(`${r.method} ${r.path}`)));
    expect(served).toEqual(JSON.parse(JSON.stringify(expected)));
    const live = await mounted();
    for (const k of ops) expect(live.has(k), `${k} is described but not mounted`).toBe(true);
    for (const k of ['GET /healthz', 'GET /v1/services', 'GET /v1/traces/{trace_id}', 'GET /openapi.json']) expect(ops.has(k), k).toBe(true);
    checkResponse('GET', '/openapi.json', 200, served);
  });

  // The acceptance check of issue 3: fails until every route of the spec is mounted with its route table entry.
  it('describes every endpoint of the spec, and every mounted one', async () => {
    const served = (await apiFetch(srv.api, '/openapi.json')).body as Record<string, any>;
    const ops = Object.entries(served['paths'] as Record<string, object>).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
    const live = await mounted();
    const undocumented = [...live].filter((k) => !ops.includes(k));
    expect(undocumented, `mounted without its route table entry (\`route(API.<operationId>, ...)\`): ${undocumented.join(', ')}`).toEqual([]);
    const missing = ENDPOINTS.map((e) => `${e.method} ${e.path}`).filter((k) => !ops.includes(k));
    expect(missing, `not mounted: ${missing.join(', ')}`).toEqual([]);
  });
});

describe('real answers match the served document', () => {
  it('/healthz', async () => {
    const r = await apiFetch(srv.api, '/healthz');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok' });
  });

  it('/v1/services after ingest', async () => {
    let services: { service_name: string }[] = [];
    for (let i = 0; i < 100 && !services.some((s) => s.service_name === SERVICE); i++) {
      const r = await apiFetch(srv.api, '/v1/services');
      expect(r.status).toBe(200);
      services = r.body.services;
      if (!services.some((s) => s.service_name === SERVICE)) await new Promise((res) => setTimeout(res, 50));
    }
    expect(services.map((s) => s.service_name)).toContain(SERVICE);
  });

  it("/v1/diagnose of services named like Object.prototype's members: each answered in errors", async () => {
    // Found by fuzzing: `toString` was taken for a known service (500), `__proto__` vanished from the answer.
    const names = ['__proto__', 'toString', 'constructor'];
    const r = await apiFetch(srv.api, '/v1/diagnose', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ services: names }) });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.errors).sort()).toEqual([...names].sort());
    for (const n of names) expect(r.body.errors[n]).toMatch(/no telemetry/);
  });

  it('/v1/traces/{trace_id} for a trace sent over OTLP/HTTP JSON', async () => {
    const r = await apiFetch(srv.api, `/v1/traces/${traceId}`);
    expect(r.status).toBe(200);
    expect(r.template).toBe('/v1/traces/{trace_id}');
    expect(r.body).toMatchObject({ trace_id: traceId, span_count: 2, error_count: 1, services: [SERVICE] });
    expect(r.body.root_span.span_id).toBe(rootId);
    // upper-case ids are accepted too
    expect((await apiFetch(srv.api, `/v1/traces/${traceId.toUpperCase()}`)).status).toBe(200);
  });

  it('the 400 and 404 error bodies', async () => {
    const bad = await apiFetch(srv.api, '/v1/traces/not-a-trace-id');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_TRACE_ID');
    expect(bad.body.error.hint).not.toBe('');
    const zero = await apiFetch(srv.api, `/v1/traces/${'0'.repeat(32)}`);
    expect(zero.status).toBe(400);
    const unknown = await apiFetch(srv.api, `/v1/traces/${randomBytes(16).toString('hex')}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    // the router's own answers: unknown path and wrong method
    expect((await apiFetch(srv.api, '/v1/no-such-thing')).status).toBe(404);
    expect((await apiFetch(srv.api, '/v1/services', { method: 'PATCH' })).status).toBe(405);
  });

  it('rejects deliberately wrong bodies built from the real ones', async () => {
    const services = (await (await fetch(`${srv.api}/v1/services`)).json()) as { services: Record<string, unknown>[] };
    const broken = structuredClone(services);
    delete broken.services[0]!['last_seen'];
    expect(() => checkResponse('GET', '/v1/services', 200, broken)).toThrow(/last_seen/);
    const renamed = { services: services.services.map(({ service_name, ...rest }) => ({ service: service_name, ...rest })) };
    expect(() => checkResponse('GET', '/v1/services', 200, renamed)).toThrow(/service_name/);

    const trace = (await (await fetch(`${srv.api}/v1/traces/${traceId}`)).json()) as Record<string, any>;
    checkResponse('GET', '/v1/traces/{trace_id}', 200, trace);
    expect(() => checkResponse('GET', '/v1/traces/{trace_id}', 200, { ...trace, span_count: '2' })).toThrow(/span_count/);
    expect(() => checkResponse('GET', '/v1/traces/{trace_id}', 200, { ...trace, root_span: { ...trace['root_span'], status_code: null } })).toThrow(/status_code/);
    expect(() => checkResponse('GET', '/v1/traces/{trace_id}', 200, { ...trace, service_breakdown: [{ service: SERVICE, duration_us: 1.5, percentage: 100 }] })).toThrow(/duration_us/);

    const notFound = await (await fetch(`${srv.api}/v1/traces/${randomBytes(16).toString('hex')}`)).json();
    expect(() => checkResponse('GET', '/v1/traces/{trace_id}', 200, notFound)).toThrow(/match/);
    expect(() => checkResponse('GET', '/healthz', 200, { status: 'starting' })).toThrow(/status/);
  });
});

// Routes mounted by other parts of the work: whatever they answer must match the full description
// (checked even before the route carries its `doc`); a route not mounted yet is skipped.
describe('answers of the other spec endpoints match the description', () => {
  async function answer(method: string, template: string, path: string, init: RequestInit = {}): Promise<{ status: number; body: any } | null> {
    const res = await fetch(srv.api + path, { ...init, method });
    const body = (res.headers.get('content-type') ?? '').includes('json') ? await res.json() : await res.text();
    if (res.status === 404 && body?.error?.message?.startsWith('no route for')) return null;
    checkResponse(method, template, res.status, body, { contentType: res.headers.get('content-type') });
    return { status: res.status, body };
  }
  const US = Date.now() * 1000;

  it('GET /v1/alerts', async () => {
    const ok = await answer('GET', '/v1/alerts', '/v1/alerts');
    if (!ok) return;
    expect(ok.status).toBe(200);
    expect((await answer('GET', '/v1/alerts', '/v1/alerts?status=firing'))!.status).toBe(200);
    expect((await answer('GET', '/v1/alerts', '/v1/alerts?status=pending'))!.status).toBe(400);
  });

  it('GET /v1/anomalies', async () => {
    const ok = await answer('GET', '/v1/anomalies', `/v1/anomalies?from_ts=${US - 3_600_000_000}&to_ts=${US}`);
    if (!ok) return;
    expect(ok.status).toBe(200);
    expect((await answer('GET', '/v1/anomalies', `/v1/anomalies?from_ts=${US}`))!.status).toBe(400);
    const sec = (await answer('GET', '/v1/anomalies', `/v1/anomalies?from_ts=1700000000&to_ts=${US}`))!;
    expect(sec.status).toBe(400);
    expect(sec.body.error.code).toBe('INVALID_TIMESTAMP');
  });

  it('POST /v1/query', async () => {
    const text = { headers: { 'content-type': 'text/plain' } };
    const ok = await answer('POST', '/v1/query', '/v1/query', { ...text, body: `SELECT service_name, count(*) AS n, min(timestamp) AS t FROM svc_spans WHERE trace_id = '${traceId}' GROUP BY ALL` });
    if (!ok) return;
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual([expect.objectContaining({ service_name: SERVICE, n: 2 })]);
    expect((await answer('POST', '/v1/query', '/v1/query', { ...text, body: 'DROP TABLE svc_spans' }))!.status).toBe(400);
    expect((await answer('POST', '/v1/query', '/v1/query', { ...text, body: 'WITH a AS (SELECT 1) SELECT * FROM a' }))!.status).toBe(400);
  });

  it('GET /admin/status', async () => {
    const ok = await answer('GET', '/admin/status', '/admin/status');
    if (ok) expect(ok.status).toBe(200);
  });
});
