// Realistic spans for benchmarks: a server span with ~15 attributes and 2 events, about 650 bytes
// on the wire, encoded with protobufjs from the repo's proto/ files (independent of the decoder).
import protobuf from 'protobufjs';
import { join } from 'node:path';
import { randomBytes, randomFillSync } from 'node:crypto';
import { PROTO_DIR } from '../src/core/paths.js';

let root: protobuf.Root | undefined;
export function protoRoot(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => (target.startsWith('/') ? target : join(PROTO_DIR, target));
  r.loadSync([
    'opentelemetry/proto/collector/trace/v1/trace_service.proto',
    'opentelemetry/proto/collector/logs/v1/logs_service.proto',
    'opentelemetry/proto/collector/metrics/v1/metrics_service.proto',
  ]);
  root = r;
  return r;
}

export type AttrValue = string | number | boolean;
type AnyValue = { stringValue: string } | { boolValue: boolean } | { intValue: string } | { doubleValue: number } | { arrayValue: { values: AnyValue[] } };
/** An OTLP AnyValue in the lowerCamelCase object form both OTLP/JSON and protobufjs take (int64 as a string). */
export function anyValue(v: AttrValue | readonly string[]): AnyValue {
  if (Array.isArray(v)) return { arrayValue: { values: v.map((x: string) => ({ stringValue: x })) } };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v as number };
}
/** An OTLP KeyValue. */
export const attr = (k: string, v: AttrValue) => ({ key: k, value: anyValue(v) });

export interface SpanSpec {
  traceId?: Uint8Array;
  spanId?: Uint8Array;
  parentSpanId?: Uint8Array;
  name?: string;
  kind?: number;
  startUs: number;
  durationUs: number;
  status?: number;
  attributes?: Record<string, AttrValue>;
  events?: { name: string; timeUs: number; attributes?: Record<string, AttrValue> }[];
}

/** ExportTraceServiceRequest bytes for one service's spans. */
export function encodeTraces(service: string, spans: SpanSpec[], resource: Record<string, AttrValue> = {}): Uint8Array {
  const T = protoRoot().lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  const msg = T.fromObject({
    resourceSpans: [
      {
        resource: { attributes: Object.entries({ 'service.name': service, ...resource }).map(([k, v]) => attr(k, v)) },
        scopeSpans: [
          {
            scope: { name: 'bench', version: '1' },
            spans: spans.map((s) => ({
              traceId: s.traceId ?? randomBytes(16),
              spanId: s.spanId ?? randomBytes(8),
              parentSpanId: s.parentSpanId ?? new Uint8Array(0),
              name: s.name ?? 'op',
              kind: s.kind ?? 2,
              startTimeUnixNano: String(BigInt(s.startUs) * 1000n),
              endTimeUnixNano: String(BigInt(s.startUs + s.durationUs) * 1000n),
              attributes: Object.entries(s.attributes ?? {}).map(([k, v]) => attr(k, v)),
              events: (s.events ?? []).map((e) => ({
                name: e.name,
                timeUnixNano: String(BigInt(e.timeUs) * 1000n),
                attributes: Object.entries(e.attributes ?? {}).map(([k, v]) => attr(k, v)),
              })),
              status: { code: s.status ?? 0 },
            })),
          },
        ],
      },
    ],
  });
  return T.encode(msg).finish();
}

/** One realistic span (HTTP server, 15 attributes, 2 events). */
export function realisticSpan(i: number, startUs: number): SpanSpec {
  const route = `/api/v1/orders/{id}/items/${i % 20}`;
  return {
    name: `GET ${route}`,
    kind: 2,
    startUs,
    durationUs: 1000 + (i % 997) * 13,
    status: i % 50 === 0 ? 2 : 0,
    attributes: {
      'http.request.method': 'GET',
      'http.route': route,
      'http.response.status_code': i % 50 === 0 ? 500 : 200,
      'url.path': `/api/v1/orders/${100000 + i}/items/${i % 20}`,
      'url.scheme': 'https',
      'server.address': 'orders.internal',
      'server.port': 8443,
      'client.address': `10.0.${i % 255}.${(i * 7) % 255}`,
      'user_agent.original': 'Mozilla/5.0 (X11; Linux x86_64) bench/1.0',
      'network.protocol.version': '1.1',
      'http.request.body.size': 512 + (i % 100),
      'http.response.body.size': 2048 + (i % 1000),
      'thread.id': i % 64,
      'enduser.id': `user-${i % 5000}`,
      'app.cache_hit': i % 3 === 0,
    },
    events: [
      { name: 'cache.lookup', timeUs: startUs + 100, attributes: { 'cache.key': `order:${100000 + i}` } },
      { name: 'db.query', timeUs: startUs + 400, attributes: { 'db.rows': i % 50 } },
    ],
  };
}

const REALISTIC_RESOURCE = { 'service.version': '2.3.1', 'k8s.pod.name': 'orders-7d9f-x2', 'k8s.namespace.name': 'shop', 'host.name': 'node-3' };

export function realisticBatch(n: number, startUs: number, service = 'orders'): Uint8Array {
  return encodeTraces(
    service,
    Array.from({ length: n }, (_v, i) => realisticSpan(i, startUs + i * 10)),
    REALISTIC_RESOURCE,
  );
}

/**
 * realisticBatch as a function that returns a copy with new trace and span ids at each call, without
 * encoding again: a load generator that sends its few encoded bodies over and over would otherwise
 * store every span dozens of times, which no exporter does.
 */
export function freshIdsBatch(n: number, startUs: number, service = 'orders'): () => Uint8Array {
  const spans = Array.from({ length: n }, (_v, i) => ({ ...realisticSpan(i, startUs + i * 10), traceId: randomBytes(16), spanId: randomBytes(8) }));
  const body = Buffer.from(encodeTraces(service, spans, REALISTIC_RESOURCE));
  // Each span's ids, in the order encoded: found by searching on from the previous span's.
  const at: number[] = [];
  let from = 0;
  for (const s of spans) {
    const t = body.indexOf(s.traceId, from);
    const id = body.indexOf(s.spanId, t + 16);
    if (t < 0 || id < 0) throw new Error('freshIdsBatch: an id was not found in the encoded body');
    at.push(t, id);
    from = id + 8;
  }
  const ids = Buffer.alloc(n * 24);
  return () => {
    const copy = Buffer.from(body);
    randomFillSync(ids);
    for (let i = 0; i < n; i++) {
      ids.copy(copy, at[2 * i]!, i * 24, i * 24 + 16);
      ids.copy(copy, at[2 * i + 1]!, i * 24 + 16, i * 24 + 24);
    }
    return copy;
  };
}
