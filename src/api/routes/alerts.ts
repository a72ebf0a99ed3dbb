// GET /v1/alerts?status=firing|resolved: the built-in rules' alert instances.
import { json } from '../http.js';
import { DOCS } from '../docs.js';
import { isoFromUs } from '../../core/time.js';
import { readRows } from '../../store/readers.js';
import { ALERTS } from '../../store/schema.js';
import type { AlertStatus } from '../../detect/alerts.js';
import { tenantOf, type RouteSpec } from '../route.js';

export function alertsRoute(): RouteSpec {
  return {
    method: 'GET',
    path: '/v1/alerts',
    doc: DOCS.listAlerts,
    async handler(req) {
      const status = (req.valid?.['status'] as AlertStatus | undefined) ?? null; // enum checked from the description
      const rows = await tenantOf(req).reads.use((c) =>
        readRows(
          c,
          `SELECT fingerprint, rule_id, status, service_name, container_name, epoch_us(starts_at) AS s, epoch_us(ends_at) AS e, occurrence_count
           FROM ${ALERTS.name} ${status ? 'WHERE status = ?' : ''} ORDER BY starts_at DESC`,
          status ? [status] : [],
        ),
      );
      return json(200, {
        alerts: rows.map((r) => ({
          fingerprint: String(r['fingerprint']),
          rule_id: String(r['rule_id']),
          status: String(r['status']),
          service_name: String(r['service_name']),
          container_name: String(r['container_name']),
          starts_at: isoFromUs(Number(r['s'])),
          ends_at: r['e'] === null ? null : isoFromUs(Number(r['e'])),
          occurrence_count: Number(r['occurrence_count']),
        })),
      });
    },
  };
}
