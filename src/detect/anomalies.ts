// The read behind GET /v1/anomalies: ranked worsening shifts in a window, grouped into incidents. One
// table scan, never a detection run. The row cap bounds the answer; `truncated` says when it cut.
import { isoFromUs } from '../core/time.js';
import type { SignalName } from './signals.js';
import { readRows, type ReadPool } from '../store/readers.js';
import { ANOMALIES } from '../store/schema.js';
import { RANK_ORDER_SQL, incidentIds } from './incidents.js';

export const ANOMALY_ROW_CAP = 1000;

export interface AnomalyEntry {
  service_name: string;
  operation: string;
  signal: SignalName;
  kind: string;
  direction: 'worsening';
  before: number;
  after: number;
  ts_shift: string;
  ts_shift_us: number;
  detected_at: string;
  drill_down_sql: string | null;
  incident_id: string | null;
}

export interface AnomalyList {
  anomalies: AnomalyEntry[];
  truncated: boolean;
}

export async function readAnomalies(reads: ReadPool, q: { from: number; to: number; service?: string }, cap = ANOMALY_ROW_CAP): Promise<AnomalyList> {
  const params: (string | number)[] = [q.from, q.to];
  let where = `ts_shift_us >= ? AND ts_shift_us <= ?`;
  if (q.service !== undefined) {
    where += ' AND service_name = ?';
    params.push(q.service);
  }
  const rows = await reads.use((c) =>
    readRows(
      c,
      `SELECT service_name, operation, signal, kind, direction, before, after, ts_shift_us, epoch_us(detected_at) AS detected_us, drill_down_sql
       FROM ${ANOMALIES.name} WHERE ${where}
       ORDER BY ${RANK_ORDER_SQL}
       LIMIT ${cap + 1}`,
      params,
    ),
  );
  const truncated = rows.length > cap;
  const kept = rows.slice(0, cap).map((r) => ({
    service_name: String(r['service_name']),
    operation: String(r['operation']),
    signal: String(r['signal']) as SignalName,
    kind: String(r['kind']),
    direction: 'worsening' as const,
    before: Number(r['before']),
    after: Number(r['after']),
    ts_shift_us: Number(r['ts_shift_us']),
    detected_us: Number(r['detected_us']),
    drill_down_sql: r['drill_down_sql'] === null ? null : String(r['drill_down_sql']),
  }));
  const ids = incidentIds(kept);
  return {
    truncated,
    anomalies: kept.map((r, i) => ({
      service_name: r.service_name,
      operation: r.operation,
      signal: r.signal,
      kind: r.kind,
      direction: r.direction,
      before: r.before,
      after: r.after,
      ts_shift: isoFromUs(r.ts_shift_us),
      ts_shift_us: r.ts_shift_us,
      detected_at: isoFromUs(r.detected_us),
      drill_down_sql: r.drill_down_sql,
      incident_id: ids[i]!,
    })),
  };
}
