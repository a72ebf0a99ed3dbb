// OTLP/JSON decoder (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding) to the same
// rows as the protobuf decoder, through the same sinks. Accepted, as the OpenTelemetry Collector does:
//   - trace/span ids as hex (any case) and, as a fallback, base64 (standard or URL-safe alphabet);
//   - lowerCamelCase keys and their snake_case spelling;
//   - enums as integers or as their names (an unknown name is MALFORMED);
//   - 64-bit integers as decimal strings or JSON numbers; doubles also as "NaN"/"Infinity";
//   - unknown fields are ignored.
// Syntax errors, wrong JSON types for known fields, ids that are neither hex nor base64 and nesting
// deeper than MAX_DEPTH throw MalformedError.
import { MalformedError, type DecodeOptions, type DecodeResult } from './batch.js';
import {
  EMPTY_SCOPE,
  LogSink,
  MetricSink,
  RESOURCE_PICK,
  SPAN_PICK,
  SpanSink,
  doubleJson,
  makeResource,
  safeInt,
  type MetricCtx,
  type Picked,
  type PointBase,
  type ResourceCtx,
  type ScopeCtx,
} from './normalise.js';
import { MAX_DEPTH } from './proto-decode.js';

type J = Record<string, unknown>;

function bad(msg: string): never {
  throw new MalformedError(msg);
}

function parse(body: Uint8Array | string): J {
  let v: unknown;
  try {
    let text = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a UTF-8 byte order mark
    v = JSON.parse(text);
  } catch (e) {
    return bad('invalid JSON: ' + (e instanceof Error ? e.message : String(e)));
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) bad('request body must be a JSON object');
  return v as J;
}

function field(o: J, camel: string, snake: string): unknown {
  const v = o[camel];
  return v !== undefined ? v : o[snake];
}

function obj(v: unknown, what: string): J | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) bad(what + ' must be an object');
  return v as J;
}

function arr(v: unknown, what: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) bad(what + ' must be an array');
  return v;
}

function string(v: unknown, what: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') bad(what + ' must be a string');
  return v;
}

function bool(v: unknown, what: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') bad(what + ' must be a boolean');
  return v;
}

const INT_RE = /^-?\d+$/;

/** A 64-bit integer given as a decimal string or a JSON number. */
function int64(v: unknown, what: string): bigint {
  if (v === undefined || v === null) return 0n;
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) bad(what + ' must be an integer');
    return BigInt(v);
  }
  if (typeof v === 'string' && INT_RE.test(v)) return BigInt(v);
  return bad(what + ' must be an integer or a decimal string');
}

function uint64(v: unknown, what: string): number | bigint {
  const x = int64(v, what);
  if (x < 0n) bad(what + ' must not be negative');
  return safeInt(x);
}

/** Nanosecond timestamps (string or number) → integer microseconds, truncated. */
function micros(v: unknown, what: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'string') {
    if (!/^\d+$/.test(v)) bad(what + ' must be a non-negative decimal integer');
    return v.length <= 3 ? 0 : Number(v.slice(0, v.length - 3));
  }
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return Math.floor(v / 1000);
  return bad(what + ' must be a non-negative integer');
}

function uint32(v: unknown, what: string): number {
  if (v === undefined || v === null) return 0;
  const x = typeof v === 'string' && INT_RE.test(v) ? Number(v) : v;
  if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > 0xffffffff) bad(what + ' must be a uint32');
  return x;
}

function int32(v: unknown, what: string): number {
  if (v === undefined || v === null) return 0;
  const x = typeof v === 'string' && INT_RE.test(v) ? Number(v) : v;
  if (typeof x !== 'number' || !Number.isInteger(x) || x < -0x80000000 || x > 0x7fffffff) bad(what + ' must be an int32');
  return x;
}

function double(v: unknown, what: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    if (v === 'NaN') return NaN;
    if (v === 'Infinity') return Infinity;
    if (v === '-Infinity') return -Infinity;
    const d = Number(v);
    if (v.trim() !== '' && !Number.isNaN(d)) return d;
  }
  return bad(what + ' must be a number');
}

function optDouble(v: unknown, what: string): number | null {
  return v === undefined || v === null ? null : double(v, what);
}

/** Enum given as integer or name. */
function enumOf(v: unknown, names: Readonly<Record<string, number>>, what: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) bad(what + ' must be an integer or an enum name');
    return v;
  }
  if (typeof v === 'string') {
    const n = names[v];
    if (n !== undefined) return n;
    if (INT_RE.test(v)) return Number(v);
  }
  return bad(`invalid ${what} ${JSON.stringify(v)}`);
}

const SPAN_KIND_NAMES = {
  SPAN_KIND_UNSPECIFIED: 0, SPAN_KIND_INTERNAL: 1, SPAN_KIND_SERVER: 2, SPAN_KIND_CLIENT: 3, SPAN_KIND_PRODUCER: 4, SPAN_KIND_CONSUMER: 5,
};
const STATUS_NAMES = { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 };
const TEMPORALITY_NAMES = {
  AGGREGATION_TEMPORALITY_UNSPECIFIED: 0, AGGREGATION_TEMPORALITY_DELTA: 1, AGGREGATION_TEMPORALITY_CUMULATIVE: 2,
};
const SEVERITY_NAMES: Record<string, number> = { SEVERITY_NUMBER_UNSPECIFIED: 0 };
['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'].forEach((lvl, i) => {
  SEVERITY_NAMES['SEVERITY_NUMBER_' + lvl] = i * 4 + 1;
  for (let k = 2; k <= 4; k++) SEVERITY_NAMES['SEVERITY_NUMBER_' + lvl + k] = i * 4 + k;
});

const HEX_RE = /^[0-9a-fA-F]*$/;
const B64_RE = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * An id given as hex (the OTLP/JSON rule) or base64 (what some exporters send) → lower-case hex.
 * `bytes` is the id's proper length; hex is preferred whenever the text is valid hex of that length.
 */
function id(v: unknown, bytes: number, what: string): string {
  if (v === undefined || v === null || v === '') return '';
  if (typeof v !== 'string') return bad(what + ' must be a string');
  if (v.length === bytes * 2 && HEX_RE.test(v)) return v.toLowerCase();
  if (v.length % 4 === 0 && B64_RE.test(v)) return Buffer.from(v, v.includes('-') || v.includes('_') ? 'base64url' : 'base64').toString('hex');
  if (v.length % 2 === 0 && HEX_RE.test(v)) return v.toLowerCase(); // hex of the wrong length: rejected by the sink
  return bad(`${what} ${JSON.stringify(v.length > 64 ? v.slice(0, 64) + '…' : v)} is neither hex nor base64`);
}

// ------------------------------------------------------------------ AnyValue → JSON text

let LASTV: unknown;
const COMPLEX = Symbol('complex');

function anyValue(v: unknown, depth: number): string {
  if (depth > MAX_DEPTH) bad('AnyValue nested deeper than ' + MAX_DEPTH);
  LASTV = null;
  if (v === undefined || v === null) return 'null';
  if (typeof v !== 'object' || Array.isArray(v)) bad('AnyValue must be an object');
  const o = v as J;
  let x: unknown;
  if ((x = field(o, 'stringValue', 'string_value')) !== undefined && x !== null) {
    const s = string(x, 'stringValue');
    LASTV = s;
    return JSON.stringify(s);
  }
  if ((x = field(o, 'boolValue', 'bool_value')) !== undefined && x !== null) {
    const b = bool(x, 'boolValue');
    LASTV = b;
    return b ? 'true' : 'false';
  }
  if ((x = field(o, 'intValue', 'int_value')) !== undefined && x !== null) {
    const n = typeof x === 'string' && x.length <= 15 && INT_RE.test(x) ? Number(x) : safeInt(int64(x, 'intValue'));
    LASTV = n;
    return String(n);
  }
  if ((x = field(o, 'doubleValue', 'double_value')) !== undefined && x !== null) {
    const d = double(x, 'doubleValue');
    LASTV = d;
    return doubleJson(d);
  }
  if ((x = field(o, 'arrayValue', 'array_value')) !== undefined && x !== null) {
    const vals = arr(obj(x, 'arrayValue')?.['values'], 'arrayValue.values');
    let r = '[';
    for (let i = 0; i < vals.length; i++) r += (i ? ',' : '') + anyValue(vals[i], depth + 1);
    LASTV = COMPLEX;
    return r + ']';
  }
  if ((x = field(o, 'kvlistValue', 'kvlist_value')) !== undefined && x !== null) {
    const vals = arr(obj(x, 'kvlistValue')?.['values'], 'kvlistValue.values');
    let r = '{';
    for (let i = 0; i < vals.length; i++) r += (i ? ',' : '') + keyValue(vals[i], depth + 1, null, null);
    LASTV = COMPLEX;
    return r + '}';
  }
  if ((x = field(o, 'bytesValue', 'bytes_value')) !== undefined && x !== null) {
    const s = string(x, 'bytesValue');
    if (!B64_RE.test(s)) bad('bytesValue is not base64');
    const b64 = Buffer.from(s, s.includes('-') || s.includes('_') ? 'base64url' : 'base64').toString('base64');
    LASTV = b64;
    return '"' + b64 + '"';
  }
  return 'null';
}

function keyValue(kv: unknown, depth: number, pick: ReadonlySet<string> | null, picked: Picked | null): string {
  const o = obj(kv, 'KeyValue') ?? {};
  const key = string(o['key'], 'KeyValue.key');
  const vj = anyValue(o['value'], depth);
  if (pick !== null && picked !== null && pick.has(key)) picked[key] = LASTV === COMPLEX ? JSON.parse(vj) : LASTV;
  return quoteKey(key) + ':' + vj;
}

const keyCache = new Map<string, string>();
function quoteKey(k: string): string {
  let q = keyCache.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (keyCache.size < 4096) keyCache.set(k, q);
  }
  return q;
}

function attributes(v: unknown, pick: ReadonlySet<string> | null, picked: Picked | null): string {
  const list = arr(v, 'attributes');
  let r = '{';
  for (let i = 0; i < list.length; i++) r += (i ? ',' : '') + keyValue(list[i], 1, pick, picked);
  return r + '}';
}

// ------------------------------------------------------------------ walk

function resourceOf(v: unknown): ResourceCtx {
  const o = obj(v, 'resource');
  const picked: Picked = {};
  const json = o === null ? '{}' : attributes(o['attributes'], RESOURCE_PICK, picked);
  return makeResource(json, picked);
}

function scopeOf(v: unknown): ScopeCtx {
  const o = obj(v, 'scope');
  if (o === null) return EMPTY_SCOPE;
  return { name: string(o['name'], 'scope.name') || null, version: string(o['version'], 'scope.version') || null };
}

function walk(
  root: J,
  top: [string, string],
  scopes: [string, string],
  records: [string, string],
  onRecord: (res: ResourceCtx, sc: ScopeCtx, rec: J) => void,
): void {
  for (const r of arr(field(root, top[0], top[1]), top[0])) {
    const ro = obj(r, top[0]) ?? {};
    const res = resourceOf(ro['resource']);
    for (const s of arr(field(ro, scopes[0], scopes[1]), scopes[0])) {
      const so = obj(s, scopes[0]) ?? {};
      const sc = scopeOf(so['scope']);
      for (const rec of arr(field(so, records[0], records[1]), records[0])) onRecord(res, sc, obj(rec, records[0]) ?? {});
    }
  }
}

function nowOf(opts?: DecodeOptions): number {
  return opts?.nowUs ?? Date.now() * 1000;
}

function guard<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof RangeError) throw new MalformedError('payload too complex: ' + e.message);
    throw e;
  }
}

// ------------------------------------------------------------------ traces

/** ExportTraceServiceRequest (OTLP/JSON) → svc_spans batch. Throws MalformedError. */
export function decodeTracesJson(body: Uint8Array | string, opts?: DecodeOptions): DecodeResult {
  const root = parse(body);
  const sink = new SpanSink(nowOf(opts));
  guard(() =>
    walk(root, ['resourceSpans', 'resource_spans'], ['scopeSpans', 'scope_spans'], ['spans', 'spans'], (res, sc, s) => {
      const picked: Picked = {};
      const attrsJson = attributes(s['attributes'], SPAN_PICK, picked);
      let exceptionType: string | null = null;
      const evs = arr(s['events'], 'events');
      let events = '';
      for (const ev of evs) {
        const eo = obj(ev, 'event') ?? {};
        const name = string(eo['name'], 'event.name');
        const ep: Picked = {};
        const aj = attributes(eo['attributes'], exceptionType === null ? EXC_PICK : null, ep);
        if (exceptionType === null && name === 'exception' && typeof ep['exception.type'] === 'string' && ep['exception.type'] !== '') {
          exceptionType = ep['exception.type'];
        }
        const t = micros(field(eo, 'timeUnixNano', 'time_unix_nano'), 'event.timeUnixNano');
        events += (events ? ',' : '') + '{"name":' + JSON.stringify(name) + ',"timestamp_us":' + t + ',"attributes":' + aj + '}';
      }
      let links = '';
      for (const l of arr(s['links'], 'links')) {
        const lo = obj(l, 'link') ?? {};
        const ts = string(field(lo, 'traceState', 'trace_state'), 'link.traceState');
        links +=
          (links ? ',' : '') + '{"trace_id":"' + id(field(lo, 'traceId', 'trace_id'), 16, 'link.traceId') + '","span_id":"' +
          id(field(lo, 'spanId', 'span_id'), 8, 'link.spanId') + '","trace_state":' + (ts ? JSON.stringify(ts) : 'null') +
          ',"attributes":' + attributes(lo['attributes'], null, null) + ',"flags":' + uint32(lo['flags'], 'link.flags') + '}';
      }
      const st = obj(s['status'], 'status');
      const parent = field(s, 'parentSpanId', 'parent_span_id');
      sink.add(res, sc, {
        traceId: id(field(s, 'traceId', 'trace_id'), 16, 'traceId'),
        spanId: id(field(s, 'spanId', 'span_id'), 8, 'spanId'),
        parentSpanId: parent === undefined || parent === null ? null : id(parent, 8, 'parentSpanId'),
        traceState: string(field(s, 'traceState', 'trace_state'), 'traceState') || null,
        flags: uint32(s['flags'], 'flags'),
        name: string(s['name'], 'name'),
        kind: enumOf(s['kind'], SPAN_KIND_NAMES, 'span kind'),
        startUs: micros(field(s, 'startTimeUnixNano', 'start_time_unix_nano'), 'startTimeUnixNano'),
        endUs: micros(field(s, 'endTimeUnixNano', 'end_time_unix_nano'), 'endTimeUnixNano'),
        attrsJson,
        attrs: picked,
        eventsJson: events ? '[' + events + ']' : null,
        exceptionType,
        linksJson: links ? '[' + links + ']' : null,
        statusCode: st === null ? 0 : enumOf(st['code'], STATUS_NAMES, 'status code'),
        statusMessage: st === null ? null : string(st['message'], 'status.message') || null,
      });
    }),
  );
  return sink.result();
}

const EXC_PICK: ReadonlySet<string> = new Set(['exception.type']);

// ------------------------------------------------------------------ logs

/** ExportLogsServiceRequest (OTLP/JSON) → svc_logs batch. Throws MalformedError. */
export function decodeLogsJson(body: Uint8Array | string, opts?: DecodeOptions): DecodeResult {
  const root = parse(body);
  const sink = new LogSink(nowOf(opts));
  guard(() =>
    walk(root, ['resourceLogs', 'resource_logs'], ['scopeLogs', 'scope_logs'], ['logRecords', 'log_records'], (res, sc, r) => {
      let body: string | null = null;
      if (r['body'] !== undefined && r['body'] !== null) {
        const j = anyValue(r['body'], 1);
        body = typeof LASTV === 'string' && j.charCodeAt(0) === 34 ? (LASTV as string) : LASTV === null ? null : j;
      }
      const tid = field(r, 'traceId', 'trace_id');
      const sid = field(r, 'spanId', 'span_id');
      sink.add(res, sc, {
        timeUs: micros(field(r, 'timeUnixNano', 'time_unix_nano'), 'timeUnixNano'),
        observedUs: micros(field(r, 'observedTimeUnixNano', 'observed_time_unix_nano'), 'observedTimeUnixNano'),
        severityNumber: enumOf(field(r, 'severityNumber', 'severity_number'), SEVERITY_NAMES, 'severity number'),
        severityText: string(field(r, 'severityText', 'severity_text'), 'severityText') || null,
        body,
        attrsJson: attributes(r['attributes'], null, null),
        flags: uint32(r['flags'], 'flags'),
        traceId: tid === undefined || tid === null ? null : id(tid, 16, 'traceId'),
        spanId: sid === undefined || sid === null ? null : id(sid, 8, 'spanId'),
        eventName: string(field(r, 'eventName', 'event_name'), 'eventName') || null,
      });
    }),
  );
  return sink.result();
}

// ------------------------------------------------------------------ metrics

function exemplars(v: unknown): string | null {
  const list = arr(v, 'exemplars');
  if (list.length === 0) return null;
  let r = '';
  for (const x of list) {
    const o = obj(x, 'exemplar') ?? {};
    const ad = field(o, 'asDouble', 'as_double');
    const ai = field(o, 'asInt', 'as_int');
    const value = ad !== undefined && ad !== null ? doubleJson(double(ad, 'asDouble')) : ai !== undefined && ai !== null ? String(int64(ai, 'asInt')) : 'null';
    const tid = id(field(o, 'traceId', 'trace_id'), 16, 'exemplar.traceId');
    const sid = id(field(o, 'spanId', 'span_id'), 8, 'exemplar.spanId');
    r +=
      (r ? ',' : '') + '{"timestamp_us":' + micros(field(o, 'timeUnixNano', 'time_unix_nano'), 'exemplar.timeUnixNano') +
      ',"value":' + value + ',"trace_id":' + (tid ? '"' + tid + '"' : 'null') + ',"span_id":' + (sid ? '"' + sid + '"' : 'null') +
      ',"filtered_attributes":' + attributes(field(o, 'filteredAttributes', 'filtered_attributes'), null, null) + '}';
  }
  return '[' + r + ']';
}

/** count, sum, min and max of a histogram or exponential-histogram point. */
function distribution(o: Record<string, unknown>) {
  return { count: uint64(o['count'], 'count'), sum: optDouble(o['sum'], 'sum'), min: optDouble(o['min'], 'min'), max: optDouble(o['max'], 'max') };
}

function pointBase(o: J): PointBase {
  return {
    timeUs: micros(field(o, 'timeUnixNano', 'time_unix_nano'), 'timeUnixNano'),
    startUs: micros(field(o, 'startTimeUnixNano', 'start_time_unix_nano'), 'startTimeUnixNano'),
    attrsJson: attributes(o['attributes'], null, null),
    flags: uint32(o['flags'], 'flags'),
    exemplarsJson: exemplars(o['exemplars']),
  };
}

function numberValue(o: J): number | null {
  const ad = field(o, 'asDouble', 'as_double');
  if (ad !== undefined && ad !== null) return double(ad, 'asDouble');
  const ai = field(o, 'asInt', 'as_int');
  if (ai !== undefined && ai !== null) return Number(int64(ai, 'asInt'));
  return null;
}

function buckets(v: unknown): { offset: number; counts: (number | bigint)[] } {
  const o = obj(v, 'buckets');
  if (o === null) return { offset: 0, counts: [] };
  return {
    offset: int32(o['offset'], 'buckets.offset'),
    counts: arr(field(o, 'bucketCounts', 'bucket_counts'), 'bucketCounts').map((c) => uint64(c, 'bucketCounts')),
  };
}

/** ExportMetricsServiceRequest (OTLP/JSON) → metric table batches. Throws MalformedError. */
export function decodeMetricsJson(body: Uint8Array | string, opts?: DecodeOptions): DecodeResult {
  const root = parse(body);
  const sink = new MetricSink(nowOf(opts));
  guard(() =>
    walk(root, ['resourceMetrics', 'resource_metrics'], ['scopeMetrics', 'scope_metrics'], ['metrics', 'metrics'], (res, sc, m) => {
      const mc: MetricCtx = {
        name: string(m['name'], 'metric.name'),
        description: string(m['description'], 'metric.description') || null,
        unit: string(m['unit'], 'metric.unit') || null,
      };
      let x: unknown;
      let kind = '';
      for (const k of ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'] as const) {
        const v = k === 'exponentialHistogram' ? field(m, k, 'exponential_histogram') : m[k];
        if (v !== undefined && v !== null) {
          x = v;
          kind = k;
        }
      }
      if (kind === '') return;
      const d = obj(x, kind) ?? {};
      const points = arr(field(d, 'dataPoints', 'data_points'), 'dataPoints');
      const temporality = enumOf(field(d, 'aggregationTemporality', 'aggregation_temporality'), TEMPORALITY_NAMES, 'aggregation temporality');
      if (!sink.check(mc, points.length)) return;
      for (const pt of points) {
        const o = obj(pt, 'data point') ?? {};
        switch (kind) {
          case 'gauge':
            sink.addGauge(res, sc, mc, { ...pointBase(o), value: numberValue(o) });
            break;
          case 'sum':
            sink.addSum(res, sc, mc, { ...pointBase(o), value: numberValue(o) }, temporality, bool(field(d, 'isMonotonic', 'is_monotonic'), 'isMonotonic'));
            break;
          case 'histogram':
            sink.addHistogram(
              res, sc, mc,
              {
                ...pointBase(o),
                ...distribution(o),
                bucketCounts: arr(field(o, 'bucketCounts', 'bucket_counts'), 'bucketCounts').map((c) => uint64(c, 'bucketCounts')),
                explicitBounds: arr(field(o, 'explicitBounds', 'explicit_bounds'), 'explicitBounds').map((b) => double(b, 'explicitBounds')),
              },
              temporality,
            );
            break;
          case 'exponentialHistogram': {
            const pos = buckets(o['positive']);
            const neg = buckets(o['negative']);
            sink.addExpHistogram(
              res, sc, mc,
              {
                ...pointBase(o),
                ...distribution(o),
                scale: int32(o['scale'], 'scale'),
                zeroCount: uint64(field(o, 'zeroCount', 'zero_count'), 'zeroCount'),
                zeroThreshold: optDouble(field(o, 'zeroThreshold', 'zero_threshold'), 'zeroThreshold') ?? 0,
                positiveOffset: pos.offset,
                positiveCounts: pos.counts,
                negativeOffset: neg.offset,
                negativeCounts: neg.counts,
              },
              temporality,
            );
            break;
          }
          case 'summary': {
            const qs: number[] = [];
            const vs: number[] = [];
            for (const q of arr(field(o, 'quantileValues', 'quantile_values'), 'quantileValues')) {
              const qo = obj(q, 'quantile value') ?? {};
              qs.push(optDouble(qo['quantile'], 'quantile') ?? 0);
              vs.push(optDouble(qo['value'], 'value') ?? 0);
            }
            sink.addSummary(res, sc, mc, {
              ...pointBase(o),
              exemplarsJson: null,
              count: uint64(o['count'], 'count'),
              sum: optDouble(o['sum'], 'sum') ?? 0,
              quantiles: qs,
              values: vs,
            });
            break;
          }
        }
      }
    }),
  );
  return sink.result();
}
