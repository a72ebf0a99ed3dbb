// The rows a diagnosis reads, as the statements (statements.ts) decode them: one type per statement,
// the fields named as the SQL aliases them.
import type { Bounds } from './sampling.js';
import type { SignalName } from '../../detect/signals.js';

export type Row = Record<string, unknown>;

export type { Bounds, WindowSample } from './sampling.js';

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
/** One request of a caller: its fine bin and its calls in the order issued: callee, issued and answered (µs) (statements.ts callSequences). */
export interface CallSequenceRow {
  caller: string;
  bin: number;
  seq: string[];
  issued: number[];
  answered: number[];
}

/** One group of the call tree in a fine bin (statements.ts callTree). */
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
export interface TemplateBinRow {
  service_name: string;
  /** The event: its template, merges resolved. */
  template_id: number;
  /** Fine bins (µs) with records, and the records in each. */
  bins: number[];
  n: number[];
}

/** A service asked for and the start of the slice of the window its reads cover (the window's start, or later for a busy one). */
export interface SliceAsk {
  service: string;
  from: number;
}

