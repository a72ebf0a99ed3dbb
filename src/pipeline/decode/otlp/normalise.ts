// Shared normalisation: both decoders (protobuf and OTLP/JSON) reduce each record to the small
// "parts" objects below and hand them to these sinks, which apply the timestamp rules, the promoted
// columns and the operation identity and push one row in schema order. One code path per table is
// what makes the two encodings give identical rows.
//
// Timestamp rules (times are integer microseconds; nanoseconds are truncated):
//   spans:   start = start || end || now; end = end || start; duration_us = max(0, end - start)
//   logs:    timestamp = time || observed || now; observed_timestamp = observed || now (receipt time)
//   metrics: timestamp = time || now; start_timestamp = start || null
import {
  LOGS,
  METRICS_EXP_HISTOGRAM,
  METRICS_GAUGE,
  METRICS_HISTOGRAM,
  METRICS_SUM,
  SPANS,
  type Table,
} from '../../../store/schema.js';
import { RESOURCE_COLUMNS, RESOURCE_KEYS, SPAN_KEYS, levelFromBody, logIsError, promoteResource, promoteSpan } from '../../promote.js';
import { BatchBuilder, Rejections, type ColumnBatch, type DecodeResult } from './batch.js';

/** Keys picked out of resource attributes while decoding them. */
export const RESOURCE_PICK: ReadonlySet<string> = new Set(RESOURCE_KEYS);
/** Keys picked out of span attributes while decoding them. */
export const SPAN_PICK: ReadonlySet<string> = new Set(SPAN_KEYS);

export type Picked = Record<string, unknown>;

export interface ResourceCtx {
  serviceName: string;
  attrsJson: string;
  promoted: (string | null)[];
}

export function makeResource(attrsJson: string, picked: Picked): ResourceCtx {
  const p = promoteResource(picked);
  return { serviceName: p.serviceName, attrsJson, promoted: p.columns };
}

export interface ScopeCtx {
  name: string | null;
  version: string | null;
}

export const EMPTY_SCOPE: ScopeCtx = { name: null, version: null };

export function nullIfEmpty(s: string): string | null {
  return s.length === 0 ? null : s;
}

function resIdx(t: Table): number[] {
  const ix = BatchBuilder.indexOf(t);
  return RESOURCE_COLUMNS.map((c) => {
    const i = ix[c];
    if (i === undefined) throw new Error(`${t.name} lacks promoted column ${c}`);
    return i;
  });
}

function col(ix: Record<string, number>, name: string): number {
  const i = ix[name];
  if (i === undefined) throw new Error('schema lacks column ' + name);
  return i;
}

function pushResource(c: unknown[][], idx: number[], res: ResourceCtx): void {
  for (let i = 0; i < idx.length; i++) c[idx[i]!]!.push(res.promoted[i]);
}

function fillResource(row: unknown[], idx: number[], res: ResourceCtx): void {
  for (let i = 0; i < idx.length; i++) row[idx[i]!] = res.promoted[i];
}

// ---------------------------------------------------------------- spans

export interface SpanParts {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  traceState: string | null;
  flags: number | null;
  name: string;
  kind: number;
  startUs: number;
  endUs: number;
  attrsJson: string;
  attrs: Picked;
  eventsJson: string | null;
  exceptionType: string | null;
  linksJson: string | null;
  statusCode: number;
  statusMessage: string | null;
}

const SX = BatchBuilder.indexOf(SPANS);
const S_RES = resIdx(SPANS);
const S = {
  timestamp: col(SX, 'timestamp'),
  service_name: col(SX, 'service_name'),
  trace_id: col(SX, 'trace_id'),
  span_id: col(SX, 'span_id'),
  parent_span_id: col(SX, 'parent_span_id'),
  trace_state: col(SX, 'trace_state'),
  flags: col(SX, 'flags'),
  span_name: col(SX, 'span_name'),
  span_kind: col(SX, 'span_kind'),
  status_code: col(SX, 'status_code'),
  status_message: col(SX, 'status_message'),
  duration_us: col(SX, 'duration_us'),
  end_timestamp: col(SX, 'end_timestamp'),
  scope_name: col(SX, 'scope_name'),
  scope_version: col(SX, 'scope_version'),
  resource_attributes: col(SX, 'resource_attributes'),
  span_attributes: col(SX, 'span_attributes'),
  events_json: col(SX, 'events_json'),
  links_json: col(SX, 'links_json'),
};
/** The promoted span columns, in schema order (also written by the WASM transcoder's glue, spans-wasm.ts). */
export const SPAN_PROMOTED_COLUMNS = [
  'operation', 'is_error', 'error_type', 'http_method', 'http_route', 'http_status_code', 'rpc_service',
  'rpc_method', 'peer_service', 'db_system', 'gen_ai_system', 'gen_ai_operation', 'gen_ai_model',
  'gen_ai_input_tokens', 'gen_ai_output_tokens', 'gen_ai_finish_reasons',
] as const;
const S_PROMOTED_IDX = SPAN_PROMOTED_COLUMNS.map((c) => col(SX, c));

/** Why a span is rejected, by the transcoder's reason code (1 trace_id, 2 span_id, 3 parent_span_id). */
export const SPAN_REJECTIONS = [
  '',
  'span with invalid trace_id (must be 16 non-zero bytes)',
  'span with invalid span_id (must be 8 non-zero bytes)',
  'span with invalid parent_span_id (must be empty or 8 bytes)',
] as const;

const ZERO_TRACE = '00000000000000000000000000000000';
const ZERO_SPAN = '0000000000000000';

export class SpanSink {
  readonly b = new BatchBuilder(SPANS);
  readonly rej = new Rejections();
  constructor(readonly nowUs: number) {}

  /** Validates ids (lower-case hex already); rejects invalid spans. */
  add(res: ResourceCtx, scope: ScopeCtx, p: SpanParts): void {
    if (p.traceId.length !== 32 || p.traceId === ZERO_TRACE) return this.rej.add(SPAN_REJECTIONS[1]);
    if (p.spanId.length !== 16 || p.spanId === ZERO_SPAN) return this.rej.add(SPAN_REJECTIONS[2]);
    let parent = p.parentSpanId;
    if (parent !== null) {
      if (parent.length === 0 || parent === ZERO_SPAN) parent = null;
      else if (parent.length !== 16) return this.rej.add(SPAN_REJECTIONS[3]);
    }
    const start = p.startUs || p.endUs || this.nowUs;
    const end = p.endUs || start;
    const c = this.b.cols;
    c[S.timestamp]!.push(start);
    c[S.service_name]!.push(res.serviceName);
    c[S.trace_id]!.push(p.traceId);
    c[S.span_id]!.push(p.spanId);
    c[S.parent_span_id]!.push(parent);
    c[S.trace_state]!.push(p.traceState);
    c[S.flags]!.push(p.flags);
    c[S.span_name]!.push(p.name);
    c[S.span_kind]!.push(p.kind);
    c[S.status_code]!.push(p.statusCode);
    c[S.status_message]!.push(p.statusMessage);
    c[S.duration_us]!.push(end > start ? end - start : 0);
    c[S.end_timestamp]!.push(end);
    c[S.scope_name]!.push(scope.name);
    c[S.scope_version]!.push(scope.version);
    c[S.resource_attributes]!.push(res.attrsJson);
    c[S.span_attributes]!.push(p.attrsJson);
    c[S.events_json]!.push(p.eventsJson);
    c[S.links_json]!.push(p.linksJson);
    const pr = promoteSpan(p.kind, p.name, p.statusCode, p.attrs, p.exceptionType);
    const x = S_PROMOTED_IDX;
    c[x[0]!]!.push(pr.operation);
    c[x[1]!]!.push(pr.is_error);
    c[x[2]!]!.push(pr.error_type);
    c[x[3]!]!.push(pr.http_method);
    c[x[4]!]!.push(pr.http_route);
    c[x[5]!]!.push(pr.http_status_code);
    c[x[6]!]!.push(pr.rpc_service);
    c[x[7]!]!.push(pr.rpc_method);
    c[x[8]!]!.push(pr.peer_service);
    c[x[9]!]!.push(pr.db_system);
    c[x[10]!]!.push(pr.gen_ai_system);
    c[x[11]!]!.push(pr.gen_ai_operation);
    c[x[12]!]!.push(pr.gen_ai_model);
    c[x[13]!]!.push(pr.gen_ai_input_tokens);
    c[x[14]!]!.push(pr.gen_ai_output_tokens);
    c[x[15]!]!.push(pr.gen_ai_finish_reasons);
    pushResource(c, S_RES, res);
    this.b.rows++;
  }

  result(): DecodeResult {
    return this.rej.apply({ batches: this.b.rows > 0 ? [this.b.finish()] : [], rejected: 0 });
  }
}

// ---------------------------------------------------------------- logs

export interface LogParts {
  timeUs: number;
  observedUs: number;
  severityNumber: number;
  severityText: string | null;
  body: string | null;
  attrsJson: string;
  flags: number | null;
  traceId: string | null;
  spanId: string | null;
  eventName: string | null;
}

const LX = BatchBuilder.indexOf(LOGS);
const L_RES = resIdx(LOGS);
const L = {
  timestamp: col(LX, 'timestamp'),
  observed_timestamp: col(LX, 'observed_timestamp'),
  service_name: col(LX, 'service_name'),
  severity_number: col(LX, 'severity_number'),
  severity_text: col(LX, 'severity_text'),
  body: col(LX, 'body'),
  trace_id: col(LX, 'trace_id'),
  span_id: col(LX, 'span_id'),
  flags: col(LX, 'flags'),
  event_name: col(LX, 'event_name'),
  scope_name: col(LX, 'scope_name'),
  scope_version: col(LX, 'scope_version'),
  resource_attributes: col(LX, 'resource_attributes'),
  log_attributes: col(LX, 'log_attributes'),
  is_error: col(LX, 'is_error'),
  template_id: col(LX, 'template_id'),
  template_params: col(LX, 'template_params'),
};

export class LogSink {
  readonly b = new BatchBuilder(LOGS);
  readonly rej = new Rejections();
  constructor(readonly nowUs: number) {}

  add(res: ResourceCtx, scope: ScopeCtx, p: LogParts): void {
    let traceId = p.traceId;
    let spanId = p.spanId;
    if (traceId !== null) {
      if (traceId.length === 0 || traceId === ZERO_TRACE) traceId = null;
      else if (traceId.length !== 32) return this.rej.add('log record with invalid trace_id (must be empty or 16 bytes)');
    }
    if (spanId !== null) {
      if (spanId.length === 0 || spanId === ZERO_SPAN) spanId = null;
      else if (spanId.length !== 16) return this.rej.add('log record with invalid span_id (must be empty or 8 bytes)');
    }
    const observed = p.observedUs || this.nowUs;
    const c = this.b.cols;
    c[L.timestamp]!.push(p.timeUs || p.observedUs || this.nowUs);
    c[L.observed_timestamp]!.push(observed);
    c[L.service_name]!.push(res.serviceName);
    // A record sent without a severity takes the level its body states (as Loki's detected_level),
    // so error logs count as errors whichever way the application wrote them.
    const detected = p.severityNumber === 0 && !p.severityText ? levelFromBody(p.body) : null;
    const severityNumber = detected ? detected[0] : p.severityNumber;
    const severityText = detected ? detected[1] : p.severityText;
    c[L.severity_number]!.push(severityNumber);
    c[L.severity_text]!.push(severityText);
    c[L.body]!.push(p.body);
    c[L.trace_id]!.push(traceId);
    c[L.span_id]!.push(spanId);
    c[L.flags]!.push(p.flags);
    c[L.event_name]!.push(p.eventName);
    c[L.scope_name]!.push(scope.name);
    c[L.scope_version]!.push(scope.version);
    c[L.resource_attributes]!.push(res.attrsJson);
    c[L.log_attributes]!.push(p.attrsJson);
    c[L.is_error]!.push(logIsError(severityNumber, severityText));
    c[L.template_id]!.push(null);
    c[L.template_params]!.push(null);
    pushResource(c, L_RES, res);
    this.b.rows++;
  }

  result(): DecodeResult {
    return this.rej.apply({ batches: this.b.rows > 0 ? [this.b.finish()] : [], rejected: 0 });
  }
}

// ---------------------------------------------------------------- metrics

export interface MetricCtx {
  name: string;
  description: string | null;
  unit: string | null;
}

/** Common parts of every data point. */
export interface PointBase {
  timeUs: number;
  startUs: number;
  attrsJson: string;
  flags: number;
  exemplarsJson: string | null;
}

export interface NumberPoint extends PointBase {
  value: number | null;
}

export interface HistogramPoint extends PointBase {
  count: number | bigint;
  sum: number | null;
  min: number | null;
  max: number | null;
  bucketCounts: (number | bigint)[];
  explicitBounds: number[];
}

export interface ExpHistogramPoint extends PointBase {
  count: number | bigint;
  sum: number | null;
  min: number | null;
  max: number | null;
  scale: number;
  zeroCount: number | bigint;
  zeroThreshold: number;
  positiveOffset: number;
  positiveCounts: (number | bigint)[];
  negativeOffset: number;
  negativeCounts: (number | bigint)[];
}

export interface SummaryPoint extends PointBase {
  count: number | bigint;
  sum: number;
  quantiles: number[];
  values: number[];
}

function metricIdx(t: Table) {
  const ix = BatchBuilder.indexOf(t);
  return {
    ix,
    res: resIdx(t),
    timestamp: col(ix, 'timestamp'),
    start_timestamp: col(ix, 'start_timestamp'),
    service_name: col(ix, 'service_name'),
    metric_name: col(ix, 'metric_name'),
    metric_description: col(ix, 'metric_description'),
    metric_unit: col(ix, 'metric_unit'),
    attributes: col(ix, 'attributes'),
    resource_attributes: col(ix, 'resource_attributes'),
    scope_name: col(ix, 'scope_name'),
    scope_version: col(ix, 'scope_version'),
    flags: col(ix, 'flags'),
    exemplars_json: col(ix, 'exemplars_json'),
  };
}
const MG = metricIdx(METRICS_GAUGE);
const MS = metricIdx(METRICS_SUM);
const MH = metricIdx(METRICS_HISTOGRAM);
const ME = metricIdx(METRICS_EXP_HISTOGRAM);

/** DataPointFlags.NO_RECORDED_VALUE. */
export const NO_RECORDED_VALUE = 1;

export class MetricSink {
  readonly gauge = new BatchBuilder(METRICS_GAUGE);
  readonly sum = new BatchBuilder(METRICS_SUM);
  readonly hist = new BatchBuilder(METRICS_HISTOGRAM);
  readonly exp = new BatchBuilder(METRICS_EXP_HISTOGRAM);
  readonly rej = new Rejections();
  constructor(readonly nowUs: number) {}

  private base(b: BatchBuilder, m: ReturnType<typeof metricIdx>, res: ResourceCtx, scope: ScopeCtx, mc: MetricCtx, p: PointBase): unknown[] {
    const row = new Array<unknown>(b.width);
    row[m.timestamp] = p.timeUs || this.nowUs;
    row[m.start_timestamp] = p.startUs || null;
    row[m.service_name] = res.serviceName;
    row[m.metric_name] = mc.name;
    row[m.metric_description] = mc.description;
    row[m.metric_unit] = mc.unit;
    row[m.attributes] = p.attrsJson;
    row[m.resource_attributes] = res.attrsJson;
    row[m.scope_name] = scope.name;
    row[m.scope_version] = scope.version;
    row[m.flags] = p.flags;
    row[m.exemplars_json] = p.exemplarsJson;
    fillResource(row, m.res, res);
    return row;
  }

  /** Data points of a metric that has no name are invalid. Returns false (and counts) when rejected. */
  check(mc: MetricCtx, points: number): boolean {
    if (mc.name.length === 0) {
      if (points > 0) this.rej.add('metric without a name', points);
      return false;
    }
    return true;
  }

  addGauge(res: ResourceCtx, scope: ScopeCtx, mc: MetricCtx, p: NumberPoint): void {
    const row = this.base(this.gauge, MG, res, scope, mc, p);
    row[MG.ix['value']!] = p.flags & NO_RECORDED_VALUE ? null : p.value;
    this.gauge.push(row);
  }

  addSum(res: ResourceCtx, scope: ScopeCtx, mc: MetricCtx, p: NumberPoint, temporality: number, monotonic: boolean): void {
    const row = this.base(this.sum, MS, res, scope, mc, p);
    row[MS.ix['value']!] = p.flags & NO_RECORDED_VALUE ? null : p.value;
    row[MS.ix['aggregation_temporality']!] = temporality;
    row[MS.ix['is_monotonic']!] = monotonic;
    this.sum.push(row);
  }

  addHistogram(res: ResourceCtx, scope: ScopeCtx, mc: MetricCtx, p: HistogramPoint, temporality: number): void {
    if (p.bucketCounts.length > 0 && p.bucketCounts.length !== p.explicitBounds.length + 1) {
      return this.rej.add('histogram data point with bucket_counts length != explicit_bounds length + 1');
    }
    const row = this.base(this.hist, MH, res, scope, mc, p);
    const x = MH.ix;
    row[x['metric_type']!] = 'histogram';
    row[x['count']!] = p.count;
    row[x['sum']!] = p.sum;
    row[x['min']!] = p.min;
    row[x['max']!] = p.max;
    row[x['bucket_counts']!] = p.bucketCounts;
    row[x['explicit_bounds']!] = p.explicitBounds;
    row[x['quantiles']!] = null;
    row[x['quantile_values']!] = null;
    row[x['aggregation_temporality']!] = temporality;
    this.hist.push(row);
  }

  /** Summaries go to svc_metrics_histogram with metric_type 'summary', quantiles and no buckets; min/max from the 0 and 1 quantiles. */
  addSummary(res: ResourceCtx, scope: ScopeCtx, mc: MetricCtx, p: SummaryPoint): void {
    const row = this.base(this.hist, MH, res, scope, mc, p);
    const x = MH.ix;
    let min: number | null = null;
    let max: number | null = null;
    for (let i = 0; i < p.quantiles.length; i++) {
      if (p.quantiles[i] === 0) min = p.values[i]!;
      else if (p.quantiles[i] === 1) max = p.values[i]!;
    }
    row[x['metric_type']!] = 'summary';
    row[x['count']!] = p.count;
    row[x['sum']!] = p.sum;
    row[x['min']!] = min;
    row[x['max']!] = max;
    row[x['bucket_counts']!] = null;
    row[x['explicit_bounds']!] = null;
    row[x['quantiles']!] = p.quantiles;
    row[x['quantile_values']!] = p.values;
    row[x['aggregation_temporality']!] = null;
    this.hist.push(row);
  }

  addExpHistogram(res: ResourceCtx, scope: ScopeCtx, mc: MetricCtx, p: ExpHistogramPoint, temporality: number): void {
    const row = this.base(this.exp, ME, res, scope, mc, p);
    const x = ME.ix;
    row[x['count']!] = p.count;
    row[x['sum']!] = p.sum;
    row[x['min']!] = p.min;
    row[x['max']!] = p.max;
    row[x['scale']!] = p.scale;
    row[x['zero_count']!] = p.zeroCount;
    row[x['zero_threshold']!] = p.zeroThreshold;
    row[x['positive_offset']!] = p.positiveOffset;
    row[x['positive_bucket_counts']!] = p.positiveCounts;
    row[x['negative_offset']!] = p.negativeOffset;
    row[x['negative_bucket_counts']!] = p.negativeCounts;
    row[x['aggregation_temporality']!] = temporality;
    this.exp.push(row);
  }

  result(): DecodeResult {
    const batches: ColumnBatch[] = [];
    for (const b of [this.gauge, this.sum, this.hist, this.exp]) if (b.rows > 0) batches.push(b.finish());
    return this.rej.apply({ batches, rejected: 0 });
  }
}

// ---------------------------------------------------------------- helpers shared by both decoders

/** Nanoseconds as (lo, hi) 32-bit halves → integer microseconds (truncated), exact for any u64. */
export function nanosToMicros(lo: number, hi: number): number {
  // (hi * 2^32 + lo) / 1000 = hi * 4294967 + (hi * 296 + lo) / 1000
  return hi * 4294967 + Math.floor((hi * 296 + lo) / 1000);
}

/** A number that is a safe integer stays a number; otherwise bigint. */
export function safeInt(v: bigint): number | bigint {
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v;
}

/** JSON text of a double: JSON has no NaN/Infinity, so those become strings. */
export function doubleJson(d: number): string {
  if (Number.isFinite(d)) return Object.is(d, -0) ? '0' : String(d);
  return Number.isNaN(d) ? '"NaN"' : d > 0 ? '"Infinity"' : '"-Infinity"';
}
