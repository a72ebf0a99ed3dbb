// THE operation identity (DESIGN.md "Operation identity"): the one function that names what a span
// does. Ingest stores it in `svc_spans.operation`; the 5-minute series, diagnose and every SQL lead
// read that column, so nothing else re-derives it.
//
// Format (stable; changing it splits every stored series):
//   server / consumer / internal / unspecified spans — the callee's own view:
//     `METHOD route`            when http.route exists (METHOD from http.request.method, else
//                               http.method, upper-cased; just `route` when no method is known)
//     `rpc.service/rpc.method`  else when rpc.service exists (`rpc.service` alone without a method)
//     `span name`               otherwise
//   client / producer spans — the caller's view, keyed by the peer it calls, always prefixed `→ `:
//     `→ PEER WHAT`  PEER = peer.service, else server.address, else net.peer.name, else
//                    db.system.name / db.system, else messaging.system;
//                    WHAT = `METHOD[ route]` for HTTP, `rpc.service/rpc.method` for RPC,
//                    db.operation.name / db.operation for databases, messaging.destination.name for
//                    messaging, else the span name.
//     `→ span name`  when no peer can be identified.
//   The arrow guarantees a caller's view of a call (`→ payments POST /charge`) never merges with the
//   callee's own span (`POST /charge` in service payments). An empty result falls back to
//   `unknown_operation`.

/** OTLP SpanKind values. */
export const SPAN_KIND = { UNSPECIFIED: 0, INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;

/** Every attribute key the operation identity reads (decoders pick these out of span attributes). */
export const OPERATION_ATTRIBUTE_KEYS: readonly string[] = [
  'http.route',
  'http.request.method',
  'http.method',
  'rpc.service',
  'rpc.method',
  'peer.service',
  'server.address',
  'net.peer.name',
  'db.system',
  'db.system.name',
  'db.operation',
  'db.operation.name',
  'messaging.system',
  'messaging.destination.name',
];

/** Attribute values as decoded (strings, numbers, booleans, bigints; anything else is ignored). */
export type AttrLookup = Readonly<Record<string, unknown>>;

function str(v: unknown): string | null {
  if (typeof v === 'string') return v.length > 0 ? v : null;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  return null;
}

function httpMethod(a: AttrLookup): string | null {
  const m = str(a['http.request.method']) ?? str(a['http.method']);
  return m === null ? null : m.toUpperCase();
}

function rpcName(a: AttrLookup): string | null {
  const svc = str(a['rpc.service']);
  if (svc === null) return null;
  const m = str(a['rpc.method']);
  return m === null ? svc : svc + '/' + m;
}

/** The peer a client/producer span calls, or null. */
export function peerOf(a: AttrLookup): string | null {
  return (
    str(a['peer.service']) ??
    str(a['server.address']) ??
    str(a['net.peer.name']) ??
    str(a['db.system.name']) ??
    str(a['db.system']) ??
    str(a['messaging.system'])
  );
}

/**
 * The operation identity of a span.
 * @param kind OTLP SpanKind (0..5; other values are treated as internal)
 * @param name the span name
 * @param attrs span attributes (at least OPERATION_ATTRIBUTE_KEYS when present)
 */
export function deriveOperation(kind: number, name: string, attrs: AttrLookup): string {
  if (kind === SPAN_KIND.CLIENT || kind === SPAN_KIND.PRODUCER) {
    const peer = peerOf(attrs);
    if (peer === null) return '→ ' + (name || 'unknown_operation');
    let what: string | null = null;
    const method = httpMethod(attrs);
    const route = str(attrs['http.route']);
    if (method !== null) what = route === null ? method : method + ' ' + route;
    else what = rpcName(attrs) ?? str(attrs['db.operation.name']) ?? str(attrs['db.operation']);
    if (what === null) what = str(attrs['messaging.destination.name']) ?? (name || null);
    return what === null || what === peer ? '→ ' + peer : '→ ' + peer + ' ' + what;
  }
  const route = str(attrs['http.route']);
  if (route !== null) {
    const method = httpMethod(attrs);
    return method === null ? route : method + ' ' + route;
  }
  return rpcName(attrs) ?? (name || 'unknown_operation');
}
