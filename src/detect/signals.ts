// The five detection signals: what each measures, how its 5-minute bucket is aggregated from raw
// telemetry, and what an absent bucket means. One table of facts used by the pass, the drill-down
// SQL and the anomalies endpoint.
import { LOGS, PROFILES, SERIES, SPANS } from '../store/schema.js';
import { rebuildRollupsSql } from './rollups.js';
import { BUCKET_US } from '../core/time.js';
import { sqlTimestamp } from '../store/sql.js';

export type SignalName = 'error_rate' | 'latency_p95' | 'log_volume' | 'error_log_rate' | 'profile_cost';

export interface SignalDef {
  name: SignalName;
  /** 'operation': keyed by the derived operation identity; 'service': keyed by the service name. */
  entity: 'operation' | 'service';
  unit: string;
  /** What an absent bucket is: no observation (NaN) or a zero count. */
  missing: 'none' | 'zero';
  /** SELECT producing (timestamp, service_name, operation, signal, value, n, k) for [lo, hi). */
  aggregate(lo: string, hi: string): string;
}

/** Bucket start of a timestamp column: floor to the 5-minute grid since the epoch. */
const bucketOf = (col: string) => `make_timestamp((epoch_us(${col}) // ${BUCKET_US}) * ${BUCKET_US})`;

/** One signal's bucket aggregate over [lo, hi) of a table: (timestamp, service_name, operation, signal, value, n, k). */
function aggregate(name: SignalName, table: string, entity: string, value: string, n: string, k: string, filter = '') {
  return (lo: string, hi: string) =>
    `SELECT ${bucketOf('timestamp')} AS timestamp, service_name, ${entity} AS operation, '${name}' AS signal, ` +
    `${value} AS value, ${n} AS n, ${k} AS k FROM ${table} WHERE ${filter}timestamp >= ${lo} AND timestamp < ${hi} GROUP BY ALL`;
}

export const SIGNALS: readonly SignalDef[] = [
  {
    name: 'error_rate',
    entity: 'operation',
    unit: 'percent of calls',
    missing: 'none',
    aggregate: aggregate('error_rate', SPANS.name, 'operation', '100.0 * count_if(is_error) / count(*)', 'count(*)', 'count_if(is_error)'),
  },
  {
    name: 'latency_p95',
    entity: 'operation',
    unit: 'microseconds',
    missing: 'none',
    aggregate: aggregate('latency_p95', SPANS.name, 'operation', 'quantile_cont(duration_us, 0.95)', 'count(*)', 'NULL::BIGINT'),
  },
  {
    name: 'log_volume',
    entity: 'service',
    unit: 'log records per 5-minute bucket',
    missing: 'zero',
    aggregate: aggregate('log_volume', LOGS.name, 'service_name', 'count(*)::DOUBLE', 'count(*)', 'NULL::BIGINT'),
  },
  {
    name: 'error_log_rate',
    entity: 'service',
    unit: 'error log records per 5-minute bucket',
    missing: 'zero',
    aggregate: aggregate('error_log_rate', LOGS.name, 'service_name', 'count_if(is_error)::DOUBLE', 'count(*)', 'count_if(is_error)'),
  },
  {
    // Time-valued profiles (cpu, wall: nanoseconds) are the cost; byte and count profiles measure
    // something else and are not summed into it.
    name: 'profile_cost',
    entity: 'service',
    unit: 'profiled nanoseconds per 5-minute bucket',
    missing: 'none',
    aggregate: aggregate('profile_cost', PROFILES.name, 'service_name', 'sum(value)::DOUBLE', 'sum(sample_count)::BIGINT', 'NULL::BIGINT', "unit = 'nanoseconds' AND "),
  },
];

export function signalDef(name: string): SignalDef | undefined {
  return SIGNALS.find((s) => s.name === name);
}

export const bucketTs = (bucket: number): string => sqlTimestamp(bucket * BUCKET_US);

/** Statements that (re)compute the series rows, and the diagnosis's rollups, of buckets [fromBucket, toBucket]. */
export function rebuildSeriesSql(fromBucket: number, toBucket: number): string[] {
  const lo = bucketTs(fromBucket);
  const hi = bucketTs(toBucket + 1);
  const cols = SERIES.columns.map((c) => `"${c.name}"`).join(', ');
  return [
    `DELETE FROM ${SERIES.name} WHERE timestamp >= ${lo} AND timestamp < ${hi}`,
    `INSERT INTO ${SERIES.name} (${cols}) ${SIGNALS.map((s) => s.aggregate(lo, hi)).join(' UNION ALL ')}`,
    ...rebuildRollupsSql(lo, hi),
  ];
}
