// The SQL behind every lead of a diagnosis: ready for POST /v1/query as it stands, bounded by
// TIMESTAMP literals (the store skips everything outside the window) and returning the rows the lead
// talks about. One place, so a test can run each of them.
import { LOGS, LOGS_RESOLVED, PROFILES, SPANS, METRICS_GAUGE, METRICS_SUM, METRICS_HISTOGRAM } from '../store/schema.js';
import { HOUR_US } from '../core/time.js';
import { sqlString, sqlTimestamp } from '../store/sql.js';

interface Win {
  from: number;
  to: number;
}

const time = (w: Win) => `timestamp >= ${sqlTimestamp(w.from)} AND timestamp < ${sqlTimestamp(w.to)}`;
const svc = (s: string) => `service_name = ${sqlString(s)}`;
const SPAN_COLS = 'timestamp, trace_id, span_id, parent_span_id, service_name, operation, span_name, status_code, status_message, error_type, duration_us';
const LOG_COLS = 'timestamp, service_name, severity_text, body, template_id, trace_id, span_id';

export const LEADS = {
  /** Error spans of one operation. */
  errorSpans: (w: Win, service: string, operation: string) =>
    `SELECT ${SPAN_COLS} FROM ${SPANS.name} WHERE ${svc(service)} AND operation = ${sqlString(operation)} AND is_error AND ${time(w)} ORDER BY timestamp DESC LIMIT 100`,
  /** The slowest spans of one operation. */
  slowSpans: (w: Win, service: string, operation: string) =>
    `SELECT ${SPAN_COLS} FROM ${SPANS.name} WHERE ${svc(service)} AND operation = ${sqlString(operation)} AND ${time(w)} ORDER BY duration_us DESC LIMIT 100`,
  /** Every span of one operation (an operation summary's lead). */
  operation: (w: Win, service: string, operation: string) =>
    `SELECT ${SPAN_COLS} FROM ${SPANS.name} WHERE ${svc(service)} AND operation = ${sqlString(operation)} AND ${time(w)} ORDER BY is_error DESC, duration_us DESC LIMIT 200`,
  errorType: (w: Win, service: string, errorType: string) =>
    `SELECT ${SPAN_COLS} FROM ${SPANS.name} WHERE ${svc(service)} AND is_error AND coalesce(error_type, 'unclassified') = ${sqlString(errorType)} AND ${time(w)} ORDER BY timestamp DESC LIMIT 100`,
  /** One whole trace (a span sample's lead). */
  trace: (w: Win, traceId: string) =>
    `SELECT ${SPAN_COLS} FROM ${SPANS.name} WHERE trace_id = ${sqlString(traceId)} AND timestamp >= ${sqlTimestamp(w.from - HOUR_US)} AND timestamp < ${sqlTimestamp(w.to + HOUR_US)} ORDER BY timestamp`,
  /** The slowest spans of a service by the time they spend on their own (beyond their children). */
  ownTime: (w: Win, service: string) =>
    `SELECT p.timestamp, p.trace_id, p.span_id, p.operation, p.duration_us, p.duration_us - coalesce(c.children_us, 0) AS own_us FROM ${SPANS.name} AS p ` +
    `LEFT JOIN (SELECT trace_id, parent_span_id, sum(duration_us) AS children_us FROM ${SPANS.name} WHERE timestamp >= ${sqlTimestamp(w.from)} AND timestamp < ${sqlTimestamp(w.to + HOUR_US)} GROUP BY trace_id, parent_span_id) AS c ` +
    `ON c.trace_id = p.trace_id AND c.parent_span_id = p.span_id WHERE p.${svc(service)} AND p.timestamp >= ${sqlTimestamp(w.from)} AND p.timestamp < ${sqlTimestamp(w.to)} ORDER BY own_us DESC LIMIT 100`,
  /** Calls from one service to another with the time the caller waited beyond the callee's own span (wire and queue). */
  callWaits: (w: Win, caller: string, callee: string) =>
    `SELECT p.timestamp, p.trace_id, p.span_id, p.k8s_pod_name AS caller_pod, c.k8s_pod_name AS callee_pod, p.duration_us AS call_us, c.duration_us AS callee_us, p.duration_us - c.duration_us AS wait_us ` +
    `FROM ${SPANS.name} AS p JOIN ${SPANS.name} AS c ON c.trace_id = p.trace_id AND c.parent_span_id = p.span_id ` +
    `WHERE p.${svc(caller)} AND c.service_name = ${sqlString(callee)} AND p.timestamp >= ${sqlTimestamp(w.from)} AND p.timestamp < ${sqlTimestamp(w.to)} ` +
    `AND c.timestamp >= ${sqlTimestamp(w.from)} AND c.timestamp < ${sqlTimestamp(w.to + HOUR_US)} ORDER BY wait_us DESC LIMIT 100`,
  /** A service's CPU, memory and restart gauges per pod and minute. */
  resourceGauges: (w: Win, service: string) =>
    `SELECT date_trunc('minute', timestamp) AS minute, k8s_pod_name, service_instance_id, metric_name, avg(value) AS value FROM ${METRICS_GAUGE.name} ` +
    `WHERE ${svc(service)} AND ${time({ from: w.from - HOUR_US, to: w.to })} AND (metric_name ILIKE '%cpu%' OR metric_name ILIKE '%mem%' OR metric_name ILIKE '%restart%') ` +
    `GROUP BY ALL ORDER BY metric_name, k8s_pod_name, minute LIMIT 2000`,
  allSpans: (w: Win, service: string) => `SELECT ${SPAN_COLS} FROM ${SPANS.name} WHERE ${svc(service)} AND ${time(w)} ORDER BY timestamp DESC LIMIT 1000`,
  allLogs: (w: Win, service: string) => `SELECT ${LOG_COLS} FROM ${LOGS.name} WHERE ${svc(service)} AND ${time(w)} ORDER BY timestamp DESC LIMIT 1000`,
  errorLogs: (w: Win, service: string) => `SELECT ${LOG_COLS} FROM ${LOGS.name} WHERE ${svc(service)} AND is_error AND ${time(w)} ORDER BY timestamp DESC LIMIT 200`,
  /** The records of one log event: its template and those that merged into it. */
  templateLogs: (w: Win, service: string, templateId: number) =>
    `SELECT ${LOG_COLS}, template_params FROM ${LOGS_RESOLVED.name} WHERE ${svc(service)} AND resolved_template_id = ${Math.trunc(templateId)} AND ${time(w)} ORDER BY timestamp DESC LIMIT 200`,
  profileFunction: (w: Win, service: string, fn: string) =>
    `SELECT timestamp, profile_type, unit, function, stack, value, sample_count, trace_id, span_id FROM ${PROFILES.name} WHERE ${svc(service)} AND function = ${sqlString(fn)} AND ${time(w)} ORDER BY value DESC LIMIT 200`,
  genAiCalls: (w: Win, service: string, model: string) =>
    `SELECT timestamp, trace_id, span_id, operation, gen_ai_system, gen_ai_model, gen_ai_operation, gen_ai_finish_reasons, gen_ai_input_tokens, gen_ai_output_tokens, status_code, error_type, duration_us ` +
    `FROM ${SPANS.name} WHERE ${svc(service)} AND gen_ai_model = ${sqlString(model)} AND ${time(w)} ORDER BY timestamp DESC LIMIT 200`,
  /** The service's error spans around a shift (fallback when an anomaly row carries no SQL). */
  shift: (w: Win, service: string) => `SELECT ${SPAN_COLS} FROM ${SPANS.name} WHERE ${svc(service)} AND is_error AND ${time(w)} ORDER BY timestamp DESC LIMIT 200`,
  /** Rows per signal table for the service in the window (a coverage gap's lead). */
  coverage: (w: Win, service: string) =>
    [SPANS.name, LOGS.name, METRICS_GAUGE.name, METRICS_SUM.name, METRICS_HISTOGRAM.name, PROFILES.name]
      .map((t) => `SELECT '${t}' AS table_name, count(*) AS rows FROM ${t} WHERE ${svc(service)} AND ${time(w)}`)
      .join(' UNION ALL '),
};
