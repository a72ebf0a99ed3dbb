// The store `npm run bench:diagnose` diagnoses: 10 services calling each other over 6 hours, written
// straight into the service's own schema (openStore) with DuckDB INSERT … SELECT FROM range(), which
// loads millions of rows a minute where OTLP ingest would take an hour. It holds what a live server
// would have written: spans, logs with their mined templates, metrics, profiles, the services list
// and the dirty 5-minute buckets the detection pass closes (the bench lets the real server close them).
//
// Shape: traces are drawn from a small set of trace shapes (one row a span: service, kind, parent
// slot), so a client span (kind 3, `→ callee METHOD route`, peer_service) is the parent of the
// callee's server span (kind 2, `METHOD route`) in the same trace. Every "random" value is a hash of
// the request number and the span's slot, so a build is deterministic. Durations are log-normal.
//
// The diagnosed service (CHECKOUT) is heavy: ~1,200 spans/s and as many log lines in the last
// HEAVY_MIN minutes (the window and the diagnosis's whole look-back), a few dozen a second before;
// the other nine spread over the 6 hours.
//
// Cached on disk between runs (a build is minutes, a reuse seconds): <dir>/lake.duckdb plus
// <dir>/bench-meta.json, written last, so a build cut short is redone. GENERATOR_VERSION is part of
// the directory's name: bump it whenever the generated data changes.
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openStore } from '../../src/store/db.js';
import { slotLabels } from '../../src/pipeline/logminer/counters.js';
import { BUCKET_US } from '../../src/core/time.js';

export const GENERATOR_VERSION = 2;
export const CHECKOUT = 'checkout';
export const WINDOW_US = 15 * 60 * 1_000_000;
const HOURS = 6;
/** Minutes before the end during which checkout is heavy: the 15-minute window plus the 90-minute look-back of its diagnosis, and a bucket to spare. */
const HEAVY_MIN = 106;
/** Requests a second that reach checkout directly (mobile and partner clients), light and heavy; ~2.9 spans each. */
const CHECKOUT_RPS_LIGHT = 15;
const CHECKOUT_RPS_HEAVY = 420;
/** Requests a second through the frontend gateway (~5 spans each), over the whole 6 hours. */
const FRONTEND_RPS = 20;
/** Requests per INSERT statement: bounds DuckDB's memory and shows progress. */
const CHUNK_REQUESTS = 1_000_000;

export interface StoreMeta {
  version: number;
  /** Microseconds: the data covers [startUs, endUs); the diagnosed window is [endUs - WINDOW_US, endUs). */
  startUs: number;
  endUs: number;
  service: string;
  services: string[];
  buildMs: number;
  /** CPU seconds the build used (all threads): the machine is shared, so wall time alone says little. */
  buildCpuS: number;
  counts: Record<string, number>;
  windowSpans: number;
  windowLogs: number;
}

/** BENCH_DIAGNOSE_SCALE multiplies every request rate (e.g. 0.05 for a quick try of the bench itself; the targets hold for 1). */
export const SCALE = Number(process.env['BENCH_DIAGNOSE_SCALE'] ?? 1);

export function defaultStoreDir(): string {
  return process.env['BENCH_DIAGNOSE_DIR'] ?? join(tmpdir(), `tds-bench-diagnose-v${GENERATOR_VERSION}${SCALE === 1 ? '' : `-x${SCALE}`}`);
}

// ---------------------------------------------------------------------------------------------
// Topology

interface Svc {
  name: string;
  routes: number;
  replicas: number;
  version: string;
  /** Own error rate of its server spans, basis points (0.5-3%). */
  errBp: number;
  /** Median of its server spans, µs. */
  medianUs: number;
  errorTypes: string[];
  profiled: boolean;
}

const SERVICES: Svc[] = [
  { name: 'frontend', routes: 18, replicas: 4, version: '3.12.0', errBp: 60, medianUs: 45_000, errorTypes: ['HTTP 502', 'HTTP 504'], profiled: false },
  { name: CHECKOUT, routes: 24, replicas: 6, version: '2.8.1', errBp: 100, medianUs: 18_000, errorTypes: ['java.sql.SQLTransientConnectionException', 'IllegalStateException', 'HTTP 503'], profiled: true },
  { name: 'cart', routes: 14, replicas: 3, version: '1.22.4', errBp: 80, medianUs: 6_000, errorTypes: ['redis.exceptions.TimeoutError', 'KeyError'], profiled: true },
  { name: 'inventory', routes: 16, replicas: 3, version: '5.0.2', errBp: 50, medianUs: 9_000, errorTypes: ['pq: deadlock detected', 'context deadline exceeded'], profiled: false },
  { name: 'payments', routes: 10, replicas: 3, version: '4.3.0', errBp: 300, medianUs: 120_000, errorTypes: ['CardDeclinedError', 'GatewayTimeout', 'HTTP 502'], profiled: true },
  { name: 'shipping', routes: 11, replicas: 2, version: '0.9.7', errBp: 120, medianUs: 15_000, errorTypes: ['RateLimitExceeded', 'HTTP 500'], profiled: false },
  { name: 'users', routes: 20, replicas: 3, version: '7.1.0', errBp: 50, medianUs: 4_000, errorTypes: ['UserNotFound', 'TokenExpiredError'], profiled: false },
  { name: 'recommendation', routes: 12, replicas: 2, version: '2.0.3', errBp: 150, medianUs: 30_000, errorTypes: ['ModelNotLoaded', 'HTTP 500'], profiled: true },
  { name: 'assistant', routes: 10, replicas: 2, version: '0.4.1', errBp: 250, medianUs: 900_000, errorTypes: ['openai.APITimeoutError', 'RateLimitError'], profiled: false },
  { name: 'notification', routes: 12, replicas: 2, version: '1.5.5', errBp: 80, medianUs: 7_000, errorTypes: ['SMTPServerDisconnected', 'HTTP 500'], profiled: false },
];
const svcByName = new Map(SERVICES.map((s, i) => [s.name, { ...s, idx: i }]));
const svc = (name: string) => svcByName.get(name)!;

/** External peers (no spans of their own): what a client span to them says it does. */
interface External {
  peer: string;
  dbSystem: string | null;
  whats: string[];
  medianUs: number;
  errBp: number;
  llm?: boolean;
}
const PG: External = { peer: 'postgresql', dbSystem: 'postgresql', whats: ['SELECT', 'SELECT', 'SELECT', 'INSERT', 'UPDATE'], medianUs: 1_800, errBp: 20 };
const REDIS: External = { peer: 'redis', dbSystem: 'redis', whats: ['GET', 'GET', 'SET', 'MGET'], medianUs: 300, errBp: 10 };
const BANK: External = { peer: 'api.bank.example', dbSystem: null, whats: ['POST /v2/charges', 'POST /v2/refunds', 'GET /v2/charges/{id}'], medianUs: 80_000, errBp: 150 };
const SMTP: External = { peer: 'smtp.mailer.example', dbSystem: null, whats: ['POST /v3/messages'], medianUs: 40_000, errBp: 50 };
const LLM: External = { peer: 'api.openai.com', dbSystem: null, whats: ['chat gpt-4o-mini', 'chat gpt-4o-mini', 'chat gpt-4o'], medianUs: 700_000, errBp: 200, llm: true };

/** One span of a trace shape. A client slot to a service (`callee`) is the parent of the next slot, that service's server span. */
interface Slot {
  svc: string;
  kind: 2 | 3;
  parent: number | null;
  callee?: string;
  external?: External;
  /** Start, µs after the trace's start. */
  offsetUs: number;
}

/** A shape builder: a server span of `name` and the calls it makes (recursively). */
type Call = { to: string; calls?: Call[] } | { ext: External };
function shape(root: string, calls: Call[]): Slot[] {
  const slots: Slot[] = [];
  const serve = (name: string, parent: number | null, offsetUs: number, cs: Call[]) => {
    const me = slots.length;
    slots.push({ svc: name, kind: 2, parent, offsetUs });
    let t = offsetUs + 200;
    for (const c of cs) {
      if ('ext' in c) {
        slots.push({ svc: name, kind: 3, parent: me, external: c.ext, offsetUs: t });
        t += c.ext.medianUs;
      } else {
        const client = slots.length;
        slots.push({ svc: name, kind: 3, parent: me, callee: c.to, offsetUs: t });
        serve(c.to, client, t + 300, c.calls ?? []);
        t += svc(c.to).medianUs;
      }
    }
  };
  serve(root, null, 0, calls);
  return slots;
}

/** Trace shapes with their weights, per traffic class. */
const CHECKOUT_SHAPES: [number, Slot[]][] = [
  [55, shape(CHECKOUT, [{ ext: PG }, { ext: REDIS }])],
  [15, shape(CHECKOUT, [{ ext: PG }, { ext: PG }])],
  [12, shape(CHECKOUT, [{ ext: REDIS }, { to: 'inventory', calls: [{ ext: PG }] }])],
  [8, shape(CHECKOUT, [{ ext: PG }, { to: 'payments', calls: [{ ext: BANK }, { ext: PG }] }])],
  [5, shape(CHECKOUT, [{ to: 'shipping', calls: [{ ext: PG }] }])],
  [5, shape(CHECKOUT, [{ to: 'notification', calls: [{ ext: SMTP }] }])],
];
const FRONTEND_SHAPES: [number, Slot[]][] = [
  [20, shape('frontend', [{ to: 'users', calls: [{ ext: REDIS }, { ext: PG }] }])],
  [18, shape('frontend', [{ to: 'cart', calls: [{ ext: REDIS }, { to: 'inventory', calls: [{ ext: PG }] }] }])],
  [15, shape('frontend', [{ to: 'recommendation', calls: [{ to: 'inventory', calls: [{ ext: PG }] }] }])],
  [12, shape('frontend', [{ to: CHECKOUT, calls: [{ ext: PG }, { to: 'payments', calls: [{ ext: BANK }, { ext: PG }] }] }])],
  [10, shape('frontend', [{ to: 'users', calls: [{ ext: PG }] }, { to: 'cart', calls: [{ ext: REDIS }] }])],
  [8, shape('frontend', [{ to: 'assistant', calls: [{ ext: LLM }, { to: 'recommendation', calls: [] }] }])],
  [7, shape('frontend', [{ to: 'assistant', calls: [{ ext: LLM }, { ext: LLM }] }])],
  [10, shape('frontend', [{ to: 'shipping', calls: [{ ext: PG }] }, { to: 'notification', calls: [{ ext: SMTP }] }])],
];

const q = (s: string | null) => (s === null ? 'NULL' : `'${s.replace(/'/g, "''")}'`);
const list = (xs: readonly string[]) => `([${xs.map(q).join(', ')}]::VARCHAR[])`;

const NOUNS = ['orders', 'items', 'carts', 'users', 'sessions', 'products', 'prices', 'stock', 'payments', 'refunds', 'shipments', 'addresses', 'coupons', 'reviews', 'wishlists', 'invoices', 'returns', 'labels', 'quotes', 'tokens', 'profiles', 'prefs', 'messages', 'templates', 'models', 'prompts', 'feeds', 'search', 'health', 'batches'];
const METHODS = ['GET', 'POST', 'GET', 'PUT', 'GET', 'DELETE'];
const MESSAGES = ['upstream timed out after 2000 ms', 'connection reset by peer', 'pool exhausted (30/30 in use)', 'unexpected response'];

/** A service's routes: `[method, route]`, route i the same for every build. */
function routesOf(s: Svc & { idx: number }): [string, string][] {
  return Array.from({ length: s.routes }, (_v, i) => [METHODS[i % 6]!, `/api/${NOUNS[(i * 7 + s.idx * 3) % 30]}${['', '/{id}', '/{id}/items'][i % 3]}`]);
}
/** Pod names (= instance ids) and their nodes, per replica. */
function podsOf(s: Svc & { idx: number }): { pods: string[]; hosts: string[] } {
  const h = (n: number) => ((s.idx * 2654435761 + n * 40503) >>> 0).toString(16).padStart(8, '0');
  const pods = Array.from({ length: s.replicas }, (_v, r) => `${s.name}-${h(r).slice(0, 8)}-${h(r + 97).slice(3, 8)}`);
  return { pods, hosts: pods.map((_p, r) => `node-${(s.idx + r) % 6}`) };
}

/**
 * The tables of a traffic class, as VALUES: slots (one row a span of each shape, scalar columns
 * only), ops (each slot's possible operations), pods and error types; and the shape of a request as a
 * CASE over a hash. Lists stay out of the joined rows: DuckDB copies a list column for every row a
 * join emits, and a list literal in a per-row expression is rebuilt for every row (each measured at
 * microseconds a span, most of the statement).
 */
function classTables(shapes: [number, Slot[]][], h: string): { slots: string; ops: string; pods: string; errs: string; shapeCase: string } {
  const slots: string[] = [];
  const ops: string[] = [];
  const total = shapes.reduce((n, [w]) => n + w, 0);
  let acc = 0;
  const whens = shapes.map(([w], sh) => `WHEN ${h} % ${total} < ${(acc += w)} THEN ${sh}`);
  shapes.forEach(([, shapeSlots], sh) => {
    shapeSlots.forEach((s, k) => {
      const own = svc(s.svc);
      const callee = s.callee ? svc(s.callee) : null;
      const ext = s.external ?? null;
      // Routes of a call: the callee's server slot (k + 1) draws the route, its client uses the same draw.
      const routeKey = s.kind === 2 ? k : callee ? k + 1 : k;
      const target = s.kind === 2 ? own : callee;
      const median = s.kind === 2 ? own.medianUs : callee ? callee.medianUs * 1.05 + 500 : ext!.medianUs;
      const errBp = s.kind === 2 ? own.errBp : callee ? Math.round(callee.errBp * 0.8) : ext!.errBp;
      const sigma = ext?.llm ? 0.6 : s.kind === 2 ? 0.7 : 0.5;
      // Each possible operation of the slot: the identity ingest derives, the span name, HTTP method and route, the external operation.
      const choices: [string, string, string | null, string | null, string | null][] = target
        ? routesOf(target).map(([m, r]) => (s.kind === 2 ? [`${m} ${r}`, `${m} ${r}`, m, r, null] : [`→ ${target.name} ${m} ${r}`, m, m, r, null]))
        : ext!.whats.map((w) => [`→ ${ext!.peer} ${w}`, w, null, null, w]);
      choices.forEach(([op, name, method, route, what], i) => ops.push(`(${sh}, ${k}, ${i + 1}, ${q(op)}, ${q(name)}, ${q(method)}, ${q(route)}, ${q(what)})`));
      slots.push(
        `(${sh}, ${k}, ${q(s.svc)}, ${s.kind}, ${s.parent ?? 'NULL'}, ${routeKey}, ${q(target?.name ?? null)}, ${choices.length}, ${own.replicas}, ${own.errorTypes.length}, ` +
          `${q(ext?.peer ?? callee?.name ?? null)}, ${q(ext?.dbSystem ?? null)}, ${s.offsetUs}, ${Math.log(median)}::DOUBLE, ${sigma}::DOUBLE, ${errBp}, ${ext?.llm ? 'true' : 'false'}, ${q(own.version)})`,
      );
    });
  });
  const pods: string[] = [];
  const errs: string[] = [];
  for (const sv of svcByName.values()) {
    const p = podsOf(sv);
    p.pods.forEach((pod, r) => {
      const res = { 'service.name': sv.name, 'service.version': sv.version, 'service.instance.id': pod, 'k8s.pod.name': pod, 'k8s.deployment.name': sv.name, 'k8s.namespace.name': 'shop', 'deployment.environment': 'prod', 'host.name': p.hosts[r]! };
      pods.push(`(${q(sv.name)}, ${r + 1}, ${q(pod)}, ${q(p.hosts[r]!)}, ${q(JSON.stringify(res))}, ${q(`registry.example/shop/${sv.name}:${sv.version}`)})`);
    });
    sv.errorTypes.forEach((e, i) => errs.push(`(${q(sv.name)}, ${i + 1}, ${q(e)})`));
  }
  return { slots: slots.join(',\n'), ops: ops.join(',\n'), pods: pods.join(', '), errs: errs.join(', '), shapeCase: `CASE ${whens.join(' ')} END` };
}

const SLOT_COLUMNS = 'shape, k, svc, kind, parent_k, route_key, target, nops, npods, nerrs, peer, db_system, offset_us, mu, sigma, err_bp, llm, version';

/** A non-negative BIGINT hash (UBIGINT % INTEGER computes in HUGEINT, several times slower). */
const hh = (args: string) => `(hash(${args}) >> 1)::BIGINT`;
/** A uniform in (0, 1) from hash arguments. */
const uni = (args: string) => `((${hh(args)} % 1000000)::DOUBLE + 0.5) / 1000000.0`;
const hex = (args: string, width: number) => `lpad(lower(to_hex(hash(${args}))), ${width}, '0')`;

/** INSERT of the spans of requests [g0, g1) of one class, starting at startUs, `rps` requests a second. */
function spansSql(shapes: [number, Slot[]][], classId: number, g0: number, g1: number, startUs: number, rps: number): string {
  const t = classTables(shapes, hh(`g, ${classId}`));
  return `
INSERT INTO svc_spans (timestamp, service_name, trace_id, span_id, parent_span_id, flags, span_name, span_kind, status_code, status_message,
  duration_us, end_timestamp, scope_name, scope_version, resource_attributes, span_attributes, events_json, operation, is_error, error_type,
  http_method, http_route, http_status_code, peer_service, db_system, gen_ai_system, gen_ai_operation, gen_ai_model, gen_ai_input_tokens,
  gen_ai_output_tokens, gen_ai_finish_reasons, service_namespace, service_version, service_instance_id, deployment_environment,
  k8s_namespace, k8s_deployment, k8s_pod_name, container_name, container_image, host_name)
WITH slots(${SLOT_COLUMNS}) AS (VALUES ${t.slots}),
ops(shape, k, oi, operation, name, http_method, http_route, what) AS (VALUES ${t.ops}),
pods(svc, ri, pod, host, resource_attributes, image) AS (VALUES ${t.pods}),
errs(svc, ei, error_type) AS (VALUES ${t.errs}),
req AS (
  SELECT g, ${startUs}::BIGINT + ((g - ${g0}) * ${1e6 / rps}::DOUBLE)::BIGINT AS t0, ${t.shapeCase} AS shape
  FROM range(${g0}, ${g1}) r(g)
),
s AS (
  SELECT req.g, req.t0, slots.*,
    1 + ${hh('req.g, route_key, 3')} % nops AS oi,
    1 + ${hh('req.g, k, 8')} % npods AS ri,
    CASE WHEN ${hh('req.g, k, 6')} % 10000 < err_bp THEN 1 + ${hh('req.g, k, 9')} % nerrs END AS ei,
    greatest(50, exp(mu + (oi % 5) * 0.15::DOUBLE + sigma * sqrt(-2 * ln(${uni('req.g, k, 5')})) * cos(2 * pi() * ${uni('req.g, k, 7')})))::BIGINT AS dur
  FROM req JOIN slots USING (shape)
),
f AS (
  SELECT s.*, ops.operation, ops.name, ops.http_method, ops.http_route, ops.what, pods.pod, pods.host, pods.resource_attributes, pods.image, errs.error_type, ei IS NOT NULL AS err
  FROM s JOIN ops USING (shape, k, oi) JOIN pods USING (svc, ri) LEFT JOIN errs USING (svc, ei)
)
SELECT make_timestamp(t0 + offset_us), svc, ${hex('g, -1', 16)} || ${hex('g, -2', 16)}, ${hex('g, k', 16)},
  CASE WHEN parent_k IS NULL THEN NULL ELSE ${hex('g, parent_k', 16)} END, 1, name, kind,
  CASE WHEN err THEN 2 ELSE 0 END,
  CASE WHEN err THEN error_type || ': ' || CASE ${hh('g, k, 10')} % 4 ${MESSAGES.map((m, i) => `WHEN ${i} THEN ${q(m)}`).join(' ')} END END,
  dur, make_timestamp(t0 + offset_us + dur),
  CASE WHEN kind = 2 THEN 'io.opentelemetry.http-server' WHEN db_system IS NOT NULL THEN 'io.opentelemetry.db' ELSE 'io.opentelemetry.http-client' END, '2.4.0',
  resource_attributes,
  CASE WHEN http_route IS NOT NULL THEN '{"http.request.method":"' || http_method || '","http.route":"' || http_route || '","http.response.status_code":' ||
         (CASE WHEN err THEN 503 ELSE 200 END)::VARCHAR || ',"url.scheme":"http","server.port":8080,"client.address":"10.1.' || (${hh('g')} % 250)::VARCHAR || '.' || (${hh('g, 1')} % 250)::VARCHAR ||
         '","enduser.id":"u' || (${hh('g, 2')} % 50000)::VARCHAR || '"' || CASE WHEN kind = 3 THEN ',"peer.service":"' || target || '"' ELSE '' END || '}'
       WHEN db_system IS NOT NULL THEN '{"db.system":"' || db_system || '","db.operation":"' || what || '","server.address":"' || peer || '.shop.svc","db.name":"shop"}'
       WHEN llm THEN '{"gen_ai.system":"openai","gen_ai.operation.name":"chat","gen_ai.request.model":"' || substr(what, 6) || '","server.address":"' || peer || '"}'
       ELSE '{"http.request.method":"POST","server.address":"' || peer || '"}' END,
  CASE WHEN err THEN '[{"name":"exception","time_unix_nano":0,"attributes":{"exception.type":"' || error_type || '"}}]' END,
  operation, err, error_type, http_method, http_route,
  CASE WHEN http_route IS NOT NULL THEN CASE WHEN NOT err THEN 200 WHEN ${hh('g, k, 11')} % 2 = 0 THEN 503 ELSE 500 END END,
  CASE WHEN kind = 3 THEN peer END, db_system,
  CASE WHEN llm THEN 'openai' END, CASE WHEN llm THEN 'chat' END, CASE WHEN llm THEN substr(what, 6) END,
  CASE WHEN llm THEN 200 + ${hh('g, k, 12')} % 3000 END, CASE WHEN llm THEN 20 + ${hh('g, k, 13')} % 800 END,
  CASE WHEN llm THEN CASE WHEN ${hh('g, k, 14')} % 100 < 3 THEN '["length"]' ELSE '["stop"]' END END,
  'shop', version, pod, 'prod', 'shop', svc, pod, svc, image, host
FROM f`;
}

// ---------------------------------------------------------------------------------------------
// Logs: one line per checkout span, one per other services' server span (plus a stack line for
// errors), from templates that the miner would have found; templates and their counts follow.

interface Tpl {
  id: number;
  service: string;
  /** Two `<*>` slots; the body fills them from the span. */
  pattern: string;
  severity: 'INFO' | 'WARN' | 'ERROR' | 'DEBUG';
  error: boolean;
}

function templates(): Tpl[] {
  const out: Tpl[] = [];
  const info = [
    'request handled route=<*> in <*> ms',
    'cache lookup key=<*> hit after <*> ms',
    'query rows=<*> took <*> ms',
    'user <*> session refreshed ttl=<*>',
    'published event id=<*> partition=<*>',
    'response size=<*> bytes status=<*>',
  ];
  const warn = ['slow request route=<*> took <*> ms', 'retrying call attempt=<*> backoff=<*> ms'];
  const err = ['request failed route=<*> error=<*>', 'upstream call failed peer=<*> after <*> ms', 'transaction rolled back id=<*> reason=<*>'];
  SERVICES.forEach((s, i) => {
    const base = 1_000_000 + i * 100;
    info.forEach((p, t) => out.push({ id: base + t, service: s.name, pattern: p, severity: 'INFO', error: false }));
    warn.forEach((p, t) => out.push({ id: base + 20 + t, service: s.name, pattern: p, severity: 'WARN', error: false }));
    err.forEach((p, t) => out.push({ id: base + 40 + t, service: s.name, pattern: p, severity: 'ERROR', error: true }));
  });
  return out;
}

function logsSql(tpls: Tpl[], loUs: number, hiUs: number): string {
  // Per service: info templates rel 0..5, warn 20..21, error 40..42; a span picks one by its hash.
  const values = tpls
    .map((t) => {
      const [p0, p1, p2] = t.pattern.split('<*>') as [string, string, string];
      return `(${q(t.service)}, ${t.id % 100}, ${t.id}, ${q(p0)}, ${q(p1)}, ${q(p2)}, ${q(t.severity)}, ${t.severity === 'ERROR' ? 17 : t.severity === 'WARN' ? 13 : 9}, ${t.error}, ${/ms/.test(t.pattern)})`;
    })
    .join(', ');
  return `
INSERT INTO svc_logs (timestamp, observed_timestamp, service_name, severity_number, severity_text, body, trace_id, span_id, flags, scope_name,
  resource_attributes, log_attributes, is_error, template_id, template_params, service_namespace, service_version, service_instance_id,
  deployment_environment, k8s_namespace, k8s_deployment, k8s_pod_name, container_name, container_image, host_name)
WITH tpl(service_name, rel, template_id, p0, p1, p2, severity, severity_number, error, timed) AS (VALUES ${values}),
sp AS (
  SELECT timestamp, service_name, trace_id, span_id, is_error, duration_us, coalesce(http_route, operation) AS route, resource_attributes,
    service_namespace, service_version, service_instance_id, deployment_environment, k8s_namespace, k8s_deployment, k8s_pod_name, container_name, container_image, host_name,
    CASE WHEN is_error THEN 40 + ${hh('span_id')} % 3
         WHEN ${hh('span_id, 1')} % 100 < 4 THEN 20 + ${hh('span_id')} % 2
         ELSE ${hh('span_id')} % 6 END AS rel
  FROM svc_spans
  WHERE timestamp >= make_timestamp(${loUs}::BIGINT) AND timestamp < make_timestamp(${hiUs}::BIGINT)
    AND (service_name = '${CHECKOUT}' OR span_kind = 2)
),
l AS (
  SELECT sp.*, tpl.template_id, tpl.p0, tpl.p1, tpl.p2, tpl.severity, tpl.severity_number, tpl.error,
    CASE WHEN tpl.error OR rel % 2 = 0 THEN route ELSE (${hh('span_id, 2')} % 900)::VARCHAR END AS a,
    CASE WHEN tpl.timed THEN (duration_us // 1000)::VARCHAR ELSE substr(span_id, 1, 6) END AS b
  FROM sp JOIN tpl USING (service_name, rel)
)
SELECT timestamp + INTERVAL 1 MILLISECOND, timestamp + INTERVAL 3 MILLISECOND, service_name, severity_number, severity, p0 || a || p1 || b || p2,
  trace_id, span_id, 1, 'app.logger', resource_attributes, '{"logger":"' || service_name || '.handler","thread":"worker-' || (${hh('span_id, 3')} % 16)::VARCHAR || '"}',
  error, template_id, '["' || replace(a, '"', '\\"') || '","' || b || '"]',
  service_namespace, service_version, service_instance_id, deployment_environment, k8s_namespace, k8s_deployment, k8s_pod_name, container_name, container_image, host_name
FROM l`;
}

function templatesSql(tpls: Tpl[]): string {
  // sample_values as the miner keeps them: per slot label, a few values seen.
  const values = tpls
    .map((t) => {
      const labels = [...slotLabels(t.pattern).values()];
      return `(${t.id}, ${q(labels[0] ?? 'p0')}, ${q(labels[1] ?? 'p1')}, ${q(t.pattern)}, ${q(t.severity)})`;
    })
    .join(', ');
  return `
INSERT INTO svc_log_templates (timestamp, service_name, template_id, pattern, example_body, severity_text, first_seen, last_seen, count, error_count, sample_values, evicted)
WITH tpl(template_id, l0, l1, pattern, severity) AS (VALUES ${values})
SELECT min(timestamp), any_value(service_name), template_id, any_value(tpl.pattern), any_value(body), any_value(tpl.severity), min(timestamp), max(timestamp),
  count(*), count_if(is_error),
  json_object(any_value(l0), list(DISTINCT json_extract_string(template_params, '$[0]'))[1:5], any_value(l1), list(DISTINCT json_extract_string(template_params, '$[1]'))[1:5])::VARCHAR,
  false
FROM svc_logs JOIN tpl USING (template_id) GROUP BY template_id`;
}

// ---------------------------------------------------------------------------------------------
// Metrics and profiles: small next to spans and logs, as in a real store.

function metricsSql(startUs: number, endUs: number): string[] {
  const names = list(SERVICES.map((s) => s.name));
  const versions = list(SERVICES.map((s) => s.version));
  const every = 15_000_000;
  const n = Math.floor((endUs - startUs) / every);
  const res = (sv: string) =>
    `'shop', ${versions}[1 + si], ${sv} || '-0', 'prod', 'shop', ${sv}, ${sv} || '-0', ${sv}, 'registry.example/shop/' || ${sv}, 'node-1'`;
  const cols = 'service_namespace, service_version, service_instance_id, deployment_environment, k8s_namespace, k8s_deployment, k8s_pod_name, container_name, container_image, host_name';
  const base = `FROM range(${n}) a(i), range(${SERVICES.length}) b(si)`;
  const ts = `make_timestamp(${startUs}::BIGINT + i * ${every})`;
  const sv = `${names}[1 + si]`;
  return [
    `INSERT INTO svc_metrics_gauge (timestamp, service_name, metric_name, metric_unit, attributes, resource_attributes, scope_name, ${cols}, value)
     SELECT ${ts}, ${sv}, m.name, m.unit, '{}', '{"service.name":"' || ${sv} || '"}', 'io.opentelemetry.runtime', ${res(sv)},
       m.base + ((hash(i, si, m.name) >> 1)::BIGINT % 1000) / 1000.0 * m.spread
     ${base}, (VALUES ('process.cpu.utilization', '1', 0.2, 0.3), ('process.memory.usage', 'By', 4e8, 1e8), ('db.client.connections.usage', '{connection}', 5, 10)) m(name, unit, base, spread)`,
    `INSERT INTO svc_metrics_sum (timestamp, start_timestamp, service_name, metric_name, metric_unit, attributes, resource_attributes, scope_name, ${cols}, value, aggregation_temporality, is_monotonic)
     SELECT ${ts}, make_timestamp(${startUs}::BIGINT), ${sv}, 'http.server.request.count', '{request}', '{}', '{"service.name":"' || ${sv} || '"}', 'io.opentelemetry.http', ${res(sv)},
       (i * 150 + (hash(i, si) >> 1)::BIGINT % 50)::DOUBLE, 2, true
     ${base}`,
    `INSERT INTO svc_metrics_histogram (timestamp, start_timestamp, service_name, metric_name, metric_unit, attributes, resource_attributes, scope_name, ${cols}, metric_type, count, sum, min, max, bucket_counts, explicit_bounds, aggregation_temporality)
     SELECT ${ts}, ${ts} - INTERVAL 15 SECOND, ${sv}, 'http.server.request.duration', 's', '{}', '{"service.name":"' || ${sv} || '"}', 'io.opentelemetry.http', ${res(sv)}, 'histogram',
       200::UBIGINT, 4.0 + ((hash(i, si) >> 1)::BIGINT % 100) / 100.0, 0.001, 2.5, [20, 60, 80, 30, 8, 2]::UBIGINT[], [0.005, 0.01, 0.025, 0.05, 0.1]::DOUBLE[], 1
     ${base}`,
  ];
}

function profilesSql(startUs: number, endUs: number): string {
  const profiled = SERVICES.filter((s) => s.profiled).map((s) => s.name);
  const every = 10_000_000;
  const n = Math.floor((endUs - startUs) / every);
  const fns = ['json.Marshal', 'runtime.mallocgc', 'crypto/tls.(*Conn).Read', 'database/sql.(*DB).QueryContext', 'regexp.(*Regexp).FindAllString', 'compress/gzip.(*Writer).Write',
    'net/http.(*conn).serve', 'sort.Slice', 'encoding/base64.StdEncoding.EncodeToString', 'strings.Builder.WriteString', 'sync.(*Mutex).Lock', 'app.pricing.Compute'];
  return `
INSERT INTO svc_profiles (timestamp, service_name, profile_id, profile_type, unit, period_type, period, duration_ns, function, stack, value, sample_count, labels, source)
SELECT make_timestamp(${startUs}::BIGINT + i * ${every}), s, lower(to_hex(hash(i, s))), 'cpu', 'nanoseconds', 'cpu', 10000000, ${every * 1000},
  f, ['main.main', 'net/http.(*Server).Serve', s || '.handler', f], (1 + (hash(i, s, f) >> 1)::BIGINT % 40) * 10000000, 1 + (hash(i, s, f) >> 1)::BIGINT % 40, '{}', 'pprof'
FROM range(${n}) a(i), (SELECT unnest(${list(profiled)}) AS s) b, (SELECT unnest(${list(fns)}) AS f) c`;
}

// ---------------------------------------------------------------------------------------------

async function count(conn: DuckDBConnection, sql: string): Promise<number> {
  return Number((await conn.runAndReadAll(sql)).getRows()[0]![0]);
}

/**
 * Removes what a bench run added after the generated data (the sustained ingest's spans, their
 * buckets, series and detector state), so the next run finds the store as built. Run with no server on it.
 */
export async function scrub(dir: string, meta: StoreMeta): Promise<void> {
  const store = await openStore(dir, 'default', { threads: 2 });
  try {
    const w = store.writer;
    const end = `make_timestamp(${meta.endUs}::BIGINT)`;
    const known = list(meta.services);
    for (const t of ['svc_spans', 'svc_logs', 'svc_profiles', 'svc_metrics_gauge', 'svc_metrics_sum', 'svc_metrics_histogram', 'svc_series_5m', 'svc_anomalies']) {
      await w.run(`DELETE FROM ${t} WHERE timestamp >= ${end} OR NOT list_contains(${known}, service_name)`);
    }
    await w.run(`DELETE FROM svc_dirty_buckets WHERE bucket >= ${Math.floor(meta.endUs / BUCKET_US)}`);
    for (const t of ['svc_detector_state', 'svc_alerts', 'svc_services']) await w.run(`DELETE FROM ${t} WHERE NOT list_contains(${known}, service_name)`);
    await w.run(`UPDATE svc_services SET last_seen = least(last_seen, ${end} - INTERVAL 1 MICROSECOND)`);
  } finally {
    await store.close();
  }
}

export function fileBytes(dir: string): number {
  const p = join(dir, 'lake.duckdb');
  return existsSync(p) ? statSync(p).size : 0;
}

/** The cached store if it is complete and of this generator's version; else builds it (progress on `log`). */
export async function buildOrReuse(dir: string, log: (msg: string) => void, memoryLimit = '3GB'): Promise<{ meta: StoreMeta; built: boolean }> {
  const metaPath = join(dir, 'bench-meta.json');
  if (existsSync(metaPath)) {
    const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as StoreMeta;
    if (meta.version === GENERATOR_VERSION) {
      await scrub(dir, meta);
      return { meta, built: false };
    }
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  // Ends at a bucket boundary a bucket ago, so every bucket is closed when the server's pass runs (grace 0).
  const endUs = (Math.floor(Date.now() * 1000 / BUCKET_US) - 1) * BUCKET_US;
  const startUs = endUs - HOURS * 3600e6;
  const heavyUs = endUs - HEAVY_MIN * 60e6;
  // The last requests start early enough for their spans (offsets under a second) to end before endUs.
  const lastUs = endUs - 3e6;
  const store = await openStore(dir, 'default', { threads: 2, memoryLimit });
  const w = store.writer;
  // Lets both threads append (each to its own row groups); with order preserved one thread wrote while
  // the other waited (measured 2-2.5x the time). Rows stay time-ordered within a few thousand.
  await w.run('SET preserve_insertion_order = false');
  const step = (label: string, t0: number) => log(`  ${label} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  try {
    // Traffic classes: [shapes, first request time, requests a second, duration]; request numbers run on across classes (trace ids stay distinct).
    const classes: [string, [number, Slot[]][], number, number, number][] = [
      ['frontend traffic, 6 h', FRONTEND_SHAPES, startUs, FRONTEND_RPS, lastUs - startUs],
      ['checkout direct, light', CHECKOUT_SHAPES, startUs, CHECKOUT_RPS_LIGHT, heavyUs - startUs],
      ['checkout direct, heavy', CHECKOUT_SHAPES, heavyUs, CHECKOUT_RPS_HEAVY, lastUs - heavyUs],
    ];
    let g = 0;
    for (const [ci, [label, shapes, from, perSecond, span]] of classes.entries()) {
      const rps = perSecond * SCALE;
      const total = Math.floor((span / 1e6) * rps);
      const t0 = performance.now();
      for (let off = 0; off < total; off += CHUNK_REQUESTS) {
        const n = Math.min(CHUNK_REQUESTS, total - off);
        await w.run(spansSql(shapes, ci, g + off, g + off + n, from + (off / rps) * 1e6, rps));
      }
      g += total;
      step(`spans: ${label}, ${total.toLocaleString()} requests`, t0);
    }
    const tpls = templates();
    let t0 = performance.now();
    for (let lo = startUs; lo < endUs; lo += 1800e6) await w.run(logsSql(tpls, lo, Math.min(endUs, lo + 1800e6)));
    step('logs', t0);
    t0 = performance.now();
    await w.run(templatesSql(tpls));
    for (const s of metricsSql(startUs, endUs)) await w.run(s);
    await w.run(profilesSql(startUs, endUs));
    // What ingest commits beside the rows: service bounds and the dirty buckets of the detection tables.
    await w.run(`INSERT INTO svc_services SELECT min(timestamp), service_name, min(timestamp), max(timestamp) FROM (
      SELECT service_name, timestamp FROM svc_spans UNION ALL SELECT service_name, timestamp FROM svc_logs UNION ALL SELECT service_name, timestamp FROM svc_profiles
      UNION ALL SELECT service_name, timestamp FROM svc_metrics_gauge) GROUP BY service_name`);
    await w.run(`INSERT OR IGNORE INTO svc_dirty_buckets SELECT DISTINCT epoch_us(timestamp) // ${BUCKET_US} FROM (
      SELECT timestamp FROM svc_spans UNION ALL SELECT timestamp FROM svc_logs UNION ALL SELECT timestamp FROM svc_profiles)`);
    await w.run('CHECKPOINT');
    step('templates, metrics, profiles, services, dirty buckets, checkpoint', t0);
    const counts: Record<string, number> = {};
    for (const t of ['svc_spans', 'svc_logs', 'svc_log_templates', 'svc_metrics_gauge', 'svc_metrics_sum', 'svc_metrics_histogram', 'svc_profiles', 'svc_dirty_buckets']) {
      counts[t] = await count(w, `SELECT count(*) FROM ${t}`);
    }
    const win = `service_name = '${CHECKOUT}' AND timestamp >= make_timestamp(${endUs - WINDOW_US}::BIGINT) AND timestamp < make_timestamp(${endUs}::BIGINT)`;
    const meta: StoreMeta = {
      version: GENERATOR_VERSION,
      startUs,
      endUs,
      service: CHECKOUT,
      services: SERVICES.map((s) => s.name),
      buildMs: 0,
      buildCpuS: 0,
      counts,
      windowSpans: await count(w, `SELECT count(*) FROM svc_spans WHERE ${win}`),
      windowLogs: await count(w, `SELECT count(*) FROM svc_logs WHERE ${win}`),
    };
    await store.close();
    meta.buildMs = performance.now() - started;
    const cpu = process.cpuUsage(cpu0);
    meta.buildCpuS = (cpu.user + cpu.system) / 1e6;
    writeFileSync(metaPath, JSON.stringify(meta, null, 2));
    return { meta, built: true };
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
}
