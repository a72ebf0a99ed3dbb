// OTLP decoding entry points: protobuf and OTLP/JSON request bodies → column batches.
export { decodeTraces, decodeLogs, decodeMetrics, MAX_DEPTH } from './proto-decode.js';
export { decodeTracesJson, decodeLogsJson, decodeMetricsJson } from './json-decode.js';
export { MalformedError, type ColumnBatch, type DecodeOptions, type DecodeResult } from './batch.js';

import { decodeLogs, decodeMetrics, decodeTraces } from './proto-decode.js';
import { decodeLogsJson, decodeMetricsJson, decodeTracesJson } from './json-decode.js';
import type { DecodeOptions, DecodeResult } from './batch.js';

export type OtlpDataSignal = 'traces' | 'logs' | 'metrics';
export type OtlpEncoding = 'protobuf' | 'json';

export interface Decoded extends DecodeResult {
  /** Records (spans, log records, data points) in the batches. */
  accepted: number;
}

/** One dispatch for the worker's tasks. Throws MalformedError (a DecodeError) for undecodable bodies. */
export function decodeOtlp(signal: OtlpDataSignal, encoding: OtlpEncoding, body: Uint8Array, opts?: DecodeOptions): Decoded {
  const r =
    encoding === 'json'
      ? signal === 'traces' ? decodeTracesJson(body, opts) : signal === 'logs' ? decodeLogsJson(body, opts) : decodeMetricsJson(body, opts)
      : signal === 'traces' ? decodeTraces(body, opts) : signal === 'logs' ? decodeLogs(body, opts) : decodeMetrics(body, opts);
  return { ...r, accepted: r.batches.reduce((a, b) => a + b.rows, 0) };
}
