// GET /v1/traces/{trace_id}: one whole trace. Ids are 32 hex digits (case-insensitive; stored lower-case).
import { ApiError } from '../../core/errors.js';
import { readRows } from '../../store/readers.js';
import { SPANS } from '../../store/schema.js';
import { buildTraceDetail, type SpanRow } from '../trace-detail.js';
import { json } from '../http.js';
import { DOCS } from '../docs.js';
import { isoFromUs } from '../../core/time.js';
import { tenantOf, type RouteSpec } from '../route.js';

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
      const rows = await tenantOf(req).reads.use((c) =>
        readRows(
          c,
          `SELECT trace_id, span_id, parent_span_id, service_name, span_name, span_kind, status_code, epoch_us(timestamp) AS start_us,
                  duration_us, trace_state, scope_name, scope_version, resource_attributes, span_attributes, events_json, links_json
           FROM ${SPANS.name} WHERE trace_id = ?`,
          [id],
        ),
      );
      if (!rows.length) throw new ApiError('NOT_FOUND', `no spans stored for trace ${id}`, 'the trace may be older than the retention or not yet ingested');
      const spans = rows.map((r) => ({ ...r, timestamp: isoFromUs(Number(r['start_us'])) }) as unknown as SpanRow);
      return json(200, buildTraceDetail(spans));
    },
  };
}
