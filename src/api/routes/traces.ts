// GET /v1/traces/{trace_id}: one whole trace. Ids are 32 hex digits (case-insensitive; stored lower-case).
import { ApiError } from '../../core/errors.js';
import { readTrace } from '../../query/traces.js';
import type { TraceDetail } from '../../query/trace-detail.js';
import { json } from '../http.js';
import { DOCS } from '../docs.js';
import { tenantOf, type RouteSpec } from '../route.js';

/** The 200 answer of GET /v1/traces/{trace_id}. */
export type TraceResponse = TraceDetail;

const TRACE_ID = /^[0-9a-f]{32}$/;

export function traceRoute(): RouteSpec {
  return {
    method: 'GET',
    doc: DOCS.getTrace,
    path: '/v1/traces/{trace_id}',
    async handler(req) {
      const id = (req.params['trace_id'] ?? '').toLowerCase();
      if (!TRACE_ID.test(id) || /^0+$/.test(id)) {
        throw new ApiError('INVALID_TRACE_ID', `trace id ${JSON.stringify(req.params['trace_id'])} is not 32 hex digits`, 'trace ids are 16 bytes in lower-case hex, as OTLP/JSON prints them');
      }
      const trace: TraceResponse | null = await readTrace(tenantOf(req).reads, id);
      if (!trace) throw new ApiError('NOT_FOUND', `no spans stored for trace ${id}`, 'the trace may be older than the retention or not yet ingested');
      return json(200, trace);
    },
  };
}
