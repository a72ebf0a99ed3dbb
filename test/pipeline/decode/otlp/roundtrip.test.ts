// Hand-built requests encoded by protobufjs from proto/ decode field by field; the OTLP/JSON form of
// the same request gives the same rows; invalid records are rejected (partial success).
import { describe, expect, it } from 'vitest';
import {
  decodeLogs,
  decodeLogsJson,
  decodeMetrics,
  decodeMetricsJson,
  decodeTraces,
  decodeTracesJson,
} from '../../../../src/pipeline/decode/otlp/index.js';
import { encodeExportResponse, encodeStatus, exportResponseJson, statusJson } from '../../../../src/receivers/otlp-responses.js';
import { LOGS_REQ, METRICS_REQ, TRACE_REQ, canon, encode, tables, type } from './helpers.js';

const NOW = 1_700_000_000_000_000;
const opts = { nowUs: NOW };
const TID = '0af7651916cd43dd8448eb211c80319c';
const SID = 'b7ad6b7169203331';
const PID = '00f067aa0ba902b7';
const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
const kv = (key: string, value: Record<string, unknown>) => ({ key, value });

function resource(extra: Record<string, unknown>[] = []) {
  return {
    attributes: [
      kv('service.name', { stringValue: 'checkout' }),
      kv('service.version', { stringValue: '1.4.2' }),
      kv('service.instance.id', { stringValue: 'i-1' }),
      kv('deployment.environment.name', { stringValue: 'prod' }),
      kv('k8s.namespace.name', { stringValue: 'shop' }),
      kv('k8s.deployment.name', { stringValue: 'checkout' }),
      kv('k8s.pod.name', { stringValue: 'checkout-abc' }),
      kv('k8s.container.name', { stringValue: 'app' }),
      kv('container.image.name', { stringValue: 'ghcr.io/shop/checkout' }),
      kv('container.image.tag', { stringValue: 'v1.4.2' }),
      kv('host.name', { stringValue: 'node-7' }),
      ...extra,
    ],
  };
}

const SPAN_PB = {
  traceId: b64(TID),
  spanId: b64(SID),
  parentSpanId: b64(PID),
  traceState: 'rojo=00f067aa0ba902b7',
  flags: 0x301,
  name: 'POST /pay/{id}',
  kind: 2,
  startTimeUnixNano: '1700000000123456789',
  endTimeUnixNano: '1700000000223456999',
  attributes: [
    kv('http.request.method', { stringValue: 'post' }),
    kv('http.route', { stringValue: '/pay/{id}' }),
    kv('http.response.status_code', { intValue: '503' }),
    kv('big', { intValue: '9007199254740993' }),
    kv('neg', { intValue: '-42' }),
    kv('ratio', { doubleValue: 0.25 }),
    kv('ok', { boolValue: true }),
    kv('raw', { bytesValue: Buffer.from([0, 1, 2, 255]).toString('base64') }),
    kv('list', { arrayValue: { values: [{ stringValue: 'a' }, { intValue: '1' }, {}] } }),
    kv('map', { kvlistValue: { values: [kv('k', { stringValue: 'v"q' }), kv('n', { kvlistValue: { values: [] } })] } }),
    kv('unicode', { stringValue: 'héllo ✓ 日本' }),
    kv('esc"\\key\n', { stringValue: 'a\u0000b\u001f\t\n\r\b\f"\\/é😀\u007f\u2028' }),
    kv('int.max', { intValue: '9223372036854775807' }),
    kv('int.min', { intValue: '-9223372036854775808' }),
    kv('int.negsafe', { intValue: '-9007199254740991' }),
    kv('dbl.special', { arrayValue: { values: [{ doubleValue: NaN }, { doubleValue: Infinity }, { doubleValue: -0 }, { doubleValue: 1e300 }, { doubleValue: -2.5e-7 }] } }),
    kv('gen_ai.system', { stringValue: 'openai' }),
    kv('gen_ai.request.model', { stringValue: 'gpt-4o' }),
    kv('gen_ai.usage.prompt_tokens', { intValue: '120' }),
    kv('gen_ai.usage.output_tokens', { intValue: '30' }),
    kv('gen_ai.response.finish_reasons', { arrayValue: { values: [{ stringValue: 'stop' }] } }),
  ],
  events: [
    { timeUnixNano: '1700000000150000000', name: 'retry', attributes: [kv('attempt', { intValue: '2' })] },
    { timeUnixNano: '1700000000200000999', name: 'exception', attributes: [kv('exception.type', { stringValue: 'TimeoutError' }), kv('exception.message', { stringValue: 'upstream' })] },
  ],
  links: [{ traceId: b64('11111111111111111111111111111111'), spanId: b64('2222222222222222'), traceState: 'x=1', attributes: [kv('l', { boolValue: false })], flags: 1 }],
  status: { code: 2, message: 'boom' },
};

function toOtlpJson(v: unknown, key = ''): unknown {
  // protobufjs-object → OTLP/JSON: ids hex.
  if (Array.isArray(v)) return v.map((x) => toOtlpJson(x, key));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toOtlpJson(x, k)]));
  if (typeof v === 'string' && /^(traceId|spanId|parentSpanId)$/.test(key)) return Buffer.from(v, 'base64').toString('hex');
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v); // proto3 JSON spelling: "NaN", "Infinity"
  return v;
}

describe('traces', () => {
  const req = { resourceSpans: [{ resource: resource(), scopeSpans: [{ scope: { name: 'lib', version: '2.0' }, spans: [SPAN_PB] }] }] };

  it('decodes every span field', () => {
    const r = decodeTraces(encode(TRACE_REQ, req), opts);
    expect(r.rejected).toBe(0);
    const s = tables(r)['svc_spans']![0]!;
    expect(s).toMatchObject({
      timestamp: 1700000000123456,
      end_timestamp: 1700000000223456,
      duration_us: 100000,
      service_name: 'checkout',
      trace_id: TID,
      span_id: SID,
      parent_span_id: PID,
      trace_state: 'rojo=00f067aa0ba902b7',
      flags: 0x301,
      span_name: 'POST /pay/{id}',
      span_kind: 2,
      status_code: 2,
      status_message: 'boom',
      scope_name: 'lib',
      scope_version: '2.0',
      operation: 'POST /pay/{id}',
      is_error: true,
      error_type: 'TimeoutError',
      http_method: 'POST',
      http_route: '/pay/{id}',
      http_status_code: 503,
      gen_ai_system: 'openai',
      gen_ai_model: 'gpt-4o',
      gen_ai_input_tokens: 120,
      gen_ai_output_tokens: 30,
      gen_ai_finish_reasons: '["stop"]',
      service_version: '1.4.2',
      service_instance_id: 'i-1',
      deployment_environment: 'prod',
      k8s_namespace: 'shop',
      k8s_deployment: 'checkout',
      k8s_pod_name: 'checkout-abc',
      container_name: 'app',
      container_image: 'ghcr.io/shop/checkout:v1.4.2',
      host_name: 'node-7',
    });
    const attrs = JSON.parse(s['span_attributes'] as string);
    expect(attrs).toMatchObject({
      'http.request.method': 'post',
      neg: -42,
      ratio: 0.25,
      ok: true,
      raw: 'AAEC/w==',
      list: ['a', 1, null],
      map: { k: 'v"q', n: {} },
      unicode: 'héllo ✓ 日本',
      'esc"\\key\n': 'a\u0000b\u001f\t\n\r\b\f"\\/é😀\u007f\u2028',
      'int.negsafe': -9007199254740991,
      'dbl.special': ['NaN', 'Infinity', 0, 1e300, -2.5e-7],
    });
    expect(s['span_attributes']).toContain('"int.max":9223372036854775807');
    expect(s['span_attributes']).toContain('"int.min":-9223372036854775808');
    // 2^53 + 1 survives exactly in the JSON text.
    expect(s['span_attributes']).toContain('"big":9007199254740993');
    const events = JSON.parse(s['events_json'] as string);
    expect(events).toEqual([
      { name: 'retry', timestamp_us: 1700000000150000, attributes: { attempt: 2 } },
      { name: 'exception', timestamp_us: 1700000000200000, attributes: { 'exception.type': 'TimeoutError', 'exception.message': 'upstream' } },
    ]);
    expect(JSON.parse(s['links_json'] as string)).toEqual([
      { trace_id: '11111111111111111111111111111111', span_id: '2222222222222222', trace_state: 'x=1', attributes: { l: false }, flags: 1 },
    ]);
    expect(JSON.parse(s['resource_attributes'] as string)['service.name']).toBe('checkout');
  });

  it('OTLP/JSON of the same request (hex ids; and snake_case keys, enum names) gives the same rows', () => {
    const pb = decodeTraces(encode(TRACE_REQ, req), opts);
    const json = toOtlpJson(req) as any;
    expect(canon(tables(decodeTracesJson(JSON.stringify(json), opts)))).toBe(canon(tables(pb)));
    // snake_case keys, enum names, numbers for 64-bit ints, base64 ids
    const s = json.resourceSpans[0].scopeSpans[0].spans[0];
    const snake = {
      resource_spans: [{
        resource: json.resourceSpans[0].resource,
        scope_spans: [{
          scope: { name: 'lib', version: '2.0' },
          spans: [{
            ...s,
            traceId: undefined, spanId: undefined, parentSpanId: undefined, traceState: undefined,
            startTimeUnixNano: undefined, endTimeUnixNano: undefined,
            trace_id: b64(TID), span_id: b64(SID), parent_span_id: PID.toUpperCase(), trace_state: s.traceState,
            start_time_unix_nano: '1700000000123456789', end_time_unix_nano: '1700000000223456999',
            kind: 'SPAN_KIND_SERVER',
            status: { code: 'STATUS_CODE_ERROR', message: 'boom' },
            unknownField: { whatever: 1 },
          }],
        }],
      }],
    };
    expect(canon(tables(decodeTracesJson(JSON.stringify(snake), opts)))).toBe(canon(tables(pb)));
  });

  it('rejects spans with invalid ids and reports them, keeping the valid ones', () => {
    const bad = [
      { ...SPAN_PB, traceId: '' },
      { ...SPAN_PB, traceId: b64('00'.repeat(16)) },
      { ...SPAN_PB, spanId: b64('abcd') },
      { ...SPAN_PB, parentSpanId: b64('abcd') },
    ];
    const r = decodeTraces(encode(TRACE_REQ, { resourceSpans: [{ resource: resource(), scopeSpans: [{ spans: [SPAN_PB, ...bad] }] }] }), opts);
    expect(r.rejected).toBe(4);
    expect(r.errorMessage).toMatch(/trace_id/);
    expect(r.batches[0]!.rows).toBe(1);
    const j = decodeTracesJson(JSON.stringify(toOtlpJson({ resourceSpans: [{ resource: resource(), scopeSpans: [{ spans: [SPAN_PB, ...bad] }] }] })), opts);
    expect(j.rejected).toBe(4);
  });

  it('missing resource → unknown_service; zero times follow the state rule; empty request → no batches', () => {
    const s = { traceId: b64(TID), spanId: b64(SID), name: 'x' };
    const r = tables(decodeTraces(encode(TRACE_REQ, { resourceSpans: [{ scopeSpans: [{ spans: [s] }] }] }), opts))['svc_spans']![0]!;
    expect(r['service_name']).toBe('unknown_service');
    expect(r['timestamp']).toBe(NOW);
    expect(r['duration_us']).toBe(0);
    expect(r['parent_span_id']).toBeNull();
    expect(r['operation']).toBe('x');
    expect(decodeTraces(new Uint8Array(0), opts)).toEqual({ batches: [], rejected: 0 });
    expect(decodeTracesJson('{}', opts)).toEqual({ batches: [], rejected: 0 });
  });

  it('fields in unusual order (scope after spans, resource after scopes) decode the same', () => {
    const normal = encode(TRACE_REQ, req);
    // Build ResourceSpans with field 2 before field 1 by concatenating encoded parts.
    const RS = type('opentelemetry.proto.trace.v1.ResourceSpans');
    const onlyScopes = RS.encode(RS.fromObject({ scopeSpans: req.resourceSpans[0]!.scopeSpans })).finish();
    const onlyRes = RS.encode(RS.fromObject({ resource: req.resourceSpans[0]!.resource })).finish();
    const inner = Buffer.concat([onlyScopes, onlyRes]);
    const outer = Buffer.concat([Buffer.from([0x0a]), varint(inner.length), inner]);
    expect(canon(tables(decodeTraces(outer, opts)))).toBe(canon(tables(decodeTraces(normal, opts))));
  });
});

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

describe('large values', () => {
  it('a 1 MiB attribute value and 5,000 attributes survive intact', () => {
    const big = 'x'.repeat(1 << 20) + 'é' + '\u0001"\\'.repeat(100_000);
    const many = Array.from({ length: 5000 }, (_, i) => kv('k' + i, { intValue: String(i) }));
    const r = decodeTraces(
      encode(TRACE_REQ, { resourceSpans: [{ scopeSpans: [{ spans: [{ ...SPAN_PB, attributes: [kv('big', { stringValue: big }), ...many] }] }] }] }),
      opts,
    );
    const a = JSON.parse(tables(r)['svc_spans']![0]!['span_attributes'] as string);
    expect(a.big).toBe(big);
    expect(a.k4999).toBe(4999);
    expect(Object.keys(a).length).toBe(5001);
  });
});

describe('logs', () => {
  const rec = {
    timeUnixNano: '1700000000000001999',
    observedTimeUnixNano: '1700000000000005000',
    severityNumber: 17,
    severityText: 'Error',
    body: { stringValue: 'payment failed for order 42' },
    attributes: [kv('order', { intValue: '42' })],
    flags: 1,
    traceId: b64(TID),
    spanId: b64(SID),
    eventName: 'payment.failed',
  };
  const req = { resourceLogs: [{ resource: resource(), scopeLogs: [{ scope: { name: 'logger' }, logRecords: [rec] }] }] };

  it('decodes every log field, JSON gives the same rows', () => {
    const r = decodeLogs(encode(LOGS_REQ, req), opts);
    const l = tables(r)['svc_logs']![0]!;
    expect(l).toMatchObject({
      timestamp: 1700000000000001,
      observed_timestamp: 1700000000000005,
      service_name: 'checkout',
      severity_number: 17,
      severity_text: 'Error',
      body: 'payment failed for order 42',
      trace_id: TID,
      span_id: SID,
      flags: 1,
      event_name: 'payment.failed',
      scope_name: 'logger',
      log_attributes: '{"order":42}',
      is_error: true,
      k8s_pod_name: 'checkout-abc',
    });
    expect(canon(tables(decodeLogsJson(JSON.stringify(toOtlpJson(req)), opts)))).toBe(canon(tables(r)));
    const named = JSON.parse(JSON.stringify(toOtlpJson(req)));
    named.resourceLogs[0].scopeLogs[0].logRecords[0].severityNumber = 'SEVERITY_NUMBER_ERROR';
    expect(canon(tables(decodeLogsJson(JSON.stringify(named), opts)))).toBe(canon(tables(r)));
  });

  it('no time → observed time; neither → now; structured body is JSON; text-only error levels count', () => {
    const r = tables(
      decodeLogs(
        encode(LOGS_REQ, {
          resourceLogs: [{ scopeLogs: [{ logRecords: [
            { observedTimeUnixNano: '1600000000000000000', body: { kvlistValue: { values: [kv('a', { intValue: '1' })] } }, severityText: 'FATAL' },
            { severityNumber: 9, severityText: 'INFO' },
          ] }] }],
        }),
        opts,
      ),
    )['svc_logs']!;
    expect(r[0]).toMatchObject({ timestamp: 1600000000000000, body: '{"a":1}', is_error: true, trace_id: null, span_id: null });
    expect(r[1]).toMatchObject({ timestamp: NOW, observed_timestamp: NOW, body: null, is_error: false });
  });

  it('rejects a log record with a malformed trace id', () => {
    const r = decodeLogs(encode(LOGS_REQ, { resourceLogs: [{ scopeLogs: [{ logRecords: [rec, { ...rec, traceId: b64('abcdef') }] }] }] }), opts);
    expect(r.rejected).toBe(1);
    expect(r.batches[0]!.rows).toBe(1);
  });
});

describe('metrics', () => {
  const attrs = [kv('route', { stringValue: '/a' })];
  const base = { attributes: attrs, startTimeUnixNano: '1700000000000000000', timeUnixNano: '1700000060000000000' };
  const req = {
    resourceMetrics: [{
      resource: resource(),
      scopeMetrics: [{
        scope: { name: 'm', version: '1' },
        metrics: [
          { name: 'g', unit: '1', gauge: { dataPoints: [{ ...base, asDouble: 1.5 }, { ...base, asInt: '7', flags: 0 }, { ...base, flags: 1 }] } },
          { name: 's', description: 'sum', sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [{ ...base, asInt: '100', exemplars: [{ timeUnixNano: '1700000001000000000', asDouble: 3, traceId: b64(TID), spanId: b64(SID), filteredAttributes: [kv('u', { stringValue: 'x' })] }] }] } },
          { name: 'h', histogram: { aggregationTemporality: 1, dataPoints: [{ ...base, count: '6', sum: 12.5, min: 0.5, max: 9, bucketCounts: ['1', '2', '3'], explicitBounds: [1, 5] }] } },
          { name: 'e', exponentialHistogram: { aggregationTemporality: 2, dataPoints: [{ ...base, count: '18446744073709551615', sum: 3, scale: -2, zeroCount: '1', zeroThreshold: 0.001, positive: { offset: -3, bucketCounts: ['4', '5'] }, negative: { offset: 2, bucketCounts: ['1'] } }] } },
          { name: 'q', summary: { dataPoints: [{ ...base, count: '10', sum: 55, quantileValues: [{ quantile: 0, value: 1 }, { quantile: 0.5, value: 5 }, { quantile: 1, value: 10 }] }] } },
          { name: '', gauge: { dataPoints: [{ ...base, asDouble: 1 }] } },
        ],
      }],
    }],
  };

  it('decodes every kind into its table; JSON gives the same rows', () => {
    const r = decodeMetrics(encode(METRICS_REQ, req), opts);
    expect(r.rejected).toBe(1); // the nameless metric's point
    const t = tables(r);
    expect(t['svc_metrics_gauge']!.map((x) => x['value'])).toEqual([1.5, 7, null]);
    expect(t['svc_metrics_gauge']![0]).toMatchObject({ timestamp: 1700000060000000, start_timestamp: 1700000000000000, metric_name: 'g', metric_unit: '1', attributes: '{"route":"/a"}', scope_name: 'm', service_name: 'checkout' });
    const s = t['svc_metrics_sum']![0]!;
    expect(s).toMatchObject({ value: 100, aggregation_temporality: 2, is_monotonic: true, metric_description: 'sum' });
    expect(JSON.parse(s['exemplars_json'] as string)).toEqual([{ timestamp_us: 1700000001000000, value: 3, trace_id: TID, span_id: SID, filtered_attributes: { u: 'x' } }]);
    expect(t['svc_metrics_histogram']![0]).toMatchObject({ metric_type: 'histogram', count: 6, sum: 12.5, min: 0.5, max: 9, bucket_counts: [1, 2, 3], explicit_bounds: [1, 5], quantiles: null, aggregation_temporality: 1 });
    expect(t['svc_metrics_histogram']![1]).toMatchObject({ metric_type: 'summary', count: 10, sum: 55, min: 1, max: 10, bucket_counts: null, quantiles: [0, 0.5, 1], quantile_values: [1, 5, 10] });
    expect(t['svc_metrics_exp_histogram']![0]).toMatchObject({ count: 18446744073709551615n, scale: -2, zero_count: 1, zero_threshold: 0.001, positive_offset: -3, positive_bucket_counts: [4, 5], negative_offset: 2, negative_bucket_counts: [1] });
    const j = decodeMetricsJson(JSON.stringify(toOtlpJson(req)), opts);
    expect(j.rejected).toBe(1);
    expect(canon(tables(j))).toBe(canon(t));
  });

  it('rejects histogram points whose bucket counts do not match the bounds', () => {
    const r = decodeMetrics(encode(METRICS_REQ, { resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: 'h', histogram: { dataPoints: [{ count: '1', bucketCounts: ['1'], explicitBounds: [1, 2] }] } }] }] }] }), opts);
    expect(r.rejected).toBe(1);
    expect(r.batches).toEqual([]);
  });

  it('reads unpacked repeated fields as well as packed ones', () => {
    // HistogramDataPoint: count(4)=2, bucket_counts(6) unpacked fixed64 x2, explicit_bounds(7) unpacked double x1
    const f64 = (n: number) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; };
    const d64 = (n: number) => { const b = Buffer.alloc(8); b.writeDoubleLE(n); return b; };
    const dp = Buffer.concat([Buffer.from([0x21]), f64(2), Buffer.from([0x31]), f64(1), Buffer.from([0x31]), f64(1), Buffer.from([0x39]), d64(10)]);
    const hist = Buffer.concat([Buffer.from([0x0a]), varint(dp.length), dp]);
    const m = Buffer.concat([Buffer.from([0x0a, 0x01, 0x68, 0x4a]), varint(hist.length), hist]);
    const sm = Buffer.concat([Buffer.from([0x12]), varint(m.length), m]);
    const rm = Buffer.concat([Buffer.from([0x12]), varint(sm.length), sm]);
    const body = Buffer.concat([Buffer.from([0x0a]), varint(rm.length), rm]);
    const h = tables(decodeMetrics(body, opts))['svc_metrics_histogram']![0]!;
    expect(h).toMatchObject({ count: 2, bucket_counts: [1, 1], explicit_bounds: [10] });
  });
});

describe('responses', () => {
  it('encodes partial success for every signal as protobuf and JSON', () => {
    for (const [sig, name, field] of [
      ['traces', 'trace.v1.ExportTraceServiceResponse', 'rejectedSpans'],
      ['logs', 'logs.v1.ExportLogsServiceResponse', 'rejectedLogRecords'],
      ['metrics', 'metrics.v1.ExportMetricsServiceResponse', 'rejectedDataPoints'],
      ['profiles', 'profiles.v1development.ExportProfilesServiceResponse', 'rejectedProfiles'],
    ] as const) {
      const T = type('opentelemetry.proto.collector.' + name);
      const m = T.toObject(T.decode(encodeExportResponse(sig, 3, 'bad ids')), { longs: Number }) as any;
      expect(m.partialSuccess[field]).toBe(3);
      expect(m.partialSuccess.errorMessage).toBe('bad ids');
      expect(JSON.parse(exportResponseJson(sig, 3, 'bad ids'))).toEqual({ partialSuccess: { [field]: 3, errorMessage: 'bad ids' } });
      expect(encodeExportResponse(sig, 0).length).toBe(0);
      expect(exportResponseJson(sig, 0)).toBe('{}');
    }
  });

  it('encodes google.rpc.Status', () => {
    const T = type('google.rpc.Status');
    expect(T.toObject(T.decode(encodeStatus(3, 'truncated varint')))).toEqual({ code: 3, message: 'truncated varint' });
    expect(JSON.parse(statusJson(3, 'x'))).toEqual({ code: 3, message: 'x' });
  });
});

describe('OTLP/JSON spellings', () => {
  it('snake_case keys and enum names in metrics and logs give the same rows as lowerCamelCase and integers', () => {
    const camel = {
      resourceMetrics: [{ resource: { attributes: [kv('service.name', { stringValue: 's' })] }, scopeMetrics: [{ metrics: [
        { name: 'c', sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ timeUnixNano: '5000', startTimeUnixNano: 1000, asInt: 3 }] } },
        { name: 'e', exponentialHistogram: { aggregationTemporality: 2, dataPoints: [{ timeUnixNano: '5000', count: 2, zeroCount: '1', positive: { offset: 1, bucketCounts: [1] } }] } },
      ] }] }],
    };
    const snake = {
      resource_metrics: [{ resource: { attributes: [kv('service.name', { string_value: 's' })] }, scope_metrics: [{ metrics: [
        { name: 'c', sum: { aggregation_temporality: 'AGGREGATION_TEMPORALITY_DELTA', is_monotonic: true, data_points: [{ time_unix_nano: 5000, start_time_unix_nano: '1000', as_int: '3' }] } },
        { name: 'e', exponential_histogram: { aggregation_temporality: 'AGGREGATION_TEMPORALITY_CUMULATIVE', data_points: [{ time_unix_nano: '5000', count: '2', zero_count: 1, positive: { offset: 1, bucket_counts: ['1'] } }] } },
      ] }] }],
    };
    const a = decodeMetricsJson(JSON.stringify(camel), opts);
    expect(a.batches.map((b) => b.rows)).toEqual([1, 1]);
    expect(canon(tables(decodeMetricsJson(JSON.stringify(snake), opts)))).toBe(canon(tables(a)));
    const logsCamel = { resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: '2000', severityNumber: 13, severityText: 'WARN', eventName: 'x', body: { stringValue: 'b' } }] }] }] };
    const logsSnake = { resource_logs: [{ scope_logs: [{ log_records: [{ time_unix_nano: '2000', severity_number: 'SEVERITY_NUMBER_WARN', severity_text: 'WARN', event_name: 'x', body: { string_value: 'b' } }] }] }] };
    expect(canon(tables(decodeLogsJson(JSON.stringify(logsSnake), opts)))).toBe(canon(tables(decodeLogsJson(JSON.stringify(logsCamel), opts))));
  });
});
