// Export responses and error bodies, hand-encoded (tiny messages; no reflection needed).
//   Export{Trace,Logs,Metrics,Profiles}ServiceResponse { partial_success = 1 { rejected_<x> = 1 (int64), error_message = 2 } }
//   google.rpc.Status { code = 1 (int32), message = 2, details = 3 }
// An export that rejected nothing and carries no message encodes as the empty message (`{}` in JSON),
// as the OTLP specification asks.

import { pushVarint } from '../core/varint.js';

export type OtlpSignal = 'traces' | 'logs' | 'metrics' | 'profiles';

const REJECTED_JSON: Record<OtlpSignal, string> = {
  traces: 'rejectedSpans',
  logs: 'rejectedLogRecords',
  metrics: 'rejectedDataPoints',
  profiles: 'rejectedProfiles',
};

function bytesField(out: number[], field: number, bytes: Uint8Array): void {
  out.push((field << 3) | 2);
  pushVarint(out, bytes.length);
  for (const b of bytes) out.push(b);
}

const enc = new TextEncoder();

/** ExportXServiceResponse as protobuf bytes. */
export function encodeExportResponse(signal: OtlpSignal, rejected: number, errorMessage?: string): Uint8Array {
  void signal; // every signal's response has the same shape; only the field's name differs
  if (rejected <= 0 && !errorMessage) return new Uint8Array(0);
  const ps: number[] = [];
  if (rejected > 0) {
    ps.push(0x08);
    pushVarint(ps, rejected);
  }
  if (errorMessage) bytesField(ps, 2, enc.encode(errorMessage));
  const out: number[] = [];
  bytesField(out, 1, Uint8Array.from(ps));
  return Uint8Array.from(out);
}

/** ExportXServiceResponse as OTLP/JSON text (int64 written as a number, which every parser accepts). */
export function exportResponseJson(signal: OtlpSignal, rejected: number, errorMessage?: string): string {
  if (rejected <= 0 && !errorMessage) return '{}';
  const ps: Record<string, unknown> = {};
  if (rejected > 0) ps[REJECTED_JSON[signal]] = rejected;
  if (errorMessage) ps['errorMessage'] = errorMessage;
  return JSON.stringify({ partialSuccess: ps });
}

/** google.rpc.Status as protobuf bytes (no details). */
export function encodeStatus(code: number, message: string): Uint8Array {
  const out: number[] = [];
  if (code !== 0) {
    out.push(0x08);
    pushVarint(out, code);
  }
  if (message) bytesField(out, 2, enc.encode(message));
  return Uint8Array.from(out);
}

/** google.rpc.Status as JSON text (no details). */
export function statusJson(code: number, message: string): string {
  return JSON.stringify({ code, message });
}
