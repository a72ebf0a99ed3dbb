// The diagnosis block of one service, assembled from the model and the rows as pure functions.
// Every list has a cap (CAPS) and, where it is cut, a total beside it; strings that come from the
// data are cut to a length; the whole block is kept under MAX_BLOCK_BYTES by shrinking the samples
// first. The same rows give the same block: every sort has a complete tie-break.
import { isoFromUs, BUCKET_US } from '../core/time.js';
import { addSample, computeLogCounters, newSlotStats, slotLabels, type SlotStats } from '../pipeline/logminer/counters.js';
import type { DiagnosisEvent, ServiceIdentity } from './events.js';
import type { Finding } from './findings.js';
import { finishCounts } from './evidence/gen-ai.js';
import { LEADS } from './leads.js';
import type { DiagnosisBlock } from './block-schema.js';
import type { RootChange } from './calltree.js';
import type { Model, OpStat } from './model.js';
import type {
  AnomalyRow,
  Bounds,
  GenAiRow,
  LogKey,
  LogRow,
  MetricRow,
  ProfileRow,
  SpanKey,
  SpanRow,
  TemplateParamsRow,
  TemplateRow,
  WindowErrorRow,
  WindowLogRow,
  WindowSample,
} from './reads/index.js';

export const CAPS = {
  findings: 20,
  events: 30,
  operations: 50,
  error_breakdown: 5,
  span_sample: 20,
  log_sample: 20,
  log_patterns: 20,
  log_counters: 20,
  metrics: 40,
  profiles: 20,
  gen_ai: 10,
  dependencies: 20,
  /** Characters kept of a log body, a status message or an attribute value. */
  text: 500,
};

/** One service's block stays below this many bytes of JSON, whatever the data. */
export const MAX_BLOCK_BYTES = 64 * 1024;

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const cut = (s: unknown, n = CAPS.text): string | null => (s === null || s === undefined ? null : String(s).length > n ? String(s).slice(0, n) + '…' : String(s));

/** A JSON value with long strings, arrays and objects cut, as an object (a scalar is wrapped). */
export function shrinkJson(v: unknown, maxKeys = 40): Record<string, unknown> | unknown[] {
  const shrink = (x: unknown, depth: number): unknown => {
    if (typeof x === 'string') return cut(x, 200);
    if (Array.isArray(x)) return depth > 3 ? '[…]' : x.slice(0, 10).map((y) => shrink(y, depth + 1));
    if (x && typeof x === 'object') {
      if (depth > 3) return '{…}';
      return Object.fromEntries(
        Object.entries(x)
          .slice(0, maxKeys)
          .map(([k, y]) => [k, shrink(y, depth + 1)]),
      );
    }
    return x;
  };
  const out = shrink(v, 0);
  return out && typeof out === 'object' ? (out as Record<string, unknown>) : { value: out };
}

/** A JSON text column as a shrunk object; null when absent, the cut text when unreadable. */
export function jsonObject(text: unknown, maxKeys = 40): Record<string, unknown> | unknown[] | null {
  if (text === null || text === undefined || text === '') return null;
  try {
    return shrinkJson(JSON.parse(String(text)), maxKeys);
  } catch {
    return { _raw: cut(text) };
  }
}

export interface Dependency {
  service_name: string;
  span_count: number;
  error_count: number;
  error_rate: number;
}

/** Services (or external peers) this one calls, and the services that call it, with the calls' counts. */
export function dependencies(m: Model, service: string): { dependencies: Dependency[]; dependents: Dependency[] } {
  const dep = (name: string, n: number, k: number): Dependency => ({ service_name: name, span_count: Math.round(n), error_count: Math.round(k), error_rate: n > 0 ? round((100 * k) / n) : 0 });
  // Calls out: the caller's own client spans count them (they see a callee that no longer answers).
  const outMap = new Map<string, { n: number; k: number }>();
  for (const o of m.byService.get(service) ?? []) {
    if (!o.client || o.callee === null || o.callee === service) continue;
    const cur = outMap.get(o.callee) ?? { n: 0, k: 0 };
    cur.n += o.n;
    cur.k += o.k;
    outMap.set(o.callee, cur);
  }
  for (const e of m.edges) if (e.caller === service && e.callee !== service && !outMap.has(e.callee)) outMap.set(e.callee, { n: e.n, k: e.k });
  const inMap = new Map<string, { n: number; k: number }>();
  for (const e of m.edges) if (e.callee === service && e.caller !== service) inMap.set(e.caller, { n: e.n, k: e.k });
  const sorted = (mp: Map<string, { n: number; k: number }>) =>
    [...mp].map(([s, x]) => dep(s, x.n, x.k)).sort((a, b) => b.span_count - a.span_count || a.service_name.localeCompare(b.service_name)).slice(0, CAPS.dependencies);
  return { dependencies: sorted(outMap), dependents: sorted(inMap) };
}

/** Why an operation is flagged (null when it is not). */
export function anomalyReason(o: OpStat, anomalyRow: AnomalyRow | undefined): string | null {
  const reasons: string[] = [];
  if (o.err.surprise >= 3 && o.err.excess >= 1) reasons.push(`error rate ${round(o.err.before)}% → ${round(o.err.after)}% (p < 1e-${Math.min(99, Math.floor(o.err.surprise))})`);
  if (o.lat && o.lat.surprise >= 3 && o.lat.fraction >= 0.1)
    reasons.push(`${Math.round(o.lat.fraction * 100)}% of calls above the baseline p95 of ${Math.round(o.base.p95)} µs, 5% expected (p < 1e-${Math.min(99, Math.floor(o.lat.surprise))})`);
  if (anomalyRow) reasons.push(`change point: ${anomalyRow.signal} ${round(anomalyRow.before)} → ${round(anomalyRow.after)} from ${isoFromUs(anomalyRow.ts_shift_us)}`);
  return reasons.length ? reasons.join('; ') : null;
}

export function operationSummaries(m: Model, service: string, windowErrors: readonly WindowErrorRow[], anomalies: readonly AnomalyRow[], b: Bounds) {
  const ops = m.byService.get(service) ?? [];
  const breakdown = new Map<string, Map<string, number>>();
  for (const r of windowErrors) {
    if (r.service_name !== service) continue;
    let m2 = breakdown.get(r.operation);
    if (!m2) breakdown.set(r.operation, (m2 = new Map()));
    m2.set(r.error_type, (m2.get(r.error_type) ?? 0) + r.n);
  }
  const summaries = ops.map((o) => {
    const row = anomalies.find((r) => r.service_name === service && r.operation === o.operation && r.ts_shift_us >= b.from && r.ts_shift_us <= b.to);
    const reason = anomalyReason(o, row);
    return {
      operation: o.operation,
      span_name: o.span_name,
      count: o.n,
      error_count: o.k,
      error_pct: o.n ? round((100 * o.k) / o.n) : 0,
      duration_p50_us: round(o.p50, 1),
      duration_p95_us: round(o.p95, 1),
      duration_p99_us: round(o.p99, 1),
      baseline_count: o.base.n,
      baseline_error_pct: o.base.n > 0 ? round((100 * o.base.k) / o.base.n) : null,
      baseline_p95_us: Number.isFinite(o.base.p95) ? round(o.base.p95, 1) : null,
      is_anomalous: reason !== null,
      anomaly_reason: reason,
      error_breakdown: [...(breakdown.get(o.operation) ?? [])]
        .map(([error_type, count]) => ({ error_type: cut(error_type, 120)!, count }))
        .sort((x, y) => y.count - x.count || x.error_type.localeCompare(y.error_type))
        .slice(0, CAPS.error_breakdown),
      exemplar_error_trace_id: o.error_trace,
      drill_down_sql: LEADS.operation(b, service, o.operation),
      _strength: Math.max(o.err.surprise, o.lat?.surprise ?? 0),
    };
  });
  summaries.sort((x, y) => Number(y.is_anomalous) - Number(x.is_anomalous) || y._strength - x._strength || y.count - x.count || x.operation.localeCompare(y.operation));
  return { total: summaries.length, list: summaries.slice(0, CAPS.operations).map(({ _strength, ...s }) => s) };
}

export function spanSample(rows: readonly SpanRow[], b: Bounds) {
  return rows.map((r) => ({
    trace_id: r.trace_id,
    span_id: r.span_id,
    parent_span_id: r.parent_span_id,
    span_name: cut(r.span_name, 200)!,
    span_kind: r.span_kind,
    status_code: r.status_code,
    status_message: cut(r.status_message),
    is_error: r.is_error,
    start_ts: r.start_us,
    end_ts: r.start_us + r.duration_us,
    start_iso: isoFromUs(r.start_us),
    duration_us: r.duration_us,
    span_attributes: jsonObject(r.span_attributes),
    events: jsonObject(r.events_json),
    drill_down_sql: LEADS.trace(b, r.trace_id),
  }));
}

/** Errors first (newest), then the slowest, then one exemplar per operation; no span twice. */
export function mergeSpanSamples(errors: readonly SpanKey[], slow: readonly SpanKey[], exemplars: readonly SpanKey[], cap = CAPS.span_sample): SpanKey[] {
  const out: SpanKey[] = [];
  const seen = new Set<string>();
  const take = (rows: readonly SpanKey[], n: number) => {
    for (const r of rows) {
      if (out.length >= cap || n <= 0) return;
      if (seen.has(r.span_id)) continue;
      seen.add(r.span_id);
      out.push(r);
      n--;
    }
  };
  take(errors, Math.ceil(cap / 2));
  take(slow, Math.ceil(cap / 4));
  take([...exemplars].sort((a, b) => a.operation.localeCompare(b.operation) || a.span_id.localeCompare(b.span_id)), cap);
  take(slow, cap);
  take(errors, cap);
  return out;
}

/** Error logs first (newest first), then the newest of the rest; no record twice. */
export function mergeLogSamples(errors: readonly LogKey[], newest: readonly LogKey[], cap = CAPS.log_sample): LogKey[] {
  const seen = new Set<string>();
  const out: LogKey[] = [];
  for (const r of [...errors, ...newest]) {
    const key = `${r.rid}`;
    if (out.length >= cap || seen.has(key)) continue;
    seen.add(key);
    out.push(r);
  }
  return out;
}

/** Rows fetched by key, in the order the keys were chosen (a key that found no row is skipped). */
export function inKeyOrder<R, K>(rows: readonly R[], keys: readonly K[], keyOf: (r: R | K) => string): R[] {
  const byKey = new Map<string, R[]>();
  for (const r of rows) byKey.set(keyOf(r), [...(byKey.get(keyOf(r)) ?? []), r]);
  const out: R[] = [];
  for (const k of keys) {
    const hit = byKey.get(keyOf(k))?.shift();
    if (hit) out.push(hit);
  }
  return out;
}

export function logSample(rows: readonly LogRow[]) {
  return rows.map((r) => ({
    timestamp: r.ts,
    timestamp_iso: isoFromUs(r.ts),
    body: cut(r.body) ?? '',
    severity_text: r.severity_text,
    trace_id: r.trace_id,
    span_id: r.span_id,
    attributes: jsonObject(r.log_attributes),
    event_name: r.event_name,
  }));
}

export function logPatterns(service: string, windowLogs: readonly WindowLogRow[], templates: ReadonlyMap<number, TemplateRow>, b: Bounds) {
  const mine = windowLogs.filter((r): r is WindowLogRow & { template_id: number } => r.service_name === service && r.template_id !== null);
  const list = mine.map((r) => {
    const id = r.template_id;
    const t = templates.get(id);
    const firstUs = t ? t.first_us : r.first_us;
    let sample: unknown = {};
    try {
      sample = t?.sample_values ? JSON.parse(t.sample_values) : {};
    } catch {
      sample = {};
    }
    return {
      template_id: id,
      pattern: cut(t?.pattern ?? '', 300)!,
      example_body: cut(t?.example_body ?? '', 300)!,
      severity_text: r.severity_text,
      count: r.n,
      error_count: r.k,
      first_seen: isoFromUs(firstUs),
      last_seen: isoFromUs(r.last_us),
      sample_values: shrinkJson(sample, 10),
      drill_down_sql: LEADS.templateLogs(b, service, id),
      _new: firstUs >= b.newSince,
    };
  });
  list.sort((x, y) => Number(y._new) - Number(x._new) || y.error_count - x.error_count || y.count - x.count || x.template_id - y.template_id);
  return { total: list.length, list: list.slice(0, CAPS.log_patterns).map(({ _new, ...p }) => p) };
}

/** log_counters from the newest records' parameters of the busiest templates (numeric slots only). */
export function logCounters(paramRows: readonly TemplateParamsRow[], templates: ReadonlyMap<number, TemplateRow>) {
  const byTemplate = new Map<number, { pattern: string; stats: Map<number, SlotStats>; rows: TemplateParamsRow[] }>();
  for (const r of paramRows) {
    const t = templates.get(r.template_id);
    if (!t) continue;
    let e = byTemplate.get(r.template_id);
    if (!e) byTemplate.set(r.template_id, (e = { pattern: t.pattern, stats: new Map(), rows: [] }));
    e.rows.push(r);
  }
  for (const e of byTemplate.values()) {
    const slots = [...slotLabels(e.pattern).keys()];
    e.rows.sort((a, b) => a.ts - b.ts);
    for (const r of e.rows) {
      let params: unknown;
      try {
        params = JSON.parse(r.template_params);
      } catch {
        continue;
      }
      if (!Array.isArray(params)) continue;
      params.forEach((p, i) => {
        const slot = slots[i];
        const v = typeof p === 'number' ? p : typeof p === 'string' && /^-?\d+(\.\d+)?$/.test(p) ? Number(p) : NaN;
        if (slot === undefined || !Number.isFinite(v)) return;
        const s = e.stats.get(slot) ?? newSlotStats();
        e.stats.set(slot, s);
        addSample(s, v);
      });
    }
  }
  return computeLogCounters(
    [...byTemplate.entries()].sort((a, b) => a[0] - b[0]).map(([, e]) => ({ pattern: e.pattern, stats: e.stats })),
    { limit: CAPS.log_counters },
  ).map((c) => ({ ...c, pattern: cut(c.pattern, 300)!, avg_value: round(c.avg_value, 3) }));
}

export function metricSummaries(rows: readonly MetricRow[]) {
  const list = rows.map((r) => ({
    metric_name: r.metric_name,
    bucket: isoFromUs(r.bucket_us),
    count: r.n,
    avg: r.avg === null ? null : round(r.avg, 4),
    p95: r.p95 === null ? null : round(r.p95, 4),
  }));
  list.sort((a, b) => a.metric_name.localeCompare(b.metric_name) || a.bucket.localeCompare(b.bucket));
  return { total: list.length, list: list.slice(0, CAPS.metrics) };
}

/** Top functions by value in the window, per profile type (a few per type, the largest first). */
export function profileHotSpots(rows: readonly ProfileRow[], service: string) {
  const mine = rows
    .filter((r) => r.service_name === service && r.in_window)
    .map((r) => ({ function: cut(r.function, 200)!, profile_type: r.profile_type, unit: r.unit, sample_count: r.samples, total_value: r.value }));
  const byType = new Map<string, typeof mine>();
  for (const p of mine) byType.set(p.profile_type, [...(byType.get(p.profile_type) ?? []), p]);
  const perType = Math.max(3, Math.floor(CAPS.profiles / Math.max(1, byType.size)));
  const list = [...byType.keys()]
    .sort()
    .flatMap((t) => byType.get(t)!.sort((a, b) => b.total_value - a.total_value || a.function.localeCompare(b.function)).slice(0, perType));
  return { total: mine.length, list: list.slice(0, CAPS.profiles) };
}

export function genAiModels(rows: readonly GenAiRow[], service: string) {
  return rows
    .filter((r) => r.service_name === service)
    .map((r) => {
      const n = r.n;
      return {
        model: r.model,
        system: r.system,
        operations: [...r.operations].sort(),
        call_count: n,
        error_pct: n ? round((100 * r.k) / n) : 0,
        duration_p95_us: round(r.p95, 1),
        input_tokens: r.input_tokens,
        output_tokens: r.output_tokens,
        finish_reasons: [...finishCounts(r.finish)].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
      };
    })
    .sort((a, b) => b.call_count - a.call_count || a.model.localeCompare(b.model))
    .slice(0, CAPS.gen_ai);
}

export interface CoverageInputs {
  spans: number;
  templates: number;
  metricSeries: number;
  profileSamples: number;
  logs: number;
}

export function coverage(c: CoverageInputs) {
  const signal = (signal_type: string, available: boolean, missingReason: string, severity: string) => ({
    signal_type,
    available,
    reason: available ? null : missingReason,
    severity: available ? 'none' : severity,
  });
  return {
    has_spans: c.spans > 0,
    has_logs: c.logs > 0,
    has_metrics: c.metricSeries > 0,
    has_profiles: c.profileSamples > 0,
    span_count: c.spans,
    log_template_count: c.templates,
    metric_series_count: c.metricSeries,
    profile_sample_count: c.profileSamples,
    signals: [
      signal('spans', c.spans > 0, 'no spans from this service in the window: errors, latency and the call graph cannot be judged', 'high'),
      signal('logs', c.logs > 0, 'no logs in the window: no log patterns, error-log bursts or counters', 'medium'),
      signal('metrics', c.metricSeries > 0, 'no metrics in the window', 'low'),
      signal('profiles', c.profileSamples > 0, 'no profiles in the window: CPU hot spots cannot be named', 'low'),
    ],
  };
}

export interface BlockParts {
  service: string;
  bounds: Bounds;
  identity: ServiceIdentity;
  firstSeenUs: number | null;
  lastSeenUs: number | null;
  deps: ReturnType<typeof dependencies>;
  coverage: ReturnType<typeof coverage>;
  errorTracesTotal: number;
  events: DiagnosisEvent[];
  findings: { findings: Finding[]; total: number };
  operations: ReturnType<typeof operationSummaries>;
  spanTotal: number;
  spanSample: ReturnType<typeof spanSample>;
  logTotal: number;
  logSample: ReturnType<typeof logSample>;
  patterns: ReturnType<typeof logPatterns>;
  counters: ReturnType<typeof logCounters>;
  metrics: ReturnType<typeof metricSummaries>;
  profiles: ReturnType<typeof profileHotSpots>;
  genAi: ReturnType<typeof genAiModels>;
  baseline: { from: number; to: number; cut: boolean };
  /** The diagnosed service's onset found from its requests in fine bins, and the stable stretch before it. */
  onset: RootChange | null;
  edgeScale: number;
  windowSample: WindowSample;
}

/** The block, in the spec's field order, with the totals of every capped list. */
export function assembleBlock(p: BlockParts): DiagnosisBlock {
  const b = p.bounds;
  const block: DiagnosisBlock = {
    service: p.service,
    window: { from_ts: b.from, from_iso: isoFromUs(b.from), to_ts: b.to, to_iso: isoFromUs(b.to) },
    context: {
      service_name: p.service,
      deployment: p.identity.deployment,
      namespace: p.identity.namespace,
      pod_count: p.identity.pods_window,
      has_instance_id: p.identity.has_instance_id,
      first_seen: p.firstSeenUs === null ? null : isoFromUs(p.firstSeenUs),
      last_seen: p.lastSeenUs === null ? null : isoFromUs(p.lastSeenUs),
      dependencies: p.deps.dependencies,
      dependents: p.deps.dependents,
    },
    coverage: p.coverage,
    error_traces_total: p.errorTracesTotal,
    events: p.events,
    findings: p.findings.findings.map((f) => {
      const { incident, drill_down_sql, ...rest } = f;
      return f.kind === 'incident' ? { ...rest, incident } : { ...rest, drill_down_sql };
    }),
    findings_total: p.findings.total,
    operation_summaries: p.operations.list,
    operations_total: p.operations.total,
    spans: { total: p.spanTotal, sampled_by: 'errors_then_slowest_then_one_per_operation', drill_all_sql: LEADS.allSpans(b, p.service), sample: p.spanSample },
    logs: { total: p.logTotal, sampled_by: 'errors_then_newest', drill_all_sql: LEADS.allLogs(b, p.service), sample: p.logSample },
    log_patterns: p.patterns.list,
    log_patterns_total: p.patterns.total,
    log_counters: p.counters,
    metrics: p.metrics.list,
    metrics_total: p.metrics.total,
    profiles: p.profiles.list,
    profiles_total: p.profiles.total,
    gen_ai: p.genAi,
    baseline: {
      from_ts: p.baseline.from,
      from_iso: isoFromUs(p.baseline.from),
      to_ts: p.baseline.to,
      to_iso: isoFromUs(p.baseline.to),
      buckets: Math.round((p.baseline.to - p.baseline.from) / BUCKET_US),
      ends_at_onset: p.baseline.cut,
    },
    onset: p.onset
      ? {
          at_ts: p.onset.onset,
          at_iso: isoFromUs(p.onset.onset),
          found_in_data: p.onset.found,
          baseline_from_ts: p.onset.baselineFrom,
          baseline_from_iso: isoFromUs(p.onset.baselineFrom),
          baseline_to_ts: p.onset.baselineTo,
          baseline_to_iso: isoFromUs(p.onset.baselineTo),
          mean_duration_before_us: round(p.onset.before, 1),
          mean_duration_after_us: round(p.onset.after, 1),
          requests_after: p.onset.requests,
        }
      : null,
    call_graph_sampled: p.edgeScale > 1 ? { last_seconds: Math.round((b.to - b.from) / 1e6 / p.edgeScale), counts_scaled_by: Math.round(p.edgeScale * 100) / 100 } : null,
    window_sampled:
      p.windowSample.scale > 1
        ? { slices: p.windowSample.slices.length, seconds_read: Math.round((b.to - b.from) / 1e6 / p.windowSample.scale), counts_scaled_by: Math.round(p.windowSample.scale * 100) / 100 }
        : null,
  };
  return fitBlock(block);
}

/** Shrinks the samples (then the long lists) until the block's JSON is under MAX_BLOCK_BYTES. */
export function fitBlock<T extends object>(block: T, limit = MAX_BLOCK_BYTES): T {
  const size = () => Buffer.byteLength(JSON.stringify(block));
  const b = block as Record<string, unknown> & { spans: { sample: unknown[] }; logs: { sample: unknown[] } };
  const lists: (() => unknown[])[] = [
    () => b.spans.sample,
    () => b.logs.sample,
    () => b['log_patterns'] as unknown[],
    () => b['metrics'] as unknown[],
    () => b['operation_summaries'] as unknown[],
    () => b['log_counters'] as unknown[],
    () => b['profiles'] as unknown[],
    () => b['events'] as unknown[],
    () => b['findings'] as unknown[],
  ];
  // Measured again only after a cut: serialising a full block is not free.
  let bytes = size();
  for (const list of lists) {
    while (bytes > limit && list().length > 1) {
      list().splice(Math.max(1, Math.floor(list().length / 2)));
      bytes = size();
    }
  }
  return block;
}
