// The read behind GET /v1/traces/{trace_id}: every stored span of one trace, built into the trace detail.
import { readRows, type ReadPool } from '../store/readers.js';
import { SPANS } from '../store/schema.js';
import { isoFromUs } from '../core/time.js';
import { buildTraceDetail, type SpanRow, type TraceDetail } from './trace-detail.js';

/** The trace detail of `traceId` (lower-case hex, as stored); null when no span of it is stored. */
export async function readTrace(reads: ReadPool, traceId: string): Promise<TraceDetail | null> {
  const rows = await reads.use((c) =>
    readRows(
      c,
      `SELECT trace_id, span_id, parent_span_id, service_name, span_name, span_kind, status_code, epoch_us(timestamp) AS start_us,
                  duration_us, trace_state, scope_name, scope_version, resource_attributes, span_attributes, events_json, links_json
           FROM ${SPANS.name} WHERE trace_id = ?`,
      [traceId],
    ),
  );
  if (!rows.length) return null;
  const spans = rows.map((r) => ({ ...r, timestamp: isoFromUs(Number(r['start_us'])) }) as unknown as SpanRow);
  return buildTraceDetail(spans);
}
