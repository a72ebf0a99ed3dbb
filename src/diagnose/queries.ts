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
import type { DuckDBConnection } from '@duckdb/node-api';
import { BUCKET_US } from '../store/batch.js';
import { sqlString, sqlTimestamp } from '../store/db.js';
import { readRows, type ReadPool } from '../store/readers.js';
import { ANOMALIES, DIRTY_BUCKETS, LOG_TEMPLATES, LOGS, LOGS_RESOLVED, METRICS_GAUGE, METRICS_HISTOGRAM, METRICS_SUM, PROFILES, SERIES, SPANS } from '../store/schema.js';
import { SIGNALS } from '../detect/signals.js';
import { ERROR_TYPES_ROLLUP, GEN_AI_ROLLUP, RESOURCES_ROLLUP, type Rollup } from '../detect/rollups.js';

export type Row = Record<string, unknown>;

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

/** Spans of the edge join: at most this many a side, by a deterministic trace sample when the window holds more. */
export const EDGE_SAMPLE_SPANS = 200_000;

export const SQL = {
  /** Per service and operation in the window: volume, errors, quantiles (ids and exemplars come from narrower reads). */
  windowOps: (b: Bounds) =>
    `SELECT service_name, operation, any_value(span_name) AS span_name, min(span_kind) AS span_kind, count(*) AS n, count_if(is_error) AS k, ` +
    `quantile_cont(duration_us, [0.5, 0.95, 0.99]) AS q, avg(duration_us) AS mean_us, max(peer_service) AS peer ` +
    `FROM ${SPANS.name} WHERE ${between(b.from, b.to)} GROUP BY ALL`,

  /** Window spans above a per-operation threshold (the baseline p95): the quantile-exceedance test's counts. */
  exceedances: (b: Bounds, thresholds: readonly { service: string; operation: string; threshold: number }[]) =>
    `SELECT s.service_name, s.operation, count(*) AS above FROM ${SPANS.name} AS s JOIN (VALUES ${thresholds
      .map((t) => `(${sqlString(t.service)}, ${sqlString(t.operation)}, ${Math.floor(t.threshold)})`)
      .join(', ')}) AS t(svc, op, thr) ON s.service_name = t.svc AND s.operation = t.op ` +
    `WHERE ${between(b.from, b.to, 's.timestamp')} AND s.duration_us > t.thr GROUP BY ALL`,

  /** Error classes in the window: exception or error type, HTTP status, status message. */
  windowErrors: (b: Bounds) =>
    `SELECT service_name, operation, coalesce(error_type, 'unclassified') AS error_type, http_status_code, ` +
    `left(coalesce(status_message, ''), 120) AS message, count(*) AS n, min(epoch_us(timestamp)) AS first_us, min(trace_id) AS trace_id ` +
    `FROM ${SPANS.name} WHERE is_error AND ${between(b.from, b.to)} GROUP BY ALL`,

  /** When each error type first appeared in the look-back and window (to tell a new one, and since when). */
  errorTypesFirstSeen: (b: Bounds, dirty: readonly number[]) =>
    `SELECT service_name, error_type, min(first_us) AS first_us FROM (${fromRollup(ERROR_TYPES_ROLLUP, b.lookFrom, b.to, dirty)}) GROUP BY ALL`,

  /** The persisted series before the window. */
  series: (b: Bounds) =>
    `SELECT service_name, operation, signal, epoch_us(timestamp) AS t, value, n, k FROM ${SERIES.name} WHERE ${between(b.lookFrom, bucketStart(b.from))}`,

  /** Buckets of the look-back and window the detection pass has not closed (their series and rollups are read raw). */
  dirtyBuckets: (b: Bounds) =>
    `SELECT bucket FROM ${DIRTY_BUCKETS.name} WHERE bucket >= ${Math.floor(b.lookFrom / BUCKET_US)} AND bucket <= ${Math.floor(b.to / BUCKET_US)} ORDER BY bucket`,

  /** The series' own aggregates over raw telemetry for buckets [lo, hi) the pass has not closed. */
  rawSeries: (lo: number, hi: number) =>
    `SELECT service_name, operation, signal, epoch_us(timestamp) AS t, value, n, k FROM (${SIGNALS.map((s) => s.aggregate(sqlTimestamp(lo), sqlTimestamp(hi))).join(' UNION ALL ')})`,

  /**
   * Cross-service calls: a server or consumer span whose parent span belongs to another service, in
   * the last `sliceUs` of the window (its parents may start up to a minute earlier). A contiguous
   * slice, unlike a sample of traces, lets the store skip every other row group.
   */
  edges: (b: Bounds, sliceUs: number) => {
    const lo = Math.max(b.from, b.to - sliceUs);
    return (
      `SELECT p.service_name AS caller, p.operation AS caller_operation, c.service_name AS callee, count(*) AS n, count_if(c.is_error) AS k ` +
      `FROM (SELECT trace_id, parent_span_id, service_name, is_error FROM ${SPANS.name} WHERE span_kind IN (2, 5) AND parent_span_id IS NOT NULL AND ${between(lo, b.to)}) AS c ` +
      `JOIN (SELECT trace_id, span_id, service_name, operation FROM ${SPANS.name} WHERE ${between(lo - 60_000_000, b.to)}) AS p ` +
      `ON c.trace_id = p.trace_id AND c.parent_span_id = p.span_id WHERE p.service_name <> c.service_name GROUP BY ALL`
    );
  },

  /** Versions, images, instances and pods per service, first and last seen, over the look-back and window. */
  deployments: (b: Bounds, dirty: readonly number[]) =>
    `SELECT service_name, service_version, container_image, service_instance_id, k8s_pod_name, any_value(k8s_deployment) AS k8s_deployment, ` +
    `any_value(k8s_namespace) AS k8s_namespace, any_value(service_namespace) AS service_namespace, min(first_us) AS first_us, max(last_us) AS last_us, sum(n) AS n ` +
    `FROM (${fromRollup(RESOURCES_ROLLUP, b.lookFrom, b.to, dirty)}) GROUP BY ALL`,

  /** Logs per service and template in the window; a template that merged into another counts as that one (one event once). */
  windowLogs: (b: Bounds) =>
    `SELECT service_name, resolved_template_id AS template_id, count(*) AS n, count_if(is_error) AS k, min(epoch_us(timestamp)) AS first_us, max(epoch_us(timestamp)) AS last_us, ` +
    `any_value(severity_text) AS severity_text FROM ${LOGS_RESOLVED.name} WHERE ${between(b.from, b.to)} GROUP BY ALL`,

  templates: (ids: readonly number[]) =>
    `SELECT template_id, service_name, pattern, example_body, severity_text, epoch_us(first_seen) AS first_us, epoch_us(last_seen) AS last_us, sample_values ` +
    `FROM ${LOG_TEMPLATES.name} WHERE template_id IN (${ids.map((i) => Math.trunc(i)).join(', ')})`,

  /** Profile cost per service, type and leaf function, in the window and before it. */
  profiles: (b: Bounds) =>
    `SELECT service_name, profile_type, unit, function, epoch_us(timestamp) >= ${b.from} AS in_window, sum(value)::DOUBLE AS value, sum(sample_count) AS samples, ` +
    `min(epoch_us(timestamp)) AS first_us, max(epoch_us(timestamp)) AS last_us FROM ${PROFILES.name} WHERE ${between(b.lookFrom, b.to)} GROUP BY ALL`,

  /** Model calls in the window (GenAI semantic conventions, promoted at ingest) per service and model; finish reasons as a histogram. */
  genAiWindow: (b: Bounds) =>
    `SELECT service_name, gen_ai_model AS model, any_value(gen_ai_system) AS system, list(DISTINCT gen_ai_operation) FILTER (WHERE gen_ai_operation IS NOT NULL) AS operations, ` +
    `true AS in_window, histogram(coalesce(gen_ai_finish_reasons, '[]')) AS finish, count(*) AS n, count_if(is_error) AS k, ` +
    `quantile_cont(duration_us, 0.95) AS p95, sum(gen_ai_input_tokens) AS input_tokens, sum(gen_ai_output_tokens) AS output_tokens ` +
    `FROM ${SPANS.name} WHERE gen_ai_model IS NOT NULL AND ${between(b.from, b.to)} GROUP BY ALL`,

  /** Model calls before the window, per finish reasons (the rollup's shape). */
  genAiBefore: (b: Bounds, dirty: readonly number[]) =>
    `SELECT service_name, model, finish, sum(n) AS n, sum(k) AS k FROM (${fromRollup(GEN_AI_ROLLUP, b.lookFrom, bucketStart(b.from), dirty)}) GROUP BY ALL`,

  anomalies: (b: Bounds) =>
    `SELECT service_name, operation, signal, before, after, ts_shift_us, drill_down_sql FROM ${ANOMALIES.name} WHERE ${between(b.lookFrom, b.to)}`,

  /** Metric summaries of one service: per metric and 5-minute bucket. */
  metrics: (b: Bounds, service: string) => {
    const bucket = `(epoch_us(timestamp) // ${BUCKET_US}) * ${BUCKET_US}`;
    const where = `service_name = ${sqlString(service)} AND ${between(b.from, b.to)}`;
    return (
      `SELECT metric_name, ${bucket} AS bucket_us, count(*) AS n, avg(value) AS avg, quantile_cont(value, 0.95) AS p95 FROM ${METRICS_GAUGE.name} WHERE ${where} GROUP BY ALL UNION ALL ` +
      `SELECT metric_name, ${bucket}, count(*), avg(value), quantile_cont(value, 0.95) FROM ${METRICS_SUM.name} WHERE ${where} GROUP BY ALL UNION ALL ` +
      `SELECT metric_name, ${bucket}, sum(count)::BIGINT, sum(sum) / nullif(sum(count), 0), NULL::DOUBLE FROM ${METRICS_HISTOGRAM.name} WHERE ${where} GROUP BY ALL`
    );
  },

  /** Distinct metric series of one service in the window (coverage). */
  metricSeries: (b: Bounds, service: string) => {
    const where = `service_name = ${sqlString(service)} AND ${between(b.from, b.to)}`;
    return `SELECT count(*) AS n FROM (${[METRICS_GAUGE, METRICS_SUM, METRICS_HISTOGRAM].map((t) => `SELECT DISTINCT metric_name, attributes FROM ${t.name} WHERE ${where}`).join(' UNION ')})`;
  },

  // Samples are chosen on narrow columns (ids, times, durations), then only the chosen rows are read
  // whole: reading a span's attribute and event JSON costs ~2 ms a row (a compressed vector decoded
  // for it), so a top-N over every error span's wide columns cost 46 ms in bench:diagnose against 13.

  /** The newest error spans of one service. */
  errorSpanKeys: (b: Bounds, service: string, limit: number) =>
    `SELECT span_id, operation, epoch_us(timestamp) AS ts FROM ${SPANS.name} WHERE service_name = ${sqlString(service)} AND is_error AND ${between(b.from, b.to)} ORDER BY timestamp DESC, span_id LIMIT ${limit}`,
  /** The slowest successful spans of one service. */
  slowSpanKeys: (b: Bounds, service: string, limit: number) =>
    `SELECT span_id, operation, epoch_us(timestamp) AS ts FROM ${SPANS.name} WHERE service_name = ${sqlString(service)} AND NOT is_error AND ${between(b.from, b.to)} ORDER BY duration_us DESC, span_id LIMIT ${limit}`,
  /** One span of each operation, from the most recent `sliceUs` of the window. */
  exemplarSpanKeys: (b: Bounds, service: string, sliceUs: number) =>
    `SELECT operation, min(span_id) AS span_id, arg_min(epoch_us(timestamp), span_id) AS ts FROM ${SPANS.name} WHERE service_name = ${sqlString(service)} AND ${between(Math.max(b.from, b.to - sliceUs), b.to)} GROUP BY ALL`,
  /** Whole sample spans by their exact start (the store reads one row group for each). */
  spansByKey: (service: string, keys: readonly { span_id: string; ts: number }[]) =>
    keys.map((k) => `(SELECT ${SPAN_SAMPLE_COLUMNS} FROM ${SPANS.name} WHERE timestamp = ${sqlTimestamp(k.ts)} AND span_id = ${sqlString(k.span_id)} AND service_name = ${sqlString(service)})`).join(' UNION ALL '),

  /** The newest error logs of one service, and the newest logs of the window's last slice (rowids: logs have no id of their own). */
  errorLogKeys: (b: Bounds, service: string, limit: number) =>
    `SELECT rowid AS rid, epoch_us(timestamp) AS ts FROM ${LOGS.name} WHERE service_name = ${sqlString(service)} AND is_error AND ${between(b.from, b.to)} ORDER BY timestamp DESC, rowid LIMIT ${limit}`,
  newestLogKeys: (b: Bounds, service: string, limit: number, sliceUs: number) =>
    `SELECT rowid AS rid, epoch_us(timestamp) AS ts FROM ${LOGS.name} WHERE service_name = ${sqlString(service)} AND ${between(Math.max(b.from, b.to - sliceUs), b.to)} ORDER BY timestamp DESC, rowid LIMIT ${limit}`,
  logsByKey: (keys: readonly { rid: number; ts: number }[]) =>
    keys
      .map((k) => `(SELECT epoch_us(timestamp) AS ts, body, severity_text, trace_id, span_id, log_attributes, event_name, is_error FROM ${LOGS.name} WHERE timestamp = ${sqlTimestamp(k.ts)} AND rowid = ${Math.trunc(k.rid)})`)
      .join(' UNION ALL '),

  /** Parameters of the newest records of each template in the window's last slice (the numeric slots behind log_counters). */
  templateParams: (b: Bounds, service: string, ids: readonly number[], perTemplate: number, sliceUs: number) =>
    `SELECT resolved_template_id AS template_id, epoch_us(timestamp) AS ts, template_params FROM ${LOGS_RESOLVED.name} WHERE service_name = ${sqlString(service)} ` +
    `AND resolved_template_id IN (${ids.map((i) => Math.trunc(i)).join(', ')}) ` +
    `AND template_params IS NOT NULL AND ${between(Math.max(b.from, b.to - sliceUs), b.to)} QUALIFY row_number() OVER (PARTITION BY resolved_template_id ORDER BY timestamp DESC) <= ${perTemplate}`,

  /** Distinct traces with an error span of one service. */
  errorTraces: (b: Bounds, service: string) =>
    `SELECT count(DISTINCT trace_id) AS n FROM ${SPANS.name} WHERE service_name = ${sqlString(service)} AND is_error AND ${between(b.from, b.to)}`,
};

export const SPAN_SAMPLE_COLUMNS =
  'trace_id, span_id, parent_span_id, span_name, operation, span_kind, status_code, status_message, is_error, epoch_us(timestamp) AS start_us, duration_us, span_attributes, events_json';

/**
 * A rollup's rows for [lo, hi): the stored rows of closed buckets, and for buckets not closed yet (or
 * reopened by late data) the same aggregate over raw spans.
 */
export function fromRollup(r: Rollup, lo: number, hi: number, dirty: readonly number[]): string {
  const open = dirty.filter((d) => (d + 1) * BUCKET_US > lo && d * BUCKET_US < hi);
  const stored = `SELECT * FROM ${r.table.name} WHERE ${between(bucketStart(lo), hi)}${open.length ? ` AND epoch_us(timestamp) // ${BUCKET_US} NOT IN (${open.join(', ')})` : ''}`;
  const raw = bucketRuns(open).map(([a, z]) => r.aggregate(sqlTimestamp(Math.max(a, lo)), sqlTimestamp(Math.min(z, hi))));
  return [stored, ...raw].join(' UNION ALL ');
}

export function bucketStart(us: number): number {
  return Math.floor(us / BUCKET_US) * BUCKET_US;
}

/** Contiguous runs of sorted bucket indexes, as [start µs, end µs). */
export function bucketRuns(buckets: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const b of buckets) {
    const last = out[out.length - 1];
    if (last && b * BUCKET_US === last[1]) last[1] = (b + 1) * BUCKET_US;
    else out.push([b * BUCKET_US, (b + 1) * BUCKET_US]);
  }
  return out;
}

/** What every diagnosis of the request shares. */
export interface SharedRows {
  windowOps: Row[];
  windowErrors: Row[];
  errorTypesFirstSeen: Row[];
  series: Row[];
  edges: Row[];
  /** Edge counts from a slice of the window are scaled up by this (1: the whole window). */
  edgeScale: number;
  deployments: Row[];
  windowLogs: Row[];
  profiles: Row[];
  genAi: Row[];
  genAiBefore: Row[];
  anomalies: Row[];
}

/** The read pool of one diagnosis and the time by which its queries must be done (ms since the epoch). */
export interface Reader {
  reads: ReadPool;
  deadline: number;
}

export class DiagnoseTimeout extends Error {}

/** One statement on a pooled connection, interrupted at the deadline (DuckDB stops within milliseconds). */
async function read(r: Reader, sql: string): Promise<Row[]> {
  return r.reads.use(async (c: DuckDBConnection) => {
    const left = r.deadline - Date.now();
    if (left <= 0) throw new DiagnoseTimeout('the time limit was reached');
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      c.interrupt();
    }, left);
    try {
      return await readRows(c, sql);
    } catch (err) {
      throw timedOut ? new DiagnoseTimeout('the time limit was reached') : err;
    } finally {
      clearTimeout(timer);
    }
  });
}

/** Runs the shared statements concurrently. */
export async function readShared(reads: Reader, b: Bounds): Promise<SharedRows> {
  const dirty = (await read(reads, SQL.dirtyBuckets(b))).map((r) => Number(r['bucket']));
  const seriesDirty = dirty.filter((d) => d * BUCKET_US < bucketStart(b.from));
  const edgeRows = (async () => {
    // The join's cost grows with the window's spans: past EDGE_SAMPLE_SPANS it runs on the most
    // recent slice of the window that holds about that many (at least a minute).
    const [count] = await read(reads, `SELECT count(*) AS n FROM ${SPANS.name} WHERE ${between(b.from, b.to)}`);
    const n = Number(count?.['n'] ?? 0);
    const w = b.to - b.from;
    const slice = n > EDGE_SAMPLE_SPANS ? Math.max(60_000_000, Math.floor((w * EDGE_SAMPLE_SPANS) / n)) : w;
    return { rows: await read(reads, SQL.edges(b, slice)), scale: slice < w ? w / slice : 1 };
  })();
  const [windowOps, windowErrors, errorTypesFirstSeen, series, rawSeries, edges, deployments, windowLogs, profiles, genAi, genAiBefore, anomalies] = await Promise.all([
    read(reads, SQL.windowOps(b)),
    read(reads, SQL.windowErrors(b)),
    read(reads, SQL.errorTypesFirstSeen(b, dirty)),
    read(reads, SQL.series(b)),
    Promise.all(bucketRuns(seriesDirty).map(([lo, hi]) => read(reads, SQL.rawSeries(lo, hi)))),
    edgeRows,
    read(reads, SQL.deployments(b, dirty)),
    read(reads, SQL.windowLogs(b)),
    read(reads, SQL.profiles(b)),
    read(reads, SQL.genAiWindow(b)),
    read(reads, SQL.genAiBefore(b, dirty)),
    read(reads, SQL.anomalies(b)),
  ]);
  return {
    windowOps,
    windowErrors,
    errorTypesFirstSeen,
    series: [...series, ...rawSeries.flat()],
    edges: edges.rows,
    edgeScale: edges.scale,
    deployments,
    windowLogs,
    profiles,
    genAi,
    genAiBefore,
    anomalies,
  };
}

export { read as readSql };
