// A lean, hand-written protobuf decoder for ExportTraceServiceRequest, ExportLogsServiceRequest and
// ExportMetricsServiceRequest (field numbers: proto/opentelemetry/...). No reflection, no
// intermediate message objects: varints are read straight from the Uint8Array, strings are sliced
// with Buffer's native UTF-8 decoder (ASCII fast path for short ones), ids become hex directly and
// attribute JSON text is built while the KeyValues are read. The rows come out through the shared
// sinks of normalise.ts, so the OTLP/JSON decoder yields identical rows. The files and their jobs
// are listed in this folder's README.
//
// Robustness: every read is bounds-checked against the end of its enclosing message; truncated
// varints, lengths past the end, wire types 3/4/6/7, field number 0 and AnyValue nesting deeper
// than MAX_DEPTH throw MalformedError (code 'MALFORMED'). A known field with an unexpected wire type
// is skipped like an unknown field. Invalid UTF-8 is decoded with U+FFFD replacement characters
// (the text is kept, the bytes that are not UTF-8 are marked), never rejected.
export { decodeTraces } from './proto-traces.js';
export { decodeLogs } from './proto-logs.js';
export { decodeMetrics } from './proto-metrics.js';
export { MAX_DEPTH } from './proto-common.js';
