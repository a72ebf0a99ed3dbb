// Shared test helpers: the protobufjs root over proto/ (an independent encoder for test messages),
// corpus locations, and row views of column batches.
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { CORPORA_DIR, PROTO_DIR } from '../../../../src/core/paths.js';
import { corpusPresent } from '../../../helpers/corpora.js';
import type { ColumnBatch, DecodeResult } from '../../../../src/pipeline/decode/otlp/index.js';

export const OTLP_CORPUS = join(CORPORA_DIR, 'otlp');
export const HAVE_CORPUS = corpusPresent(OTLP_CORPUS);

let root: protobuf.Root | null = null;
/** All OTLP service protos plus google.rpc.Status, loaded with protobufjs from proto/. */
export function protoRoot(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => join(PROTO_DIR, target);
  r.loadSync([
    'opentelemetry/proto/collector/trace/v1/trace_service.proto',
    'opentelemetry/proto/collector/logs/v1/logs_service.proto',
    'opentelemetry/proto/collector/metrics/v1/metrics_service.proto',
    'opentelemetry/proto/collector/profiles/v1development/profiles_service.proto',
    'google/rpc/status.proto',
  ]);
  r.resolveAll();
  root = r;
  return r;
}

export function type(name: string): protobuf.Type {
  return protoRoot().lookupType(name);
}

export const TRACE_REQ = 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest';
export const LOGS_REQ = 'opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest';
export const METRICS_REQ = 'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest';

/** Encodes a protobufjs-style object (camelCase keys, ids as Uint8Array/base64, int64 as string). */
export function encode(typeName: string, obj: Record<string, unknown>): Uint8Array {
  const t = type(typeName);
  return t.encode(t.fromObject(obj)).finish();
}

/** Converts OTLP/JSON (hex ids) into what protobufjs' fromObject takes (base64 ids). */
export function otlpJsonToPbjs(v: unknown, key = ''): unknown {
  if (Array.isArray(v)) return v.map((x) => otlpJsonToPbjs(x, key));
  if (v !== null && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = otlpJsonToPbjs(x, k);
    return o;
  }
  if (typeof v === 'string' && /^(traceId|spanId|parentSpanId)$/.test(key) && /^[0-9a-fA-F]*$/.test(v) && v.length % 2 === 0) {
    return Buffer.from(v, 'hex').toString('base64');
  }
  return v;
}

export type Row = Record<string, unknown>;

export function rows(b: ColumnBatch): Row[] {
  const out: Row[] = [];
  for (let i = 0; i < b.rows; i++) {
    const r: Row = {};
    for (const [k, col] of Object.entries(b.columns)) r[k] = col[i];
    out.push(r);
  }
  return out;
}

/** All rows of a result by table. */
export function tables(r: DecodeResult): Record<string, Row[]> {
  const out: Record<string, Row[]> = {};
  for (const b of r.batches) out[b.table] = [...(out[b.table] ?? []), ...rows(b)];
  return out;
}

/** Merges several decode results (e.g. the lines of a JSONL file). */
export function merge(rs: DecodeResult[]): Record<string, Row[]> {
  const out: Record<string, Row[]> = {};
  for (const r of rs) for (const [t, rw] of Object.entries(tables(r))) out[t] = [...(out[t] ?? []), ...rw];
  return out;
}

/** Stable text of rows for equality checks (bigint-safe). */
export function canon(x: unknown): string {
  return JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? 'bigint:' + v.toString() : v));
}
