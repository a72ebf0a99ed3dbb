// OTLP answers: Export…ServiceResponse with partial_success, and google.rpc.Status for failures,
// in protobuf or OTLP/JSON. Field numbers from opentelemetry-proto (collector/*/v1*) and
// googleapis google/rpc/status.proto (see proto/).
import type { Encoding } from '../pipeline/tasks.js';

export type ExportSignal = 'traces' | 'logs' | 'metrics' | 'profiles';

const REJECTED_FIELD: Record<ExportSignal, string> = {
  traces: 'rejectedSpans',
  logs: 'rejectedLogRecords',
  metrics: 'rejectedDataPoints',
  profiles: 'rejectedProfiles',
};

const utf8 = new TextEncoder();

function varint(out: number[], n: number): void {
  // Non-negative integers up to 2^53; the values here are counts and status codes.
  while (n > 127) {
    out.push((n % 128) | 128);
    n = Math.floor(n / 128);
  }
  out.push(n);
}

function lenField(out: number[], field: number, bytes: Uint8Array): void {
  varint(out, (field << 3) | 2);
  varint(out, bytes.length);
  for (const b of bytes) out.push(b);
}

/** An Export…ServiceResponse; empty (no partial_success) when nothing was rejected and no message. */
export function encodeExportResponse(signal: ExportSignal, rejected: number, errorMessage: string, encoding: Encoding): Uint8Array | string {
  if (encoding === 'json') {
    if (!rejected && !errorMessage) return '{}';
    return JSON.stringify({ partialSuccess: { [REJECTED_FIELD[signal]]: String(rejected), errorMessage } });
  }
  if (!rejected && !errorMessage) return new Uint8Array(0);
  const inner: number[] = [];
  if (rejected) {
    varint(inner, (1 << 3) | 0);
    varint(inner, rejected);
  }
  if (errorMessage) lenField(inner, 2, utf8.encode(errorMessage));
  const out: number[] = [];
  lenField(out, 1, Uint8Array.from(inner));
  return Uint8Array.from(out);
}

/** A google.rpc.Status {code, message}. */
export function encodeRpcStatus(code: number, message: string, encoding: Encoding): Uint8Array | string {
  if (encoding === 'json') return JSON.stringify({ code, message, details: [] });
  const out: number[] = [];
  if (code) {
    varint(out, (1 << 3) | 0);
    varint(out, code);
  }
  if (message) lenField(out, 2, utf8.encode(message));
  return Uint8Array.from(out);
}
