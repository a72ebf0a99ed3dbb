// GET /v1/alerts?status=firing|resolved: the built-in rules' alert instances (detect/alert-list.ts).
import { json } from '../http.js';
import { DOCS } from '../docs.js';
import type { AlertStatus } from '../../detect/alerts.js';
import { readAlerts, type AlertInstance } from '../../detect/alert-list.js';
import { tenantOf, type RouteSpec } from '../route.js';

/** The query of GET /v1/alerts. */
export interface AlertsQuery {
  status?: AlertStatus | undefined;
}

/** The 200 answer of GET /v1/alerts. */
export interface AlertsResponse {
  alerts: AlertInstance[];
}

export function alertsRoute(): RouteSpec {
  return {
    method: 'GET',
    path: '/v1/alerts',
    doc: DOCS.listAlerts,
    async handler(req) {
      const status = (req.valid?.['status'] as AlertStatus | undefined) ?? null; // enum checked from the description
      const answer: AlertsResponse = await readAlerts(tenantOf(req).reads, status);
      return json(200, answer);
    },
  };
}
