// The protobuf and OTLP/JSON walkers of `tds replay`, against an independent encoder (protobufjs over
// proto/): records counted as the server counts them, every timestamp moved by the same constant (an
// unset one left unset), service names prefixed with the rest of the request unchanged, the signal
// told from the bytes, files split in every framing, and hostile bytes refused without a crash.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encode, type, LOGS_REQ, METRICS_REQ, TRACE_REQ } from '../pipeline/decode/otlp/helpers.js';
import { prefixServices, sniffSignal, splitFile, walkRequest, WireError } from '../../src/cli/replay/wire.js';
import { prefixJson, walkJson } from '../../src/cli/replay/json.js';
import { profilesJsonToProtobuf } from '../../src/cli/replay/profiles-json.js';

const PROFILES_REQ = 'opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest';
const T = 1_767_607_200_000_000_000n; // ns
const id = (n: number, len: number) => Buffer.alloc(len, n).toString('base64');

const traces = {
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }, { key: 'host.name', value: { stringValue: 'h1' } }] },
      scopeSpans: [
        {
          scope: { name: 'lib' },
          spans: [
            { traceId: id(1, 16), spanId: id(2, 8), name: 'a', startTimeUnixNano: String(T), endTimeUnixNano: String(T + 5000n), events: [{ timeUnixNano: String(T + 10n), name: 'e' }] },
            { traceId: id(1, 16), spanId: id(3, 8), name: 'b', startTimeUnixNano: String(T + 1n), endTimeUnixNano: '0' },
          ],
        },
      ],
    },
    { resource: { attributes: [] }, scopeSpans: [{ spans: [{ traceId: id(4, 16), spanId: id(5, 8), name: 'c', startTimeUnixNano: String(T + 2n), endTimeUnixNano: String(T + 3n) }] }] },
  ],
};
const logs = {
  resourceLogs: [{ resource: {}, scopeLogs: [{ logRecords: [{ timeUnixNano: String(T), observedTimeUnixNano: String(T + 7n), body: { stringValue: 'x' } }, { observedTimeUnixNano: String(T + 9n), body: { stringValue: 'y' } }] }] }],
};
const metrics = {
  resourceMetrics: [
    {
      resource: {},
      scopeMetrics: [
        {
          metrics: [
            { name: 'g', gauge: { dataPoints: [{ timeUnixNano: String(T), asDouble: 1 }, { timeUnixNano: String(T + 1n), asDouble: 2, exemplars: [{ timeUnixNano: String(T + 2n), asDouble: 3 }] }] } },
            { name: 'h', histogram: { dataPoints: [{ startTimeUnixNano: String(T - 100n), timeUnixNano: String(T), count: '1', bucketCounts: ['1'], explicitBounds: [] }] } },
            { name: 's', summary: { dataPoints: [{ timeUnixNano: String(T + 4n), count: '1', sum: 2 }] } },
          ],
        },
      ],
    },
  ],
};

const decode = (name: string, b: Uint8Array) => type(name).toObject(type(name).decode(b), { longs: String, bytes: String, defaults: false }) as any;

describe('protobuf walk', () => {
  it('counts records and reads the timestamp range of each signal', () => {
    expect(walkRequest(encode(TRACE_REQ, traces), 'traces')).toMatchObject({ records: 3, minNs: T, maxNs: T + 5000n });
    expect(walkRequest(encode(LOGS_REQ, logs), 'logs')).toMatchObject({ records: 2, minNs: T, maxNs: T + 9n });
    expect(walkRequest(encode(METRICS_REQ, metrics), 'metrics')).toMatchObject({ records: 4, minNs: T - 100n, maxNs: T + 4n });
  });

  it('moves every set timestamp by the shift and leaves unset ones at 0', () => {
    const b = encode(TRACE_REQ, traces);
    walkRequest(b, 'traces', { shiftNs: 1000n });
    const d = decode(TRACE_REQ, b);
    const spans = d.resourceSpans[0].scopeSpans[0].spans;
    expect(spans[0].startTimeUnixNano).toBe(String(T + 1000n));
    expect(spans[0].endTimeUnixNano).toBe(String(T + 6000n));
    expect(spans[0].events[0].timeUnixNano).toBe(String(T + 1010n));
    expect(spans[1].endTimeUnixNano ?? '0').toBe('0');
    const m = encode(METRICS_REQ, metrics);
    walkRequest(m, 'metrics', { shiftNs: -100n });
    const dm = decode(METRICS_REQ, m).resourceMetrics[0].scopeMetrics[0].metrics;
    expect(dm[0].gauge.dataPoints[1].exemplars[0].timeUnixNano).toBe(String(T + 2n - 100n));
    expect(dm[1].histogram.dataPoints[0].startTimeUnixNano).toBe(String(T - 200n));
  });

  it('prefixes service.name, adds one where there is none, and keeps the rest of the request', () => {
    const out = prefixServices(encode(TRACE_REQ, traces), 'case1/');
    const d = decode(TRACE_REQ, out);
    expect(d.resourceSpans[0].resource.attributes).toEqual([
      { key: 'service.name', value: { stringValue: 'case1/checkout' } },
      { key: 'host.name', value: { stringValue: 'h1' } },
    ]);
    expect(d.resourceSpans[1].resource.attributes).toEqual([{ key: 'service.name', value: { stringValue: 'case1/unknown_service' } }]);
    const before = decode(TRACE_REQ, encode(TRACE_REQ, traces));
    expect(d.resourceSpans.map((r: any) => r.scopeSpans)).toEqual(before.resourceSpans.map((r: any) => r.scopeSpans));
  });

  it('tells the signal from the bytes', () => {
    expect(sniffSignal(encode(TRACE_REQ, traces))).toBe('traces');
    expect(sniffSignal(encode(LOGS_REQ, logs))).toBe('logs');
    expect(sniffSignal(encode(METRICS_REQ, metrics))).toBe('metrics');
    expect(sniffSignal(profilesJsonToProtobuf(profilesJson))).toBe('profiles');
    expect(sniffSignal(new Uint8Array([1, 2, 3, 4, 5]))).toBeNull();
  });

  it('splits files in each framing, keeping the frames before a truncated one', () => {
    const a = encode(TRACE_REQ, traces);
    const b = encode(LOGS_REQ, logs);
    const be = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
    const varint = (n: number) => Buffer.from(n < 128 ? [n] : [(n & 127) | 128, n >> 7]);
    expect(splitFile(a, null)).toMatchObject({ framing: 'single', messages: [a], truncated: null });
    expect(splitFile(Buffer.concat([be(a.length), a, be(b.length), b]), null)).toMatchObject({ framing: 'u32be', messages: [a, b] });
    expect(splitFile(Buffer.concat([varint(a.length), a, varint(b.length), b]), null)).toMatchObject({ framing: 'varint', messages: [a, b] });
    const cut = splitFile(Buffer.concat([be(a.length), a, be(b.length), b.subarray(0, 10)]), null);
    expect(cut.messages).toEqual([a]);
    expect(cut.truncated).toEqual({ at: 2, want: b.length, have: 10 });
    expect(() => splitFile(Buffer.from('not protobuf at all, just text'), null)).toThrow(WireError);
  });

  it('never crashes on hostile bytes: a WireError or a result', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.constantFrom('traces', 'logs', 'metrics', 'profiles'), (bytes, signal) => {
        for (const fn of [() => walkRequest(bytes, signal as never, { shiftNs: 5n }), () => splitFile(bytes, null), () => prefixServices(bytes, 'p/'), () => sniffSignal(bytes)]) {
          try {
            fn();
          } catch (err) {
            if (!(err instanceof WireError)) throw err;
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});

const profilesJson = {
  resourceProfiles: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'api' } }] },
      scopeProfiles: [
        {
          profiles: [
            {
              sampleType: { typeStrindex: 1, unitStrindex: 2 },
              timeUnixNano: String(T),
              durationNano: '1000000000',
              profileId: '0102030405060708090a0b0c0d0e0f10',
              samples: [{ stackIndex: 0, values: ['5'], timestampsUnixNano: [String(T + 1n), String(T + 2n)] }],
            },
          ],
        },
      ],
    },
  ],
  dictionary: { stringTable: ['', 'cpu', 'nanoseconds', 'main'], functionTable: [{ nameStrindex: 3 }], locationTable: [{ lines: [{ functionIndex: 0, line: '12' }] }], stackTable: [{ locationIndices: [0] }] },
};

describe('OTLP/JSON walk', () => {
  it('counts, shifts (as strings) and prefixes like the protobuf walk', () => {
    const doc = structuredClone(traces) as any;
    doc.resourceSpans[0].scopeSpans[0].spans[0].traceId = '01'.repeat(16);
    expect(walkJson(doc, 'traces', { shiftNs: 1000n })).toMatchObject({ records: 3, minNs: T + 1000n, maxNs: T + 6000n });
    expect(doc.resourceSpans[0].scopeSpans[0].spans[0].events[0].timeUnixNano).toBe(String(T + 1010n));
    expect(doc.resourceSpans[0].scopeSpans[0].spans[1].endTimeUnixNano).toBe('0');
    prefixJson(doc, 'traces', 'x/');
    expect(doc.resourceSpans[0].resource.attributes[0]).toEqual({ key: 'service.name', value: { stringValue: 'x/checkout' } });
    expect(doc.resourceSpans[1].resource.attributes).toEqual([{ key: 'service.name', value: { stringValue: 'x/unknown_service' } }]);
  });

  it('reads snake_case keys and numeric timestamps', () => {
    const doc = { resource_logs: [{ scope_logs: [{ log_records: [{ time_unix_nano: 1_000_000, observed_time_unix_nano: '2000000' }] }] }] };
    expect(walkJson(doc, 'logs', { shiftNs: 5n })).toMatchObject({ records: 1, minNs: 1_000_005n, maxNs: 2_000_005n });
    expect(doc.resource_logs[0]!.scope_logs[0]!.log_records[0]).toEqual({ time_unix_nano: '1000005', observed_time_unix_nano: '2000005' });
  });

  it('refuses a request whose parts have the wrong types', () => {
    expect(() => walkJson({ resourceSpans: [{ scopeSpans: 'x' }] }, 'traces')).toThrow(/not an object/);
    expect(() => walkJson({ resourceSpans: [{ scopeSpans: [{ spans: [{ startTimeUnixNano: 'soon' }] }] }] }, 'traces')).toThrow(/not a timestamp/);
  });

  it('encodes OTLP/JSON profiles as the protobuf the server decodes', () => {
    const b = profilesJsonToProtobuf(profilesJson);
    const d = decode(PROFILES_REQ, b);
    const p = d.resourceProfiles[0].scopeProfiles[0].profiles[0];
    expect(p.timeUnixNano).toBe(String(T));
    expect(Buffer.from(p.profileId, 'base64').toString('hex')).toBe('0102030405060708090a0b0c0d0e0f10');
    expect(p.samples[0]).toEqual({ stackIndex: 0, values: ['5'], timestampsUnixNano: [String(T + 1n), String(T + 2n)] });
    expect(d.dictionary.stringTable).toEqual(['', 'cpu', 'nanoseconds', 'main']);
    expect(walkRequest(b, 'profiles')).toMatchObject({ records: 1, minNs: T, maxNs: T + 2n });
  });
});
