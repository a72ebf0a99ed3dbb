// GET /v1/anomalies: ranked worsening shifts in a window, grouped into incidents (detect/anomalies.ts).
import { ApiError } from '../../core/errors.js';
import { ok } from '../http.js';
import { API } from '../endpoints.js';
import { readAnomalies } from '../../detect/anomalies.js';
import { route, tenantOf, type RouteSpec } from '../route.js';

export function anomaliesRoute(): RouteSpec {
  return route(API.listAnomalies, async (req) => {
    // Presence, integer type and microsecond units (both bounds are required: spec) are checked from the route table.
    const { from_ts: from, to_ts: to, service } = req.valid;
    if (to < from) throw new ApiError('INVALID_WINDOW', `to_ts (${to}) is before from_ts (${from})`, 'to_ts must be at or after from_ts');
    return ok(API.listAnomalies, await readAnomalies(tenantOf(req).reads, service ? { from, to, service } : { from, to }));
  });
}
