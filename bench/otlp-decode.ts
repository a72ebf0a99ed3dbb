// OTLP trace decoding throughput: the lean hand-written decoder vs protobufjs (reflection decode of
// the same proto/ files) followed by the same normalisation into the same svc_spans column batch.
// Then protobuf to svc_spans CSV, what the decode workers do: the WASM transcoder against its twin
// (this decoder + the CSV encoder). Realistic span: ~15 attributes, 2 events, ~650 bytes on the wire; 512 spans per request.
// Run: npm run build && node dist/bench/otlp-decode.js   (or: npx tsx bench/otlp-decode.ts)
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { PROTO_DIR } from '../src/core/paths.js';
import { decodeTraces, decodeTracesJson, decodeOtlp } from '../src/pipeline/decode/otlp/index.js';
import { transcodeSpans } from '../src/pipeline/decode/otlp/spans-wasm.js';
import { encodeBatches } from '../src/pipeline/encode.js';
import { EMPTY_SCOPE, RESOURCE_PICK, SPAN_PICK, SpanSink, doubleJson, makeResource, type Picked } from '../src/pipeline/decode/otlp/normalise.js';

const SPANS_PER_REQUEST = 512;
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 3);

const root = new protobuf.Root();
root.resolvePath = (_o, t) => join(PROTO_DIR, t);
root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
root.resolveAll();
const Req = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const SpanT = root.lookupType('opentelemetry.proto.trace.v1.Span');

const kv = (key: string, value: Record<string, unknown>) => ({ key, value });
const rndHex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 256).toString(16).padStart(2, '0')).join('');
const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

function span(i: number) {
  const start = 1_700_000_000_000_000_000n + BigInt(i) * 1_000_000n;
  return {
    traceId: b64(rndHex(16)),
    spanId: b64(rndHex(8)),
    parentSpanId: b64(rndHex(8)),
    name: 'POST /api/orders/{id}/checkout',
    kind: 2,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + 12_345_678n).toString(),
    flags: 1,
    attributes: [
      kv('http.request.method', { stringValue: 'POST' }),
      kv('http.route', { stringValue: '/api/orders/{id}/checkout' }),
      kv('http.response.status_code', { intValue: '200' }),
      kv('url.path', { stringValue: `/api/orders/${100000 + i}/checkout` }),
      kv('url.scheme', { stringValue: 'https' }),
      kv('server.address', { stringValue: 'shop.example.com' }),
      kv('server.port', { intValue: '443' }),
      kv('client.address', { stringValue: '10.1.2.3' }),
      kv('user_agent.original', { stringValue: 'Mozilla/5.0 (X11; Linux x86_64)' }),
      kv('network.protocol.version', { stringValue: '1.1' }),
      kv('http.request.body.size', { intValue: '512' }),
      kv('http.response.body.size', { intValue: '2048' }),
      kv('app.order.id', { stringValue: `ord-${i}` }),
      kv('app.cart.items', { intValue: String(i % 7) }),
      kv('app.feature.flag', { boolValue: true }),
    ],
    events: [
      { timeUnixNano: (start + 1_000_000n).toString(), name: 'cart.validated', attributes: [kv('items', { intValue: '3' })] },
      { timeUnixNano: (start + 9_000_000n).toString(), name: 'payment.authorized', attributes: [kv('provider', { stringValue: 'stripe' })] },
    ],
    status: { code: 1 },
  };
}

function request(n: number): Uint8Array {
  return Req.encode(
    Req.fromObject({
      resourceSpans: [{
        resource: {
          attributes: [
            kv('service.name', { stringValue: 'checkout' }),
            kv('service.version', { stringValue: '2.3.1' }),
            kv('k8s.pod.name', { stringValue: 'checkout-7d9f-abcde' }),
            kv('host.name', { stringValue: 'node-3' }),
          ],
        },
        scopeSpans: [{ scope: { name: '@opentelemetry/instrumentation-http', version: '0.57.0' }, spans: Array.from({ length: n }, (_, i) => span(i)) }],
      }],
    }),
  ).finish();
}

// ---------------------------------------------------------------- protobufjs + the same normalisation

type Any = { stringValue?: string; boolValue?: boolean; intValue?: protobuf.Long | number; doubleValue?: number; arrayValue?: { values?: Any[] }; kvlistValue?: { values?: KV[] }; bytesValue?: Uint8Array };
type KV = { key: string; value?: Any };
const longNum = (l: protobuf.Long) => l.high * 4294967296 + (l.low >>> 0);
let LAST: unknown;
function anyJson(v: Any | undefined): string {
  LAST = null;
  if (!v) return 'null';
  if (v.stringValue !== undefined && v.stringValue !== '') return (LAST = v.stringValue), JSON.stringify(v.stringValue);
  if (v.boolValue !== undefined && v.boolValue) return (LAST = true), 'true';
  if (v.intValue !== undefined && v.intValue !== 0) {
    const n = typeof v.intValue === 'number' ? v.intValue : longNum(v.intValue as protobuf.Long);
    return (LAST = n), String(n);
  }
  if (v.doubleValue !== undefined && v.doubleValue !== 0) return (LAST = v.doubleValue), doubleJson(v.doubleValue);
  if (v.arrayValue) return '[' + (v.arrayValue.values ?? []).map(anyJson).join(',') + ']';
  if (v.kvlistValue) return attrsJson(v.kvlistValue.values ?? [], null, null);
  if (v.bytesValue && v.bytesValue.length) return '"' + Buffer.from(v.bytesValue).toString('base64') + '"';
  return 'null';
}
function attrsJson(list: KV[], pick: ReadonlySet<string> | null, picked: Picked | null): string {
  let s = '{';
  for (let i = 0; i < list.length; i++) {
    const kvp = list[i]!;
    const j = anyJson(kvp.value);
    if (pick && picked && pick.has(kvp.key)) picked[kvp.key] = LAST;
    s += (i ? ',' : '') + JSON.stringify(kvp.key) + ':' + j;
  }
  return s + '}';
}
const hex = (b: Uint8Array | undefined) => (b && b.length ? Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex') : '');
const micros = (l: protobuf.Long | number | undefined) => (l === undefined ? 0 : Math.floor((typeof l === 'number' ? l : longNum(l as protobuf.Long)) / 1000));

function protobufjsDecode(body: Uint8Array): number {
  const m = Req.decode(body) as unknown as { resourceSpans: { resource?: { attributes: KV[] }; scopeSpans: { scope?: { name: string; version: string }; spans: any[] }[] }[] };
  const sink = new SpanSink(Date.now() * 1000);
  for (const rs of m.resourceSpans) {
    const picked: Picked = {};
    const res = makeResource(attrsJson(rs.resource?.attributes ?? [], RESOURCE_PICK, picked), picked);
    for (const ss of rs.scopeSpans) {
      const sc = ss.scope ? { name: ss.scope.name || null, version: ss.scope.version || null } : EMPTY_SCOPE;
      for (const s of ss.spans) {
        const sp: Picked = {};
        const attrs = attrsJson(s.attributes, SPAN_PICK, sp);
        let exc: string | null = null;
        const events = s.events.length
          ? '[' + s.events.map((e: any) => {
              const ep: Picked = {};
              const aj = attrsJson(e.attributes, SPAN_PICK, ep);
              if (e.name === 'exception' && exc === null && typeof ep['exception.type'] === 'string') exc = ep['exception.type'] as string;
              return '{"name":' + JSON.stringify(e.name) + ',"timestamp_us":' + micros(e.timeUnixNano) + ',"attributes":' + aj + '}';
            }).join(',') + ']'
          : null;
        sink.add(res, sc, {
          traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId) || null, traceState: s.traceState || null,
          flags: s.flags ?? 0, name: s.name, kind: s.kind, startUs: micros(s.startTimeUnixNano), endUs: micros(s.endTimeUnixNano),
          attrsJson: attrs, attrs: sp, eventsJson: events, exceptionType: exc, linksJson: null,
          statusCode: s.status?.code ?? 0, statusMessage: s.status?.message || null,
        });
      }
    }
  }
  return sink.result().batches[0]!.rows;
}

// ---------------------------------------------------------------- measure

/**
 * Spans per CPU-second of this process (user + system time, so that other load on a shared machine
 * does not count against the decoder), best of several short rounds.
 */
function measure(f: () => number): number {
  for (let i = 0; i < 30; i++) f(); // warm-up
  let best = 0;
  const rounds = Math.max(1, Math.round(SECONDS / 0.5));
  for (let r = 0; r < rounds; r++) {
    let spans = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    while (performance.now() - t0 < 500) spans += f();
    const c = process.cpuUsage(c0);
    best = Math.max(best, spans / ((c.user + c.system) / 1e6));
  }
  return best;
}

// Each variant runs in its own process, so that one's garbage and JIT state cannot slow the other.
const variant = process.argv[2];
if (variant === undefined) {
  const me = fileURLToPath(import.meta.url);
  const run = (v: string) => JSON.parse(execFileSync(process.execPath, [me, v], { encoding: 'utf8' }).trim().split('\n').pop()!) as { rate: number; info: string };
  // Alternate the variants (three passes, each its own process) and keep each one's best.
  const best: Record<string, number> = { protobufjs: 0, lean: 0, json: 0, twin: 0, wasm: 0 };
  let info = '';
  for (let pass = 0; pass < 3; pass++) {
    for (const v of Object.keys(best)) {
      const r = run(v);
      info = r.info;
      best[v] = Math.max(best[v]!, r.rate);
    }
  }
  console.log(info);
  const fmt = (label: string, rate: number) => console.log(`${label.padEnd(46)} ${Math.round(rate).toLocaleString('en-US').padStart(10)} spans/s`);
  fmt('protobufjs decode + same normalisation', best['protobufjs']!);
  fmt('lean decoder (decode + normalisation)', best['lean']!);
  fmt('OTLP/JSON decoder (JSON.parse + normalisation)', best['json']!);
  console.log(`ratio lean / protobufjs: ${(best['lean']! / best['protobufjs']!).toFixed(2)}x (per CPU-second of one thread; best of 3 alternating passes x ${SECONDS}s)`);
  fmt('to CSV: lean decoder + CSV encoder (the twin)', best['twin']!);
  fmt('to CSV: WASM transcoder (what the workers run)', best['wasm']!);
  console.log(`ratio WASM / twin: ${(best['wasm']! / best['twin']!).toFixed(2)}x (protobuf to svc_spans CSV, byte-identical output)`);
} else {
  const body = request(SPANS_PER_REQUEST);
  const oneSpan = SpanT.encode(SpanT.fromObject(span(0))).finish().length;
  const jsonBody = JSON.stringify(
    (function toJson(v: unknown, k = ''): unknown {
      if (Array.isArray(v)) return v.map((x) => toJson(x, k));
      if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([kk, x]) => [kk, toJson(x, kk)]));
      if (typeof v === 'string' && /^(traceId|spanId|parentSpanId)$/.test(k)) return Buffer.from(v, 'base64').toString('hex');
      return v;
    })(Req.toObject(Req.decode(body), { longs: String, bytes: String, enums: Number })),
  );
  const info = `span on the wire: ${oneSpan} bytes; request: ${SPANS_PER_REQUEST} spans, ${body.length} bytes (protobuf), ${jsonBody.length} bytes (JSON)`;
  const f =
    variant === 'protobufjs' ? () => protobufjsDecode(body)
    : variant === 'lean' ? () => decodeTraces(body).batches[0]!.rows
    : variant === 'twin' ? () => encodeBatches(decodeOtlp('traces', 'protobuf', body).batches).parts[0]!.rows
    : variant === 'wasm' ? () => transcodeSpans(body)!.accepted
    : () => decodeTracesJson(jsonBody).batches[0]!.rows;
  if (f() !== SPANS_PER_REQUEST) throw new Error(variant + ' decoded the wrong number of rows');
  console.log(JSON.stringify({ rate: measure(f), info }));
}
