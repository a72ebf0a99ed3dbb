// GET /v1/alerts?status=firing|resolved: the built-in rules' alert instances (detect/alert-list.ts).
import { ok } from '../http.js';
import { API } from '../endpoints.js';
import { readAlerts } from '../../detect/alert-list.js';
import { route, tenantOf, type RouteSpec } from '../route.js';

export function alertsRoute(): RouteSpec {
  // The status enum is checked from the route table.
  return route(API.listAlerts, async (req) => ok(API.listAlerts, await readAlerts(tenantOf(req).reads, req.valid.status ?? null)));
}
