// The numbers a diagnosis reasons over, built from the shared rows as pure functions: every
// operation of every service in the window with its baseline and its two tests (errors, latency),
// and the call graph between services (who calls whom, through which of the caller's operations).
import { SPAN_KIND } from '../pipeline/operation.js';
import { indexSeries, opBaseline, seriesKey, type OpBaseline, type SeriesIndex } from './baseline.js';
import { errorShift, exceedanceShift, type RateShift } from './stats.js';
import type { AnomalyRow, Bounds, ExceedanceRow, SharedRows, WindowErrorRow } from './reads/index.js';
import { BUCKET_US } from '../core/time.js';

export interface OpStat {
  service: string;
  operation: string;
  span_name: string;
  kind: number;
  n: number;
  k: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  peer: string | null;
  /** An error trace of the operation (the smallest id: the same data gives the same one). */
  error_trace: string | null;
  first_error_us: number | null;
  base: OpBaseline;
  err: RateShift;
  /** Window calls above the baseline p95 (filled by the exceedance read; null when not tested). */
  above: number | null;
  lat: { surprise: number; excess: number; fraction: number } | null;
  /** A client or producer span: the caller's view of a call. */
  client: boolean;
  /** Who a client operation calls: a service of the store, or an external peer (database, API). */
  callee: string | null;
  calleeIsService: boolean;
}

export interface Edge {
  caller: string;
  callee: string;
  /** Calls and errors as the callee's spans count them (scaled up when the join ran on a sample). */
  n: number;
  k: number;
}

export interface Model {
  bounds: Bounds;
  /** Baseline length in buckets. */
  baseBuckets: number;
  series: SeriesIndex;
  ops: OpStat[];
  byService: Map<string, OpStat[]>;
  edges: Edge[];
  /** Services of the store (anything that reported in the look-back or window). */
  known: Set<string>;
  /** caller → callees (services or external peers) */
  callees: Map<string, Set<string>>;
  callers: Map<string, Set<string>>;
}

export const isClientKind = (kind: number) => kind === SPAN_KIND.CLIENT || kind === SPAN_KIND.PRODUCER;

/** The service a peer name stands for: itself, or its first DNS label (`payments.prod.svc.cluster.local`). */
export function peerService(peer: string, known: ReadonlySet<string>): string | null {
  if (known.has(peer)) return peer;
  const host = peer.split(':')[0]!;
  if (known.has(host)) return host;
  const label = host.split('.')[0]!;
  return label && known.has(label) ? label : null;
}

/** Anomaly rows' earliest worsening shift before the window, per `service\0operation\0signal`. */
function shiftsBefore(rows: readonly AnomalyRow[], from: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) {
    const t = r.ts_shift_us;
    if (t >= from) continue;
    const key = `${r.service_name}\u0000${r.operation}`;
    const cur = out.get(key);
    if (cur === undefined || t < cur) out.set(key, t);
  }
  return out;
}

/** Per caller operation, the service it reaches by the trace join (the callee's own spans); and the calls per caller and callee. */
function joinedCalls(shared: SharedRows): { viaJoin: Map<string, { callee: string; n: number }>; edges: Map<string, Edge> } {
  const viaJoin = new Map<string, { callee: string; n: number }>();
  const edges = new Map<string, Edge>();
  for (const r of shared.edges) {
    const { caller, callee } = r;
    const n = r.n * shared.edgeScale;
    const k = r.k * shared.edgeScale;
    const key = `${caller}\u0000${r.caller_operation}`;
    const cur = viaJoin.get(key);
    if (!cur || n > cur.n) viaJoin.set(key, { callee, n });
    const ek = `${caller}\u0000${callee}`;
    const e = edges.get(ek);
    if (e) {
      e.n += n;
      e.k += k;
    } else edges.set(ek, { caller, callee, n, k });
  }
  return { viaJoin, edges };
}

/** Each operation's first error and an exemplar error trace, from the error rows (few, and read anyway). */
function firstErrors(rows: readonly WindowErrorRow[]): Map<string, { trace: string | null; first: number }> {
  const errorsOf = new Map<string, { trace: string | null; first: number }>();
  for (const r of rows) {
    const key = `${r.service_name}\u0000${r.operation}`;
    const cur = errorsOf.get(key);
    const trace = r.trace_id;
    const first = r.first_us;
    errorsOf.set(key, {
      trace: cur?.trace == null ? trace : trace == null || cur.trace < trace ? cur.trace : trace,
      first: cur ? Math.min(cur.first, first) : first,
    });
  }
  return errorsOf;
}

export function buildModel(shared: SharedRows, bounds: Bounds, baseBuckets: number, knownServices: Iterable<string>): Model {
  const series = indexSeries(shared.series);
  const known = new Set<string>(knownServices);
  for (const r of shared.windowOps) known.add(r.service_name);
  for (const r of shared.series) if (r.signal === 'error_rate') known.add(r.service_name);
  const shifts = shiftsBefore(shared.anomalies, bounds.from);
  const windowBuckets = (bounds.to - bounds.from) / BUCKET_US;

  const { viaJoin, edges } = joinedCalls(shared);
  const errorsOf = firstErrors(shared.windowErrors);
  const ops: OpStat[] = shared.windowOps.map((r) => {
    const { service_name: service, operation, n, k, span_kind: kind, q } = r;
    const p95 = q[1];
    const errBuckets = series.get('error_rate')?.get(seriesKey(service, operation)) ?? [];
    const latBuckets = series.get('latency_p95')?.get(seriesKey(service, operation)) ?? [];
    const base = opBaseline(errBuckets, latBuckets, { n, k, p95, windowBuckets }, shifts.get(`${service}\u0000${operation}`), baseBuckets, bounds.reference);
    const client = isClientKind(kind);
    const peer = r.peer;
    const joined = viaJoin.get(`${service}\u0000${operation}`);
    let callee: string | null = joined?.callee ?? null;
    let calleeIsService = callee !== null;
    if (callee === null && client && peer !== null) {
      const svc = peerService(peer, known);
      callee = svc ?? peer;
      calleeIsService = svc !== null;
    }
    return {
      service,
      operation,
      span_name: r.span_name ?? operation,
      kind,
      n,
      k,
      p50: q[0],
      p95,
      p99: q[2],
      mean: r.mean_us,
      peer,
      error_trace: errorsOf.get(`${service}\u0000${operation}`)?.trace ?? null,
      first_error_us: errorsOf.get(`${service}\u0000${operation}`)?.first ?? null,
      base,
      err: errorShift(k, n, base.k, base.n),
      above: null,
      lat: null,
      client,
      callee,
      calleeIsService,
    };
  });

  // Calls to a service that no longer answers have no callee spans to join: their peer names stand in.
  for (const op of ops) {
    if (!op.client || op.callee === null || op.callee === op.service) continue;
    const ek = `${op.service}\u0000${op.callee}`;
    if (!edges.has(ek)) edges.set(ek, { caller: op.service, callee: op.callee, n: op.n, k: op.k });
  }

  const byService = new Map<string, OpStat[]>();
  for (const op of ops) {
    let l = byService.get(op.service);
    if (!l) byService.set(op.service, (l = []));
    l.push(op);
  }
  const callees = new Map<string, Set<string>>();
  const callers = new Map<string, Set<string>>();
  for (const e of edges.values()) {
    if (e.caller === e.callee) continue;
    (callees.get(e.caller) ?? callees.set(e.caller, new Set()).get(e.caller)!).add(e.callee);
    (callers.get(e.callee) ?? callers.set(e.callee, new Set()).get(e.callee)!).add(e.caller);
  }
  return { bounds, baseBuckets, series, ops, byService, edges: [...edges.values()], known, callees, callers };
}

/** Operations worth the latency test: enough calls, a baseline p95, and a window p95 above it. */
export function latencyCandidates(m: Model): OpStat[] {
  return m.ops.filter((o) => o.n >= 5 && Number.isFinite(o.base.p95) && o.base.p95 > 0 && o.p95 > 1.1 * o.base.p95);
}

/** Fills each tested operation's exceedance counts (rows of SQL.exceedances). */
export function applyExceedances(m: Model, rows: readonly ExceedanceRow[]): void {
  const above = new Map(rows.map((r) => [`${r.service_name}\u0000${r.operation}`, r.above]));
  for (const o of latencyCandidates(m)) {
    o.above = above.get(`${o.service}\u0000${o.operation}`) ?? 0;
    o.lat = exceedanceShift(o.above, o.n);
  }
}

/** Services reachable from `root` through calls (root included), nearest first. */
export function downstream(m: Model, root: string, maxDepth = 8): { service: string; depth: number }[] {
  const seen = new Map<string, number>([[root, 0]]);
  const queue = [root];
  while (queue.length) {
    const s = queue.shift()!;
    const d = seen.get(s)!;
    if (d >= maxDepth) continue;
    for (const c of [...(m.callees.get(s) ?? [])].sort()) {
      if (seen.has(c)) continue;
      seen.set(c, d + 1);
      queue.push(c);
    }
  }
  return [...seen].map(([service, depth]) => ({ service, depth }));
}
