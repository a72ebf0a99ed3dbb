// After a crash. DuckDB's WAL brings back every committed transaction; what this module repairs is
// the service's own state that is written sparingly and so may lag the rows it derives from:
//   - whether the last process closed the store cleanly: a marker in svc_meta, cleared at open and
//     set at close, so the repairs run only after a crash (or a kill);
//   - the log templates' counts and bounds: the miner writes a template whose counts merely moved at
//     most every few seconds (pipeline/logs-task.ts), and restarts from the stored rows, so a crash
//     lost the increments of the logs committed since (half the counts after 6 kills in
//     test/store/crash-mixed.test.ts). They are raised to what the stored logs show.
// (An interrupted detection pass is taken up by the scheduler: detect/pass.ts markUnfedBuckets.)
import type { DuckDBConnection } from '@duckdb/node-api';
import { LOG_TEMPLATES, LOGS_RESOLVED } from './schema.js';

const CLEAN = 'clean_shutdown';

/** Marks the store open; returns whether the previous process left it without closing it (a crash). */
export async function openMarker(conn: DuckDBConnection): Promise<boolean> {
  const r = await conn.runAndReadAll(`SELECT value FROM svc_meta WHERE key = '${CLEAN}'`);
  const crashed = r.getRows()[0]?.[0] === 'false'; // no marker: a new file, or one from before markers
  await conn.run(`INSERT OR REPLACE INTO svc_meta VALUES ('${CLEAN}', 'false')`);
  return crashed;
}

/** Marks the store closed cleanly; the last write before its checkpoint. */
export async function closeMarker(conn: DuckDBConnection): Promise<void> {
  await conn.run(`INSERT OR REPLACE INTO svc_meta VALUES ('${CLEAN}', 'true')`);
}

/**
 * Raises each live template's count, error count and first/last seen to what the stored logs show
 * (through the merged_into chain, as the counts move on a merge). Never lowers one: retention deletes
 * old logs, whose counts the template keeps. Returns the templates repaired.
 */
export async function repairTemplateCounts(conn: DuckDBConnection): Promise<number> {
  const t = LOG_TEMPLATES.name;
  const r = await conn.run(
    `UPDATE ${t} AS t SET count = greatest(t.count, r.n), error_count = greatest(t.error_count, r.e), ` +
      `first_seen = least(t.first_seen, r.first), timestamp = least(t.timestamp, r.first), last_seen = greatest(t.last_seen, r.last) ` +
      `FROM (SELECT resolved_template_id AS id, count(*) AS n, count_if(is_error) AS e, min(timestamp) AS first, max(timestamp) AS last ` +
      `FROM ${LOGS_RESOLVED.name} WHERE resolved_template_id IS NOT NULL GROUP BY ALL) AS r ` +
      `WHERE t.template_id = r.id AND t.merged_into IS NULL AND (r.n > t.count OR r.e > t.error_count OR r.first < t.first_seen OR r.last > t.last_seen)`,
  );
  return Number(r.rowsChanged);
}
