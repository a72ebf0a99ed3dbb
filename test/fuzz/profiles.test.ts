// Fuzzing the profile parsers through the pool's profile task, exactly what a request body goes
// through: multipart extraction, capped gunzip, format sniffing, push.v1.PushRequest (protobuf and
// Connect JSON), the WASM pprof decoder, OTLP profiles, rows, CSV. Property: every body and query
// gives rows or a decode error with a client (4xx) code — never INTERNAL (a 5xx), never a thrown
// exception, never a hang. And the WASM pprof decoder agrees with its TypeScript twin on every input.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/core/errors.js';
import { DecodeError } from '../../src/pipeline/decode/decode-error.js';
import { referenceDecoder, wasmDecoder, type IngestQuery } from '../../src/pipeline/decode/profiles/index.js';
import { runProfile, type ProfileTask } from '../../src/pipeline/profile-task.js';
import type { IngestResult } from '../../src/pipeline/tasks.js';
import { budget, noHang, testTimeout } from './budget.js';
import { hostileJson } from './hostile-json.js';
import { ingestQuery, multipart, otlpProfiles, pprofBody, pprofBytes, pushJson, pushProto } from './profiles-gen.js';
import { hostileBytes, mutate, opArb } from './wire.js';

const MAX_BYTES = 20 << 20;
const NAMED: IngestQuery = { name: 'fuzz{env=ci}', from: null, until: null, sampleRate: null, spyName: null, format: null };
const PUSH: IngestQuery = { ...NAMED, name: null };

function run(task: Omit<ProfileTask, 'kind' | 'maxBytes'>): IngestResult {
  return noHang(`profile ${task.source} ${task.contentType}`, () => runProfile({ kind: 'profile', maxBytes: MAX_BYTES, ...task }));
}

function expectClientOutcome(r: IngestResult): void {
  if (r.ok) {
    expect(Number.isSafeInteger(r.accepted) && r.accepted > 0).toBe(true);
    return;
  }
  expect(r.code, `a 5xx for a client's body: ${r.message}`).not.toBe('INTERNAL');
  expect(ERROR_STATUS[r.code]).toBeLessThan(500);
  expect(r.message.length).toBeGreaterThan(0);
}

type Outcome = { ok: true; value: unknown } | { ok: false; code: string };

function decodeWith(decoder: typeof wasmDecoder, b: Uint8Array): Outcome {
  try {
    return { ok: true, value: decoder.decode(b, 1_000_000) };
  } catch (e) {
    if (e instanceof DecodeError) return { ok: false, code: e.code };
    throw e;
  }
}

const octet = 'application/octet-stream';

describe('Pyroscope /ingest', () => {
  it('raw pprof (name=…): every mutated profile, plain or gzip, gives rows or a client error', () => {
    fc.assert(fc.property(hostileBytes(pprofBody), (body) => expectClientOutcome(run({ source: 'pyroscope', contentType: octet, body, query: NAMED }))), budget(150));
  }, testTimeout());

  it('query parameters: every name, from, until, sampleRate, spyName and format gives rows or a client error', () => {
    fc.assert(fc.property(pprofBody, ingestQuery, (body, query) => expectClientOutcome(run({ source: 'pyroscope', contentType: octet, body, query }))), budget(100));
  }, testTimeout());

  it('push.v1.PushRequest (protobuf): every mutated request gives rows or a client error', () => {
    fc.assert(fc.property(hostileBytes(pushProto), (body) => expectClientOutcome(run({ source: 'pyroscope', contentType: octet, body, query: PUSH }))), budget(150));
  }, testTimeout());

  it('push.v1.PushRequest (Connect JSON): every hostile document gives rows or a client error', () => {
    fc.assert(
      fc.property(hostileJson(pushJson), (text) => expectClientOutcome(run({ source: 'pyroscope', contentType: 'application/json', body: Buffer.from(text), query: PUSH }))),
      budget(150),
    );
  }, testTimeout());

  it('multipart/form-data: every damaged form and boundary gives rows or a client error', () => {
    const damage = fc.array(opArb.filter((o) => o.kind === 'flip' || o.kind === 'truncate' || o.kind === 'insert'), { maxLength: 3 });
    const contentType = (ct: string) => fc.constantFrom(ct, ct.toUpperCase(), 'multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary=""', `${ct}; boundary=other`, `multipart/form-data; boundary=${'x'.repeat(300)}`);
    fc.assert(
      fc.property(multipart.chain((m) => fc.tuple(fc.constant(m), damage, contentType(m.contentType))), ([m, ops, ct]) => {
        const body = ops.reduce(mutate, m.body);
        expectClientOutcome(run({ source: 'pyroscope', contentType: ct.toLowerCase().startsWith('multipart/form-data') ? 'multipart/form-data' + ct.slice('multipart/form-data'.length) : ct, body, query: NAMED }));
      }),
      budget(150),
    );
  }, testTimeout());
});

describe('OTLP profiles', () => {
  it('every mutated ExportProfilesServiceRequest gives rows, nothing, or a client error', () => {
    fc.assert(
      fc.property(hostileBytes(otlpProfiles), (body) => {
        const r = run({ source: 'otlp', contentType: 'application/x-protobuf', body, query: {} });
        if (r.ok) expect(r.accepted).toBeGreaterThanOrEqual(0); // an empty request is valid OTLP
        else expectClientOutcome(r);
      }),
      budget(150),
    );
  }, testTimeout());
});

describe('pprof decoders', () => {
  it('the WASM decoder and its TypeScript twin agree on every mutated profile (same result or same code)', () => {
    fc.assert(
      fc.property(hostileBytes(pprofBytes), (b) => {
        const w = noHang('wasm pprof', () => decodeWith(wasmDecoder, b));
        expect(w).toEqual(decodeWith(referenceDecoder, b));
      }),
      budget(150),
    );
  }, testTimeout());
});
