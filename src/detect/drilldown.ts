// The SQL behind each anomaly: the raw telemetry of the shift, bounded by timestamp literals (so the
// store skips every file outside the window) and ready to send to POST /v1/query as it stands.
import { LOGS, PROFILES, SPANS } from '../store/schema.js';
import type { SignalName } from './signals.js';
import { BUCKET_US } from '../core/time.js';
import { sqlString, sqlTimestamp } from '../store/sql.js';

/** From one bucket before the shift to three buckets into the new regime. */
export function shiftWindow(tsShiftUs: number): [string, string] {
  return [sqlTimestamp(tsShiftUs - BUCKET_US), sqlTimestamp(tsShiftUs + 3 * BUCKET_US)];
}

export function drillDownSql(signal: SignalName, service: string, operation: string, tsShiftUs: number): string {
  const [lo, hi] = shiftWindow(tsShiftUs);
  const svc = `service_name = ${sqlString(service)}`;
  const time = `timestamp >= ${lo} AND timestamp < ${hi}`;
  switch (signal) {
    case 'error_rate':
      return (
        `SELECT timestamp, trace_id, span_id, span_name, operation, status_code, status_message, error_type, duration_us ` +
        `FROM ${SPANS.name} WHERE ${svc} AND operation = ${sqlString(operation)} AND is_error AND ${time} ORDER BY timestamp LIMIT 200`
      );
    case 'latency_p95':
      return (
        `SELECT timestamp, trace_id, span_id, span_name, operation, status_code, duration_us ` +
        `FROM ${SPANS.name} WHERE ${svc} AND operation = ${sqlString(operation)} AND ${time} ORDER BY duration_us DESC LIMIT 200`
      );
    case 'log_volume':
      return `SELECT timestamp, severity_text, body, template_id, trace_id, span_id FROM ${LOGS.name} WHERE ${svc} AND ${time} ORDER BY timestamp LIMIT 200`;
    case 'error_log_rate':
      return `SELECT timestamp, severity_text, body, template_id, trace_id, span_id FROM ${LOGS.name} WHERE ${svc} AND is_error AND ${time} ORDER BY timestamp LIMIT 200`;
    case 'profile_cost':
      return (
        `SELECT timestamp, profile_type, unit, function, stack, value, sample_count, span_id ` +
        `FROM ${PROFILES.name} WHERE ${svc} AND unit = 'nanoseconds' AND ${time} ORDER BY value DESC LIMIT 200`
      );
  }
}
