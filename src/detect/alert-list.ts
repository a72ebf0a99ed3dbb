// The read behind GET /v1/alerts: the built-in rules' alert instances (detect/alerts.ts), newest first.
import { isoFromUs } from '../core/time.js';
import { readRows, type ReadPool } from '../store/readers.js';
import { ALERTS } from '../store/schema.js';
import type { AlertStatus } from './alerts.js';

export interface AlertInstance {
  fingerprint: string;
  rule_id: string;
  status: AlertStatus;
  service_name: string;
  container_name: string;
  starts_at: string;
  ends_at: string | null;
  occurrence_count: number;
}

/** Every alert instance, or those with `status` when given. */
export async function readAlerts(reads: ReadPool, status: AlertStatus | null): Promise<{ alerts: AlertInstance[] }> {
  const rows = await reads.use((c) =>
    readRows(
      c,
      `SELECT fingerprint, rule_id, status, service_name, container_name, epoch_us(starts_at) AS s, epoch_us(ends_at) AS e, occurrence_count
           FROM ${ALERTS.name} ${status ? 'WHERE status = ?' : ''} ORDER BY starts_at DESC`,
      status ? [status] : [],
    ),
  );
  return {
    alerts: rows.map((r) => ({
      fingerprint: String(r['fingerprint']),
      rule_id: String(r['rule_id']),
      status: String(r['status']) as AlertStatus,
      service_name: String(r['service_name']),
      container_name: String(r['container_name']),
      starts_at: isoFromUs(Number(r['s'])),
      ends_at: r['e'] === null ? null : isoFromUs(Number(r['e'])),
      occurrence_count: Number(r['occurrence_count']),
    })),
  };
}
