// Ranking and incident grouping of anomaly rows, computed at read time over the rows returned.
// Rank: unit-free magnitude (after − before) / (after + before) descending (1.0 = appeared from a
// zero baseline, 1/3 = doubled), then |after − before|, then newest first. Incidents: rows of one
// service whose shifts fall in the same or adjacent 5-minute buckets, chained transitively; a row
// that correlates with no other returned row has incident_id null.
import { createHash } from 'node:crypto';
import { BUCKET_US } from '../core/time.js';

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

/** incident_id per row (same order as `rows`, which keeps its ranked order). */
export function incidentIds(rows: readonly RankedShift[]): (string | null)[] {
  const ids: (string | null)[] = rows.map(() => null);
  const byService = new Map<string, number[]>();
  rows.forEach((r, i) => {
    let l = byService.get(r.service_name);
    if (!l) byService.set(r.service_name, (l = []));
    l.push(i);
  });
  for (const [service, idx] of byService) {
    idx.sort((a, b) => rows[a]!.ts_shift_us - rows[b]!.ts_shift_us);
    let group: number[] = [];
    const close = () => {
      if (group.length > 1) {
        const first = Math.floor(rows[group[0]!]!.ts_shift_us / BUCKET_US);
        const id = 'inc_' + createHash('sha256').update(`${service}\u0000${first}`).digest('hex').slice(0, 16);
        for (const i of group) ids[i] = id;
      }
      group = [];
    };
    let lastBucket = NaN;
    for (const i of idx) {
      const b = Math.floor(rows[i]!.ts_shift_us / BUCKET_US);
      if (group.length && b - lastBucket > 1) close();
      group.push(i);
      lastBucket = b;
    }
    close();
  }
  return ids;
}
