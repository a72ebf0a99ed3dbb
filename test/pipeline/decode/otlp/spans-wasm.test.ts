// The WASM span transcoder (assembly/spans.ts + pipeline/decode/otlp/spans-wasm.ts) against its twin,
// the TypeScript protobuf decoder + CSV encoder: the same CSV bytes, counts, rejections, services
// and buckets on varied requests; where it declines (malformed, invalid UTF-8, huge times) the twin
// runs, and it never accepts what the twin rejects as malformed.
import { describe, expect, it } from 'vitest';
import { MalformedError, decodeTraces } from '../../../../src/pipeline/decode/otlp/index.js';
import { transcodeSpans } from '../../../../src/pipeline/decode/otlp/spans-wasm.js';
import type { EncodedBody } from '../../../../src/pipeline/tasks.js';
import { encodeBatches } from '../../../../src/pipeline/encode.js';
import { runOtlp } from '../../../../src/pipeline/otlp-task.js';
import { realisticBatch } from '../../../../testkit/spans.js';
import { rng } from '../../../../testkit/rng.js';
import { TRACE_REQ, encode } from './helpers.js';

const NOW = 1_763_000_000_000_000;

/** The twin's answer in the transcoder's shape (throws what decodeTraces throws). */
function twin(body: Uint8Array): EncodedBody {
  const d = decodeTraces(body, { nowUs: NOW });
  const out: EncodedBody = { ...encodeBatches(d.batches), accepted: d.batches[0]?.rows ?? 0, rejected: d.rejected };
  if (d.errorMessage) out.errorMessage = d.errorMessage;
  return out;
}

const csvOf = (r: EncodedBody) => Buffer.from(r.parts[0]?.csv ?? new Uint8Array(0));

function expectSame(body: Uint8Array): EncodedBody {
  const w = transcodeSpans(body, NOW);
  expect(w, 'the transcoder declined a request it supports').not.toBeNull();
  const t = twin(body);
  expect(csvOf(w!).toString('utf8')).toBe(csvOf(t).toString('utf8'));
  expect(csvOf(w!).equals(csvOf(t))).toBe(true);
  const rest = (r: EncodedBody) => ({ ...r, parts: r.parts.map((p) => ({ ...p, csv: null })) });
  expect(rest(w!)).toEqual(rest(t));
  return w!;
}

// ---------------------------------------------------------------- a seeded request generator

const TEXTS = ['', 'GET /api/users/{id}', 'naïve café ☕', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', 'quote " and \\ backslash', 'tab\tnew\nline\rcr', 'ctl \u0001\u0002\u001f del\u007f', 'nul\u0000byte', '\u2028\u2029', '[1,"a"]', 'x'.repeat(300)];
const KEYS = [
  'http.request.method', 'http.method', 'http.route', 'http.target', 'url.path', 'url.full', 'http.url', 'http.response.status_code',
  'http.status_code', 'rpc.system', 'rpc.service', 'rpc.method', 'rpc.grpc.status_code', 'error.type', 'exception.type',
  'peer.service', 'server.address', 'server.port', 'net.peer.name', 'db.system', 'db.system.name', 'db.operation', 'db.name',
  'messaging.system', 'messaging.destination.name', 'gen_ai.system', 'gen_ai.provider.name', 'gen_ai.operation.name',
  'gen_ai.request.model', 'gen_ai.response.model', 'gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens',
  'gen_ai.usage.prompt_tokens', 'gen_ai.response.finish_reasons', 'app.custom', 'a', '', 'naïve.key', 'quote"key',
];
const RESOURCE_KEYS = [
  'service.name', 'service.namespace', 'service.version', 'service.instance.id', 'deployment.environment.name', 'deployment.environment',
  'k8s.namespace.name', 'k8s.deployment.name', 'k8s.pod.name', 'k8s.container.name', 'container.name', 'container.image.name',
  'container.image.tag', 'container.image.tags', 'host.name', 'cloud.region',
];

function generator(seed: number) {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const bytes = (n: number, zero = false) => Uint8Array.from({ length: n }, () => (zero ? 0 : Math.floor(r() * 256)));
  const value = (depth: number): Record<string, unknown> => {
    const k = Math.floor(r() * (depth > 2 ? 7 : 9));
    switch (k) {
      case 0: return { stringValue: pick(TEXTS) };
      case 1: return { boolValue: r() < 0.5 };
      case 2: return { intValue: pick(['0', '-1', '200', '503', '9007199254740991', '9007199254740993', '-9223372036854775808', '9223372036854775807', String(Math.floor(r() * 1e6))]) };
      case 3: return { doubleValue: pick([0, -0, 0.1, -2.5, 1e21, 1e-7, 123456789.125, NaN, Infinity, -Infinity, 5e-324, 1.7976931348623157e308, r()]) };
      case 4: return { bytesValue: bytes(Math.floor(r() * 5)) };
      case 5: return {};
      case 6: return { stringValue: pick(['GET', 'post', 'STOP', 'openai', 'chat', '["stop","length"]', 'stop', '500']) };
      case 7: return { arrayValue: { values: Array.from({ length: Math.floor(r() * 3) }, () => value(depth + 1)) } };
      default: return { kvlistValue: { values: Array.from({ length: Math.floor(r() * 3) }, () => ({ key: pick(KEYS), value: value(depth + 1) })) } };
    }
  };
  const attrs = (keys: readonly string[], n: number) =>
    Array.from({ length: n }, () => (r() < 0.05 ? { key: pick(keys) } : { key: pick(keys), value: value(0) }));
  const id = (n: number) => {
    const x = r();
    return x < 0.04 ? bytes(n, true) : x < 0.07 ? bytes(n + 1) : x < 0.09 ? new Uint8Array(0) : bytes(n);
  };
  const nanos = () => (r() < 0.1 ? undefined : String(1_763_000_000_000_000_000n + BigInt(Math.floor(r() * 1e12))));
  const span = () => ({
    traceId: id(16),
    spanId: id(8),
    ...(r() < 0.7 ? { parentSpanId: r() < 0.1 ? bytes(8, true) : r() < 0.1 ? new Uint8Array(0) : id(8) } : {}),
    ...(r() < 0.2 ? { traceState: pick(TEXTS) } : {}),
    name: pick(TEXTS),
    kind: pick([0, 1, 2, 3, 4, 5, -1, 7]),
    ...(r() < 0.9 ? { startTimeUnixNano: nanos() } : {}),
    ...(r() < 0.9 ? { endTimeUnixNano: nanos() } : {}),
    ...(r() < 0.5 ? { flags: pick([0, 1, 256, 4294967295]) } : {}),
    attributes: attrs(KEYS, Math.floor(r() * 12)),
    events: Array.from({ length: Math.floor(r() * 3) }, () => ({
      ...(r() < 0.8 ? { timeUnixNano: nanos() } : {}),
      name: r() < 0.5 ? 'exception' : pick(TEXTS),
      attributes: r() < 0.6 ? [{ key: 'exception.type', value: value(0) }, ...attrs(KEYS, 2)] : attrs(KEYS, 2),
    })),
    links: Array.from({ length: Math.floor(r() * 2) }, () => ({
      ...(r() < 0.8 ? { traceId: bytes(16) } : {}),
      ...(r() < 0.8 ? { spanId: bytes(8) } : {}),
      ...(r() < 0.3 ? { traceState: pick(TEXTS) } : {}),
      attributes: attrs(KEYS, 2),
      ...(r() < 0.5 ? { flags: 1 } : {}),
    })),
    ...(r() < 0.8 ? { status: { code: pick([0, 1, 2]), ...(r() < 0.5 ? { message: pick(TEXTS) } : {}) } } : {}),
  });
  return () =>
    encode(TRACE_REQ, {
      resourceSpans: Array.from({ length: 1 + Math.floor(r() * 3) }, () => ({
        ...(r() < 0.85 ? { resource: { attributes: attrs(RESOURCE_KEYS, Math.floor(r() * 8)) } } : {}),
        scopeSpans: Array.from({ length: Math.floor(r() * 3) }, () => ({
          ...(r() < 0.7 ? { scope: { name: pick(TEXTS), ...(r() < 0.5 ? { version: '1.2.3' } : {}) } } : {}),
          spans: Array.from({ length: Math.floor(r() * 6) }, span),
        })),
      })),
    });
}

// ---------------------------------------------------------------- tests

describe('WASM span transcoder against its TypeScript twin', () => {
  it('gives the same CSV, counts, services and buckets on a realistic batch', () => {
    const w = expectSame(realisticBatch(512, NOW));
    expect(w.accepted).toBe(512);
  });

  it('gives the same answers on 400 generated requests (every value type, picked keys, invalid ids, missing times)', () => {
    const next = generator(20261122);
    let rows = 0;
    let rejected = 0;
    for (let i = 0; i < 400; i++) {
      const w = expectSame(next());
      rows += w.accepted;
      rejected += w.rejected;
    }
    // The generator is meant to exercise both sides of the id rules.
    expect(rows).toBeGreaterThan(1000);
    expect(rejected).toBeGreaterThan(50);
  });

  it('a span without a name field (encoders omit empty strings) gives the twin\'s row, not a RangeError', () => {
    // Found by fuzzing: the name's input offset was taken from an unset (0) pointer.
    const body = encode(TRACE_REQ, { resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: new Uint8Array(16).fill(1), spanId: new Uint8Array(8).fill(2), kind: 2 }] }] }] });
    expect(Buffer.from(body).includes(0x2a)).toBe(false); // no Span.name tag in the message
    const w = expectSame(body);
    expect(w.accepted).toBe(1);
  });

  it('an empty request gives no rows', () => {
    expect(expectSame(new Uint8Array(0)).accepted).toBe(0);
  });

  it('declines invalid UTF-8 and times past 2^53 µs, which the twin decodes its own way', () => {
    const span = (name: string, start = '1763000000000000000') => ({
      resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: new Uint8Array(16).fill(1), spanId: new Uint8Array(8).fill(2), name, startTimeUnixNano: start }] }] }],
    });
    const bad = encode(TRACE_REQ, span('ok-XQXQ'));
    const at = Buffer.from(bad).indexOf('XQXQ');
    bad.set([0xff, 0xc0, 0xed, 0xa0], at);
    expect(transcodeSpans(bad, NOW)).toBeNull();
    expect(twin(bad).accepted).toBe(1);
    const huge = encode(TRACE_REQ, span('x', '18446744073709551615'));
    expect(transcodeSpans(huge, NOW)).toBeNull();
    expect(twin(huge).accepted).toBe(1);
    // runOtlp falls back to the twin for both.
    for (const body of [bad, huge]) {
      const r = runOtlp({ kind: 'otlp', signal: 'traces', encoding: 'protobuf', gzip: false, body, maxBytes: 1 << 20 });
      expect(r.ok && r.accepted).toBe(1);
    }
  });

  it('never accepts what the twin rejects as malformed; truncated and corrupted bodies agree or decline', () => {
    const next = generator(7);
    const r = rng(99);
    let declined = 0;
    let agreed = 0;
    for (let i = 0; i < 60; i++) {
      const body = next();
      for (let k = 0; k < 10; k++) {
        const m = k === 0 ? body : body.slice(0, Math.floor(r() * (body.length + 1)));
        if (k >= 5 && m.length) for (let j = 0; j < 3; j++) m[Math.floor(r() * m.length)] = Math.floor(r() * 256);
        const w = transcodeSpans(m, NOW);
        let t: EncodedBody | Error;
        try {
          t = twin(m);
        } catch (e) {
          expect(e).toBeInstanceOf(MalformedError);
          t = e as Error;
        }
        if (w === null) {
          declined++;
          continue;
        }
        expect(t).not.toBeInstanceOf(Error);
        expect(csvOf(w).equals(csvOf(t as EncodedBody))).toBe(true);
        agreed++;
      }
    }
    expect(declined).toBeGreaterThan(50);
    expect(agreed).toBeGreaterThan(50);
  });

  it('AnyValue nested past the twin’s depth limit is declined, and the twin says why', () => {
    // Hand-encoded (protobufjs refuses this nesting itself): field tag, varint length, bytes.
    const ld = (tag: number, b: Uint8Array): Uint8Array => {
      const len: number[] = [];
      for (let n = b.length; ; n >>>= 7) {
        if (n < 0x80) {
          len.push(n);
          break;
        }
        len.push((n & 0x7f) | 0x80);
      }
      return Uint8Array.from([tag, ...len, ...b]);
    };
    let v = ld(0x0a, Buffer.from('leaf')); // AnyValue.string_value
    for (let i = 0; i < 70; i++) v = ld(0x2a, ld(0x0a, v)); // AnyValue.array_value → ArrayValue.values
    const span = Buffer.concat([ld(0x0a, new Uint8Array(16).fill(1)), ld(0x12, new Uint8Array(8).fill(2)), ld(0x4a, Buffer.concat([ld(0x0a, Buffer.from('deep')), ld(0x12, v)]))]);
    const body = ld(0x0a, ld(0x12, ld(0x12, span))); // ResourceSpans → ScopeSpans → Span
    expect(transcodeSpans(body, NOW)).toBeNull();
    expect(() => twin(body)).toThrow(MalformedError);
  });
});
