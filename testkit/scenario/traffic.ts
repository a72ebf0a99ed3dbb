// The telemetry of one scenario: traces walked through the topology (client span in the caller,
// server span in the callee, a parent covering its children plus its own self time), logs tied to
// spans, per-minute metrics computed from the same spans, and per-minute CPU profiles whose cost
// follows the requests served. Pure and seeded: the same scenario gives the same data.
import { rng } from '../rng.js';
import { between, pick, serviceOf, type Operation, type Rand, type ServiceNode, type Topology } from './topology.js';
import type { FaultPlan, Scenario } from './faults.js';

export type AttrVal = string | number | boolean | string[];

export interface GenSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  service: string;
  /** Key into ScenarioData.resources. */
  resource: string;
  name: string;
  kind: number;
  startUs: number;
  durationUs: number;
  error: boolean;
  statusMessage: string;
  attributes: Record<string, AttrVal>;
  events: { name: string; timeUs: number; attributes: Record<string, AttrVal> }[];
}

export interface GenLog {
  service: string;
  resource: string;
  timeUs: number;
  severityNumber: number;
  severityText: string;
  body: string;
  traceId: string | null;
  spanId: string | null;
}

export interface GenMetric {
  service: string;
  resource: string;
  name: string;
  unit: string;
  /** Start of the minute it covers, µs. */
  timeUs: number;
  gauge?: number;
  histogram?: { bounds: number[]; counts: number[]; sum: number; count: number };
}

export interface GenProfile {
  service: string;
  resource: string;
  startUs: number;
  durationUs: number;
  /** Root → leaf function names and CPU nanoseconds spent in the leaf. */
  samples: { stack: string[]; cpuNs: number }[];
}

export interface ScenarioData {
  resources: Record<string, Record<string, string>>;
  spans: GenSpan[];
  logs: GenLog[];
  metrics: GenMetric[];
  profiles: GenProfile[];
}

const MINUTE_US = 60_000_000;
const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
/** Seconds, as http.server.request.duration's advised boundaries. */
const DURATION_BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

const hex = (r: Rand, bytes: number): string => {
  let s = '';
  for (let i = 0; i < bytes; i++) s += Math.floor(r() * 256).toString(16).padStart(2, '0');
  return s;
};

/** Standard normal by Box-Muller. */
function normal(r: Rand): number {
  const u = Math.max(r(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}
export const lognormal = (r: Rand, median: number, sigma: number): number => median * Math.exp(sigma * normal(r));

// ---- fault predicates (one place says when each fault applies) ----

const active = (f: FaultPlan, t: number) => f.kind !== 'none' && t >= f.onsetUs;
export const isDown = (f: FaultPlan, svc: string, t: number) => f.kind === 'dependency_outage' && f.target === svc && active(f, t);
const isDeployed = (f: FaultPlan, svc: string, t: number) => f.kind === 'bad_deploy' && f.target === svc && active(f, t);

/** Extra own-failure share of a service at time t. */
function faultErrorShare(f: FaultPlan, svc: string, t: number): number {
  if (f.target !== svc || !active(f, t)) return 0;
  return f.kind === 'errors_leaf' || f.kind === 'bad_deploy' ? f.errorShare : 0;
}

/** Own (self) time of one request of `op` in `svc` at time t. */
function selfTime(r: Rand, s: ServiceNode, op: Operation, f: FaultPlan, t: number): number {
  let us = lognormal(r, op.selfMedianUs, s.noisy ? 0.9 : op.selfSigma);
  // Heavy tail of the noisy service: a Pareto(1.3) multiplier on 4% of its requests, capped at 60x.
  if (s.noisy && r() < 0.04) us *= Math.min(60, Math.pow(1 - r(), -1 / 1.3));
  if (f.target === s.name && active(f, t)) {
    if (f.kind === 'latency_leaf') us = us * f.latencyFactor + lognormal(r, f.latencyExtraUs, 0.35);
    if (f.kind === 'cpu_hot_spot') us *= f.latencyFactor;
  }
  return Math.max(50, Math.round(us));
}

// ---- resources ----

function podName(t: Topology, s: ServiceNode, replica: number, deployed: boolean): string {
  const r = rng(t.seed * 31 + s.name.length * 7 + replica + (deployed ? 1000 : 0));
  return `${s.name}-${hex(r, 4).slice(0, 7)}-${hex(r, 3).slice(0, 5)}`;
}

function resourceKey(s: ServiceNode, replica: number, deployed: boolean): string {
  return `${s.name}|${deployed ? 'new' : 'old'}|${replica}`;
}

function resourceAttrs(t: Topology, s: ServiceNode, replica: number, deployed: boolean, newVersion: string): Record<string, string> {
  const version = deployed ? newVersion : s.version;
  const pod = podName(t, s, replica, deployed);
  return {
    'service.name': s.name,
    'service.version': version,
    'service.instance.id': `${pod}-${s.name}`,
    'service.namespace': t.namespace,
    'deployment.environment.name': 'production',
    'k8s.namespace.name': t.namespace,
    'k8s.deployment.name': s.name,
    'k8s.pod.name': pod,
    'k8s.container.name': s.name,
    'container.image.name': `registry.example.com/${t.namespace}/${s.name}`,
    'container.image.tag': `v${version}`,
    'host.name': `node-${(replica + s.name.length) % 5}`,
    'telemetry.sdk.language': s.language,
  };
}

// ---- log templates (a few per service) ----

const NOUNS = ['order', 'item', 'session', 'account', 'quote', 'shipment', 'record', 'basket'];
const BURSTS = [
  (n: string, i: number, r: Rand) => `failed to refresh ${n} cache from upstream: connection reset by peer (attempt ${1 + (i % 5)})`,
  (n: string, _i: number, r: Rand) => `background sync of ${n} index aborted: lock wait timeout after ${Math.round(between(r, 900, 5000))} ms`,
  (n: string, i: number, r: Rand) => `could not publish ${n} event to topic ${n}-events partition ${i % 12}: broker not available (${Math.round(between(r, 1, 99))} queued)`,
];

interface Gen {
  r: Rand;
  t: Topology;
  f: FaultPlan;
  out: ScenarioData;
  /** Server-span count and summed self µs per service and minute (drives profiles and metrics). */
  served: Map<string, { requests: number; selfUs: number }>;
  hist: Map<string, GenMetric>;
}

function resourceFor(g: Gen, s: ServiceNode, t: number, hint: number): string {
  const deployed = isDeployed(g.f, s.name, t);
  const replica = hint % s.replicas;
  const key = resourceKey(s, replica, deployed);
  if (!g.out.resources[key]) g.out.resources[key] = resourceAttrs(g.t, s, replica, deployed, g.f.newVersion);
  return key;
}

function noun(s: ServiceNode): string {
  return NOUNS[s.name.length % NOUNS.length]!;
}

function log(g: Gen, s: ServiceNode, resource: string, timeUs: number, sev: 'INFO' | 'WARN' | 'ERROR', body: string, traceId: string | null, spanId: string | null) {
  g.out.logs.push({ service: s.name, resource, timeUs, severityNumber: sev === 'ERROR' ? 17 : sev === 'WARN' ? 13 : 9, severityText: sev, body, traceId, spanId });
}

function observe(g: Gen, s: ServiceNode, resource: string, timeUs: number, durationUs: number, selfUs: number) {
  const minute = Math.floor(timeUs / MINUTE_US) * MINUTE_US;
  const k = `${s.name}|${minute}`;
  const v = g.served.get(k) ?? { requests: 0, selfUs: 0 };
  v.requests++;
  v.selfUs += selfUs;
  g.served.set(k, v);
  const hk = `${resource}|${minute}`;
  let m = g.hist.get(hk);
  if (!m) {
    m = {
      service: s.name,
      resource,
      name: s.protocol === 'http' ? 'http.server.request.duration' : 'rpc.server.call.duration',
      unit: 's',
      timeUs: minute,
      histogram: { bounds: DURATION_BOUNDS, counts: new Array<number>(DURATION_BOUNDS.length + 1).fill(0), sum: 0, count: 0 },
    };
    g.hist.set(hk, m);
  }
  const h = m.histogram!;
  const sec = durationUs / 1e6;
  let b = 0;
  while (b < h.bounds.length && sec > h.bounds[b]!) b++;
  h.counts[b]!++;
  h.sum += sec;
  h.count++;
}

const ownErrorTypes = (s: ServiceNode): string[] =>
  s.noisy ? ['UpstreamTimeoutError', 'ValidationError', 'RateLimitedError'] : ['TimeoutError', 'ConcurrentModificationException'];

interface Outcome {
  endUs: number;
  error: boolean;
  errorType: string | null;
}

/** A database statement (client span) under `parent`. */
function dbCall(g: Gen, s: ServiceNode, resource: string, traceId: string, parent: string, start: number): number {
  const { r, t } = g;
  const op = pick(r, ['SELECT', 'SELECT', 'SELECT', 'INSERT', 'UPDATE']);
  const table = `${noun(s)}s`;
  const dur = Math.max(80, Math.round(lognormal(r, 900, 0.5)));
  const db = t.db;
  g.out.spans.push({
    traceId,
    spanId: hex(r, 8),
    parentSpanId: parent,
    service: s.name,
    resource,
    name: `${op} ${table}`,
    kind: SPAN_KIND_CLIENT,
    startUs: start,
    durationUs: dur,
    error: false,
    statusMessage: '',
    attributes: db.newNames
      ? { 'db.system.name': db.system, 'db.operation.name': op, 'db.namespace': db.name, 'db.collection.name': table, 'server.port': 5432 }
      : { 'db.system': db.system, 'db.operation': op, 'db.name': db.name, 'db.sql.table': table, 'net.peer.port': 5432 },
    events: [],
  });
  return start + dur;
}

/** An LLM call (client span with gen_ai attributes) under `parent`. */
function llmCall(g: Gen, s: ServiceNode, resource: string, traceId: string, parent: string, start: number): Outcome {
  const { r, f } = g;
  const llm = g.t.llm;
  const degraded = f.kind === 'llm_degradation' && active(f, start);
  const input = Math.round(lognormal(r, 600, 0.5));
  const failed = degraded && r() < f.llmErrorShare;
  let output = Math.min(llm.maxTokens, Math.round(lognormal(r, llm.maxTokens * 0.3, 0.5)));
  if (degraded && !failed && r() < f.llmLengthShare) output = llm.maxTokens;
  const finish = output >= llm.maxTokens ? 'length' : 'stop';
  const dur = failed ? Math.round(between(r, 20_000, 200_000)) : Math.round(150_000 + output * between(r, 6_000, 12_000) / 10);
  const a: Record<string, AttrVal> = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': llm.model,
    'gen_ai.request.max_tokens': llm.maxTokens,
    'server.address': llm.host,
    'server.port': 443,
  };
  if (llm.newNames) a['gen_ai.provider.name'] = llm.provider;
  else a['gen_ai.system'] = llm.provider;
  if (!failed) {
    a['gen_ai.response.model'] = llm.model;
    a['gen_ai.response.finish_reasons'] = [finish];
    a[llm.newNames ? 'gen_ai.usage.input_tokens' : 'gen_ai.usage.prompt_tokens'] = input;
    a[llm.newNames ? 'gen_ai.usage.output_tokens' : 'gen_ai.usage.completion_tokens'] = output;
  } else {
    a['error.type'] = pick(r, ['RateLimitError', 'APIConnectionError', 'InternalServerError']);
    a['http.response.status_code'] = a['error.type'] === 'RateLimitError' ? 429 : 500;
  }
  g.out.spans.push({
    traceId,
    spanId: hex(r, 8),
    parentSpanId: parent,
    service: s.name,
    resource,
    name: `chat ${llm.model}`,
    kind: SPAN_KIND_CLIENT,
    startUs: start,
    durationUs: dur,
    error: failed,
    statusMessage: failed ? String(a['error.type']) : '',
    attributes: a,
    events: [],
  });
  return { endUs: start + dur, error: failed, errorType: failed ? String(a['error.type']) : null };
}

/** A call from `caller` to another service: the caller's client span and, unless the callee is down, the callee's work. */
function call(g: Gen, caller: ServiceNode, resource: string, c: Operation['calls'][number], traceId: string, parent: string, start: number, hint: number): Outcome {
  const { r, t, f } = g;
  const callee = serviceOf(t, c.callee);
  const op = callee.ops[c.op]!;
  const spanId = hex(r, 8);
  const a: Record<string, AttrVal> = { 'peer.service': callee.name, 'server.address': `${callee.name}.${t.namespace}.svc.cluster.local`, 'server.port': op.protocol === 'http' ? 8080 : 9090 };
  if (op.protocol === 'http') a['http.request.method'] = op.method;
  else Object.assign(a, { 'rpc.system': 'grpc', 'rpc.service': op.route, 'rpc.method': op.method });
  const events: GenSpan['events'] = [];
  let out: Outcome;
  let message = '';
  if (isDown(f, callee.name, start) && f.outageMode === 'refused') {
    // Nothing listens: the connection is refused within a few milliseconds.
    const dur = Math.round(between(r, 800, 3_000));
    a['error.type'] = 'ECONNREFUSED';
    message = `connect ECONNREFUSED 10.${t.seed % 250}.${callee.name.length}.${c.op + 10}:${a['server.port']}`;
    events.push({ name: 'exception', timeUs: start + dur, attributes: { 'exception.type': 'ConnectionRefusedError', 'exception.message': message } });
    out = { endUs: start + dur, error: true, errorType: 'ECONNREFUSED' };
  } else if (isDown(f, callee.name, start)) {
    // The address still resolves but nothing answers: the caller waits for its client timeout.
    const dur = Math.round(f.timeoutUs * between(r, 1, 1.02));
    if (op.protocol === 'grpc') a['rpc.grpc.status_code'] = 4;
    a['error.type'] = op.protocol === 'grpc' ? 'DEADLINE_EXCEEDED' : 'timeout';
    message = op.protocol === 'grpc' ? 'context deadline exceeded' : `request to ${callee.name} timed out after ${f.timeoutUs / 1000} ms`;
    out = { endUs: start + dur, error: true, errorType: String(a['error.type']) };
  } else {
    const net = Math.round(between(r, 300, 1_500));
    const inner = serve(g, callee, c.op, traceId, spanId, start + Math.round(net / 2), hint);
    out = { endUs: inner.endUs + net - Math.round(net / 2), error: inner.error, errorType: inner.errorType };
    if (op.protocol === 'http') a['http.response.status_code'] = inner.error ? 500 : 200;
    else a['rpc.grpc.status_code'] = inner.error ? 13 : 0;
    if (inner.error) message = op.protocol === 'http' ? 'HTTP 500' : 'INTERNAL';
  }
  g.out.spans.push({
    traceId,
    spanId,
    parentSpanId: parent,
    service: caller.name,
    resource,
    name: op.protocol === 'http' ? op.method : `${op.route}/${op.method}`,
    kind: SPAN_KIND_CLIENT,
    startUs: start,
    durationUs: out.endUs - start,
    error: out.error,
    statusMessage: message,
    attributes: a,
    events,
  });
  return out;
}

/** One request served by `s`'s operation `opIndex`: its server span, its calls, its logs. */
function serve(g: Gen, s: ServiceNode, opIndex: number, traceId: string, parent: string | null, start: number, hint: number): Outcome {
  const { r, f } = g;
  const op = s.ops[opIndex]!;
  const resource = resourceFor(g, s, start, hint);
  const spanId = hex(r, 8);
  const self = selfTime(r, s, op, f, start);
  let cursor = start + Math.round(self * 0.4);
  let childError = false;
  let childType: string | null = null;
  for (let i = 0; i < op.dbCalls; i++) cursor = dbCall(g, s, resource, traceId, spanId, cursor + 30);
  const slowCalls: [string, number][] = [];
  const calls = op.calls.filter((c) => r() < c.probability);
  const fanStart = cursor;
  for (const c of calls) {
    const begin = op.parallel ? fanStart + Math.round(between(r, 10, 200)) : cursor + 40;
    const o = call(g, s, resource, c, traceId, spanId, begin, hint);
    cursor = op.parallel ? Math.max(cursor, o.endUs) : o.endUs;
    if (o.endUs - begin > 250_000) slowCalls.push([c.callee, o.endUs - begin]);
    if (o.error && r() < c.propagate) {
      childError = true;
      childType ??= o.errorType;
    }
  }
  if (op.llmProbability > 0 && r() < op.llmProbability) {
    const o = llmCall(g, s, resource, traceId, spanId, cursor + 50);
    cursor = o.endUs;
    if (o.error) {
      childError = true;
      childType ??= o.errorType;
    }
  }
  const end = cursor + (self - Math.round(self * 0.4));
  // An own failure: the fault's share first, then the service's normal background failures.
  const faultShare = faultErrorShare(f, s.name, start);
  const ownType = r() < faultShare ? f.errorType : r() < s.baseErrorRate ? pick(r, ownErrorTypes(s)) : null;
  const own = ownType !== null;
  const error = own || childError;
  const errorType = ownType ?? childType;
  const a: Record<string, AttrVal> =
    op.protocol === 'http'
      ? { 'http.request.method': op.method, 'http.route': op.route, 'url.path': op.route.replace('{id}', String(Math.floor(r() * 90000) + 10000)), 'url.scheme': 'http', 'http.response.status_code': error ? (own ? 500 : 502) : op.method === 'POST' ? 201 : 200 }
      : { 'rpc.system': 'grpc', 'rpc.service': op.route, 'rpc.method': op.method, 'rpc.grpc.status_code': error ? (own ? 13 : 14) : 0 };
  // A fault's failures are recorded in the plan's style; everything else with error.type and an exception event.
  const style = own && ownType === f.errorType && f.target === s.name ? f.errorStyle : 'exception';
  if (error && style !== 'status_only') a['error.type'] = errorType ?? '_OTHER';
  const events: GenSpan['events'] = own && style === 'exception'
    ? [{ name: 'exception', timeUs: end - 10, attributes: { 'exception.type': ownType!, 'exception.message': `${ownType} while handling ${noun(s)} request`, 'exception.escaped': true } }]
    : [];
  g.out.spans.push({
    traceId,
    spanId,
    parentSpanId: parent,
    service: s.name,
    resource,
    name: op.protocol === 'http' ? `${op.method} ${op.route}` : `${op.route}/${op.method}`,
    kind: SPAN_KIND_SERVER,
    startUs: start,
    durationUs: end - start,
    error,
    statusMessage: error ? (own ? `${ownType}` : `upstream ${childType ?? 'error'}`) : '',
    attributes: a,
    events,
  });
  observe(g, s, resource, start, end - start, self);
  // Logs: one line for about a third of requests, a WARN for a slow call, an ERROR for an own failure.
  const n = noun(s);
  if (r() < 0.3) {
    const id = 100000 + Math.floor(r() * 900000);
    log(g, s, resource, start + Math.round(self * 0.2), 'INFO', r() < 0.5 ? `processed ${n} ${id} in ${Math.round((end - start) / 1000)} ms` : `cache ${r() < 0.7 ? 'hit' : 'miss'} for ${n}:${id}`, traceId, spanId);
  }
  for (const [callee, us] of slowCalls) if (r() < 0.5) log(g, s, resource, end - 5, 'WARN', `slow call to ${callee} took ${Math.round(us / 1000)} ms`, traceId, spanId);
  if (own && r() < 0.8) log(g, s, resource, end - 5, 'ERROR', `failed to handle ${n} ${100000 + Math.floor(r() * 900000)}: ${ownType}`, traceId, spanId);
  return { endUs: end, error, errorType };
}

/** Entry request arrivals: a Poisson process with a slow ±12% swing (traffic is never flat). */
export function arrivals(r: Rand, sc: { startUs: number; endUs: number; rate: number }): number[] {
  const out: number[] = [];
  const phase = r() * 2 * Math.PI;
  let t = sc.startUs;
  for (;;) {
    const rate = sc.rate * (1 + 0.12 * Math.sin(phase + (2 * Math.PI * (t - sc.startUs)) / (3 * 3_600e6)));
    t += Math.max(1, Math.round((-Math.log(Math.max(r(), 1e-12)) / rate) * 1e6));
    if (t >= sc.endUs - 5_000_000) return out; // the last requests must have ended by "now"
    out.push(t);
  }
}

// ---- profiles ----

const STACK_ROOTS: Record<ServiceNode['language'], (s: ServiceNode) => string[]> = {
  go: (s) => ['runtime.goexit', 'net/http.(*conn).serve', 'net/http.serverHandler.ServeHTTP', `github.com/acme/${s.name}/internal/server.(*Server).Handle`],
  java: (s) => ['java.lang.Thread.run', 'org.eclipse.jetty.server.HttpChannel.handle', `com.acme.${s.name.replace(/-/g, '')}.api.RequestHandler.handle`],
  node: (s) => ['(root)', 'processTicksAndRejections', `${s.name}/src/handler.js:handleRequest`],
  python: (s) => ['<module>', 'uvicorn.protocols.http.h11_impl.run_asgi', `app.${s.name.replace(/-/g, '_')}.handlers.handle`],
};

/** Four request-driven leaf functions per service (the hot spot is one of them) and their cost per request, ns. */
export function profileFunctions(t: Topology, s: ServiceNode): { name: string; nsPerRequest: number }[] {
  const r = rng(t.seed * 131 + s.name.length * 17 + s.level);
  const mod = s.name.replace(/-/g, '_');
  const names: Record<ServiceNode['language'], string[]> = {
    go: [`github.com/acme/${s.name}/internal/${noun(s)}.(*Engine).Evaluate`, 'encoding/json.(*encodeState).marshal', 'crypto/sha256.block', 'regexp.(*Regexp).backtrack'],
    java: [`com.acme.${mod}.domain.${noun(s)}Rules.evaluate`, 'com.fasterxml.jackson.databind.ObjectMapper.writeValueAsBytes', 'java.security.MessageDigest.digest', 'java.util.regex.Pattern$Loop.match'],
    node: [`${s.name}/src/${noun(s)}.js:evaluate`, 'JSON.stringify', 'node:crypto:createHash', 'RegExp.prototype.exec'],
    python: [`app.${mod}.domain.${noun(s)}.evaluate`, 'json.encoder.JSONEncoder.iterencode', '_hashlib.openssl_sha256', 're.Pattern.match'],
  };
  return names[s.language].map((name) => ({ name, nsPerRequest: Math.round(between(r, 150_000, 900_000)) }));
}

function profiles(g: Gen, sc: Scenario): void {
  const { t, f, r } = g;
  for (const s of t.services.filter((x) => x.profiled)) {
    const fns = profileFunctions(t, s);
    const root = STACK_ROOTS[s.language](s);
    const gc = s.language === 'go' ? ['runtime.goexit', 'runtime.gcBgMarkWorker', 'runtime.gcDrain'] : s.language === 'java' ? ['java.lang.Thread.run', 'G1 Young Generation'] : ['(root)', '(garbage collector)'];
    for (let m = Math.ceil(sc.startUs / MINUTE_US) * MINUTE_US; m + MINUTE_US <= sc.endUs; m += MINUTE_US) {
      if (isDown(f, s.name, m)) continue;
      const served = g.served.get(`${s.name}|${m}`);
      if (!served) continue;
      // The hot function alone adds (hotFactor - 1) times the service's whole CPU per request.
      const perRequest = fns.reduce((a, fn) => a + fn.nsPerRequest, 0);
      const samples = fns.map((fn, i) => {
        const hot = f.kind === 'cpu_hot_spot' && f.target === s.name && i === f.hotFunction && active(f, m);
        const ns = fn.nsPerRequest + (hot ? (f.hotFactor - 1) * perRequest : 0);
        return { stack: [...root, fn.name], cpuNs: Math.round(served.requests * ns * between(r, 0.9, 1.1)) };
      });
      // Garbage collection follows the allocation of the work done (a fifth of it) plus a small idle floor.
      const work = samples.reduce((a, x) => a + x.cpuNs, 0);
      samples.push({ stack: gc, cpuNs: Math.round(work * between(r, 0.18, 0.22) + between(r, 0.01, 0.02) * 1e9) });
      g.out.profiles.push({ service: s.name, resource: resourceFor(g, s, m, m / MINUTE_US), startUs: m, durationUs: MINUTE_US, samples });
    }
  }
}

// ---- metrics ----

function metrics(g: Gen): void {
  for (const m of g.hist.values()) g.out.metrics.push(m);
  const { t, r } = g;
  const cores = 2;
  for (const [k, v] of g.served) {
    const [name, minute] = k.split('|') as [string, string];
    const s = serviceOf(t, name);
    const resource = resourceFor(g, s, Number(minute), Number(minute) / MINUTE_US);
    // Busy share of the pod's cores: own work plus a small idle floor.
    const util = Math.min(1, 0.03 + v.selfUs / s.replicas / (MINUTE_US * cores) + between(r, -0.01, 0.01));
    g.out.metrics.push({ service: name, resource, name: 'process.cpu.utilization', unit: '1', timeUs: Number(minute), gauge: Math.max(0, util) });
  }
}

// ---- background error-log burst ----

function burst(g: Gen, sc: Scenario): void {
  const { f, r, t } = g;
  if (f.kind !== 'error_log_burst' || !f.target) return;
  const s = serviceOf(t, f.target);
  const n = noun(s);
  const every = MINUTE_US / f.burstPerMinute;
  let i = 0;
  for (let ts = f.onsetUs + Math.round(r() * every); ts < sc.endUs - 1_000_000; ts += Math.max(1, Math.round(every * between(r, 0.5, 1.5)))) {
    log(g, s, resourceFor(g, s, ts, i), ts, 'ERROR', BURSTS[f.burstTemplate]!(n, i, r), null, null);
    i++;
  }
}

/** Every span, log, metric point and profile of the scenario, in time order per signal. */
export function generateScenario(sc: Scenario): ScenarioData {
  const r = rng(sc.spec.seed * 65537 + 99991 + sc.fault.onsetUs % 1000);
  const g: Gen = { r, t: sc.topology, f: sc.fault, out: { resources: {}, spans: [], logs: [], metrics: [], profiles: [] }, served: new Map(), hist: new Map() };
  const entry = serviceOf(sc.topology, sc.topology.entry);
  const cumulative: number[] = [];
  for (const w of sc.topology.entryMix) cumulative.push((cumulative[cumulative.length - 1] ?? 0) + w);
  let i = 0;
  for (const t0 of arrivals(r, sc)) {
    const u = r();
    const op = Math.max(0, cumulative.findIndex((c) => u < c));
    serve(g, entry, op, hex(r, 16), null, t0, i++);
  }
  burst(g, sc);
  profiles(g, sc);
  metrics(g);
  g.out.spans.sort((a, b) => a.startUs - b.startUs);
  g.out.logs.sort((a, b) => a.timeUs - b.timeUs);
  g.out.metrics.sort((a, b) => a.timeUs - b.timeUs);
  return g.out;
}
