// Endpoints of the spec that this build does not serve yet (diagnosis; the hosted variant's tenant
// and key administration). They are mounted and described, and answer 501 with the error body and a
// hint naming what to use instead, so an agent gets a clear answer rather than a 404.
import { ApiError } from '../errors.js';
import type { RouteDoc, RouteSpec } from '../http.js';

export function notBuiltRoute(method: string, path: string, doc: RouteDoc, hint: string): RouteSpec {
  return {
    method,
    path,
    doc,
    handler() {
      throw new ApiError('NOT_IMPLEMENTED', `${method} ${path} is not served by this build`, hint);
    },
  };
}
