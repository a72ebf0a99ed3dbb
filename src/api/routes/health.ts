// GET /healthz: 200 once the store is open and the server can take requests, 503 before.
import { json } from '../http.js';
import { DOCS } from '../docs.js';
import { errorBody } from '../../core/errors.js';
import { type RouteSpec } from '../route.js';

/** The 200 answer of GET /healthz (503 answers the error body). */
export interface HealthResponse {
  status: 'ok';
}

export function healthRoute(isReady: () => boolean): RouteSpec {
  return {
    method: 'GET',
    doc: DOCS.getHealth,
    path: '/healthz',
    handler: () => (isReady() ? json(200, { status: 'ok' } satisfies HealthResponse) : json(503, errorBody('NOT_READY', 'the store is not open yet', 'retry in a moment'))),
  };
}
