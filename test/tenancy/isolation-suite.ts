// The isolation suite of the hosted variant (SVC_AUTH=keys), run against one instance
// (isolation.test.ts) and against an instance that forwards every tenant to another
// (isolation-forwarding.test.ts): with tenant A's key nothing of B's is readable or writable on any
// endpoint or ingest path; every tenant path refuses missing, malformed, revoked and deactivated keys;
// the admin endpoints take only the admin token; limits hit one tenant only; no key or hash reaches a
// log line or an error body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildServer } from '../../testkit/server.js';
import { API } from '../../src/api/endpoints.js';
import { routeAccess } from '../../src/api/route.js';
import { hashKey } from '../../src/tenancy/keys.js';
import type { FetchFn } from '../../src/client/api.js';
import { clientFor, queryRows } from '../helpers/client.js';
import { encodeTraces } from '../helpers/otlp.js';
import { encodeProfile } from '../pipeline/decode/profiles/helpers.js';
import { admin, bearer, createTenant, issueKey } from '../helpers/hosted.js';

const NOW_US = Date.now() * 1000;
const TRACE_A = 'aa'.repeat(16);
const TRACE_B = 'bb'.repeat(16);

/** Where the suite's requests go, however many instances stand behind it. */
export interface IsolationSetup {
  /** The instance every request of the suite is sent to. */
  entry: ChildServer;
  /** Called once the tenants exist, before any data is sent (e.g. placing them on another instance). */
  tenantsCreated?(ids: string[]): Promise<void>;
  /** Every log line of every instance. */
  logs(): Record<string, unknown>[];
  stop(): Promise<void>;
}

/**
 * The isolation suite against the server(s) `setup` starts with `env` (the suite's own settings).
 * `more` registers a caller's own tests, run while the servers are still up: the last test stops them.
 */
export function isolationSuite(setup: (env: Record<string, string>) => Promise<IsolationSetup>, more?: () => void): void {
let srv: ChildServer;
let cluster: IsolationSetup;
let keyA: string, keyB: string, revoked: string, deactivated: string;
const bodies: string[] = []; // every error body the tests received

function otlpTrace(service: string, traceId: string): string {
  const start = BigInt(NOW_US - 60_000_000) * 1000n;
  return JSON.stringify({
    resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ spans: [{ traceId, spanId: traceId.slice(0, 16), name: 'GET /pay', kind: 2, startTimeUnixNano: String(start), endTimeUnixNano: String(start + 5_000_000n) }] }] }],
  });
}
function otlpLogs(service: string, n: number): string {
  const t = String(BigInt(NOW_US - 60_000_000) * 1000n);
  const logRecords = Array.from({ length: n }, (_, i) => ({ timeUnixNano: t, severityText: 'ERROR', body: { stringValue: `payment ${i} declined by bank ${i % 3}` } }));
  return JSON.stringify({ resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeLogs: [{ logRecords }] }] });
}
const profile = () => encodeProfile({ types: [['cpu', 'nanoseconds']], samples: [{ locs: [1], values: [10] }], locations: { 1: ['main'] }, timeNanos: BigInt(NOW_US) * 1000n });

/** fetch, keeping every error body for the final check that none carries another tenant's secrets. */
const recording: FetchFn = async (input, init) => {
  const res = await fetch(input, init);
  if (res.status >= 400) bodies.push(await res.clone().text());
  return res;
};
const call = (path: string, init: RequestInit & { base?: string } = {}): Promise<Response> => recording((init.base ?? srv.api) + path, init);
/** The client with tenant key `key`. */
const as = (key: string) => clientFor(srv.api, { apiKey: key, fetchFn: recording });
const ingestTrace = (key: string | null, service: string, traceId: string) =>
  call('/v1/traces', { base: srv.otlpHttp, method: 'POST', headers: { 'content-type': 'application/json', ...(key ? bearer(key) : {}) }, body: otlpTrace(service, traceId) });

function grpcExport(key: string | null, bytes: Uint8Array): Promise<grpc.ServiceError | null> {
  const client = new grpc.Client(srv.otlpGrpc, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  if (key !== null) md.set('authorization', key);
  return new Promise<grpc.ServiceError | null>((resolve) =>
    client.makeUnaryRequest('/opentelemetry.proto.collector.trace.v1.TraceService/Export', (b: Buffer) => b, (b: Buffer) => b, Buffer.from(bytes), md, (e) => resolve(e)),
  ).finally(() => client.close());
}

beforeAll(async () => {
  cluster = await setup({ SVC_TENANT_INGEST_BYTES_PER_S: String(64 * 1024) });
  srv = cluster.entry;
  for (const t of ['alpha', 'beta', 'gamma', 'delta', 'greedy']) await createTenant(srv, t);
  await cluster.tenantsCreated?.(['alpha', 'beta', 'greedy']);
  keyA = (await issueKey(srv, 'alpha')).key;
  keyB = (await issueKey(srv, 'beta')).key;
  const r = await issueKey(srv, 'gamma');
  revoked = r.key;
  expect((await call(`/admin/keys/${r.short_token}`, { method: 'DELETE', headers: admin })).status).toBe(200);
  deactivated = (await issueKey(srv, 'delta')).key;
  expect((await call('/admin/tenants/delta/deactivate', { method: 'POST', headers: admin })).status).toBe(200);

  // Each tenant's data through every ingest path: OTLP/HTTP traces and logs, OTLP/gRPC, a profile path.
  expect((await ingestTrace(keyA, 'checkout-a', TRACE_A)).status).toBe(200);
  expect((await ingestTrace(keyB, 'payments-b', TRACE_B)).status).toBe(200);
  for (const [key, svc, n] of [[keyA, 'checkout-a', 3], [keyB, 'payments-b', 7]] as const) {
    expect((await call('/v1/logs', { base: srv.otlpHttp, method: 'POST', headers: { 'content-type': 'application/json', ...bearer(key) }, body: otlpLogs(svc, n) })).status).toBe(200);
  }
  expect(await grpcExport(`Bearer ${keyB}`, encodeTraces('grpc-b', [{ startUs: NOW_US - 60_000_000, durationUs: 1000 }]))).toBeNull();
  expect((await call('/ingest?name=prof-b', { method: 'POST', headers: bearer(keyB), body: profile() as BodyInit })).status).toBe(200);
}, 120_000);

let stopped: Promise<void> | undefined;
const stopAll = () => (stopped ??= cluster?.stop());
afterAll(stopAll);

describe('one store per tenant', () => {
  it('puts each tenant in its own DuckDB file and nothing in the open-mode file', () => {
    expect(existsSync(join(srv.dataDir, 'tenants', 'alpha', 'lake.duckdb'))).toBe(true);
    expect(existsSync(join(srv.dataDir, 'tenants', 'beta', 'lake.duckdb'))).toBe(true);
    expect(existsSync(join(srv.dataDir, 'lake.duckdb'))).toBe(false);
  });
});

describe("with A's key nothing of B's is readable", () => {
  it('services', async () => {
    const a = (await (await call('/v1/services', { headers: bearer(keyA) })).json()) as { services: { service_name: string }[] };
    expect(a.services.map((s) => s.service_name)).toEqual(['checkout-a']);
    const b = (await (await call('/v1/services', { headers: bearer(keyB) })).json()) as { services: { service_name: string }[] };
    expect(b.services.map((s) => s.service_name).sort()).toEqual(['grpc-b', 'payments-b', 'prof-b']);
  });

  it("traces by B's trace id", async () => {
    expect((await call(`/v1/traces/${TRACE_B}`, { headers: bearer(keyA) })).status).toBe(404);
    expect((await call(`/v1/traces/${TRACE_B}`, { headers: bearer(keyB) })).status).toBe(200);
    expect((await call(`/v1/traces/${TRACE_A}`, { headers: bearer(keyA) })).status).toBe(200);
  });

  it("anomalies, alerts and diagnose of B's service names", async () => {
    const an = (await (await call(`/v1/anomalies?from_ts=${NOW_US - 3_600_000_000}&to_ts=${NOW_US}&service=payments-b`, { headers: bearer(keyA) })).json()) as { anomalies: unknown[] };
    expect(an.anomalies).toEqual([]);
    expect((await (await call('/v1/alerts', { headers: bearer(keyA) })).json())).toEqual({ alerts: [] });
    const d = (await (await call('/v1/diagnose', { method: 'POST', headers: { ...bearer(keyA), 'content-type': 'application/json' }, body: JSON.stringify({ services: ['payments-b'] }) })).json()) as Record<string, unknown>;
    expect(JSON.stringify(d)).not.toMatch(/declined|GET \/pay.*payments-b.*calls/);
    const own = (await (await call('/v1/diagnose', { method: 'POST', headers: { ...bearer(keyB), 'content-type': 'application/json' }, body: JSON.stringify({ services: ['payments-b'] }) })).json()) as Record<string, unknown>;
    expect(JSON.stringify(own)).not.toEqual(JSON.stringify(d)); // B's own diagnosis sees B's data
  });

  it('log templates: each tenant mines its own (ids and counts never cross)', async () => {
    const a = await queryRows<{ service_name: string; count: number }>(as(keyA), 'SELECT template_id, service_name, count FROM svc_log_templates');
    const b = await queryRows<{ service_name: string; count: number }>(as(keyB), 'SELECT template_id, service_name, count FROM svc_log_templates');
    expect(a.map((r) => r.service_name)).toEqual(a.map(() => 'checkout-a'));
    expect(b.every((r) => r.service_name === 'payments-b')).toBe(true);
    const logsA = await queryRows<{ n: number }>(as(keyA), 'SELECT count(*) AS n FROM svc_logs');
    expect(Number(logsA[0]!.n)).toBe(3);
  });

  it("/v1/query sees only A's rows, and cannot name B's file, path or catalog", async () => {
    const rows = await queryRows<{ service_name: string }>(as(keyA), 'SELECT DISTINCT service_name FROM svc_spans');
    expect(rows).toEqual([{ service_name: 'checkout-a' }]);
    const rowsLake = await queryRows<{ service_name: string }>(as(keyA), 'SELECT DISTINCT service_name FROM lake.main.svc_spans');
    expect(rowsLake).toEqual([{ service_name: 'checkout-a' }]);
    const bFile = join(srv.dataDir, 'tenants', 'beta', 'lake.duckdb');
    const attempts = [
      `ATTACH '${bFile}' AS b`,
      `ATTACH '${bFile}' AS b (READ_ONLY)`,
      `SELECT * FROM read_parquet('${bFile}')`,
      `SELECT * FROM read_csv('${bFile}')`,
      `SELECT * FROM read_json_auto('${join(srv.dataDir, 'tenants', 'beta', 'spool', '*')}')`,
      `SELECT * FROM read_text('${join(srv.dataDir, 'control-plane.json')}')`,
      `SELECT * FROM '${bFile}'`,
      `SELECT * FROM beta.svc_spans`,
      `SELECT * FROM "${bFile}".svc_spans`,
      `SELECT * FROM duckdb_databases()`,
      `SELECT * FROM glob('${srv.dataDir}/*')`,
      `SELECT * FROM svc_spans, (SELECT * FROM read_blob('${bFile}'))`,
      `COPY svc_spans TO '${join(srv.dataDir, 'tenants', 'beta', 'x.csv')}'`,
      `SELECT current_setting('allowed_directories')`,
    ];
    for (const sql of attempts) {
      const out = await as(keyA).runQuery({ body: sql });
      expect(out.status, sql).toBe(400);
      expect(bodies.at(-1), sql).not.toContain('payments-b');
    }
  });
});

describe("with A's key nothing of B's is writable", () => {
  it("A's ingest, on every path, lands in A's store whatever the payload says", async () => {
    expect((await ingestTrace(keyA, 'payments-b', 'cc'.repeat(16))).status).toBe(200);
    expect(await grpcExport(`Bearer ${keyA}`, encodeTraces('payments-b', [{ startUs: NOW_US - 50_000_000, durationUs: 10 }]))).toBeNull();
    expect((await call('/ingest?name=payments-b', { method: 'POST', headers: bearer(keyA), body: profile() as BodyInit })).status).toBe(200);
    const b = await queryRows<{ n: number }>(as(keyB), "SELECT count(*) AS n FROM svc_spans WHERE service_name = 'payments-b'");
    expect(Number(b[0]!.n)).toBe(1); // only B's own span
    expect((await (await call(`/v1/traces/${'cc'.repeat(16)}`, { headers: bearer(keyB) })).status)).toBe(404);
  });
});

// Every tenant route of the description, the four profile paths among them, plus OTLP/HTTP and gRPC.
const TENANT_ROUTES = Object.values(API).filter((e) => routeAccess({ doc: e }) === 'tenant');

describe('every tenant path refuses a missing, malformed, revoked, deactivated or unknown key', () => {
  const bad = () => ({
    missing: {},
    'another scheme': { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
    malformed: { authorization: 'Bearer tds_nope' },
    'empty bearer': { authorization: 'Bearer ' },
    unknown: { authorization: `Bearer tds_${'A'.repeat(43)}` },
    revoked: bearer(revoked),
    deactivated: bearer(deactivated),
    'the admin token': admin,
  });

  it('lists every spec route that reads or writes tenant data', () => {
    expect(TENANT_ROUTES.map((e) => `${e.method} ${e.path}`).sort()).toEqual(
      ['GET /v1/alerts', 'GET /v1/anomalies', 'GET /v1/services', 'GET /v1/traces/{trace_id}', 'POST /mcp', 'POST /', 'POST /ingest', 'POST /ingest/pyroscope', 'POST /push.v1.PusherService/Push', 'POST /v1/diagnose', 'POST /v1/investigate', 'POST /v1/query', 'POST /v1/snapshot', 'POST /v1/restore'].sort(),
    );
  });

  it('API routes and OTLP/HTTP: 401 with the error body', async () => {
    const targets = [
      ...TENANT_ROUTES.map((e) => ({ base: srv.api, method: e.method, path: e.path.replace('{trace_id}', TRACE_A) + (e.path.includes('anomalies') ? `?from_ts=${NOW_US - 1e9}&to_ts=${NOW_US}` : '') })),
      ...['traces', 'logs', 'metrics'].map((s) => ({ base: srv.otlpHttp, method: 'POST', path: `/v1/${s}` })),
      { base: srv.otlpHttp, method: 'POST', path: '/v1development/profiles' },
    ];
    for (const t of targets) {
      for (const [why, headers] of Object.entries(bad())) {
        const res = await call(t.path, { base: t.base, method: t.method, headers: { ...headers, 'content-type': 'application/json' }, ...(t.method === 'POST' ? { body: '{}' } : {}) });
        expect(res.status, `${t.method} ${t.path} with ${why}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
      }
    }
  });

  it('OTLP/gRPC: UNAUTHENTICATED', async () => {
    const bytes = encodeTraces('x', [{ startUs: NOW_US, durationUs: 1 }]);
    for (const [why, h] of Object.entries(bad())) {
      const err = await grpcExport((h as { authorization?: string }).authorization ?? null, bytes);
      expect(err?.code, why).toBe(grpc.status.UNAUTHENTICATED);
      expect(err?.details ?? '').not.toContain('tds_');
    }
  });

  it('the public routes need no key', async () => {
    expect((await call('/healthz')).status).toBe(200);
    const doc = (await (await call('/openapi.json')).json()) as { paths: Record<string, Record<string, { security?: unknown }>> };
    for (const e of TENANT_ROUTES) expect(doc.paths[e.path]![e.method.toLowerCase()]!.security, `${e.method} ${e.path}`).toBeDefined();
    expect(doc.paths['/healthz']!['get']!.security).toBeUndefined();
  });
});

describe('admin endpoints', () => {
  it('take only the admin token: 401 without or wrong, 403 with a tenant key', async () => {
    for (const [method, path] of [['GET', '/admin/status'], ['POST', '/admin/tenants'], ['POST', '/admin/tenants/alpha/keys'], ['POST', '/admin/tenants/alpha/deactivate'], ['POST', '/admin/tenants/alpha/move'], ['DELETE', '/admin/keys/abcdef0123']] as const) {
      const init = (h: Record<string, string>) => ({ method, headers: { ...h, 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{"id":"zeta"}' } : {}) });
      expect((await call(path, init({}))).status, path).toBe(401);
      expect((await call(path, init({ authorization: 'Bearer not-the-admin-token' }))).status, path).toBe(401);
      expect((await call(path, init(bearer(keyA)))).status, path).toBe(403);
    }
    expect((await call('/v1/services', { headers: bearer(keyA) })).status).toBe(200); // alpha was not deactivated by the refused call
  });

  it('validate tenant ids and report per part and per tenant', async () => {
    for (const id of ['../x', 'A', '', 'default', 'a'.repeat(64)]) {
      const res = await call('/admin/tenants', { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ id }) });
      expect(res.status, id).toBe(400);
    }
    expect((await call('/admin/tenants/nobody/keys', { method: 'POST', headers: admin })).status).toBe(404);
    const s = (await (await call('/admin/status', { headers: admin })).json()) as { status: Record<string, any> };
    for (const part of ['instance', 'storage', 'ingest', 'refused', 'diagnoses', 'detection', 'control_plane', 'tenants']) expect(s.status[part], part).toBeDefined();
    expect(s.status['tenants']['beta']).toMatchObject({ status: 'active', key_count: 1 });
    expect(s.status['tenants']['beta']['stored_bytes']).toBeGreaterThan(0);
    expect(s.status['tenants']['delta']['status']).toBe('inactive');
    expect(s.status['refused']['UNAUTHORIZED']).toBeGreaterThan(0);
  });
});

describe('per-tenant limits', () => {
  it('a tenant above its ingest rate gets 429 with Retry-After; another tenant does not', async () => {
    const greedy = (await issueKey(srv, 'greedy')).key;
    const big = 'x'.repeat(1024 * 1024); // admitted from a full bucket, then the bucket is empty for ~15 s (a busy machine stays inside it)
    await call('/v1/traces', { base: srv.otlpHttp, method: 'POST', headers: { ...bearer(greedy), 'content-type': 'application/json' }, body: big });
    const res = await ingestTrace(greedy, 'g', 'dd'.repeat(16));
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await ingestTrace(keyA, 'checkout-a', 'ee'.repeat(16))).status).toBe(200);
  });
});

more?.();

describe('secrets', () => {
  it('no key or key hash in any log line, shutdown included, or error body', async () => {
    await stopAll(); // every instance exits and its last line is read: the check sees the whole log
    const secrets = [keyA, keyB, revoked, deactivated].flatMap((k) => [k, hashKey(k)]);
    const logs = cluster.logs().map((l) => JSON.stringify(l)).join('\n');
    expect(logs.length).toBeGreaterThan(0);
    expect(bodies.length).toBeGreaterThan(50);
    for (const s of secrets) {
      expect(logs).not.toContain(s);
      for (const b of bodies) expect(b).not.toContain(s);
    }
    expect(logs).not.toContain('test-admin-token');
  });
});
}
