// Fuzzing the OTLP decoders (protobuf and OTLP/JSON, traces, logs, metrics) through the pool's own
// tasks, i.e. exactly what a request body goes through: capped gunzip, the WASM span transcoder or
// the TypeScript decoders, log mining, CSV encoding. Property: every body gives rows or a decode
// error with a client (4xx) code — never INTERNAL (which the receiver answers with a 5xx), never a
// thrown exception, never a hang. And where the WASM transcoder accepts spans, its twin gives the
// same bytes.
import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/core/errors.js';
import { DecodeError } from '../../src/pipeline/decode/decode-error.js';
import { decodeOtlp } from '../../src/pipeline/decode/otlp/index.js';
import { transcodeSpans } from '../../src/pipeline/decode/otlp/spans-wasm.js';
import { encodeBatches } from '../../src/pipeline/encode.js';
import { runLogs, runLogsInit } from '../../src/pipeline/logs-task.js';
import { runOtlp } from '../../src/pipeline/otlp-task.js';
import type { Encoding, IngestResult, OtlpTask, Signal } from '../../src/pipeline/tasks.js';
import { budget, noHang, testTimeout } from './budget.js';
import { hostileJson } from './hostile-json.js';
import { DOCS, protobufSeeds, type OtlpSignal } from './otlp-gen.js';
import { hostileBytes, mutatedMessage, opArb, mutate } from './wire.js';

const MAX_BYTES = 20 << 20;
const SIGNALS: OtlpSignal[] = ['traces', 'logs', 'metrics'];
const TENANT = 'fuzz';

beforeAll(() => {
  runLogsInit({ kind: 'logs-init', tenant: TENANT, rows: [] });
});

/** The worker's task for a body, as the receivers build it. */
function run(signal: Signal, encoding: Encoding, body: Uint8Array, gzip = false): IngestResult {
  const task: OtlpTask = { kind: 'otlp', signal, encoding, gzip, body, maxBytes: MAX_BYTES, tenant: TENANT };
  return noHang(`${signal}/${encoding}`, () => (signal === 'logs' ? runLogs(task) : runOtlp(task)));
}

/** Rows, or a failure whose code the receivers answer with a 4xx. */
function expectClientOutcome(r: IngestResult): void {
  if (r.ok) {
    expect(Number.isSafeInteger(r.accepted) && r.accepted >= 0).toBe(true);
    expect(Number.isSafeInteger(r.rejected) && r.rejected >= 0).toBe(true);
    return;
  }
  expect(r.code, `a 5xx for a client's body: ${r.message}`).not.toBe('INTERNAL');
  expect(ERROR_STATUS[r.code]).toBeLessThan(500);
  expect(r.message.length).toBeGreaterThan(0);
}

/** A gzipped body, itself sometimes damaged (bit flips, truncation). */
const gzipped = (seeds: fc.Arbitrary<Uint8Array>) =>
  fc.tuple(seeds, fc.array(opArb.filter((o) => o.kind === 'flip' || o.kind === 'truncate' || o.kind === 'insert'), { maxLength: 2 })).map(([b, ops]) => ops.reduce(mutate, new Uint8Array(gzipSync(b))));

describe.each(SIGNALS)('%s', (signal) => {
  const seeds = protobufSeeds(signal);

  it('protobuf: every mutated message gives rows or a client error', () => {
    fc.assert(fc.property(hostileBytes(seeds), (body) => expectClientOutcome(run(signal, 'protobuf', body))), budget(150));
  }, testTimeout());

  it('protobuf, gzip: every (damaged) gzip body gives rows or a client error', () => {
    fc.assert(fc.property(gzipped(mutatedMessage(seeds, 2)), (body) => expectClientOutcome(run(signal, 'protobuf', body, true))), budget(40));
  }, testTimeout());

  it('protobuf: the TypeScript decoder alone throws nothing but a client DecodeError', () => {
    fc.assert(
      fc.property(hostileBytes(seeds), (body) => {
        try {
          noHang(`decode ${signal}`, () => decodeOtlp(signal, 'protobuf', body, { nowUs: 1 }));
        } catch (e) {
          expect(e).toBeInstanceOf(DecodeError);
          expect(ERROR_STATUS[(e as DecodeError).code]).toBeLessThan(500);
        }
      }),
      budget(150),
    );
  }, testTimeout());

  it('OTLP/JSON: every hostile document gives rows or a client error', () => {
    fc.assert(fc.property(hostileJson(DOCS[signal]), (text) => expectClientOutcome(run(signal, 'json', Buffer.from(text)))), budget(150));
  }, testTimeout());
});

describe('spans: the WASM transcoder and its twin', () => {
  it('where the transcoder accepts a mutated message, the twin gives the same CSV and counts', () => {
    const NOW = 1_763_000_000_000_000;
    fc.assert(
      fc.property(hostileBytes(protobufSeeds('traces')), (body) => {
        const w = noHang('transcodeSpans', () => transcodeSpans(body, NOW));
        if (!w) return;
        const d = decodeOtlp('traces', 'protobuf', body, { nowUs: NOW });
        const t = encodeBatches(d.batches);
        expect(w.parts.map((p) => Buffer.from(p.csv).toString('utf8'))).toEqual(t.parts.map((p) => Buffer.from(p.csv).toString('utf8')));
        expect([w.accepted, w.rejected, w.services, w.buckets]).toEqual([d.accepted, d.rejected, t.services, t.buckets]);
      }),
      budget(150),
    );
  }, testTimeout());
});
