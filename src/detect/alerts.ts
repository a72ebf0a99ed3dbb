// Built-in alert rules over the detector's changes, one rule per signal and no user thresholds:
// - a worsening shift fires the entity's instance (a new one, or a resolved one again: re-firing
//   counts in occurrence_count);
// - a later change whose new level is nearer the level before the alert than the alerting level
//   resolves it ("the series returned to its earlier regime").
// The fingerprint is stable per (service, entity, signal), so each has one instance over time.
import { createHash } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { readRows } from '../store/readers.js';
import { ALERTS, SPANS, LOGS } from '../store/schema.js';
import type { SignalName } from './signals.js';
import { BUCKET_US } from '../core/time.js';
import { sqlString, sqlTimestamp } from '../store/sql.js';

export interface ShiftEvent {
  service: string;
  operation: string;
  signal: SignalName;
  /** Bucket index of the first point of the new regime. */
  bucket: number;
  before: number;
  after: number;
}

export const ALERT_STATUSES = ['firing', 'resolved'] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

export function ruleId(signal: SignalName): string {
  return `builtin.${signal}.worsening`;
}

export function fingerprint(service: string, operation: string, signal: string): string {
  return createHash('sha256').update(`${service}\u0000${operation}\u0000${signal}`).digest('hex').slice(0, 16);
}

interface AlertRow {
  status: AlertStatus;
  before: number;
  after: number;
  startsBucket: number;
  /** When it resolved (bucket); shifts at or before it are history, not a re-firing. */
  endsBucket: number;
}

/** The container an alert names: k8s.container.name, else container.name (promoted), else the service. */
async function containerNames(conn: DuckDBConnection, services: string[], sinceUs: number): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!services.length) return out;
  const list = services.map(sqlString).join(', ');
  for (const table of [SPANS.name, LOGS.name]) {
    const rows = await readRows(
      conn,
      `SELECT service_name, any_value(container_name) AS c FROM ${table} WHERE timestamp >= ${sqlTimestamp(sinceUs)} ` +
        `AND service_name IN (${list}) AND container_name IS NOT NULL GROUP BY ALL`,
    );
    for (const r of rows) if (!out.has(String(r['service_name']))) out.set(String(r['service_name']), String(r['c']));
  }
  return out;
}

/** Statements that apply the pass's changes (in bucket order) to the alert instances. */
export async function alertStatements(conn: DuckDBConnection, shifts: readonly ShiftEvent[], nowUs: number): Promise<string[]> {
  if (!shifts.length) return [];
  const ordered = [...shifts].sort((a, b) => a.bucket - b.bucket);
  const fps = [...new Set(ordered.map((s) => fingerprint(s.service, s.operation, s.signal)))];
  const current = new Map<string, AlertRow>();
  for (const r of await readRows(
    conn,
    `SELECT fingerprint, status, before, after, epoch_us(starts_at) AS s, epoch_us(ends_at) AS e FROM ${ALERTS.name} WHERE fingerprint IN (${fps.map(sqlString).join(', ')})`,
  )) {
    current.set(String(r['fingerprint']), {
      status: r['status'] as AlertStatus,
      before: Number(r['before']),
      after: Number(r['after']),
      startsBucket: Math.floor(Number(r['s']) / BUCKET_US),
      endsBucket: r['e'] === null ? -Infinity : Math.floor(Number(r['e']) / BUCKET_US),
    });
  }
  const minBucket = ordered[0]!.bucket;
  const containers = await containerNames(conn, [...new Set(ordered.map((s) => s.service))], (minBucket - 12) * BUCKET_US);
  const now = sqlTimestamp(nowUs);
  const out: string[] = [];
  for (const s of ordered) {
    const fp = fingerprint(s.service, s.operation, s.signal);
    const cur = current.get(fp);
    const at = sqlTimestamp(s.bucket * BUCKET_US);
    if (s.after > s.before) {
      if (!cur) {
        const container = containers.get(s.service) ?? s.service;
        out.push(
          `INSERT INTO ${ALERTS.name} VALUES (${sqlString(fp)}, '${ruleId(s.signal)}', 'firing', ${sqlString(s.service)}, ${sqlString(s.operation)}, ` +
            `'${s.signal}', ${sqlString(container)}, ${at}, NULL, 1, ${s.before}, ${s.after}, ${now})`,
        );
      } else if (cur.status === 'resolved') {
        // A refed series (late data) reports its old shifts again; only a newer one re-fires.
        if (s.bucket <= cur.endsBucket) continue;
        out.push(
          `UPDATE ${ALERTS.name} SET status = 'firing', starts_at = ${at}, ends_at = NULL, occurrence_count = occurrence_count + 1, ` +
            `before = ${s.before}, after = ${s.after}, updated_at = ${now} WHERE fingerprint = ${sqlString(fp)}`,
        );
      } else {
        // Already firing and worse again: keep the start, record the newest level.
        out.push(`UPDATE ${ALERTS.name} SET after = ${s.after}, updated_at = ${now} WHERE fingerprint = ${sqlString(fp)}`);
      }
      const still = cur?.status === 'firing';
      current.set(fp, { status: 'firing', before: still ? cur.before : s.before, after: s.after, startsBucket: still ? cur.startsBucket : s.bucket, endsBucket: -Infinity });
    } else if (cur?.status === 'firing' && s.bucket > cur.startsBucket && Math.abs(s.after - cur.before) < Math.abs(s.after - cur.after)) {
      out.push(`UPDATE ${ALERTS.name} SET status = 'resolved', ends_at = ${at}, updated_at = ${now} WHERE fingerprint = ${sqlString(fp)}`);
      current.set(fp, { ...cur, status: 'resolved', endsBucket: s.bucket });
    }
  }
  return out;
}
