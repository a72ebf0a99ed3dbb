// Ranking and incident grouping of anomaly rows, computed at read time over the rows returned.
// Rank: unit-free magnitude (after − before) / (after + before) descending (1.0 = appeared from a
// zero baseline, 1/3 = doubled), then |after − before|, then newest first. Incidents: rows of one
// service whose shifts fall in the same or adjacent 5-minute buckets, chained transitively; a row
// that correlates with no other returned row has incident_id null.
import { createHash } from 'node:crypto';
import { BUCKET_US } from '../core/time.js';
import { ANOMALIES } from '../store/schema.js';
import { sqlString, sqlTimestamp } from '../store/sql.js';

export interface RankedShift {
  service_name: string;
  ts_shift_us: number;
}

/**
 * The ranking, as the ORDER BY of the one scan of svc_anomalies: the row cap then keeps the
 * strongest shifts. A zero denominator cannot occur for a stored (worsening) row; it ranks as 1.
 */
export const RANK_ORDER_SQL =
  'CASE WHEN after + before > 0 THEN (after - before) / (after + before) ELSE 1 END DESC, abs(after - before) DESC, ts_shift_us DESC';

/**
 * The rows of GET /v1/anomalies from the `offset`-th on (its row cap aside), in its order, as one statement for
 * POST /v1/query (bounded by TIMESTAMP literals: `timestamp` is the shift's time). incident_id is
 * not a column: it is computed over the rows a read returns.
 */
export function anomalyPageSql(q: { from: number; to: number; service?: string | undefined }, offset: number): string {
  const service = q.service === undefined ? '' : ` AND service_name = ${sqlString(q.service)}`;
  return (
    `SELECT service_name, operation, signal, kind, direction, before, after, timestamp AS ts_shift, ts_shift_us, detected_at, drill_down_sql FROM ${ANOMALIES.name} ` +
    `WHERE timestamp >= ${sqlTimestamp(q.from)} AND timestamp <= ${sqlTimestamp(q.to)}${service} ORDER BY ${RANK_ORDER_SQL} OFFSET ${offset}`
  );
}

/**
 * Shifts of one service whose buckets are the same or adjacent, chained transitively: per service (in
 * order of first appearance), groups in time order, each group's rows by time (ties keep input order).
 * A group of one is a shift that correlates with no other.
 */
export function groupShifts<T extends RankedShift>(rows: readonly T[]): T[][] {
  const byService = new Map<string, T[]>();
  for (const r of rows) {
    let l = byService.get(r.service_name);
    if (!l) byService.set(r.service_name, (l = []));
    l.push(r);
  }
  const groups: T[][] = [];
  for (const rs of byService.values()) {
    rs.sort((a, b) => a.ts_shift_us - b.ts_shift_us);
    let lastBucket = NaN;
    for (const r of rs) {
      const b = Math.floor(r.ts_shift_us / BUCKET_US);
      const g = groups[groups.length - 1];
      if (g && g[0]!.service_name === r.service_name && b - lastBucket <= 1) g.push(r);
      else groups.push([r]);
      lastBucket = b;
    }
  }
  return groups;
}

/** The id of a group of shifts (its service and first bucket: the same incident keeps its id as rows are added later). */
export function incidentId(group: readonly RankedShift[]): string | null {
  if (group.length < 2) return null;
  const first = Math.floor(group[0]!.ts_shift_us / BUCKET_US);
  return 'inc_' + createHash('sha256').update(`${group[0]!.service_name}\u0000${first}`).digest('hex').slice(0, 16);
}

/** incident_id per row (same order as `rows`, which keeps its ranked order). */
export function incidentIds(rows: readonly RankedShift[]): (string | null)[] {
  const indexed = rows.map((r, i) => ({ service_name: r.service_name, ts_shift_us: r.ts_shift_us, i }));
  const ids: (string | null)[] = rows.map(() => null);
  for (const g of groupShifts(indexed)) {
    const id = incidentId(g);
    for (const r of g) ids[r.i] = id;
  }
  return ids;
}
