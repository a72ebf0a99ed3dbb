// GET /openapi.json: the OpenAPI 3.1 description generated from the mounted route table. The route
// list is read on the first request (after every route is mounted) and the document kept.
import { API } from '../endpoints.js';
import { buildOpenApi } from '../openapi.js';
import { route, type RouteSpec } from '../route.js';

export function openapiRoute(routes: () => readonly RouteSpec[], auth: 'open' | 'keys' = 'open'): RouteSpec {
  let body: string | undefined;
  return route(API.getOpenApi, () => {
    body ??= JSON.stringify(buildOpenApi(routes(), auth));
    return { status: 200, headers: { 'content-type': 'application/json' }, body };
  });
}
