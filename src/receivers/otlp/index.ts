// OTLP decoding entry points: protobuf and OTLP/JSON request bodies → column batches.
export { decodeTraces, decodeLogs, decodeMetrics, MAX_DEPTH } from './proto-decode.js';
export { decodeTracesJson, decodeLogsJson, decodeMetricsJson } from './json-decode.js';
export { MalformedError, type ColumnBatch, type DecodeOptions, type DecodeResult } from './batch.js';
export {
  encodeExportResponse,
  exportResponseJson,
  encodeStatus,
  statusJson,
  type OtlpSignal,
} from './responses.js';

import { decodeLogs, decodeMetrics, decodeTraces } from './proto-decode.js';
import { decodeLogsJson, decodeMetricsJson, decodeTracesJson } from './json-decode.js';
import type { DecodeOptions, DecodeResult } from './batch.js';

export type OtlpDataSignal = 'traces' | 'logs' | 'metrics';
export type OtlpEncoding = 'protobuf' | 'json';

/** One dispatch for the receivers and the worker pool. Throws MalformedError for undecodable bodies. */
export function decodeOtlp(signal: OtlpDataSignal, encoding: OtlpEncoding, body: Uint8Array, opts?: DecodeOptions): DecodeResult {
  if (encoding === 'json') {
    return signal === 'traces' ? decodeTracesJson(body, opts) : signal === 'logs' ? decodeLogsJson(body, opts) : decodeMetricsJson(body, opts);
  }
  return signal === 'traces' ? decodeTraces(body, opts) : signal === 'logs' ? decodeLogs(body, opts) : decodeMetrics(body, opts);
}
