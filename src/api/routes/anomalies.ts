// GET /v1/anomalies: ranked worsening shifts in a window, grouped into incidents (detect/anomalies.ts).
import { ApiError } from '../../core/errors.js';
import { json } from '../http.js';
import { DOCS } from '../docs.js';
import { readAnomalies, type AnomalyList } from '../../detect/anomalies.js';
import { tenantOf, type RouteSpec } from '../route.js';

/** The query of GET /v1/anomalies: both bounds required (spec), microseconds. */
export interface AnomaliesQuery {
  service?: string | undefined;
  from_ts: number;
  to_ts: number;
}

/** The 200 answer of GET /v1/anomalies. */
export type AnomaliesResponse = AnomalyList;

export function anomaliesRoute(): RouteSpec {
  return {
    method: 'GET',
    path: '/v1/anomalies',
    doc: DOCS.listAnomalies,
    async handler(req) {
      // Presence, integer type and microsecond units are checked from the route's description.
      const from = req.valid!['from_ts'] as number;
      const to = req.valid!['to_ts'] as number;
      if (to < from) throw new ApiError('INVALID_WINDOW', `to_ts (${to}) is before from_ts (${from})`, 'to_ts must be at or after from_ts');
      const service = req.valid!['service'] as string | undefined;
      const answer: AnomaliesResponse = await readAnomalies(tenantOf(req).reads, service ? { from, to, service } : { from, to });
      return json(200, answer);
    },
  };
}
