// Every statement of a diagnosis, as SQL text bounded by TIMESTAMP literals (the store skips row
// groups outside the window and look-back) with the decoder of its rows, the aliases named once,
// here. Statements over "all services" are run once per request and shared by every diagnosed
// service: the causal walk needs the neighbours' numbers anyway, and ten services in one call then
// cost little more than one.
//
// The baseline comes from the persisted 5-minute series (svc_series_5m: per bucket, operation and
// signal the calls, errors and p95, written by the detection pass), not from raw spans: an hour of a
// busy service is millions of spans, its series a few hundred rows. Buckets the pass has not closed
// yet (svc_dirty_buckets) are aggregated from raw telemetry with the very same statements the pass
// uses, so a diagnosis works before any pass has run and agrees with the series after it.
import { ANOMALIES, DIRTY_BUCKETS, LOG_TEMPLATES, LOGS, MERGE_CHAIN_SQL, METRICS_GAUGE, METRICS_HISTOGRAM, METRICS_SUM, PROFILES, SERIES, SPANS } from '../../store/schema.js';
import { seriesSelect, type SignalName } from '../../detect/signals.js';
import { ERROR_TYPES_ROLLUP, GEN_AI_ROLLUP, LOG_LEVELS_ROLLUP, RESOURCES_ROLLUP, type Rollup } from '../../detect/rollups.js';
import { BUCKET_US, MINUTE_US, bucketRuns } from '../../core/time.js';
import { bucketIndexSql, sqlString, sqlTimestamp } from '../../store/sql.js';
import { bucketStart, type Bounds, type StructureRead, type WindowSample } from './sampling.js';
import type { TemplateBinRow, Row, WindowOpRow, ExceedanceRow, WindowErrorRow, ErrorTypeFirstSeenRow, SeriesRows, EdgeRow, CallSequenceRow, CallTreeRow, GaugeRow, LogLevelRow, DeploymentRow, WindowLogRow, TemplateRow, ProfileRow, GenAiRow, GenAiBeforeRow, AnomalyRow, MetricRow, ServiceCountRow, SpanKey, SpanRow, LogKey, LogRow, TemplateParamsRow, SliceAsk } from './rows.js';

import { between, statement, textOrNull, num, numOrNull, asLists, listed, emptyAsNull, count } from './sql.js';
import { CALL_TREE, SLOW_CALL_US, callSequencesOf, callSequenceRow, callSpans, callTreeRows } from './call-tree-sql.js';

export type { Statement } from './sql.js';
export { SLOW_CALL_US } from './call-tree-sql.js';

/** The window's spans as a relation: one range read per slice. */
const windowSpansIn = (ws: WindowSample) => `(${ws.slices.map(([lo, hi]) => `SELECT * FROM ${SPANS.name} WHERE ${between(lo, hi)}`).join(' UNION ALL ')})`;
const serviceCount = (r: Row): ServiceCountRow => ({ service_name: String(r['service_name']), n: num(r['n']) });
const spanKey = (r: Row): SpanKey => ({ service_name: String(r['service_name']), span_id: String(r['span_id']), operation: String(r['operation']), ts: Number(r['ts']) });
const logKey = (r: Row): LogKey => ({ service_name: String(r['service_name']), rid: Number(r['rid']), ts: Number(r['ts']) });

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
 * or above it are ranked. On bench:diagnose's store this is cheaper for ten services than ten
 * ORDER BY … LIMIT statements, and no dearer for one.
 */
function topPerService(table: string, cols: string, where: string, order: string, tie: string, limit: number): string {
  const n = Math.trunc(limit);
  return (
    `WITH t AS (SELECT service_name, list_min(max(${order}, ${n})) AS th FROM ${table} WHERE ${where} GROUP BY ALL) ` +
    `SELECT service_name, ${cols} FROM ${table} JOIN t USING (service_name) WHERE ${where} AND ${order} >= th ` +
    `QUALIFY row_number() OVER (PARTITION BY service_name ORDER BY ${order} DESC, ${tie}) <= ${n} ORDER BY service_name, ${order} DESC, ${tie}`
  );
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
      seriesLists(`(${seriesSelect(sqlTimestamp(lo), sqlTimestamp(hi))})`),
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
    (r: StructureRead, hi: number, binUs: number) => `WITH s AS MATERIALIZED (${callSpans(r, hi, binUs)}), ${CALL_TREE.ctes} ${CALL_TREE.select}`,
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
    (r: StructureRead, hi: number, binUs: number) => `WITH s AS MATERIALIZED (${callSpans(r, hi, binUs)}), ${callSequencesOf(binUs).ctes} ${callSequencesOf(binUs).select}`,
    callSequenceRow,
  ),

  /** The call tree and the call sequences from one scan of their spans (what readShared runs): each row is one of the two. */
  callStructure: statement(
    (r: StructureRead, hi: number, binUs: number) => {
      const seq = callSequencesOf(binUs);
      return (
        `WITH s AS MATERIALIZED (${callSpans(r, hi, binUs)}), ${CALL_TREE.ctes}, ${seq.ctes} ` +
        `SELECT 'tree' AS part, * FROM (${CALL_TREE.select}) UNION ALL BY NAME SELECT 'seq' AS part, * FROM (${seq.select})`
      );
    },
    (r): { tree: CallTreeRow[] } | { seq: CallSequenceRow } => (r['part'] === 'seq' ? { seq: callSequenceRow(r) } : { tree: callTreeRows(r) }),
  ),

  /**
   * Log records per service, event and fine bin over [lo, hi): a template that merged into another
   * counts as that one (one event once), resolved after grouping by the raw id as windowLogs does.
   */
  templateBins: statement(
    (r: StructureRead, hi: number, binUs: number) => {
      const ranges = r.historyTo > r.lo ? `(${between(r.lo, r.historyTo)} OR ${between(r.mid, hi)})` : between(r.mid, hi);
      return (
        `SELECT service_name, template_id, list(bin::DOUBLE ORDER BY bin) AS bins, list(n::DOUBLE ORDER BY bin) AS n FROM (` +
        `SELECT w.service_name, coalesce(m.resolved_template_id, w.template_id) AS template_id, w.bin, sum(w.n) AS n FROM (` +
        `SELECT service_name, template_id, epoch_us(timestamp) // ${binUs} * ${binUs} AS bin, count(*) AS n FROM ${LOGS.name} ` +
        `WHERE ${ranges} AND template_id IS NOT NULL GROUP BY ALL) AS w LEFT JOIN (${MERGE_CHAIN_SQL}) AS m ON m.template_id = w.template_id GROUP BY ALL) GROUP BY ALL`
      );
    },
    (r): TemplateBinRow => ({
      service_name: String(r['service_name']),
      template_id: Number(r['template_id']),
      bins: ((r['bins'] as unknown[] | null) ?? []).map(Number),
      n: ((r['n'] as unknown[] | null) ?? []).map(Number),
    }),
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
      const bucket = `(${bucketIndexSql('timestamp')}) * ${BUCKET_US}`;
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
  // whole: reading a span's attribute and event JSON decodes a compressed vector for it, so a top-N
  // over every error span's wide columns costs several times as much in bench:diagnose.
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
const notIn = (open: readonly number[]) => (open.length ? ` AND ${bucketIndexSql('timestamp')} NOT IN (${open.join(', ')})` : '');

