// Hostile and broken inputs: each is refused with a DecodeError (never another exception),
// both decoders agree on the outcome, and the WASM instance keeps working afterwards.
import { gzipSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { decodePprof, DecodeError, referenceDecoder, wasmDecoder, type PprofDecoder } from '../../../../src/pipeline/decode/profiles/index.js';
import { maybeGunzip } from '../../../../src/pipeline/decode/profiles/body.js';
import { resetWasmDecoder } from '../../../../src/pipeline/decode/profiles/wasm.js';
import { bfield, encodeProfile, packed, sfield, tag, varint, vfield, type TinyProfile } from './helpers.js';
import { rng } from '../../../../testkit/rng.js';
import { ERROR_STATUS } from '../../../../src/core/errors.js';

const good: TinyProfile = {
  types: [['samples', 'count'], ['cpu', 'nanoseconds']],
  period: ['cpu', 'nanoseconds', 1000],
  locations: { 1: ['a', 'b'], 2: ['c'] },
  samples: [
    { locs: [1, 2], values: [1, 1000], labels: [{ key: 'k', str: 'v' }] },
    { locs: [2], values: [2, 2000] },
  ],
};
const GOOD = encodeProfile(good);

type Outcome = { ok: true; json: string } | { ok: false; code: string };

function outcome(d: PprofDecoder, b: Uint8Array, maxItems?: number): Outcome {
  try {
    const r = d.decode(b, maxItems);
    return { ok: true, json: JSON.stringify({ ...r, bytes: undefined }, (_k, v) => (typeof v === 'bigint' ? v.toString() : ArrayBuffer.isView(v) ? Array.from(v as Uint8Array, String) : v)) };
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e; // anything else is a bug
    return { ok: false, code: e.code };
  }
}

function expectRefused(b: Uint8Array, code = 'MALFORMED', maxItems?: number): void {
  const w = outcome(wasmDecoder, b, maxItems);
  const r = outcome(referenceDecoder, b, maxItems);
  expect(w).toEqual({ ok: false, code });
  expect(r).toEqual({ ok: false, code });
}


describe('hostile pprof input', () => {
  test('truncated varint', () => expectRefused(Uint8Array.of(...tag(9, 0), 0x80, 0x80)));
  test('varint longer than 10 bytes', () => expectRefused(Uint8Array.of(...tag(9, 0), ...new Array(11).fill(0xff), 0x01)));
  test('length past the end', () => expectRefused(Uint8Array.of(...tag(6, 2), 100, 0x61, 0x62)));
  test('huge declared length', () => expectRefused(Uint8Array.of(...tag(2, 2), ...varint(2n ** 62n), 0)));
  test('group wire types and wire types 6/7', () => {
    for (const wt of [3, 4, 6, 7]) expectRefused(Uint8Array.of(...tag(20, wt), 0));
  });
  test('field number 0', () => expectRefused(Uint8Array.of(0x00, 0x01)));
  test('field numbers past 2^29 - 1 are refused by both decoders', () => {
    // Found by fuzzing: field 2^32 was 0 in WASM (truncated to 32 bits, refused) but skipped by the twin.
    for (const f of [2 ** 29, 2 ** 32, 2 ** 32 + 3]) {
      expectRefused(Uint8Array.of(...varint(BigInt(f) * 8n), 0x01, ...GOOD));
      expectRefused(Uint8Array.of(...bfield(11, [...varint(BigInt(f) * 8n), 0x01, ...vfield(2, 1)]), ...GOOD)); // inside period_type
    }
    const largest = Uint8Array.of(...varint((2 ** 29 - 1) * 8), 0x01, ...GOOD); // the largest field number: skipped as unknown
    expect(outcome(wasmDecoder, largest)).toEqual(outcome(referenceDecoder, largest));
    expect(outcome(wasmDecoder, largest).ok).toBe(true);
  });
  test('a known field with the wrong wire type', () => {
    expectRefused(Uint8Array.of(...vfield(2, 5))); // sample as a varint
    expectRefused(Uint8Array.of(...bfield(12, [1]))); // period as bytes
  });
  test('nested message length past its parent', () => {
    expectRefused(Uint8Array.of(...bfield(2, [...tag(1, 2), 50, 1, 2])));
  });
  test('undefined location id, undefined function id, duplicate ids, string index past the table', () => {
    const s = (...b: number[][]) => Uint8Array.from([...sfield(6, ''), ...sfield(6, 'x'), ...b.flat()]);
    expectRefused(s(bfield(2, packed(1, [7]))));
    expectRefused(s(bfield(4, [...vfield(1, 1), ...bfield(4, vfield(1, 9))])));
    expectRefused(s(bfield(4, vfield(1, 1)), bfield(4, vfield(1, 1))));
    expectRefused(s(bfield(5, [...vfield(1, 1), ...vfield(2, 99)])));
    expectRefused(s(bfield(1, [...vfield(1, 1), ...vfield(2, 2 ** 40)])));
  });
  test('deeply nested unknown fields are skipped, not recursed', () => {
    let inner: number[] = [];
    for (let i = 0; i < 5000; i++) inner = bfield(20, inner);
    const b = Uint8Array.from([...GOOD, ...inner]);
    const w = outcome(wasmDecoder, b);
    expect(w.ok).toBe(true);
    expect(outcome(referenceDecoder, b)).toEqual(w);
  });
  test('ragged value counts cannot blow up the padded values matrix', () => {
    const many = Array.from({ length: 20_000 }, (_, i) => i);
    const ragged = Uint8Array.from([
      ...Array.from({ length: 200 }, () => bfield(2, [])).flat(),
      ...bfield(2, packed(2, many)),
      ...sfield(6, ''),
    ]);
    expectRefused(ragged, 'TOO_LARGE', 1_000_000);
    expect(outcome(wasmDecoder, ragged).ok).toBe(true); // 201 × 20000 padded values fit the default limit
    expect(outcome(referenceDecoder, ragged)).toEqual(outcome(wasmDecoder, ragged));
  });
  test('too many elements is TOO_LARGE', () => {
    expectRefused(GOOD, 'TOO_LARGE', 5);
  });
  test('every truncation of a valid profile: both decoders agree, only DecodeError', () => {
    for (let n = 0; n < GOOD.length; n++) {
      const b = GOOD.subarray(0, n);
      expect(outcome(wasmDecoder, b), `prefix ${n}`).toEqual(outcome(referenceDecoder, b));
    }
  });
  test('2000 random mutations: both decoders agree, only DecodeError', () => {
    const rand = rng(42);
    let refused = 0;
    for (let i = 0; i < 2000; i++) {
      const b = Uint8Array.from(GOOD);
      const edits = 1 + Math.floor(rand() * 4);
      for (let e = 0; e < edits; e++) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
      const w = outcome(wasmDecoder, b);
      expect(w, `mutation ${i}`).toEqual(outcome(referenceDecoder, b));
      if (!w.ok) refused++;
    }
    expect(refused).toBeGreaterThan(100);
    // the instance still decodes a good profile
    expect(outcome(wasmDecoder, GOOD)).toEqual(outcome(referenceDecoder, GOOD));
  });
  test('a fresh instance after reset decodes the same', () => {
    const before = outcome(wasmDecoder, GOOD);
    resetWasmDecoder();
    expect(outcome(wasmDecoder, GOOD)).toEqual(before);
  });
});

describe('gzip', () => {
  test('a gzip bomb stops at the cap with TOO_LARGE (413)', () => {
    const bomb = gzipSync(Buffer.alloc(48 << 20)); // ~48 KiB on the wire
    expect(bomb.length).toBeLessThan(1 << 20);
    let err: unknown;
    try {
      decodePprof(bomb, { maxDecompressed: 8 << 20 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).code).toBe('TOO_LARGE');
    expect(ERROR_STATUS[(err as DecodeError).code]).toBe(413);
  });
  test('corrupt and truncated gzip are MALFORMED', () => {
    const gz = gzipSync(GOOD);
    expect(() => maybeGunzip(gz.subarray(0, gz.length - 6))).toThrow(DecodeError);
    const bad = Uint8Array.from(gz);
    bad[12] ^= 0xff;
    try {
      maybeGunzip(bad);
    } catch (e) {
      expect((e as DecodeError).code).toBe('MALFORMED');
    }
  });
  test('gzip and plain bodies decode the same', () => {
    expect(JSON.stringify(decodePprof(gzipSync(GOOD)).values)).toBe(JSON.stringify(decodePprof(GOOD).values));
  });
  test('an empty body is EMPTY', () => {
    expect(() => decodePprof(new Uint8Array(0))).toThrow(expect.objectContaining({ code: 'EMPTY' }));
  });
});
