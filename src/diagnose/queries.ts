// The reads of one diagnosis, as SQL text (pure) and one function that runs them concurrently on the
// read pool. Every statement is bounded by TIMESTAMP literals, so the store skips row groups outside
// the window and look-back. Statements over "all services" are run once per request and shared by
// every diagnosed service: the causal walk needs the neighbours' numbers anyway, and ten services in
// one call then cost little more than one.
//
// The baseline comes from the persisted 5-minute series (svc_series_5m: per bucket, operation and
// signal the calls, errors and p95, written by the detection pass), not from raw spans: an hour of a
// busy service is millions of spans, its series a few hundred rows. Buckets the pass has not closed
// yet (svc_dirty_buckets) are aggregated from raw telemetry with the very same statements the pass
// uses, so a diagnosis works before any pass has run and agrees with the series after it.
import { DeadlineExceeded, readRows, type ReadPool } from '../store/readers.js';
import { ANOMALIES, DIRTY_BUCKETS, LOG_TEMPLATES, LOGS, MERGE_CHAIN_SQL, METRICS_GAUGE, METRICS_HISTOGRAM, METRICS_SUM, PROFILES, SERIES, SPANS } from '../store/schema.js';
import { SIGNALS, type SignalName } from '../detect/signals.js';
import { ERROR_TYPES_ROLLUP, GEN_AI_ROLLUP, LOG_LEVELS_ROLLUP, RESOURCES_ROLLUP, type Rollup } from '../detect/rollups.js';
import { BUCKET_US, FINE_BIN_US, MINUTE_US, bucketRuns } from '../core/time.js';
import { sqlString, sqlTimestamp } from '../store/sql.js';

export type Row = Record<string, unknown>;

/** Spans the call tree joins, about, when busier: whole traces are sampled to between this and twice it. */
export const STRUCTURE_SAMPLE_SPANS = 30_000;

/** Rows the call tree and log levels scan at most, about, when the store is busy. */
export const STRUCTURE_SCAN_ROWS = 1_500_000;

/**
 * Where the call tree and log levels are read from, given the window's spans, and the trace sample:
 * a stable stretch before an onset needs tens of minutes, not the whole look-back — 30 minutes (or
 * twice the window) before it, less for a busy store (about STRUCTURE_SCAN_ROWS in all, never under
 * 5 minutes); whole traces, one in `mod`, so that about STRUCTURE_SAMPLE_SPANS are joined.
 */
export function structureRead(b: Bounds, windowSpans: number): { lo: number; mod: number } {
  const w = b.to - b.from;
  const longest = Math.max(30 * MINUTE_US, 2 * w);
  const affordable = windowSpans > 0 ? (STRUCTURE_SCAN_ROWS / windowSpans) * w - w : longest;
  const reach = Math.max(b.lookFrom, b.from - Math.floor(Math.min(longest, Math.max(5 * MINUTE_US, affordable))));
  const lo = Math.ceil(reach / FINE_BIN_US) * FINE_BIN_US; // whole fine bins, as the log levels' rollup keeps them
  // Floored: a sample is taken only when it at least halves the join (scarce data is not thinned).
  return { lo, mod: Math.max(1, Math.floor((windowSpans * (b.to - lo)) / Math.max(1, w) / STRUCTURE_SAMPLE_SPANS)) };
}

/**
 * Time bounds of one diagnosis, µs. `lookFrom` ≤ baseline start: the series and events look back this
 * far. `newSince`: what first appeared at or after it (an error type, a log pattern) is new — the
 * baseline's start, so a pattern that began with an incident 40 minutes before the window is still new.
 */
export interface Bounds {
  from: number;
  to: number;
  lookFrom: number;
  newSince: number;
}

const between = (lo: number, hi: number, col = 'timestamp') => `${col} >= ${sqlTimestamp(lo)} AND ${col} < ${sqlTimestamp(hi)}`;

/**
 * Slices of a sampled window, about (periods are whole fine bins, longer for a longer window). Each
 * slice is a scan of its own: on bench:diagnose's store (1.5 M window spans, 1 thread) the statistics
 * of a 14% sample cost 265 ms in 90 slices, 75 in 30 and 44 in 15, against 78–125 for the whole.
 */
const WINDOW_SLICES = 15;
/** Shortest slice read, µs: a slice should hold whole requests rather than cut most of them. */
const MIN_SLICE_US = 250_000;

/** The parts of the window its statistics are read from: the whole window, or evenly spread slices of it. */
export interface WindowSample {
  slices: [number, number][];
  /** The window's length over the slices' (1: the whole window); counts from the slices are scaled up by it. */
  scale: number;
}

/**
 * Where the window's per-operation statistics are read: the whole window when it holds at most
 * `scanSpans` spans (SVC_DIAGNOSE_SCAN_SPANS); a busier one (20,000 spans/s fill 15 minutes with 18
 * million) as evenly spread slices holding about that many, the first part of every period on the
 * absolute grid, so that a diagnosis costs about the same whatever the traffic, every part of the
 * window is seen, and where the window falls on the grid does not matter. Each slice is its own range
 * read, so the store skips the row groups between them (one filter with an OR of the ranges skipped
 * none and cost 30 times more).
 */
export function windowSample(b: Pick<Bounds, 'from' | 'to'>, windowSpans: number, scanSpans: number): WindowSample {
  const w = b.to - b.from;
  if (windowSpans <= scanSpans || w <= 0) return { slices: [[b.from, b.to]], scale: 1 };
  const period = Math.max(1, Math.ceil(w / WINDOW_SLICES / FINE_BIN_US)) * FINE_BIN_US;
  const len = Math.min(period, Math.max(MIN_SLICE_US, Math.floor((period * scanSpans) / windowSpans)));
  const slices: [number, number][] = [];
  for (let p = Math.floor(b.from / period) * period; p < b.to; p += period) {
    const lo = Math.max(p, b.from);
    const hi = Math.min(p + len, b.to);
    if (hi > lo) slices.push([lo, hi]);
  }
  const read = slices.reduce((s, [lo, hi]) => s + hi - lo, 0);
  // A window shorter than a period may miss every slice's start: then it is read whole.
  return read === 0 || read >= w ? { slices: [[b.from, b.to]], scale: 1 } : { slices, scale: w / read };
}

/** The window's spans as a relation: one range read per slice. */
const windowSpansIn = (ws: WindowSample) => `(${ws.slices.map(([lo, hi]) => `SELECT * FROM ${SPANS.name} WHERE ${between(lo, hi)}`).join(' UNION ALL ')})`;

/** Spans of the edge join: at most this many a side, by a deterministic trace sample when the window holds more. */
export const EDGE_SAMPLE_SPANS = 200_000;

/** A statement of the diagnosis: its SQL text and the decoder of its rows, the aliases named once, here. */
export interface Statement<P extends unknown[], T> {
  sql: (...p: P) => string;
  decode: (r: Row) => T;
}

const statement = <P extends unknown[], T>(sql: (...p: P) => string, decode: (r: Row) => T): Statement<P, T> => ({ sql, decode });

/** NULL (or absent) as null, else the value as text. */
const textOrNull = (v: unknown) => (v === null || v === undefined ? null : String(v));
/** NULL (or absent) as `d`, else the value as a number. */
const num = (v: unknown, d = 0) => (v === null || v === undefined ? d : Number(v));
const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

// A group's per-bin values come back as lists, one row per group: a row per bin cost more to decode
// (its strings, and their garbage) than to compute — 14,000 series rows, ~50 ms a call.
// As DOUBLE: lists of BIGINT and HUGEINT reach JavaScript as BigInts, ~50 ms a call for the call
// tree's 40,000 values against ~9 as doubles (exact: µs times and counts stay far below 2^53).
/** `list(c::DOUBLE) AS c` for each column. */
const asLists = (cols: readonly string[]) => cols.map((c) => `list(${c}::DOUBLE) AS ${c}`).join(', ');
/** A listed row's list columns, in the order of `cols`. */
const listed = (r: Row, cols: readonly string[]) => cols.map((c) => (r[c] as unknown[] | null) ?? []);

export interface WindowOpRow {
  service_name: string;
  operation: string;
  span_name: string | null;
  span_kind: number;
  n: number;
  k: number;
  /** p50, p95, p99 of the duration, µs (0 when absent). */
  q: [number, number, number];
  mean_us: number;
  peer: string | null;
}
export interface ExceedanceRow {
  service_name: string;
  operation: string;
  above: number;
}
export interface WindowErrorRow {
  service_name: string;
  operation: string;
  error_type: string;
  n: number;
  first_us: number;
  trace_id: string | null;
}
export interface ErrorTypeFirstSeenRow {
  service_name: string;
  error_type: string;
  first_us: number;
}
/** One bucket of a 5-minute series. */
export interface Bucket {
  t: number;
  value: number;
  n: number;
  k: number;
}
/** One series, its buckets in no particular order (a series read persisted and raw comes in two parts). */
export interface SeriesRows {
  service_name: string;
  operation: string;
  signal: string;
  buckets: Bucket[];
}
export interface EdgeRow {
  caller: string;
  caller_operation: string;
  callee: string;
  n: number;
  k: number;
}
/** The numeric columns of a call-tree row. */
const CALL_TREE_SUMS = ['bin', 'n', 'k', 'sx', 'sxx', 'slx', 'sllx', 'sl', 'sll', 'sd', 'kt'] as const;

/**
 * Exclusive time at or above this makes a call slow (CallTreeRow.kt): below a TCP retransmission's
 * 200 ms, so calls that waited for one count, and far above the wire time of calls in one network.
 */
export const SLOW_CALL_US = 100_000;

/** One request of a caller: its fine bin and its calls in the order issued: callee, issued and answered (µs) (STATEMENTS.callSequences). */
export interface CallSequenceRow {
  caller: string;
  bin: number;
  seq: string[];
  issued: number[];
  answered: number[];
}

/**
 * Error or warning records of the window, or records of a template first seen since the baseline
 * began (`level` 'template', `template` its id as stored), on traces the call tree read, by a
 * service with a span on the record's trace (STATEMENTS.callStructure); `on` null: every such record
 * of the service and level or template, each once. Records whose trace left no span read are not
 * counted (sampled out at the source, or older than the read): where they happened is not known.
 */
export interface LogLinkRow {
  service: string;
  level: 'error' | 'warning' | 'template';
  template: number | null;
  on: string | null;
  records: number;
}

/** One group of the call tree in a fine bin (STATEMENTS.callTree). */
export interface CallTreeRow {
  service: string;
  /** Pod or instance of a call's caller ('' for own work, kept per service, or when the resource names neither). */
  pod: string;
  /** The service a call span reaches (null: the service's own work). */
  callee: string | null;
  callee_pod: string | null;
  entry: boolean;
  /** Start of the bin, µs. */
  bin: number;
  n: number;
  k: number;
  /** Σ and Σ² of exclusive time (µs), of ln(exclusive + 1), of ln(duration + 1); Σ duration. */
  sx: number;
  sxx: number;
  slx: number;
  sllx: number;
  sl: number;
  sll: number;
  sd: number;
  /** Calls whose exclusive time is SLOW_CALL_US or more: a tail that means and variances hide when it is a few calls in ten. */
  kt: number;
}
export interface GaugeRow {
  service_name: string;
  pod: string;
  metric_name: string;
  /** Start of the minute, µs. */
  minute: number;
  value: number;
}
export interface LogLevelRow {
  service_name: string;
  bin: number;
  n: number;
  /** Errors, warnings. */
  k: number;
  w: number;
}
/** Resource identity of a service: empty strings read as null. */
export interface DeploymentRow {
  service_name: string;
  service_version: string | null;
  container_image: string | null;
  service_instance_id: string | null;
  k8s_pod_name: string | null;
  k8s_deployment: string | null;
  k8s_namespace: string | null;
  service_namespace: string | null;
  first_us: number;
  last_us: number;
  n: number;
}
export interface WindowLogRow {
  service_name: string;
  template_id: number | null;
  n: number;
  k: number;
  first_us: number;
  last_us: number;
  severity_text: string | null;
  /** ids of the templates that merged into template_id whose lines are counted here (usually none) */
  merged_ids?: readonly number[];
}
export interface TemplateRow {
  template_id: number;
  service_name: string;
  pattern: string;
  example_body: string | null;
  severity_text: string | null;
  first_us: number;
  last_us: number;
  /** JSON text. */
  sample_values: string | null;
}
export interface ProfileRow {
  service_name: string;
  profile_type: string;
  unit: string;
  function: string;
  in_window: boolean;
  value: number;
  samples: number;
  first_us: number;
  last_us: number;
}
/** A histogram of finish-reason lists: [{key: JSON array of reasons, value: calls}]. */
export type FinishHistogram = { key: string; value: number }[];
export interface GenAiRow {
  service_name: string;
  model: string;
  system: string | null;
  operations: string[];
  finish: FinishHistogram;
  n: number;
  k: number;
  p95: number;
  input_tokens: number;
  output_tokens: number;
}
export interface GenAiBeforeRow {
  service_name: string;
  model: string;
  /** The finish reasons of these calls, a JSON array. */
  finish: string;
  n: number;
  k: number;
}
export interface AnomalyRow {
  service_name: string;
  operation: string;
  signal: SignalName;
  before: number;
  after: number;
  ts_shift_us: number;
  drill_down_sql: string | null;
}
export interface MetricRow {
  service_name: string;
  metric_name: string;
  bucket_us: number;
  n: number;
  avg: number | null;
  p95: number | null;
}
export interface CountRow {
  n: number;
}
export interface ServiceCountRow {
  service_name: string;
  n: number;
}
export interface SpanKey {
  service_name: string;
  span_id: string;
  operation: string;
  ts: number;
}
export interface SpanRow {
  service_name: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  span_name: string | null;
  operation: string;
  span_kind: number;
  status_code: number;
  status_message: string | null;
  is_error: boolean;
  start_us: number;
  duration_us: number;
  /** JSON text. */
  span_attributes: string | null;
  events_json: string | null;
}
export interface LogKey {
  service_name: string;
  rid: number;
  ts: number;
}
export interface LogRow {
  service_name: string;
  rid: number;
  ts: number;
  body: string | null;
  severity_text: string | null;
  /** Empty ids read as null. */
  trace_id: string | null;
  span_id: string | null;
  /** JSON text. */
  log_attributes: string | null;
  event_name: string | null;
  is_error: boolean;
}
export interface TemplateParamsRow {
  service_name: string;
  template_id: number;
  ts: number;
  /** JSON text: the record's parameter values in slot order. */
  template_params: string;
}

const emptyAsNull = (v: unknown) => (v === null || v === undefined || v === '' ? null : String(v));
const count = (r: Row): CountRow => ({ n: num(r['n']) });
const serviceCount = (r: Row): ServiceCountRow => ({ service_name: String(r['service_name']), n: num(r['n']) });
const spanKey = (r: Row): SpanKey => ({ service_name: String(r['service_name']), span_id: String(r['span_id']), operation: String(r['operation']), ts: Number(r['ts']) });
const logKey = (r: Row): LogKey => ({ service_name: String(r['service_name']), rid: Number(r['rid']), ts: Number(r['ts']) });

/** A service asked for and the start of the slice of the window its reads cover (the window's start, or later for a busy one). */
export interface SliceAsk {
  service: string;
  from: number;
}

/** Rows of the services asked, each from its slice's start to `to`: one range for the scan, one OR term per distinct start. */
function slicesWhere(asks: readonly SliceAsk[], to: number): string {
  const byFrom = new Map<number, string[]>();
  for (const a of asks) (byFrom.get(a.from) ?? byFrom.set(a.from, []).get(a.from)!).push(sqlString(a.service));
  const lo = Math.min(...byFrom.keys());
  const terms = [...byFrom].map(([from, names]) => `service_name IN (${names.join(', ')})${from > lo ? ` AND timestamp >= ${sqlTimestamp(from)}` : ''}`);
  return `${between(lo, to)} AND (${terms.join(' OR ')})`;
}

/** Rows of the services asked in the whole window. */
const wholeWindow = (b: Bounds, services: readonly string[]) => slicesWhere(services.map((service) => ({ service, from: b.from })), b.to);

/**
 * The `limit` rows of each service with the largest `order` (ties by `tie`), in one scan for any
 * number of services: a threshold per service (its limit-th largest value), then only the rows at
 * or above it are ranked. Measured on bench:diagnose's store: 81 ms for ten services against 240
 * for ten ORDER BY … LIMIT statements, and no dearer for one.
 */
function topPerService(table: string, cols: string, where: string, order: string, tie: string, limit: number): string {
  const n = Math.trunc(limit);
  return (
    `WITH t AS (SELECT service_name, list_min(max(${order}, ${n})) AS th FROM ${table} WHERE ${where} GROUP BY ALL) ` +
    `SELECT service_name, ${cols} FROM ${table} JOIN t USING (service_name) WHERE ${where} AND ${order} >= th ` +
    `QUALIFY row_number() OVER (PARTITION BY service_name ORDER BY ${order} DESC, ${tie}) <= ${n} ORDER BY service_name, ${order} DESC, ${tie}`
  );
}

/**
 * The spans the call tree and the call sequences read, over [lo, hi): spans keyed by a 64-bit hash
 * of (trace, span) so the joins are on integers; `sampleMod` > 1 keeps whole traces, one in that
 * many, by a hash of the trace id. Read once for both (STATEMENTS.callStructure): the scan and its
 * sample are most of either statement's cost.
 */
function callSpans(lo: number, hi: number, binUs: number, sampleMod: number): string {
  return (
    `SELECT hash(trace_id, span_id) AS id, CASE WHEN coalesce(parent_span_id, '') = '' THEN NULL ELSE hash(trace_id, parent_span_id) END AS pid, hash(trace_id) AS tr, service_name AS service, ` +
    `coalesce(k8s_pod_name, service_instance_id, '') AS pod, duration_us AS d, is_error, epoch_us(timestamp) AS t, epoch_us(timestamp) // ${binUs} * ${binUs} AS bin, ` +
    `hash(service_name, span_name) AS nk FROM ${SPANS.name} WHERE ${between(lo, hi)}${sampleMod > 1 ? ` AND hash(trace_id) % ${Math.trunc(sampleMod)} = 0` : ''}`
  );
}

/** The call tree over the spans `s` (callSpans): its common table expressions and its SELECT, one row per group with its bins and sums as lists (asLists). */
const CALL_TREE = {
  ctes:
    `kids AS (SELECT pid, sum(d) AS cd, min(service) AS cs, max(service) AS cs2, min(pod) AS cpod FROM s WHERE pid IS NOT NULL GROUP BY pid), ` +
    // What a span of a service calls, by its name and its parent's, where such spans' children are always in one other service.
    `known AS (SELECT q.nk AS pnk, p.nk, min(k.cs) AS callee FROM s AS p JOIN kids AS k ON k.pid = p.id JOIN s AS q ON q.id = p.pid ` +
    `WHERE k.cs = k.cs2 AND k.cs <> p.service AND q.service = p.service GROUP BY ALL HAVING min(k.cs) = max(k.cs) AND count(*) >= 3), ` +
    `t AS (SELECT service, CASE WHEN callee IS NULL THEN '' ELSE pod END AS pod, callee, callee_pod, entry, bin, count(*) AS n, count_if(is_error) AS k, sum(x) AS sx, sum(x * x) AS sxx, sum(ln(x + 1)) AS slx, sum(ln(x + 1) ^ 2) AS sllx, ` +
    `sum(ln(d + 1)) AS sl, sum(ln(d + 1) ^ 2) AS sll, sum(d) AS sd, count_if(x >= ${SLOW_CALL_US}) AS kt FROM (` +
    `SELECT p.service, p.pod, p.d, p.is_error, p.bin, (q.id IS NULL OR q.service <> p.service) AS entry, greatest(0, p.d - coalesce(k.cd, 0)) AS x, ` +
    `CASE WHEN k.cs = k.cs2 AND k.cs <> p.service THEN k.cs WHEN k.pid IS NULL AND q.service = p.service THEN n.callee END AS callee, ` +
    `CASE WHEN k.cs = k.cs2 AND k.cs <> p.service THEN k.cpod WHEN k.pid IS NULL AND q.service = p.service AND n.callee IS NOT NULL THEN '' END AS callee_pod ` +
    `FROM s AS p LEFT JOIN kids AS k ON k.pid = p.id LEFT JOIN s AS q ON q.id = p.pid LEFT JOIN known AS n ON n.nk = p.nk AND n.pnk = q.nk) GROUP BY ALL)`,
  select: `SELECT service, pod, callee, callee_pod, entry, ${asLists(CALL_TREE_SUMS)} FROM t GROUP BY ALL`,
};

/** The window's error and warning records, and new templates' records, over [from, hi) on the traces of the spans `s` (callSpans), with their sample (LogLinkRow). */
const logLinksOf = (from: number, hi: number, sampleMod: number, newSince: number) => {
  const fresh = `template_id IN (SELECT template_id FROM ${LOG_TEMPLATES.name} WHERE timestamp >= ${sqlTimestamp(newSince)})`;
  return {
    ctes:
      `lg AS (SELECT hash(trace_id) AS tr, service_name AS svc, CASE WHEN is_error THEN 'error' WHEN severity_number BETWEEN 13 AND 16 THEN 'warning' END AS level, ` +
      `CASE WHEN ${fresh} THEN template_id END AS tpl FROM ${LOGS.name} WHERE ${between(from, hi)} AND coalesce(trace_id, '') <> '' ` +
      `AND (is_error OR severity_number BETWEEN 13 AND 16 OR ${fresh})${sampleMod > 1 ? ` AND hash(trace_id) % ${Math.trunc(sampleMod)} = 0` : ''}), ` +
      `lt AS (SELECT DISTINCT tr, service FROM s WHERE tr IN (SELECT tr FROM lg)), ` +
      // One row a record and what it counts for: its level, its new template, or both.
      `lk AS (SELECT tr, svc, level, NULL::BIGINT AS tpl FROM lg WHERE level IS NOT NULL UNION ALL SELECT tr, svc, 'template', tpl FROM lg WHERE tpl IS NOT NULL)`,
    select:
      `SELECT svc AS log_service, level, tpl AS template, lt.service AS on_trace, count(*) AS records FROM lk JOIN lt USING (tr) GROUP BY ALL ` +
      `UNION ALL SELECT svc, level, tpl, NULL, count(*) FROM lk WHERE tr IN (SELECT tr FROM lt) GROUP BY ALL`,
  };
};

const logLinkRow = (r: Row): LogLinkRow => ({
  service: String(r['log_service']),
  level: r['level'] === 'error' || r['level'] === 'warning' ? r['level'] : 'template',
  template: numOrNull(r['template']),
  on: textOrNull(r['on_trace']),
  records: num(r['records']),
});

/** The call sequences over the spans `s` (callSpans); `seq_bin`, not `bin`, so that one statement can return them beside the call tree's rows. */
const callSequencesOf = (binUs: number) => ({
  ctes:
    `j AS (SELECT coalesce(c.pid, c.id) AS req, c.service AS caller, k.service AS callee, k.t AS kt, count(*) OVER (PARTITION BY c.id) = 1 AS own, ` +
    `CASE WHEN own THEN c.t ELSE k.t END AS issued, CASE WHEN own THEN c.t + c.d ELSE k.t + k.d END AS answered FROM s AS k JOIN s AS c ON k.pid = c.id WHERE k.service <> c.service)`,
  select:
    `SELECT caller, min(kt) // ${binUs} * ${binUs} AS seq_bin, list(callee ORDER BY issued, kt) AS seq, list(issued::DOUBLE ORDER BY issued, kt) AS issued, ` +
    `list(answered::DOUBLE ORDER BY issued, kt) AS answered FROM j GROUP BY req, caller`,
});

function callTreeRows(r: Row): CallTreeRow[] {
  const [bin = [], n, k, sx, sxx, slx, sllx, sl, sll, sd, kt] = listed(r, CALL_TREE_SUMS);
  const [service, pod, callee, callee_pod, entry] = [String(r['service']), String(r['pod']), textOrNull(r['callee']), textOrNull(r['callee_pod']), Boolean(r['entry'])];
  // Fields written out, not spread from a group object: the spread made each of the ~4,000 rows
  // a call 10–20 µs (40–80 ms in bench:diagnose) against 0.2 µs.
  return bin.map((b, i) => ({
    service,
    pod,
    callee,
    callee_pod,
    entry,
    bin: Number(b),
    n: num(n![i]),
    k: num(k![i]),
    sx: num(sx![i]),
    sxx: num(sxx![i]),
    slx: num(slx![i]),
    sllx: num(sllx![i]),
    sl: num(sl![i]),
    sll: num(sll![i]),
    sd: num(sd![i]),
    kt: num(kt![i]),
  }));
}

function callSequenceRow(r: Row): CallSequenceRow {
  return {
    caller: String(r['caller']),
    bin: Number(r['seq_bin']),
    seq: ((r['seq'] as unknown[] | null) ?? []).map(String),
    issued: ((r['issued'] as unknown[] | null) ?? []).map(Number),
    answered: ((r['answered'] as unknown[] | null) ?? []).map(Number),
  };
}

export const STATEMENTS = {
  /** Per service and operation in the window: volume, errors, quantiles (ids and exemplars come from narrower reads). */
  windowOps: statement(
    (ws: WindowSample) =>
      `SELECT service_name, operation, any_value(span_name) AS span_name, min(span_kind) AS span_kind, count(*) AS n, count_if(is_error) AS k, ` +
      `quantile_cont(duration_us, [0.5, 0.95, 0.99]) AS q, avg(duration_us) AS mean_us, max(peer_service) AS peer ` +
      `FROM ${windowSpansIn(ws)} GROUP BY ALL`,
    (r): WindowOpRow => {
      const q = (r['q'] as (number | null)[] | null) ?? [];
      return {
        service_name: String(r['service_name']),
        operation: String(r['operation']),
        span_name: textOrNull(r['span_name']),
        span_kind: num(r['span_kind']),
        n: num(r['n']),
        k: num(r['k']),
        q: [num(q[0]), num(q[1]), num(q[2])],
        mean_us: num(r['mean_us']),
        peer: textOrNull(r['peer']),
      };
    },
  ),

  /** Window spans above a per-operation threshold (the baseline p95): the quantile-exceedance test's counts. */
  exceedances: statement(
    (ws: WindowSample, thresholds: readonly { service: string; operation: string; threshold: number }[]) =>
      `SELECT s.service_name, s.operation, count(*) AS above FROM ${windowSpansIn(ws)} AS s JOIN (VALUES ${thresholds
        .map((t) => `(${sqlString(t.service)}, ${sqlString(t.operation)}, ${Math.floor(t.threshold)})`)
        .join(', ')}) AS t(svc, op, thr) ON s.service_name = t.svc AND s.operation = t.op ` +
      `WHERE s.duration_us > t.thr GROUP BY ALL`,
    (r): ExceedanceRow => ({ service_name: String(r['service_name']), operation: String(r['operation']), above: num(r['above']) }),
  ),

  /** Error classes in the window: exception or error type, HTTP status, status message. */
  windowErrors: statement(
    (b: Bounds) =>
      `SELECT service_name, operation, coalesce(error_type, 'unclassified') AS error_type, http_status_code, ` +
      `left(coalesce(status_message, ''), 120) AS message, count(*) AS n, min(epoch_us(timestamp)) AS first_us, min(trace_id) AS trace_id ` +
      `FROM ${SPANS.name} WHERE is_error AND ${between(b.from, b.to)} GROUP BY ALL`,
    (r): WindowErrorRow => ({
      service_name: String(r['service_name']),
      operation: String(r['operation']),
      error_type: String(r['error_type']),
      n: Number(r['n']),
      first_us: num(r['first_us']),
      trace_id: textOrNull(r['trace_id']),
    }),
  ),

  /** When each error type first appeared in the look-back and window (to tell a new one, and since when). */
  errorTypesFirstSeen: statement(
    (b: Bounds, dirty: readonly number[]) =>
      `SELECT service_name, error_type, min(first_us) AS first_us FROM (${fromRollup(ERROR_TYPES_ROLLUP, b.lookFrom, b.to, dirty)}) GROUP BY ALL`,
    (r): ErrorTypeFirstSeenRow => ({ service_name: String(r['service_name']), error_type: String(r['error_type']), first_us: Number(r['first_us']) }),
  ),

  /** The persisted series before the window, but for buckets still open (those are read raw: `rawSeries`). */
  series: statement(
    (b: Bounds, dirty: readonly number[]) =>
      seriesLists(`${SERIES.name} WHERE ${between(b.lookFrom, bucketStart(b.from))}${notIn(dirty)}`),
    (r) => seriesRows(r),
  ),

  /** Buckets of the look-back and window the detection pass has not closed (their series and rollups are read raw). */
  dirtyBuckets: statement(
    (b: Bounds) =>
      `SELECT bucket FROM ${DIRTY_BUCKETS.name} WHERE bucket >= ${Math.floor(b.lookFrom / BUCKET_US)} AND bucket <= ${Math.floor(b.to / BUCKET_US)} ORDER BY bucket`,
    (r) => Number(r['bucket']),
  ),

  /** The series' own aggregates over raw telemetry for buckets [lo, hi) the pass has not closed. */
  rawSeries: statement(
    (lo: number, hi: number) =>
      seriesLists(`(${SIGNALS.map((s) => s.aggregate(sqlTimestamp(lo), sqlTimestamp(hi))).join(' UNION ALL ')})`),
    (r) => seriesRows(r),
  ),

  /** Spans in the window (how much of it the edge join reads). */
  windowSpans: statement((b: Bounds) => `SELECT count(*) AS n FROM ${SPANS.name} WHERE ${between(b.from, b.to)}`, count),

  /**
   * Cross-service calls: a server or consumer span whose parent span belongs to another service, in
   * the last `sliceUs` of the window (its parents may start up to a minute earlier). A contiguous
   * slice, unlike a sample of traces, lets the store skip every other row group.
   */
  edges: statement(
    (b: Bounds, sliceUs: number) => {
      const lo = Math.max(b.from, b.to - sliceUs);
      return (
        `SELECT p.service_name AS caller, p.operation AS caller_operation, c.service_name AS callee, count(*) AS n, count_if(c.is_error) AS k ` +
        `FROM (SELECT trace_id, parent_span_id, service_name, is_error FROM ${SPANS.name} WHERE span_kind IN (2, 5) AND parent_span_id IS NOT NULL AND ${between(lo, b.to)}) AS c ` +
        `JOIN (SELECT trace_id, span_id, service_name, operation FROM ${SPANS.name} WHERE ${between(lo - MINUTE_US, b.to)}) AS p ` +
        `ON c.trace_id = p.trace_id AND c.parent_span_id = p.span_id WHERE p.service_name <> c.service_name GROUP BY ALL`
      );
    },
    (r): EdgeRow => ({ caller: String(r['caller']), caller_operation: String(r['caller_operation']), callee: String(r['callee']), n: num(r['n']), k: num(r['k']) }),
  ),

  /**
   * The call tree in fine bins over [lo, hi): every span with its parent's service and its children,
   * as who does the work. A span whose children are all in one other service is a call: the time it
   * takes beyond its child is the wire and queue time of that edge, whatever the span's kind. Any
   * other span's time beyond its children is its service's own work. `entry`: the span is a request
   * the service received (no parent, or a parent in another service). Per (service, pod, callee,
   * callee pod, entry, bin): calls, errors, and sums of the exclusive time, its log and the
   * duration's log, each with its square.
   */
  callTree: statement(
    (lo: number, hi: number, binUs: number, sampleMod: number) => `WITH s AS MATERIALIZED (${callSpans(lo, hi, binUs, sampleMod)}), ${CALL_TREE.ctes} ${CALL_TREE.select}`,
    callTreeRows,
  ),

  /**
   * Resource gauges per service, pod and minute over [lo, hi): CPU, memory and restarts, by the
   * Kubernetes, container and process conventions' names or plain names like them (gauge.ts says which).
   */
  resourceGauges: statement(
    (lo: number, hi: number) =>
      [METRICS_GAUGE, METRICS_SUM]
        .map(
          (t) =>
            `SELECT service_name, coalesce(k8s_pod_name, service_instance_id, '') AS pod, metric_name, epoch_us(timestamp) // ${MINUTE_US} * ${MINUTE_US} AS minute, avg(value) AS value ` +
            `FROM ${t.name} WHERE ${between(lo, hi)} AND regexp_matches(lower(metric_name), '(cpu|mem|restart)') GROUP BY ALL`,
        )
        .join(' UNION ALL '),
    (r): GaugeRow => ({ service_name: String(r['service_name']), pod: String(r['pod']), metric_name: String(r['metric_name']), minute: Number(r['minute']), value: num(r['value']) }),
  ),

  /**
   * The calls each request made (issue 27): per request of a caller (a callee span's parent's
   * parent, or the parent when it has none), its fine bin and, per call in the order issued, the
   * callee, when the caller issued it and when its answer came. A call's times are those of the
   * caller's own span around it where it has one (a client span with one callee span under it: the
   * caller's clock, and a delay on the wire or a starved caller moves when the callee starts, not
   * when it was called), else the callee span's. What a caller does after an answer (ask again,
   * turn to another service, stop) shows in these. Its own statement over the call tree's range and
   * sample, so the call tree's statement stays as it is.
   */
  callSequences: statement(
    (lo: number, hi: number, binUs: number, sampleMod: number) => `WITH s AS MATERIALIZED (${callSpans(lo, hi, binUs, sampleMod)}), ${callSequencesOf(binUs).ctes} ${callSequencesOf(binUs).select}`,
    callSequenceRow,
  ),

  /**
   * The call tree, the call sequences and the window's log links (from `from`; templates new since
   * `newSince`) from one scan of their spans (what readShared runs): each row is one of the three.
   */
  callStructure: statement(
    (lo: number, from: number, hi: number, binUs: number, sampleMod: number, newSince: number) => {
      const seq = callSequencesOf(binUs);
      const links = logLinksOf(from, hi, sampleMod, newSince);
      return (
        `WITH s AS MATERIALIZED (${callSpans(lo, hi, binUs, sampleMod)}), ${CALL_TREE.ctes}, ${seq.ctes}, ${links.ctes} ` +
        `SELECT 'tree' AS part, * FROM (${CALL_TREE.select}) UNION ALL BY NAME SELECT 'seq' AS part, * FROM (${seq.select}) ` +
        `UNION ALL BY NAME SELECT 'link' AS part, * FROM (${links.select})`
      );
    },
    (r): { tree: CallTreeRow[] } | { seq: CallSequenceRow } | { link: LogLinkRow } =>
      r['part'] === 'seq' ? { seq: callSequenceRow(r) } : r['part'] === 'link' ? { link: logLinkRow(r) } : { tree: callTreeRows(r) },
  ),

  /** Log records per service and fine bin over [lo, hi) (lo on the fine grid): all, errors, warnings; closed buckets from their rollup. */
  logLevels: statement(
    (lo: number, hi: number, dirty: readonly number[]) =>
      `SELECT service_name, epoch_us(timestamp) AS bin, sum(n) AS n, sum(k) AS k, sum(w) AS w FROM (${fromRollup(LOG_LEVELS_ROLLUP, lo, hi, dirty)}) ` +
      `WHERE timestamp >= ${sqlTimestamp(lo)} GROUP BY ALL`,
    (r): LogLevelRow => ({ service_name: String(r['service_name']), bin: Number(r['bin']), n: num(r['n']), k: num(r['k']), w: num(r['w']) }),
  ),

  /** Versions, images, instances and pods per service, first and last seen, over the look-back and window. */
  deployments: statement(
    (b: Bounds, dirty: readonly number[]) =>
      `SELECT service_name, service_version, container_image, service_instance_id, k8s_pod_name, any_value(k8s_deployment) AS k8s_deployment, ` +
      `any_value(k8s_namespace) AS k8s_namespace, any_value(service_namespace) AS service_namespace, min(first_us) AS first_us, max(last_us) AS last_us, sum(n) AS n ` +
      `FROM (${fromRollup(RESOURCES_ROLLUP, b.lookFrom, b.to, dirty)}) GROUP BY ALL`,
    (r): DeploymentRow => ({
      service_name: String(r['service_name']),
      service_version: emptyAsNull(r['service_version']),
      container_image: emptyAsNull(r['container_image']),
      service_instance_id: emptyAsNull(r['service_instance_id']),
      k8s_pod_name: emptyAsNull(r['k8s_pod_name']),
      k8s_deployment: emptyAsNull(r['k8s_deployment']),
      k8s_namespace: emptyAsNull(r['k8s_namespace']),
      service_namespace: emptyAsNull(r['service_namespace']),
      first_us: Number(r['first_us']),
      last_us: Number(r['last_us']),
      n: Number(r['n']),
    }),
  ),

  /**
   * Logs per service and template in the window; a template that merged into another counts as that
   * one (one event once). Grouped by the raw template_id first, then the few groups are resolved
   * through the merge chains of svc_log_templates (joining every line, as svc_logs_resolved does,
   * cost twice the time).
   */
  windowLogs: statement(
    (b: Bounds) =>
      `SELECT w.service_name, coalesce(m.resolved_template_id, w.template_id) AS template_id, sum(w.n) AS n, sum(w.k) AS k, min(w.first_us) AS first_us, ` +
      `max(w.last_us) AS last_us, any_value(w.severity_text) AS severity_text, list(m.template_id) FILTER (WHERE m.template_id IS NOT NULL) AS merged_ids FROM (` +
      `SELECT service_name, template_id, count(*) AS n, count_if(is_error) AS k, min(epoch_us(timestamp)) AS first_us, max(epoch_us(timestamp)) AS last_us, ` +
      `any_value(severity_text) AS severity_text FROM ${LOGS.name} WHERE ${between(b.from, b.to)} GROUP BY ALL` +
      `) AS w LEFT JOIN (${MERGE_CHAIN_SQL}) AS m ON m.template_id = w.template_id GROUP BY ALL`,
    (r): WindowLogRow => ({
      service_name: String(r['service_name']),
      template_id: numOrNull(r['template_id']),
      n: Number(r['n']),
      k: Number(r['k']),
      first_us: Number(r['first_us']),
      last_us: Number(r['last_us']),
      severity_text: textOrNull(r['severity_text']),
      merged_ids: Array.isArray(r['merged_ids']) ? (r['merged_ids'] as unknown[]).map(Number) : [],
    }),
  ),

  templates: statement(
    (ids: readonly number[]) =>
      `SELECT template_id, service_name, pattern, example_body, severity_text, epoch_us(first_seen) AS first_us, epoch_us(last_seen) AS last_us, sample_values ` +
      `FROM ${LOG_TEMPLATES.name} WHERE template_id IN (${ids.map((i) => Math.trunc(i)).join(', ')})`,
    (r): TemplateRow => ({
      template_id: Number(r['template_id']),
      service_name: String(r['service_name']),
      pattern: String(r['pattern']),
      example_body: textOrNull(r['example_body']),
      severity_text: textOrNull(r['severity_text']),
      first_us: Number(r['first_us']),
      last_us: Number(r['last_us']),
      sample_values: textOrNull(r['sample_values']),
    }),
  ),

  /** Profile cost per service, type and leaf function, in the window and before it. */
  profiles: statement(
    (b: Bounds) =>
      `SELECT service_name, profile_type, unit, function, epoch_us(timestamp) >= ${b.from} AS in_window, sum(value)::DOUBLE AS value, sum(sample_count) AS samples, ` +
      `min(epoch_us(timestamp)) AS first_us, max(epoch_us(timestamp)) AS last_us FROM ${PROFILES.name} WHERE ${between(b.lookFrom, b.to)} GROUP BY ALL`,
    (r): ProfileRow => ({
      service_name: String(r['service_name']),
      profile_type: String(r['profile_type']),
      unit: String(r['unit']),
      function: String(r['function']),
      in_window: Boolean(r['in_window']),
      value: Number(r['value']),
      samples: Number(r['samples']),
      first_us: Number(r['first_us']),
      last_us: Number(r['last_us']),
    }),
  ),

  /** Model calls in the window (GenAI semantic conventions, promoted at ingest) per service and model; finish reasons as a histogram. */
  genAiWindow: statement(
    (b: Bounds) =>
      `SELECT service_name, gen_ai_model AS model, any_value(gen_ai_system) AS system, list(DISTINCT gen_ai_operation) FILTER (WHERE gen_ai_operation IS NOT NULL) AS operations, ` +
      `true AS in_window, histogram(coalesce(gen_ai_finish_reasons, '[]')) AS finish, count(*) AS n, count_if(is_error) AS k, ` +
      `quantile_cont(duration_us, 0.95) AS p95, sum(gen_ai_input_tokens) AS input_tokens, sum(gen_ai_output_tokens) AS output_tokens ` +
      `FROM ${SPANS.name} WHERE gen_ai_model IS NOT NULL AND ${between(b.from, b.to)} GROUP BY ALL`,
    (r): GenAiRow => ({
      service_name: String(r['service_name']),
      model: String(r['model']),
      system: textOrNull(r['system']),
      operations: ((r['operations'] as unknown[] | null) ?? []).map(String),
      finish: ((r['finish'] as { key: unknown; value: unknown }[] | null) ?? []).map((e) => ({ key: String(e.key), value: Number(e.value) })),
      n: Number(r['n']),
      k: Number(r['k']),
      p95: Number(r['p95']),
      input_tokens: num(r['input_tokens']),
      output_tokens: num(r['output_tokens']),
    }),
  ),

  /** Model calls before the window, per finish reasons (the rollup's shape). */
  genAiBefore: statement(
    (b: Bounds, dirty: readonly number[]) =>
      `SELECT service_name, model, finish, sum(n) AS n, sum(k) AS k FROM (${fromRollup(GEN_AI_ROLLUP, b.lookFrom, bucketStart(b.from), dirty)}) GROUP BY ALL`,
    (r): GenAiBeforeRow => ({ service_name: String(r['service_name']), model: String(r['model']), finish: String(r['finish']), n: Number(r['n']), k: Number(r['k']) }),
  ),

  anomalies: statement(
    (b: Bounds) =>
      `SELECT service_name, operation, signal, before, after, ts_shift_us, drill_down_sql FROM ${ANOMALIES.name} WHERE ${between(b.lookFrom, b.to)}`,
    (r): AnomalyRow => ({
      service_name: String(r['service_name']),
      operation: String(r['operation']),
      signal: String(r['signal']) as SignalName,
      before: Number(r['before']),
      after: Number(r['after']),
      ts_shift_us: num(r['ts_shift_us']),
      drill_down_sql: textOrNull(r['drill_down_sql']),
    }),
  ),

  /** Metric summaries of the services asked: per service, metric and 5-minute bucket. */
  metrics: statement(
    (b: Bounds, services: readonly string[]) => {
      const bucket = `(epoch_us(timestamp) // ${BUCKET_US}) * ${BUCKET_US}`;
      const where = wholeWindow(b, services);
      return (
        `SELECT service_name, metric_name, ${bucket} AS bucket_us, count(*) AS n, avg(value) AS avg, quantile_cont(value, 0.95) AS p95 FROM ${METRICS_GAUGE.name} WHERE ${where} GROUP BY ALL UNION ALL ` +
        `SELECT service_name, metric_name, ${bucket}, count(*), avg(value), quantile_cont(value, 0.95) FROM ${METRICS_SUM.name} WHERE ${where} GROUP BY ALL UNION ALL ` +
        `SELECT service_name, metric_name, ${bucket}, sum(count)::BIGINT, sum(sum) / nullif(sum(count), 0), NULL::DOUBLE FROM ${METRICS_HISTOGRAM.name} WHERE ${where} GROUP BY ALL`
      );
    },
    (r): MetricRow => ({
      service_name: String(r['service_name']),
      metric_name: String(r['metric_name']),
      bucket_us: Number(r['bucket_us']),
      n: Number(r['n']),
      avg: numOrNull(r['avg']),
      p95: numOrNull(r['p95']),
    }),
  ),

  /** Distinct metric series per service asked, in the window (coverage). */
  metricSeries: statement((b: Bounds, services: readonly string[]) => {
    const where = wholeWindow(b, services);
    const series = [METRICS_GAUGE, METRICS_SUM, METRICS_HISTOGRAM].map((t) => `SELECT DISTINCT service_name, metric_name, attributes FROM ${t.name} WHERE ${where}`);
    return `SELECT service_name, count(*) AS n FROM (${series.join(' UNION ')}) GROUP BY ALL`;
  }, serviceCount),

  // Samples are chosen on narrow columns (ids, times, durations), then only the chosen rows are read
  // whole: reading a span's attribute and event JSON costs ~2 ms a row (a compressed vector decoded
  // for it), so a top-N over every error span's wide columns cost 46 ms in bench:diagnose against 13.
  // Each read serves every service of the call at once (topPerService).

  /** The newest error spans of each service asked. */
  errorSpanKeys: statement(
    (b: Bounds, services: readonly string[], limit: number) =>
      topPerService(SPANS.name, 'span_id, operation, epoch_us(timestamp) AS ts', `${wholeWindow(b, services)} AND is_error`, 'timestamp', 'span_id', limit),
    spanKey,
  ),
  /** The slowest successful spans of each service asked (of the window sample's slices, when the window is busy). */
  slowSpanKeys: statement(
    (ws: WindowSample, services: readonly string[], limit: number) =>
      topPerService(windowSpansIn(ws), 'span_id, operation, epoch_us(timestamp) AS ts', `service_name IN (${services.map(sqlString).join(', ')}) AND NOT is_error`, 'duration_us', 'span_id', limit),
    spanKey,
  ),
  /** One span of each operation of each service asked, from its slice. */
  exemplarSpanKeys: statement(
    (b: Bounds, asks: readonly SliceAsk[]) =>
      `SELECT service_name, operation, min(span_id) AS span_id, arg_min(epoch_us(timestamp), span_id) AS ts FROM ${SPANS.name} WHERE ${slicesWhere(asks, b.to)} GROUP BY ALL`,
    spanKey,
  ),
  /** Whole sample spans by their exact start (the store reads one row group for each). */
  spansByKey: statement(
    (keys: readonly Pick<SpanKey, 'service_name' | 'span_id' | 'ts'>[]) =>
      keys
        .map((k) => `(SELECT service_name, ${SPAN_SAMPLE_COLUMNS} FROM ${SPANS.name} WHERE timestamp = ${sqlTimestamp(k.ts)} AND span_id = ${sqlString(k.span_id)} AND service_name = ${sqlString(k.service_name)})`)
        .join(' UNION ALL '),
    (r): SpanRow => ({
      service_name: String(r['service_name']),
      trace_id: String(r['trace_id']),
      span_id: String(r['span_id']),
      parent_span_id: textOrNull(r['parent_span_id']),
      span_name: textOrNull(r['span_name']),
      operation: String(r['operation']),
      span_kind: num(r['span_kind']),
      status_code: Number(r['status_code']),
      status_message: textOrNull(r['status_message']),
      is_error: Boolean(r['is_error']),
      start_us: Number(r['start_us']),
      duration_us: Number(r['duration_us']),
      span_attributes: textOrNull(r['span_attributes']),
      events_json: textOrNull(r['events_json']),
    }),
  ),

  /** The newest error logs of each service asked, and the newest logs of each one's slice (rowids: logs have no id of their own). */
  errorLogKeys: statement(
    (b: Bounds, services: readonly string[], limit: number) =>
      topPerService(LOGS.name, 'rowid AS rid, epoch_us(timestamp) AS ts', `${wholeWindow(b, services)} AND is_error`, 'timestamp', 'rowid', limit),
    logKey,
  ),
  newestLogKeys: statement(
    (b: Bounds, asks: readonly SliceAsk[], limit: number) => topPerService(LOGS.name, 'rowid AS rid, epoch_us(timestamp) AS ts', slicesWhere(asks, b.to), 'timestamp', 'rowid', limit),
    logKey,
  ),
  logsByKey: statement(
    (keys: readonly Pick<LogKey, 'rid' | 'ts'>[]) =>
      keys
        .map((k) => `(SELECT service_name, rowid AS rid, epoch_us(timestamp) AS ts, body, severity_text, trace_id, span_id, log_attributes, event_name, is_error FROM ${LOGS.name} WHERE timestamp = ${sqlTimestamp(k.ts)} AND rowid = ${Math.trunc(k.rid)})`)
        .join(' UNION ALL '),
    (r): LogRow => ({
      service_name: String(r['service_name']),
      rid: Number(r['rid']),
      ts: Number(r['ts']),
      body: textOrNull(r['body']),
      severity_text: textOrNull(r['severity_text']),
      trace_id: emptyAsNull(r['trace_id']),
      span_id: emptyAsNull(r['span_id']),
      log_attributes: textOrNull(r['log_attributes']),
      event_name: textOrNull(r['event_name']),
      is_error: Boolean(r['is_error']),
    }),
  ),

  /**
   * Parameters of the newest records of each template in its service's slice (the numeric slots
   * behind log_counters). The ids are resolved ones (windowLogs), and a template's id names its
   * service; `mergedInto` maps the ids of the templates merged into them (windowLogs merged_ids) to
   * theirs: their lines are read by raw template_id (an IN list the scan filters on; a join to the
   * merge chains per line cost twice the time) and reported as the id.
   */
  templateParams: statement(
    (b: Bounds, asks: readonly SliceAsk[], ids: readonly number[], perTemplate: number, mergedInto: ReadonlyMap<number, number> = new Map()) => {
      const raw = [...ids, ...mergedInto.keys()].map((i) => Math.trunc(i));
      const id = mergedInto.size
        ? `CASE template_id ${[...mergedInto].map(([from, to]) => `WHEN ${Math.trunc(from)} THEN ${Math.trunc(to)}`).join(' ')} ELSE template_id END`
        : 'template_id';
      // the id computed below the window: a CASE in its PARTITION BY cost a third more
      return (
        `SELECT service_name, id AS template_id, epoch_us(timestamp) AS ts, template_params FROM (SELECT service_name, ${id} AS id, timestamp, template_params FROM ${LOGS.name} ` +
        `WHERE ${slicesWhere(asks, b.to)} AND template_id IN (${raw.join(', ')}) AND template_params IS NOT NULL) ` +
        `QUALIFY row_number() OVER (PARTITION BY id ORDER BY timestamp DESC) <= ${Math.trunc(perTemplate)}`
      );
    },
    (r): TemplateParamsRow => ({ service_name: String(r['service_name']), template_id: Number(r['template_id']), ts: Number(r['ts']), template_params: String(r['template_params']) }),
  ),

  /** Distinct traces with an error span, per service asked. */
  errorTraces: statement(
    (b: Bounds, services: readonly string[]) => `SELECT service_name, count(DISTINCT trace_id) AS n FROM ${SPANS.name} WHERE ${wholeWindow(b, services)} AND is_error GROUP BY ALL`,
    serviceCount,
  ),
};

const SERIES_COLS = ['t', 'value', 'n', 'k'];

/** Series rows of `from` (a table and its filter, or a subquery), one row per series (asLists). */
function seriesLists(from: string): string {
  return `SELECT service_name, operation, signal, ${asLists(SERIES_COLS)} FROM (SELECT service_name, operation, signal, epoch_us(timestamp) AS t, value, n, k FROM ${from}) GROUP BY ALL`;
}

function seriesRows(r: Row): SeriesRows {
  const [t = [], value, n, k] = listed(r, SERIES_COLS);
  return {
    service_name: String(r['service_name']),
    operation: String(r['operation']),
    signal: String(r['signal']),
    buckets: t.map((ti, i) => ({ t: Number(ti), value: Number(value![i]), n: num(n![i]), k: num(k![i]) })),
  };
}

type Statements = typeof STATEMENTS;
/** The SQL text of every statement (what bench:diagnose times one by one). */
export const SQL = Object.fromEntries(Object.entries(STATEMENTS).map(([name, s]) => [name, s.sql])) as { [K in keyof Statements]: Statements[K]['sql'] };

export const SPAN_SAMPLE_COLUMNS =
  'trace_id, span_id, parent_span_id, span_name, operation, span_kind, status_code, status_message, is_error, epoch_us(timestamp) AS start_us, duration_us, span_attributes, events_json';

/**
 * A rollup's rows for [lo, hi): the stored rows of closed buckets, and for buckets not closed yet (or
 * reopened by late data) the same aggregate over raw spans.
 */
export function fromRollup(r: Rollup, lo: number, hi: number, dirty: readonly number[]): string {
  const open = dirty.filter((d) => (d + 1) * BUCKET_US > lo && d * BUCKET_US < hi);
  const stored = `SELECT * FROM ${r.table.name} WHERE ${between(bucketStart(lo), hi)}${notIn(open)}`;
  const raw = bucketRuns(open).map(([a, z]) => r.aggregate(sqlTimestamp(Math.max(a, lo)), sqlTimestamp(Math.min(z, hi))));
  return [stored, ...raw].join(' UNION ALL ');
}

/**
 * Leaves out the stored rows of open buckets: late data reopened them, so their rows are stale, and
 * the caller reads them raw; kept, such a bucket would be counted twice.
 */
const notIn = (open: readonly number[]) => (open.length ? ` AND epoch_us(timestamp) // ${BUCKET_US} NOT IN (${open.join(', ')})` : '');

export function bucketStart(us: number): number {
  return Math.floor(us / BUCKET_US) * BUCKET_US;
}

/** What every diagnosis of the request shares. */
export interface SharedRows {
  windowOps: WindowOpRow[];
  windowErrors: WindowErrorRow[];
  errorTypesFirstSeen: ErrorTypeFirstSeenRow[];
  series: SeriesRows[];
  edges: EdgeRow[];
  /** Edge counts from a slice of the window are scaled up by this (1: the whole window). */
  edgeScale: number;
  /** Where the window's per-operation statistics (windowOps, exceedances) were read; their counts are scaled up by its `scale`. */
  windowSample: WindowSample;
  deployments: DeploymentRow[];
  windowLogs: WindowLogRow[];
  profiles: ProfileRow[];
  genAi: GenAiRow[];
  genAiBefore: GenAiBeforeRow[];
  anomalies: AnomalyRow[];
  /** The call tree and log levels in fine bins over the look-back and window (structure.ts). */
  callTree: CallTreeRow[];
  /** The call tree holds one trace in this many (structureRead). */
  traceSample: number;
  logLevels: LogLevelRow[];
  gauges: GaugeRow[];
  callSequences: CallSequenceRow[];
  logLinks: LogLinkRow[];
}

/** The read pool of one diagnosis and the time by which its queries must be done (ms since the epoch). */
export interface Reader {
  reads: ReadPool;
  deadline: number;
  /** If given: ms each statement ran on a connection (not waiting for one), by name, summed over its runs. */
  timings?: Map<string, number>;
}

export class DiagnoseTimeout extends Error {}

/** One statement on a pooled connection, interrupted at the deadline (DuckDB stops within milliseconds). */
async function read(r: Reader, sql: string, name = 'unnamed'): Promise<Row[]> {
  try {
    return await r.reads.use(async (c) => {
      const start = performance.now();
      try {
        return await readRows(c, sql);
      } finally {
        r.timings?.set(name, (r.timings.get(name) ?? 0) + performance.now() - start);
      }
    }, r.deadline);
  } catch (err) {
    throw err instanceof DeadlineExceeded ? new DiagnoseTimeout('the time limit was reached') : err;
  }
}

/** Each statement's name, for the failure of one (`callStructure: Out of Memory Error …`). */
const NAMES = new Map<Statement<never, unknown>, string>(Object.entries(STATEMENTS).map(([name, s]) => [s as Statement<never, unknown>, name]));

/** One statement's rows, decoded; a failure other than the time limit names the statement. */
export async function run<P extends unknown[], T>(r: Reader, s: Statement<P, T>, ...params: P): Promise<T[]> {
  const name = NAMES.get(s as Statement<never, unknown>);
  try {
    return (await read(r, s.sql(...params), name)).map(s.decode);
  } catch (err) {
    if (err instanceof DiagnoseTimeout || !name || !(err instanceof Error)) throw err;
    throw new Error(`${name}: ${err.message}`, { cause: err });
  }
}

/** Counts read from a sample, scaled up to the whole (rounded: the rows stay counts). */
export function scaleCounts<R extends object>(rows: R[], scale: number, keys: readonly (keyof R & string)[]): R[] {
  if (scale === 1) return rows;
  return rows.map((r) => {
    const o = { ...r } as Record<string, unknown>;
    for (const k of keys) o[k] = Math.round((r[k] as number) * scale);
    return o as R;
  });
}

/** Runs the shared statements concurrently. */
export async function readShared(reads: Reader, b: Bounds, scanSpans: number): Promise<SharedRows> {
  const S = STATEMENTS;
  // Two cheap reads first, then the rest longest first: the pool serves reads in the order asked,
  // and a long read asked last would run alone at the end of the call.
  const [dirty, windowSpans] = await Promise.all([run(reads, S.dirtyBuckets, b), run(reads, S.windowSpans, b).then(([c]) => c?.n ?? 0)]);
  const seriesDirty = dirty.filter((d) => d * BUCKET_US < bucketStart(b.from));
  const structure = structureRead(b, windowSpans);
  // The edge join's cost grows with the window's spans: past EDGE_SAMPLE_SPANS it runs on the most
  // recent slice of the window that holds about that many (at least a minute).
  const w = b.to - b.from;
  const slice = windowSpans > EDGE_SAMPLE_SPANS ? Math.max(MINUTE_US, Math.floor((w * EDGE_SAMPLE_SPANS) / windowSpans)) : w;
  const sample = windowSample(b, windowSpans, scanSpans);
  const [windowOps, callStructure, logLevels, edges, windowLogs, genAi, windowErrors, series, rawSeries, gauges, profiles, errorTypesFirstSeen, deployments, genAiBefore, anomalies] = await Promise.all([
    run(reads, S.windowOps, sample).then((rows) => scaleCounts(rows, sample.scale, ['n', 'k'])),
    run(reads, S.callStructure, structure.lo, b.from, b.to, FINE_BIN_US, structure.mod, b.newSince),
    run(reads, S.logLevels, structure.lo, b.to, dirty),
    run(reads, S.edges, b, slice),
    run(reads, S.windowLogs, b),
    run(reads, S.genAiWindow, b),
    run(reads, S.windowErrors, b),
    run(reads, S.series, b, seriesDirty),
    Promise.all(bucketRuns(seriesDirty).map(([lo, hi]) => run(reads, S.rawSeries, lo, hi))),
    run(reads, S.resourceGauges, structure.lo, b.to),
    run(reads, S.profiles, b),
    run(reads, S.errorTypesFirstSeen, b, dirty),
    run(reads, S.deployments, b, dirty),
    run(reads, S.genAiBefore, b, dirty),
    run(reads, S.anomalies, b),
  ]);
  return {
    windowOps,
    windowErrors,
    errorTypesFirstSeen,
    series: [...series, ...rawSeries.flat()],
    edges,
    edgeScale: slice < w ? w / slice : 1,
    windowSample: sample,
    deployments,
    windowLogs,
    profiles,
    genAi,
    genAiBefore,
    anomalies,
    callTree: callStructure.flatMap((r) => ('tree' in r ? r.tree : [])),
    traceSample: structure.mod,
    logLevels,
    gauges,
    callSequences: callStructure.flatMap((r) => ('seq' in r ? [r.seq] : [])),
    logLinks: callStructure.flatMap((r) => ('link' in r ? [r.link] : [])),
  };
}

export { read as readSql };
