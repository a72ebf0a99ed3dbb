// The five detection signals: what each measures, how its 5-minute bucket is aggregated from raw
// telemetry, and what an absent bucket means. One table of facts used by the pass, the drill-down
// SQL and the anomalies endpoint.
import { LOGS, PROFILES, SERIES, SPANS } from '../store/schema.js';
import { rebuildRollupsSql } from './rollups.js';
import { BUCKET_US } from '../core/time.js';
import { bucketIndexSql, bucketStartSql, sqlTimestamp } from '../store/sql.js';

export type SignalName = 'error_rate' | 'latency_p95' | 'log_volume' | 'error_log_rate' | 'profile_cost';

export interface SignalDef {
  name: SignalName;
  /** 'operation': keyed by the derived operation identity; 'service': keyed by the service name. */
  entity: 'operation' | 'service';
  unit: string;
  /** What an absent bucket is: no observation (NaN) or a zero count. */
  missing: 'none' | 'zero';
  /** The table a bucket is aggregated from, and which of its rows count (SQL; '' for all). */
  table: string;
  filter: string;
  /** A bucket's aggregates: its value, and the n and k its model reads (the series' columns). */
  value: string;
  n: string;
  k: string;
}

/** The column a signal's entity is keyed by in its table. */
export const entityColumn = (s: SignalDef): string => (s.entity === 'operation' ? 'operation' : 'service_name');

const spans = { table: SPANS.name, entity: 'operation', filter: '', missing: 'none' } as const;
const logs = { table: LOGS.name, entity: 'service', filter: '', missing: 'zero' } as const;

export const SIGNALS: readonly SignalDef[] = [
  { name: 'error_rate', unit: 'percent of calls', ...spans, value: '100.0 * count_if(is_error) / count(*)', n: 'count(*)', k: 'count_if(is_error)' },
  { name: 'latency_p95', unit: 'microseconds', ...spans, value: 'quantile_cont(duration_us, 0.95)', n: 'count(*)', k: 'NULL::BIGINT' },
  { name: 'log_volume', unit: 'log records per 5-minute bucket', ...logs, value: 'count(*)::DOUBLE', n: 'count(*)', k: 'NULL::BIGINT' },
  { name: 'error_log_rate', unit: 'error log records per 5-minute bucket', ...logs, value: 'count_if(is_error)::DOUBLE', n: 'count(*)', k: 'count_if(is_error)' },
  // Time-valued profiles (cpu, wall: nanoseconds) are the cost; byte and count profiles measure
  // something else and are not summed into it.
  {
    name: 'profile_cost',
    unit: 'profiled nanoseconds per 5-minute bucket',
    table: PROFILES.name,
    entity: 'service',
    filter: "unit = 'nanoseconds'",
    missing: 'none',
    value: 'sum(value)::DOUBLE',
    n: 'sum(sample_count)::BIGINT',
    k: 'NULL::BIGINT',
  },
];

/** The signals aggregated in one scan: those of one table, entity and filter. */
const SCANS: readonly SignalDef[][] = [
  ...SIGNALS.reduce((m, s) => {
    const key = JSON.stringify([s.table, s.entity, s.filter]);
    return m.set(key, [...(m.get(key) ?? []), s]);
  }, new Map<string, SignalDef[]>()).values(),
];

/**
 * Every signal's buckets over [lo, hi) (TIMESTAMP literals) as one query: (timestamp, service_name,
 * operation, signal, value, n, k). The signals of one table, entity and filter are aggregated in one
 * scan, a materialised CTE, then unpivoted: error rate and latency read the spans once instead of
 * twice (4 million spans: 112-125 ms against 169-196, bench:detect's close-bucket.ts).
 */
export function seriesSelect(lo: string, hi: string): string {
  const ctes: string[] = [];
  const selects: string[] = [];
  SCANS.forEach((group, g) => {
    const { table, filter } = group[0]!;
    const measures = group.map((s, i) => `${s.value} AS v${i}, ${s.n} AS n${i}, ${s.k} AS k${i}`).join(', ');
    ctes.push(
      `s${g} AS MATERIALIZED (SELECT ${bucketIndexSql('timestamp')} AS b, service_name, ${entityColumn(group[0]!)} AS operation, ${measures} ` +
        `FROM ${table} WHERE ${filter ? `${filter} AND ` : ''}timestamp >= ${lo} AND timestamp < ${hi} GROUP BY ALL)`,
    );
    group.forEach((s, i) =>
      selects.push(`SELECT ${bucketStartSql('b')} AS timestamp, service_name, operation, '${s.name}' AS signal, v${i} AS value, n${i} AS n, k${i} AS k FROM s${g}`),
    );
  });
  return `WITH ${ctes.join(', ')} ${selects.join(' UNION ALL ')}`;
}

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
    `INSERT INTO ${SERIES.name} (${cols}) SELECT * FROM (${seriesSelect(lo, hi)})`,
    ...rebuildRollupsSql(lo, hi),
  ];
}
