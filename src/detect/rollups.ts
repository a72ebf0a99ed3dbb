// The per-bucket facts a diagnosis reads over its look-back (store/schema.ts ROLLUP_TABLES): which
// versions, images, instances and pods each service ran on, which error types it raised, its
// model calls by finish reason, and its log records by level in fine bins. The detection pass writes them for the buckets it closes, with the
// same statements the diagnosis runs over raw telemetry for the buckets not closed yet, so both
// sources agree by construction.
import { ERROR_TYPES_5M, GEN_AI_5M, LOG_LEVELS_10S, LOGS, RESOURCES_5M, SPANS, type Table } from '../store/schema.js';
import { bucketIndexSql, bucketStartSql } from '../store/sql.js';
import { FINE_BIN_US } from '../core/time.js';

export interface Rollup {
  table: Table;
  /** SELECT producing the table's columns, in order, for the spans of [lo, hi) (TIMESTAMP literals). */
  aggregate(lo: string, hi: string): string;
}

/** A 5-minute rollup: `select` (its columns after the timestamp) grouped by bucket, the bucket's start first. */
const perBucket = (select: string, rest: string) => `SELECT ${bucketStartSql('b')} AS timestamp, * EXCLUDE (b) FROM (SELECT ${bucketIndexSql('timestamp')} AS b, ${select} ${rest} GROUP BY ALL)`;
const within = (lo: string, hi: string) => `timestamp >= ${lo} AND timestamp < ${hi}`;

export const RESOURCES_ROLLUP: Rollup = {
  table: RESOURCES_5M,
  aggregate: (lo, hi) =>
    perBucket(
      `service_name, service_version, container_image, service_instance_id, k8s_pod_name, any_value(k8s_deployment), any_value(k8s_namespace), ` +
        `any_value(service_namespace), epoch_us(min(timestamp)), epoch_us(max(timestamp)), count(*)`,
      `FROM ${SPANS.name} WHERE ${within(lo, hi)}`,
    ),
};

export const ERROR_TYPES_ROLLUP: Rollup = {
  table: ERROR_TYPES_5M,
  aggregate: (lo, hi) =>
    perBucket(`service_name, coalesce(error_type, 'unclassified'), epoch_us(min(timestamp)), count(*)`, `FROM ${SPANS.name} WHERE is_error AND ${within(lo, hi)}`),
};

export const GEN_AI_ROLLUP: Rollup = {
  table: GEN_AI_5M,
  aggregate: (lo, hi) =>
    perBucket(
      `service_name, gen_ai_model, coalesce(gen_ai_finish_reasons, '[]'), count(*), count_if(is_error)`,
      `FROM ${SPANS.name} WHERE gen_ai_model IS NOT NULL AND ${within(lo, hi)}`,
    ),
};

/** Severity 13–16 is WARN in the OpenTelemetry log data model. */
export const LOG_LEVELS_ROLLUP: Rollup = {
  table: LOG_LEVELS_10S,
  aggregate: (lo, hi) =>
    `SELECT make_timestamp(epoch_us(timestamp) // ${FINE_BIN_US} * ${FINE_BIN_US}) AS timestamp, service_name, count(*), count_if(is_error), count_if(severity_number BETWEEN 13 AND 16) ` +
    `FROM ${LOGS.name} WHERE ${within(lo, hi)} GROUP BY ALL`,
};

export const ROLLUPS: readonly Rollup[] = [RESOURCES_ROLLUP, ERROR_TYPES_ROLLUP, GEN_AI_ROLLUP, LOG_LEVELS_ROLLUP];

/** Statements that (re)compute the rollups of [lo, hi), bucket-aligned TIMESTAMP literals. */
export function rebuildRollupsSql(lo: string, hi: string): string[] {
  return ROLLUPS.flatMap((r) => [
    `DELETE FROM ${r.table.name} WHERE ${within(lo, hi)}`,
    `INSERT INTO ${r.table.name} (${r.table.columns.map((c) => `"${c.name}"`).join(', ')}) ${r.aggregate(lo, hi)}`,
  ]);
}
