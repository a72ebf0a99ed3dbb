// The one definition of every table the service stores. DDL, column order for bulk loads and the
// query guard's table list all derive from here. Columns follow the OpenTelemetry ClickHouse
// exporter's schema in snake_case, plus promoted columns the analyses need. Attributes are JSON text.
// Every table has `timestamp TIMESTAMP` (UTC, no time zone, microsecond precision) and `service_name`.

export type ColumnType =
  | 'TIMESTAMP'
  | 'VARCHAR'
  | 'BIGINT'
  | 'UBIGINT'
  | 'INTEGER'
  | 'DOUBLE'
  | 'BOOLEAN'
  | 'VARCHAR[]'
  | 'DOUBLE[]'
  | 'UBIGINT[]';

export interface Column {
  readonly name: string;
  readonly type: ColumnType;
  /** NOT NULL in the DDL. */
  readonly required?: boolean;
  /** Forces DuckDB's storage compression for the column (otherwise it tries every method at each checkpoint). */
  readonly compression?: 'uncompressed';
}

export interface Table {
  readonly name: string;
  readonly columns: readonly Column[];
  /** PRIMARY KEY columns, for the service's own bookkeeping tables (INSERT OR REPLACE / IGNORE). */
  readonly primaryKey?: readonly string[];
  /** Retention deletes rows older than the cut-off on this column; null = never aged out by retention. */
  readonly retentionColumn: string | null;
}

const c = (name: string, type: ColumnType, required = false): Column => ({ name, type, required });

/**
 * Random hex ids are stored uncompressed: dictionaries fail on them, and a trace_id scan is several
 * times faster for somewhat more disk. Tables created before keep DuckDB's choice (compression cannot be altered).
 */
const spanId = (name: string, required = false): Column => ({ ...c(name, 'VARCHAR', required), compression: 'uncompressed' });

/** Resource-derived columns promoted on every signal table (k8s names, version, instance). */
const RESOURCE_PROMOTED: readonly Column[] = [
  c('service_namespace', 'VARCHAR'),
  c('service_version', 'VARCHAR'),
  c('service_instance_id', 'VARCHAR'),
  c('deployment_environment', 'VARCHAR'),
  c('k8s_namespace', 'VARCHAR'),
  c('k8s_deployment', 'VARCHAR'),
  c('k8s_pod_name', 'VARCHAR'),
  c('container_name', 'VARCHAR'),
  c('container_image', 'VARCHAR'),
  c('host_name', 'VARCHAR'),
];

export const SPANS: Table = {
  name: 'svc_spans',
  retentionColumn: 'timestamp',
  columns: [
    c('timestamp', 'TIMESTAMP', true),
    c('service_name', 'VARCHAR', true),
    spanId('trace_id', true),
    spanId('span_id', true),
    spanId('parent_span_id'),
    c('trace_state', 'VARCHAR'),
    c('flags', 'BIGINT'),
    c('span_name', 'VARCHAR', true),
    c('span_kind', 'INTEGER'),
    c('status_code', 'INTEGER', true),
    c('status_message', 'VARCHAR'),
    c('duration_us', 'BIGINT', true),
    c('end_timestamp', 'TIMESTAMP'),
    c('scope_name', 'VARCHAR'),
    c('scope_version', 'VARCHAR'),
    c('resource_attributes', 'VARCHAR'),
    c('span_attributes', 'VARCHAR'),
    c('events_json', 'VARCHAR'),
    c('links_json', 'VARCHAR'),
    // Promoted for analysis.
    c('operation', 'VARCHAR', true),
    c('is_error', 'BOOLEAN', true),
    c('error_type', 'VARCHAR'),
    c('http_method', 'VARCHAR'),
    c('http_route', 'VARCHAR'),
    c('http_status_code', 'INTEGER'),
    c('rpc_service', 'VARCHAR'),
    c('rpc_method', 'VARCHAR'),
    c('peer_service', 'VARCHAR'),
    c('db_system', 'VARCHAR'),
    c('gen_ai_system', 'VARCHAR'),
    c('gen_ai_operation', 'VARCHAR'),
    c('gen_ai_model', 'VARCHAR'),
    c('gen_ai_input_tokens', 'BIGINT'),
    c('gen_ai_output_tokens', 'BIGINT'),
    c('gen_ai_finish_reasons', 'VARCHAR'),
    ...RESOURCE_PROMOTED,
  ],
};

export const LOGS: Table = {
  name: 'svc_logs',
  retentionColumn: 'timestamp',
  columns: [
    c('timestamp', 'TIMESTAMP', true),
    c('observed_timestamp', 'TIMESTAMP'),
    c('service_name', 'VARCHAR', true),
    c('severity_number', 'INTEGER'),
    c('severity_text', 'VARCHAR'),
    c('body', 'VARCHAR'),
    c('trace_id', 'VARCHAR'),
    c('span_id', 'VARCHAR'),
    c('flags', 'BIGINT'),
    c('event_name', 'VARCHAR'),
    c('scope_name', 'VARCHAR'),
    c('scope_version', 'VARCHAR'),
    c('resource_attributes', 'VARCHAR'),
    c('log_attributes', 'VARCHAR'),
    // Promoted for analysis.
    c('is_error', 'BOOLEAN', true),
    c('template_id', 'BIGINT'),
    c('template_params', 'VARCHAR'),
    ...RESOURCE_PROMOTED,
  ],
};

export const LOG_TEMPLATES: Table = {
  name: 'svc_log_templates',
  retentionColumn: null,
  primaryKey: ['template_id'], // upserted by ingest as counts and last_seen move
  columns: [
    c('timestamp', 'TIMESTAMP', true), // when the template was first seen
    c('service_name', 'VARCHAR', true),
    c('template_id', 'BIGINT', true),
    c('pattern', 'VARCHAR', true),
    c('example_body', 'VARCHAR'),
    c('severity_text', 'VARCHAR'),
    c('first_seen', 'TIMESTAMP', true),
    c('last_seen', 'TIMESTAMP', true),
    c('count', 'BIGINT', true),
    c('error_count', 'BIGINT', true),
    c('sample_values', 'VARCHAR'),
    c('evicted', 'BOOLEAN'),
    c('merged_into', 'BIGINT'), // set when the template merged into another that generalised to cover it
    c('split_from', 'BIGINT'), // set when the template was kept apart from another that differs from it in one word
  ],
};

const METRIC_COMMON: readonly Column[] = [
  c('timestamp', 'TIMESTAMP', true),
  c('start_timestamp', 'TIMESTAMP'),
  c('service_name', 'VARCHAR', true),
  c('metric_name', 'VARCHAR', true),
  c('metric_description', 'VARCHAR'),
  c('metric_unit', 'VARCHAR'),
  c('attributes', 'VARCHAR'),
  c('resource_attributes', 'VARCHAR'),
  c('scope_name', 'VARCHAR'),
  c('scope_version', 'VARCHAR'),
  c('flags', 'BIGINT'),
  c('exemplars_json', 'VARCHAR'),
  ...RESOURCE_PROMOTED,
];

export const METRICS_GAUGE: Table = {
  name: 'svc_metrics_gauge',
  retentionColumn: 'timestamp',
  columns: [...METRIC_COMMON, c('value', 'DOUBLE')],
};

export const METRICS_SUM: Table = {
  name: 'svc_metrics_sum',
  retentionColumn: 'timestamp',
  columns: [...METRIC_COMMON, c('value', 'DOUBLE'), c('aggregation_temporality', 'INTEGER'), c('is_monotonic', 'BOOLEAN')],
};

/** Histograms; OTLP summaries land here too (metric_type 'summary', with quantiles and no buckets). */
export const METRICS_HISTOGRAM: Table = {
  name: 'svc_metrics_histogram',
  retentionColumn: 'timestamp',
  columns: [
    ...METRIC_COMMON,
    c('metric_type', 'VARCHAR', true),
    c('count', 'UBIGINT'),
    c('sum', 'DOUBLE'),
    c('min', 'DOUBLE'),
    c('max', 'DOUBLE'),
    c('bucket_counts', 'UBIGINT[]'),
    c('explicit_bounds', 'DOUBLE[]'),
    c('quantiles', 'DOUBLE[]'),
    c('quantile_values', 'DOUBLE[]'),
    c('aggregation_temporality', 'INTEGER'),
  ],
};

export const METRICS_EXP_HISTOGRAM: Table = {
  name: 'svc_metrics_exp_histogram',
  retentionColumn: 'timestamp',
  columns: [
    ...METRIC_COMMON,
    c('count', 'UBIGINT'),
    c('sum', 'DOUBLE'),
    c('min', 'DOUBLE'),
    c('max', 'DOUBLE'),
    c('scale', 'INTEGER'),
    c('zero_count', 'UBIGINT'),
    c('zero_threshold', 'DOUBLE'),
    c('positive_offset', 'INTEGER'),
    c('positive_bucket_counts', 'UBIGINT[]'),
    c('negative_offset', 'INTEGER'),
    c('negative_bucket_counts', 'UBIGINT[]'),
    c('aggregation_temporality', 'INTEGER'),
  ],
};

/** One row per distinct stack per profile and sample type (samples with the same stack and labels are summed). */
export const PROFILES: Table = {
  name: 'svc_profiles',
  retentionColumn: 'timestamp',
  columns: [
    c('timestamp', 'TIMESTAMP', true),
    c('service_name', 'VARCHAR', true),
    c('profile_id', 'VARCHAR'),
    c('profile_type', 'VARCHAR', true), // sample type, e.g. cpu, samples, alloc_space, wall
    c('unit', 'VARCHAR', true), // e.g. nanoseconds, count, bytes
    c('period_type', 'VARCHAR'),
    c('period', 'BIGINT'),
    c('duration_ns', 'BIGINT'),
    c('function', 'VARCHAR', true), // leaf frame
    c('stack', 'VARCHAR[]'), // root → leaf function names
    c('value', 'BIGINT', true), // self value of the leaf for this stack
    c('sample_count', 'BIGINT', true),
    c('labels', 'VARCHAR'),
    c('trace_id', 'VARCHAR'),
    c('span_id', 'VARCHAR'),
    c('attributes', 'VARCHAR'),
    c('source', 'VARCHAR'), // pyroscope, pprof, otlp
  ],
};

export const ANOMALIES: Table = {
  name: 'svc_anomalies',
  retentionColumn: 'timestamp',
  columns: [
    c('timestamp', 'TIMESTAMP', true), // = ts_shift
    c('service_name', 'VARCHAR', true),
    c('operation', 'VARCHAR', true),
    c('signal', 'VARCHAR', true),
    c('kind', 'VARCHAR', true),
    c('direction', 'VARCHAR', true),
    c('before', 'DOUBLE', true),
    c('after', 'DOUBLE', true),
    c('ts_shift_us', 'BIGINT', true),
    c('detected_at', 'TIMESTAMP', true),
    c('drill_down_sql', 'VARCHAR'),
  ],
};

/** The nine tables the spec names; the only ones `/v1/query` may read (besides the series table). */
export const SPEC_TABLES: readonly Table[] = [
  SPANS,
  LOGS,
  LOG_TEMPLATES,
  METRICS_GAUGE,
  METRICS_SUM,
  METRICS_HISTOGRAM,
  METRICS_EXP_HISTOGRAM,
  PROFILES,
  ANOMALIES,
];

/** Every service that reported any signal, kept up to date by each commit so listing it is cheap. */
export const SERVICES: Table = {
  name: 'svc_services',
  retentionColumn: 'last_seen',
  columns: [
    c('timestamp', 'TIMESTAMP', true), // = first_seen
    c('service_name', 'VARCHAR', true),
    c('first_seen', 'TIMESTAMP', true),
    c('last_seen', 'TIMESTAMP', true),
  ],
};

/**
 * The persisted 5-minute series the detector reads: one row per closed bucket and entity. `value`
 * is in the signal's raw unit (error %, p95 µs, logs per bucket, error logs per bucket, profiled
 * nanoseconds per bucket); `n` is the bucket's calls (or records), `k` its errors where that applies.
 */
export const SERIES: Table = {
  name: 'svc_series_5m',
  retentionColumn: 'timestamp',
  columns: [
    c('timestamp', 'TIMESTAMP', true), // bucket start
    c('service_name', 'VARCHAR', true),
    c('operation', 'VARCHAR', true),
    c('signal', 'VARCHAR', true),
    c('value', 'DOUBLE', true),
    c('n', 'BIGINT', true),
    c('k', 'BIGINT'),
  ],
};

/**
 * Per-bucket facts the diagnosis reads over its look-back, written by the detection pass when it
 * closes a bucket (like the series): a diagnosis then reads hundreds of rows instead of scanning
 * millions of spans, and aggregates only the buckets not closed yet from raw telemetry.
 */
export const RESOURCES_5M: Table = {
  name: 'svc_resources_5m',
  retentionColumn: 'timestamp',
  columns: [
    c('timestamp', 'TIMESTAMP', true), // bucket start
    c('service_name', 'VARCHAR', true),
    c('service_version', 'VARCHAR'),
    c('container_image', 'VARCHAR'),
    c('service_instance_id', 'VARCHAR'),
    c('k8s_pod_name', 'VARCHAR'),
    c('k8s_deployment', 'VARCHAR'),
    c('k8s_namespace', 'VARCHAR'),
    c('service_namespace', 'VARCHAR'),
    c('first_us', 'BIGINT', true),
    c('last_us', 'BIGINT', true),
    c('n', 'BIGINT', true),
  ],
};

export const ERROR_TYPES_5M: Table = {
  name: 'svc_error_types_5m',
  retentionColumn: 'timestamp',
  columns: [c('timestamp', 'TIMESTAMP', true), c('service_name', 'VARCHAR', true), c('error_type', 'VARCHAR', true), c('first_us', 'BIGINT', true), c('n', 'BIGINT', true)],
};

export const GEN_AI_5M: Table = {
  name: 'svc_gen_ai_5m',
  retentionColumn: 'timestamp',
  columns: [
    c('timestamp', 'TIMESTAMP', true),
    c('service_name', 'VARCHAR', true),
    c('model', 'VARCHAR', true),
    c('finish', 'VARCHAR', true), // gen_ai_finish_reasons as stored ('[]' when absent)
    c('n', 'BIGINT', true),
    c('k', 'BIGINT', true),
  ],
};

/** Log records per service and 10-second bin (core/time.ts FINE_BIN_US): all, errors, warnings. */
export const LOG_LEVELS_10S: Table = {
  name: 'svc_log_levels_10s',
  retentionColumn: 'timestamp',
  columns: [
    c('timestamp', 'TIMESTAMP', true), // bin start
    c('service_name', 'VARCHAR', true),
    c('n', 'BIGINT', true),
    c('k', 'BIGINT', true),
    c('w', 'BIGINT', true),
  ],
};

export const ROLLUP_TABLES: readonly Table[] = [RESOURCES_5M, ERROR_TYPES_5M, GEN_AI_5M, LOG_LEVELS_10S];

/** 5-minute buckets (index = floor(µs / 300 s)) that received data since the detection pass last closed them. */
export const DIRTY_BUCKETS: Table = {
  name: 'svc_dirty_buckets',
  retentionColumn: null,
  primaryKey: ['bucket'],
  columns: [c('bucket', 'BIGINT', true)],
};

/** Each series' detector state, so a pass feeds only new points. */
export const DETECTOR_STATE: Table = {
  name: 'svc_detector_state',
  retentionColumn: 'last_bucket_ts',
  primaryKey: ['service_name', 'operation', 'signal'],
  columns: [
    c('service_name', 'VARCHAR', true),
    c('operation', 'VARCHAR', true),
    c('signal', 'VARCHAR', true),
    c('first_bucket', 'BIGINT', true), // bucket index of point 0
    c('last_bucket', 'BIGINT', true), // last bucket index fed
    c('last_bucket_ts', 'TIMESTAMP', true),
    c('state', 'VARCHAR', true), // base64 of the detector's Float64Array
  ],
};

/** Alert instances from the built-in rules over anomalies (one per entity and signal). */
export const ALERTS: Table = {
  name: 'svc_alerts',
  retentionColumn: null,
  primaryKey: ['fingerprint'],
  columns: [
    c('fingerprint', 'VARCHAR', true),
    c('rule_id', 'VARCHAR', true),
    c('status', 'VARCHAR', true),
    c('service_name', 'VARCHAR', true),
    c('operation', 'VARCHAR', true),
    c('signal', 'VARCHAR', true),
    c('container_name', 'VARCHAR', true),
    c('starts_at', 'TIMESTAMP', true),
    c('ends_at', 'TIMESTAMP'),
    c('occurrence_count', 'BIGINT', true),
    c('before', 'DOUBLE', true),
    c('after', 'DOUBLE', true),
    c('updated_at', 'TIMESTAMP', true),
  ],
};

/** A view over the tables, created by migrate() and readable by `/v1/query` like a table. */
export interface View {
  readonly name: string;
  /** the SELECT that defines it */
  readonly sql: string;
}

/**
 * svc_logs with each line's surviving template: a template that merged into another (it was the same
 * event: svc_log_templates.merged_into, possibly a chain of them) reads as the one it merged into, so
 * `GROUP BY resolved_template_id` counts an event once. template_id stays the id the line got at ingest.
 */
/**
 * (template_id, resolved_template_id) for every template that merged into another: the end of its
 * merged_into chain (64 links at most). A query over svc_log_templates alone (small: one row per
 * template), for the view below and for readers that group by the raw template_id first.
 */
export const MERGE_CHAIN_SQL =
  `WITH RECURSIVE chain(template_id, into_id, depth) AS (` +
  `SELECT template_id, merged_into, 1 FROM ${LOG_TEMPLATES.name} WHERE merged_into IS NOT NULL ` +
  `UNION ALL SELECT c.template_id, t.merged_into, c.depth + 1 FROM chain AS c JOIN ${LOG_TEMPLATES.name} AS t ON t.template_id = c.into_id ` +
  `WHERE t.merged_into IS NOT NULL AND c.depth < 64) ` +
  `SELECT template_id, arg_max(into_id, depth) AS resolved_template_id FROM chain GROUP BY template_id`;

export const LOGS_RESOLVED: View = {
  name: 'svc_logs_resolved',
  sql:
    `SELECT l.*, coalesce(m.resolved_template_id, l.template_id) AS resolved_template_id FROM ${LOGS.name} AS l LEFT JOIN (` +
    MERGE_CHAIN_SQL +
    `) AS m ON m.template_id = l.template_id`,
};

/** Views `POST /v1/query` may read besides the tables. */
export const QUERYABLE_VIEWS: readonly View[] = [LOGS_RESOLVED];

export function createViewSql(v: View): string {
  return `CREATE OR REPLACE VIEW ${v.name} AS ${v.sql}`;
}

/** Tables `POST /v1/query` may read: the spec's nine, plus the services list and the series. */
export const QUERYABLE_TABLES: readonly Table[] = [...SPEC_TABLES, SERVICES, SERIES];

/** Every table the store creates, in creation order. */
export const ALL_TABLES: readonly Table[] = [...QUERYABLE_TABLES, ...ROLLUP_TABLES, DIRTY_BUCKETS, DETECTOR_STATE, ALERTS];

/** Bumped when a change needs more than adding columns; see store/migrate.ts. */
export const SCHEMA_VERSION = 1;

export function createTableSql(t: Table): string {
  const cols = t.columns.map((col) => `  "${col.name}" ${col.type}${col.compression ? ` USING COMPRESSION ${col.compression}` : ''}${col.required ? ' NOT NULL' : ''}`);
  if (t.primaryKey) cols.push(`  PRIMARY KEY (${t.primaryKey.map((k) => `"${k}"`).join(', ')})`);
  return `CREATE TABLE IF NOT EXISTS ${t.name} (\n${cols.join(',\n')}\n)`;
}

/** The table named `name`; throws for a name the schema does not have (rows meant for it cannot be stored). */
export function tableByName(name: string): Table {
  const table = ALL_TABLES.find((t) => t.name === name);
  if (!table) throw new Error(`unknown table ${name}`);
  return table;
}
