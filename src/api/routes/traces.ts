// GET /v1/traces/{trace_id}: one whole trace. Ids are 32 hex digits (case-insensitive; stored lower-case).
import { ApiError } from '../../core/errors.js';
import { readTrace } from '../../query/traces.js';
import { ok } from '../http.js';
import { API } from '../endpoints.js';
import { route, tenantOf, type RouteSpec } from '../route.js';

const TRACE_ID = /^[0-9a-f]{32}$/;

export function traceRoute(): RouteSpec {
  return route(API.getTrace, async (req) => {
    const id = req.valid.trace_id.toLowerCase();
    if (!TRACE_ID.test(id) || /^0+$/.test(id)) {
      throw new ApiError('INVALID_TRACE_ID', `trace id ${JSON.stringify(req.params['trace_id'])} is not 32 hex digits`, 'trace ids are 16 bytes in lower-case hex, as OTLP/JSON prints them');
    }
    const trace = await readTrace(tenantOf(req).reads, id);
    if (!trace) throw new ApiError('NOT_FOUND', `no spans stored for trace ${id}`, 'the trace may be older than the retention or not yet ingested');
    return ok(API.getTrace, trace);
  });
}
