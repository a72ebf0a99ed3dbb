// Hostile input: the decoders either decode or throw MalformedError — never anything else, never hang.
import { describe, expect, it } from 'vitest';
import {
  MalformedError,
  decodeLogs,
  decodeLogsJson,
  decodeMetrics,
  decodeMetricsJson,
  decodeTraces,
  decodeTracesJson,
  type DecodeResult,
} from '../../../../src/pipeline/decode/otlp/index.js';
import { LOGS_REQ, METRICS_REQ, TRACE_REQ, encode, tables } from './helpers.js';

const opts = { nowUs: 1 };
const kv = (key: string, value: Record<string, unknown>) => ({ key, value });
const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

const traceReq = encode(TRACE_REQ, {
  resourceSpans: [{
    resource: { attributes: [kv('service.name', { stringValue: 'svc' })] },
    scopeSpans: [{
      scope: { name: 's' },
      spans: [{
        traceId: b64('0af7651916cd43dd8448eb211c80319c'), spanId: b64('b7ad6b7169203331'), name: 'GET /x', kind: 2,
        startTimeUnixNano: '1700000000000000000', endTimeUnixNano: '1700000000100000000', flags: 1,
        attributes: [kv('a', { arrayValue: { values: [{ kvlistValue: { values: [kv('b', { doubleValue: 1 })] } }] } }), kv('i', { intValue: '-1' })],
        events: [{ name: 'exception', attributes: [kv('exception.type', { stringValue: 'E' })] }],
        links: [{ traceId: b64('0af7651916cd43dd8448eb211c80319c'), spanId: b64('b7ad6b7169203331') }],
        status: { code: 2, message: 'm' },
      }],
    }],
  }],
});
const logsReq = encode(LOGS_REQ, {
  resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: '1', severityNumber: 9, body: { stringValue: 'hi' }, attributes: [kv('k', { boolValue: true })], traceId: b64('0af7651916cd43dd8448eb211c80319c') }] }] }],
});
const metricsReq = encode(METRICS_REQ, {
  resourceMetrics: [{ scopeMetrics: [{ metrics: [
    { name: 'h', histogram: { dataPoints: [{ count: '3', bucketCounts: ['1', '2'], explicitBounds: [1], exemplars: [{ asInt: '5' }] }] } },
    { name: 'e', exponentialHistogram: { dataPoints: [{ count: '3', positive: { offset: 1, bucketCounts: ['1', '2'] } }] } },
    { name: 'q', summary: { dataPoints: [{ count: '3', quantileValues: [{ quantile: 0.5, value: 1 }] }] } },
  ] }] }],
});

type Dec = (b: Uint8Array, o?: { nowUs?: number }) => DecodeResult;
const decoders: [string, Dec, Uint8Array][] = [
  ['traces', decodeTraces, traceReq],
  ['logs', decodeLogs, logsReq],
  ['metrics', decodeMetrics, metricsReq],
];

function outcome(f: () => unknown): 'ok' | 'malformed' {
  try {
    f();
    return 'ok';
  } catch (e) {
    if (e instanceof MalformedError && e.code === 'MALFORMED') return 'malformed';
    throw e;
  }
}

function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 128) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

describe.each(decoders)('%s protobuf', (_name, decode, full) => {
  it('the valid message decodes', () => {
    expect(decode(full, opts).batches.length).toBeGreaterThan(0);
  });

  it('truncated at every byte offset: decodes a prefix or throws MalformedError, nothing else', () => {
    let malformed = 0;
    for (let n = 0; n < full.length; n++) if (outcome(() => decode(full.subarray(0, n), opts)) === 'malformed') malformed++;
    expect(malformed).toBeGreaterThan(full.length / 2);
  });

  it('every single-byte corruption: only MalformedError', () => {
    for (let i = 0; i < full.length; i++) {
      for (const v of [0x00, 0xff, 0x80, 0x07, 0x0e]) {
        const b = Uint8Array.from(full);
        b[i] = v;
        outcome(() => decode(b, opts));
      }
    }
  });

  it('huge length prefixes are MALFORMED without allocating', () => {
    for (const n of [2 ** 31, 2 ** 32 + 5, 2 ** 53, 1e6]) {
      const b = Uint8Array.from([0x0a, ...varint(n), 1, 2, 3]);
      expect(outcome(() => decode(b, opts))).toBe('malformed');
    }
    // 10-byte varint with the top bit set on the last byte
    expect(outcome(() => decode(Uint8Array.from([0x0a, ...Array(10).fill(0xff), 0x01]), opts))).toBe('malformed');
  });

  it('bad wire types and field 0 are MALFORMED', () => {
    for (const tag of [0x0b, 0x0c, 0x0e, 0x0f, 0x00, 0x02]) expect(outcome(() => decode(Uint8Array.from([tag, 0, 0, 0, 0, 0, 0, 0, 0]), opts))).toBe('malformed');
  });

  it('random bytes: only MalformedError', () => {
    let seed = 12345;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
    for (let i = 0; i < 3000; i++) {
      const b = new Uint8Array(1 + (i % 200));
      for (let j = 0; j < b.length; j++) b[j] = rnd();
      outcome(() => decode(b, opts));
    }
  });
});

describe('nesting and encoding', () => {
  /** A span whose single attribute holds an AnyValue nested `depth` arrays deep. */
  function deepSpan(depth: number): Uint8Array {
    // Built back to front in one buffer so that 10,000 levels stay linear.
    const buf = new Uint8Array(16 * depth + 256);
    let start = buf.length;
    const prepend = (bytes: number[]) => {
      start -= bytes.length;
      buf.set(bytes, start);
    };
    const wrap = (tag: number) => prepend([tag, ...varint(buf.length - start)]);
    prepend([0x0a, 1, 0x78]); // AnyValue{string_value:"x"}
    for (let i = 0; i < depth; i++) {
      wrap(0x0a); // ArrayValue{values:[v]}
      wrap(0x2a); // AnyValue{array_value}
    }
    wrap(0x12); // KeyValue.value
    prepend([0x0a, 1, 0x6b]); // KeyValue.key = "k"
    wrap(0x4a); // Span.attributes
    prepend([0x0a, 16, ...Array(16).fill(1), 0x12, 8, ...Array(8).fill(2)]);
    wrap(0x12); // ScopeSpans.spans
    wrap(0x12); // ResourceSpans.scope_spans
    wrap(0x0a); // request.resource_spans
    return buf.subarray(start);
  }

  it('10,000-deep AnyValue nesting is MALFORMED (protobuf); 50 deep is fine', () => {
    expect(outcome(() => decodeTraces(deepSpan(10_000), opts))).toBe('malformed');
    const ok = tables(decodeTraces(deepSpan(50), opts))['svc_spans']![0]!;
    expect(ok['span_attributes']).toBe('{"k":' + '['.repeat(50) + '"x"' + ']'.repeat(50) + '}');
  });

  it('10,000-deep nesting in OTLP/JSON is MALFORMED', () => {
    let v = '{"stringValue":"x"}';
    for (let i = 0; i < 10_000; i++) v = '{"arrayValue":{"values":[' + v + ']}}';
    const body = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","attributes":[{"key":"k","value":${v}}]}]}]}]}`;
    expect(outcome(() => decodeTracesJson(body, opts))).toBe('malformed');
    const raw = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(outcome(() => decodeTracesJson(raw, opts))).toBe('malformed');
  });

  it('invalid UTF-8 in strings is kept with replacement characters, not rejected', () => {
    // Span name bytes: "ab" + 0xff + "c"
    const span = [0x0a, 16, ...Array(16).fill(1), 0x12, 8, ...Array(8).fill(2), 0x2a, 4, 0x61, 0x62, 0xff, 0x63];
    const ss = [0x12, ...varint(span.length), ...span];
    const rs = [0x12, ...varint(ss.length), ...ss];
    const r = tables(decodeTraces(Uint8Array.from([0x0a, ...varint(rs.length), ...rs]), opts))['svc_spans']![0]!;
    expect(r['span_name']).toBe('ab\uFFFDc');
  });

  it('JSON: wrong types, bad ids, bad enum names and syntax errors are MALFORMED; unknown fields are not', () => {
    const good = { resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'n' }] }] }] };
    expect(outcome(() => decodeTracesJson(JSON.stringify({ ...good, extra: [1, 2] }), opts))).toBe('ok');
    for (const bad of [
      '{',
      '[]',
      'null',
      '{"resourceSpans":{}}',
      '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}',
      '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","kind":"SPAN_KIND_NOPE"}]}]}]}',
      '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","startTimeUnixNano":"12x"}]}]}]}',
      '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":5}]}]}]}',
    ]) {
      expect(outcome(() => decodeTracesJson(bad, opts)), bad).toBe('malformed');
    }
    expect(outcome(() => decodeLogsJson('{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityNumber":"LOUD"}]}]}]}', opts))).toBe('malformed');
    expect(outcome(() => decodeMetricsJson('{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"s","sum":{"aggregationTemporality":"SOMETIMES","dataPoints":[]}}]}]}]}', opts))).toBe('malformed');
  });

  it('JSON: random mutations of a valid request give rows or MalformedError only', () => {
    const text = JSON.stringify({ resourceSpans: [{ resource: { attributes: [kv('service.name', { stringValue: 's' })] }, scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'n', kind: 2, attributes: [kv('a', { intValue: '5' })], events: [{ name: 'e' }], links: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' }] }] }] }] });
    let seed = 7;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
    const chars = '{}[]":,0a-9 nulltrue';
    for (let i = 0; i < 3000; i++) {
      const p = rnd(text.length);
      const mutated = text.slice(0, p) + chars[rnd(chars.length)] + text.slice(p + 1);
      outcome(() => decodeTracesJson(mutated, opts));
    }
  });
});

describe('log bodies read straight as a string, and the other AnyValues', () => {
  // ExportLogsServiceRequest → ResourceLogs (1) → ScopeLogs (2) → LogRecord (2) → body (5): AnyValue bytes as given.
  const lp = (field: number, bytes: number[]) => [(field << 3) | 2, ...varint(bytes.length), ...bytes];
  function varint(n: number): number[] {
    const out: number[] = [];
    while (n >= 0x80) {
      out.push((n & 0x7f) | 0x80);
      n >>>= 7;
    }
    out.push(n);
    return out;
  }
  const utf8 = (s: string) => [...Buffer.from(s, 'utf8')];
  const bodyOf = (anyValue: number[]) => {
    const req = Uint8Array.from(lp(1, lp(2, lp(2, [0x09, 1, 0, 0, 0, 0, 0, 0, 0, ...lp(5, anyValue)]))));
    return tables(decodeLogs(req, opts))['svc_logs']![0]!['body'];
  };

  it('a lone string value, empty, non-ASCII or invalid UTF-8, is the body as it is', () => {
    expect(bodyOf(lp(1, utf8('payment failed for order 42')))).toBe('payment failed for order 42');
    expect(bodyOf(lp(1, []))).toBe('');
    expect(bodyOf(lp(1, utf8('café "quoted" \\ tab\t')))).toBe('café "quoted" \\ tab\t');
    expect(bodyOf(lp(1, [0x61, 0xff, 0x62]))).toBe('a\uFFFDb');
  });

  it('a string followed by another field is that field (the last one wins), and no value is no body', () => {
    expect(bodyOf([...lp(1, utf8('first')), 0x18, 7])).toBe('7');
    expect(bodyOf([...lp(1, utf8('first')), ...lp(1, utf8('second'))])).toBe('second');
    expect(bodyOf([0x18, 7, ...lp(1, utf8('last'))])).toBe('last');
    expect(bodyOf([])).toBeNull();
  });

  it('a string whose length runs past its AnyValue is malformed', () => {
    expect(() => bodyOf([0x0a, 9, 0x61])).toThrow(MalformedError);
  });
});
