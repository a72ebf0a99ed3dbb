// GET /healthz: 200 once the store is open and the server can take requests, 503 before.
import { json, ok } from '../http.js';
import { API } from '../endpoints.js';
import { errorBody } from '../../core/errors.js';
import { route, type RouteSpec } from '../route.js';

export function healthRoute(isReady: () => boolean): RouteSpec {
  return route(API.getHealth, () => (isReady() ? ok(API.getHealth, { status: 'ok' }) : json(503, errorBody('NOT_READY', 'the store is not open yet', 'retry in a moment'))));
}
