// The protobuf wire reader behind the OTLP decoders: one input at a time in module state (the
// bytes B, the cursor P, a 64-bit scratch LO/HI), varints, fixed-width numbers, length prefixes and
// field skipping, and strings (an interning cache for short ones, Buffer's native UTF-8 slice for
// the rest). Other modules read P, B, BUF, LO and HI as live bindings and move the cursor with seek.
//
// Robustness: every read is bounds-checked against the end of its enclosing message; truncated
// varints, lengths past the end, wire types 3/4/6/7 and field number 0 throw MalformedError (code
// 'MALFORMED'). Invalid UTF-8 is decoded with U+FFFD replacement characters (the text is kept, the
// bytes that are not UTF-8 are marked), never rejected.
import { nanosToMicros } from './normalise.js';
import { MalformedError } from './batch.js';
import type { NodeBuffer } from '../../../store/byte-sink.js';

export interface Utf8Buffer extends NodeBuffer {
  hexSlice(start: number, end: number): string;
}

export let B: Uint8Array = new Uint8Array(0);
export let BUF: Utf8Buffer = Buffer.alloc(0) as Utf8Buffer;
export let P = 0;
const F64 = new Float64Array(1);
const F64B = new Uint8Array(F64.buffer);

/** Moves the cursor (imported bindings cannot be assigned). */
export function seek(p: number): void {
  P = p;
}

export function fail(msg: string): never {
  throw new MalformedError(msg + ' at byte ' + P);
}

export function setInput(body: Uint8Array): void {
  B = body;
  BUF = (Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)) as Utf8Buffer;
  P = 0;
}

const EMPTY = new Uint8Array(0);
const EMPTY_BUF = Buffer.alloc(0) as Utf8Buffer;

/** Drops the reference to the last input so that it can be collected. */
export function clearInput(): void {
  B = EMPTY;
  BUF = EMPTY_BUF;
}

/** A varint's low 32 bits as an unsigned number (tags, enums, uint32, int32 after `| 0`). */
export function v32(end: number): number {
  let b = B[P]!;
  if (P < end && b < 0x80) {
    P++;
    return b;
  }
  let r = 0;
  let shift = 0;
  for (let i = 0; i < 10; i++) {
    if (P >= end) fail('truncated varint');
    b = B[P++]!;
    if (shift < 32) r |= (b & 0x7f) << shift;
    shift += 7;
    if (b < 0x80) return r >>> 0;
  }
  return fail('varint longer than 10 bytes');
}

/** A varint as a full 64-bit value: [lo, hi] in module scratch. */
export let LO = 0;
export let HI = 0;
export function v64(end: number): void {
  let lo = 0;
  let hi = 0;
  let b = 0;
  let i = 0;
  for (; i < 4; i++) {
    if (P >= end) fail('truncated varint');
    b = B[P++]!;
    lo |= (b & 0x7f) << (i * 7);
    if (b < 0x80) {
      LO = lo >>> 0;
      HI = 0;
      return;
    }
  }
  if (P >= end) fail('truncated varint');
  b = B[P++]!;
  lo |= (b & 0x0f) << 28;
  hi = (b & 0x7f) >> 4;
  if (b >= 0x80) {
    for (i = 0; i < 5; i++) {
      if (P >= end) fail('truncated varint');
      b = B[P++]!;
      hi |= (b & 0x7f) << (i * 7 + 3);
      if (b < 0x80) break;
    }
    if (b >= 0x80) fail('varint longer than 10 bytes');
  }
  LO = lo >>> 0;
  HI = hi >>> 0;
}

const TWO32 = 4294967296;

/** (LO, HI) as a signed int64: number when safe, else bigint. */
export function int64Value(): number | bigint {
  if (HI < 0x200000) return HI * TWO32 + LO;
  if (HI >= 0xffe00000) {
    // negative; -(2^64 - v)
    const v = (HI - TWO32) * TWO32 + LO;
    if (v >= -9007199254740991) return v;
  }
  return BigInt.asIntN(64, (BigInt(HI) << 32n) | BigInt(LO));
}

/** (LO, HI) as an unsigned int64: number when safe, else bigint. */
export function uint64Value(): number | bigint {
  if (HI < 0x200000) return HI * TWO32 + LO;
  return (BigInt(HI) << 32n) | BigInt(LO);
}

/** Reads a length prefix; returns the end offset of the delimited bytes (start is P). */
export function len(end: number): number {
  let n: number;
  const b = B[P]!;
  if (P < end && b < 0x80) {
    P++;
    n = b;
  } else {
    v64(end);
    if (HI !== 0) fail('length prefix too large');
    n = LO;
  }
  const e = P + n;
  if (e > end) fail('length ' + n + ' runs past the end of its message');
  return e;
}

export function skip(tag: number, end: number): void {
  if (tag >>> 3 === 0) fail('field number 0');
  switch (tag & 7) {
    case 0:
      v64(end);
      return;
    case 1:
      if (P + 8 > end) fail('truncated fixed64');
      P += 8;
      return;
    case 2:
      P = len(end);
      return;
    case 5:
      if (P + 4 > end) fail('truncated fixed32');
      P += 4;
      return;
    default:
      fail('unsupported wire type ' + (tag & 7));
  }
}

export function fixed32(end: number): number {
  if (P + 4 > end) fail('truncated fixed32');
  const p = P;
  P += 4;
  return (B[p]! | (B[p + 1]! << 8) | (B[p + 2]! << 16)) + B[p + 3]! * 0x1000000;
}

/** fixed64 into (LO, HI). */
export function fixed64(end: number): void {
  if (P + 8 > end) fail('truncated fixed64');
  const p = P;
  P += 8;
  LO = (B[p]! | (B[p + 1]! << 8) | (B[p + 2]! << 16)) + B[p + 3]! * 0x1000000;
  HI = (B[p + 4]! | (B[p + 5]! << 8) | (B[p + 6]! << 16)) + B[p + 7]! * 0x1000000;
}

export function micros(end: number): number {
  fixed64(end);
  return nanosToMicros(LO, HI);
}

export function double(end: number): number {
  if (P + 8 > end) fail('truncated double');
  for (let i = 0; i < 8; i++) F64B[i] = B[P + i]!;
  P += 8;
  return F64[0]!;
}

// Short strings (attribute keys, enum-like values, names) repeat across spans: they are interned in
// a small direct-mapped cache keyed by their bytes, which skips the native decode call (~100 ns).
const CACHE_SIZE = 4096;
const CACHE_MAX_LEN = 48;
const cLen = new Int32Array(CACHE_SIZE).fill(-1);
const cBytes = new Uint8Array(CACHE_SIZE * CACHE_MAX_LEN);
const cStr: string[] = new Array<string>(CACHE_SIZE).fill('');

export function str(s: number, e: number): string {
  const n = e - s;
  if (n === 0) {
    return '';
  }
  if (n > CACHE_MAX_LEN) {
    return BUF.utf8Slice(s, e);
  }
  // Hash the length, the first 8 and the last 8 bytes; a hit is confirmed byte by byte.
  let h = Math.imul(n, 0x9e3779b1);
  const m = n < 8 ? e : s + 8;
  for (let i = s; i < m; i++) h = Math.imul(h ^ B[i]!, 16777619);
  for (let i = m > e - 8 ? m : e - 8; i < e; i++) h = Math.imul(h ^ B[i]!, 16777619);
  const idx = (h ^ (h >>> 13)) & (CACHE_SIZE - 1);
  if (cLen[idx] === n) {
    const base = idx * CACHE_MAX_LEN - s;
    let j = s;
    while (j < e && cBytes[base + j] === B[j]) j++;
    if (j === e) return cStr[idx]!;
  }
  let ascii = 0;
  for (let i = s; i < e; i++) ascii |= B[i]!;
  const r = ascii < 0x80 ? BUF.latin1Slice(s, e) : BUF.utf8Slice(s, e);
  cLen[idx] = n;
  cBytes.set(B.subarray(s, e), idx * CACHE_MAX_LEN);
  cStr[idx] = r;
  return r;
}

/** A length-delimited string field at P. */
export function readStr(end: number): string {
  const e = len(end);
  const s = P;
  P = e;
  return str(s, e);
}

/** A length-delimited bytes field at P, as lower-case hex. */
export function readHex(end: number): string {
  const e = len(end);
  const r = e === P ? '' : BUF.hexSlice(P, e);
  P = e;
  return r;
}
