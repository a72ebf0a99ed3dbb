// OTLP ExportTraceServiceRequest (protobuf) → svc_spans CSV rows, without making a string.
//
// The span columns that come straight from the message (ids as hex, times, names, attribute, event
// and link JSON) are written here as CSV bytes. The columns derived by TypeScript rules (service
// name, the promoted columns) are left to JS: `transcode` hands it, per span, where its picked
// attribute values are; JS writes those cells into a second buffer and `assemble` interleaves both
// into the final rows. The TypeScript twin is the protobuf decoder + CSV encoder
// (src/pipeline/decode/otlp/proto-decode.ts, src/store/csv.ts); tests require byte-identical CSV.
//
// Anything that twin would reject or treat specially is left to it: a malformed message
// (ERR_MALFORMED: the twin re-decodes and says why), a time past 2^53 µs or invalid UTF-8
// (ERR_UNSUPPORTED). Nothing traps on bad input: every read is bounds-checked against the end of
// its enclosing message and sets `err`, which every loop checks.
//
// Ownership: JS writes the body at inputPtr(len), calls transcode, reads the outputs through
// outPtr/outLen, writes the JS cells at tailsPtr(len) and calls assemble. Buffers are reused.

import { Vec } from './_vec';
import { inPtr } from './_input';
export { inputPtr } from './_input';

const ERR_MALFORMED: i32 = 1;
const ERR_UNSUPPORTED: i32 = 2;

/** Deepest AnyValue nesting (the twin's MAX_DEPTH). */
const MAX_DEPTH: i32 = 64;
const MAX_SAFE: u64 = 9007199254740991;

/** The CSV quote byte (store/csv.ts) and the separators. */
const Q: u32 = 1;
const COMMA: u32 = 0x2c;

// ---------------------------------------------------------------- buffers

class Buf {
  ptr: usize = 0;
  len: i32 = 0;
  cap: i32 = 0;

  @inline reserve(k: i32): void {
    if (this.len + k > this.cap) this.grow(this.len + k);
  }

  grow(need: i32): void {
    let c = this.cap < 4096 ? 4096 : this.cap;
    while (c < need) c <<= 1;
    this.ptr = this.ptr == 0 ? heap.alloc(<usize>c) : heap.realloc(this.ptr, <usize>c);
    this.cap = c;
  }

  @inline byte(b: u32): void {
    if (this.len >= this.cap) this.reserve(1);
    store<u8>(this.ptr + <usize>this.len, b);
    this.len++;
  }

  @inline last(): u32 {
    return this.len == 0 ? 0 : <u32>load<u8>(this.ptr + <usize>(this.len - 1));
  }

  copy(src: usize, n: i32): void {
    this.reserve(n);
    memory.copy(this.ptr + <usize>this.len, src, <usize>n);
    this.len += n;
  }

  /** A literal (see LIT). */
  @inline lit(l: u64): void {
    this.copy(<usize>(l >> 8), <i32>(l & 0xff));
  }

  decimal(v: u64): void {
    this.reserve(20);
    let d = 1;
    if (v >= 10000000000) {
      for (let x = v; x >= 10; x /= 10) d++;
    } else {
      let p: u64 = 10;
      while (v >= p) {
        d++;
        p *= 10;
      }
    }
    let k = this.ptr + <usize>(this.len + d);
    this.len += d;
    while (v >= 10) {
      const q = v / 10;
      store<u8>(--k, <u8>(48 + (v - q * 10)));
      v = q;
    }
    store<u8>(--k, <u8>(48 + v));
  }

  signed(v: i64): void {
    if (v < 0) {
      this.byte(0x2d);
      this.decimal(<u64>(-v)); // -(-2^63) wraps to 2^63 as u64, which is right
    } else this.decimal(<u64>v);
  }

  /** Gives back memory after an unusually large request. */
  trim(max: i32): void {
    if (this.cap > max) {
      heap.free(this.ptr);
      this.ptr = 0;
      this.cap = 0;
    }
    this.len = 0;
  }
}

// ---- outputs (indices for outPtr/outLen; mirrored in src/pipeline/decode/otlp/spans-wasm.ts) ----
const O = new Buf(); // 0  the span-owned part of every accepted row (see SPAN_* below)
/** 1  per accepted span, SPAN_STRIDE i32s. */
const spans = new Vec(2);
/** 2  per accepted span: its start time in µs (the timestamp column). */
const times = new Vec(3);
/** 3  picked attribute values, PICK_STRIDE f64s each: key id, type, a, b (see PICK_*). */
const picks = new Vec(3);
/** 4  per ResourceSpans: first and end index of its resource's picks. */
const resources = new Vec(2);
/** 5  per rejected span, its reason (1 trace_id, 2 span_id, 3 parent_span_id). */
const rejects = new Vec(2);
const PJ = new Buf(); // 6  JSON text of picked arrays and kvlists
const C = new Buf(); // 7  the assembled CSV

// span record fields
const SPAN_STRIDE: i32 = 12;
// 0 resource index, 1 kind, 2 status code, 3 name offset (input), 4 name length, 5 name is ASCII,
// 6 exception.type pick index or -1, 7 row start in O, 8 where the service cell goes, 9 row end,
// 10 first pick, 11 end pick

// pick value types (PICK_STRIDE f64s: key id, type, a, b)
const PICK_STRIDE: i32 = 4;
const T_NULL: i32 = 0;
const T_ASCII: i32 = 1; // a = offset in the input, b = length
const T_UTF8: i32 = 2; // same, not ASCII
const T_BOOL: i32 = 3; // a = 0 | 1
const T_NUMBER: i32 = 4; // a = the value (a safe integer or a double)
const T_BIGINT: i32 = 5; // a = low 32 bits, b = high 32 bits (signed 64-bit)
const T_JSON: i32 = 6; // a = offset in PJ, b = length
const T_BYTES: i32 = 7; // a = offset in the input, b = length (JS makes base64)

// ---- scratch ----
const A = new Buf(); // attributes of the current span
const E = new Buf(); // events of the current span
const L = new Buf(); // links of the current span
const R = new Buf(); // attributes of the current resource
const scopes = new Vec(2);
const recs = new Vec(2);
const ranges = new Vec(2);
const keys = new Buf(); // the picked keys, each: group u8, length u8, bytes

let P: usize = 0;
let err: i32 = 0;
let nowUs: u64 = 0;

/** JS's text of a finite number (src/compute/wasm.ts): AssemblyScript's own dtoa differs in places. */
@external('env', 'numberText')
declare function numberText(d: f64, dst: usize): i32;


/** Registers a picked key (its bytes at inputPtr) in `group` (0 span, 1 resource, 2 exception event). */
export function addKey(group: i32, len: i32): void {
  const h = keySig(group, len, inPtr);
  store<u8>(sigs + (h >> 3), <u8>(<u32>load<u8>(sigs + (h >> 3)) | (<u32>1 << <u32>(h & 7))));
  keys.byte(<u32>group);
  keys.byte(<u32>len);
  keys.copy(inPtr, len);
}

/** Outputs 1-5 are vectors, the others byte buffers; lengths are in bytes. */
export function outPtr(i: i32): usize {
  const v = outVec(i);
  return v != null ? v.ptr : outBuf(i).ptr;
}

export function outLen(i: i32): i32 {
  const v = outVec(i);
  return v != null ? v.len << v.shift : outBuf(i).len;
}

function outVec(i: i32): Vec | null {
  switch (i) {
    case 1: return spans;
    case 2: return times;
    case 3: return picks;
    case 4: return resources;
    case 5: return rejects;
    default: return null;
  }
}

function outBuf(i: i32): Buf {
  return i == 0 ? O : i == 6 ? PJ : C;
}

export function trim(max: i32): void {
  O.trim(max);
  spans.trim(<usize>max);
  times.trim(<usize>max);
  picks.trim(<usize>max);
  PJ.trim(max);
  C.trim(max);
  A.trim(max);
  E.trim(max);
  L.trim(max);
  R.trim(max);
}

// ASCII literals: static bytes, as (address << 8 | length) for Buf#lit.
const L_NULL: u64 = (<u64>memory.data<u8>([110, 117, 108, 108]) << 8) | 4; // null
const L_TRUE: u64 = (<u64>memory.data<u8>([116, 114, 117, 101]) << 8) | 4; // true
const L_FALSE: u64 = (<u64>memory.data<u8>([102, 97, 108, 115, 101]) << 8) | 5; // false
const L_EV_NAME: u64 = (<u64>memory.data<u8>([123, 34, 110, 97, 109, 101, 34, 58]) << 8) | 8; // {"name":
const L_EV_TS: u64 = (<u64>memory.data<u8>([44, 34, 116, 105, 109, 101, 115, 116, 97, 109, 112, 95, 117, 115, 34, 58]) << 8) | 16; // ,"timestamp_us":
const L_ATTRS: u64 = (<u64>memory.data<u8>([44, 34, 97, 116, 116, 114, 105, 98, 117, 116, 101, 115, 34, 58]) << 8) | 14; // ,"attributes":
const L_LK_TRACE: u64 = (<u64>memory.data<u8>([123, 34, 116, 114, 97, 99, 101, 95, 105, 100, 34, 58]) << 8) | 12; // {"trace_id":
const L_SPAN_ID: u64 = (<u64>memory.data<u8>([44, 34, 115, 112, 97, 110, 95, 105, 100, 34, 58]) << 8) | 11; // ,"span_id":
const L_LK_STATE: u64 = (<u64>memory.data<u8>([44, 34, 116, 114, 97, 99, 101, 95, 115, 116, 97, 116, 101, 34, 58]) << 8) | 15; // ,"trace_state":
const L_FLAGS: u64 = (<u64>memory.data<u8>([44, 34, 102, 108, 97, 103, 115, 34, 58]) << 8) | 9; // ,"flags":
const L_EMPTY: u64 = (<u64>memory.data<u8>([123, 125]) << 8) | 2; // {}
const L_PAD2: u64 = (<u64>memory.data<u8>([61, 61]) << 8) | 2; // ==
const L_NAN: u64 = (<u64>memory.data<u8>([34, 78, 97, 78, 34]) << 8) | 5; // "NaN"
const L_INF: u64 = (<u64>memory.data<u8>([34, 73, 110, 102, 105, 110, 105, 116, 121, 34]) << 8) | 10; // "Infinity"
const L_NEG_INF: u64 = (<u64>memory.data<u8>([34, 45, 73, 110, 102, 105, 110, 105, 116, 121, 34]) << 8) | 11; // "-Infinity"

// ---------------------------------------------------------------- protobuf reads

@inline function fail(code: i32): void {
  if (err == 0) err = code;
}

function v64(end: usize): u64 {
  let r: u64 = 0;
  let shift: u64 = 0;
  for (let i = 0; i < 10; i++) {
    if (P >= end) {
      fail(ERR_MALFORMED);
      return 0;
    }
    const b = <u64>load<u8>(P++);
    r |= (b & 0x7f) << shift;
    if (b < 0x80) return r;
    shift += 7;
  }
  fail(ERR_MALFORMED);
  return 0;
}

@inline function v32(end: usize): u32 {
  if (P < end) {
    const b = <u32>load<u8>(P);
    if (b < 0x80) {
      P++;
      return b;
    }
  }
  return <u32>v64(end);
}

/** A length prefix at P; returns the end of the delimited bytes (they start at P). */
function len(end: usize): usize {
  const n = v64(end);
  if (err != 0) return end;
  if (n > <u64>(end - P)) {
    fail(ERR_MALFORMED);
    return end;
  }
  return P + <usize>n;
}

function skip(tag: u32, end: usize): void {
  if (tag >> 3 == 0) return fail(ERR_MALFORMED);
  switch (tag & 7) {
    case 0:
      v64(end);
      return;
    case 1:
      if (end - P < 8) return fail(ERR_MALFORMED);
      P += 8;
      return;
    case 2:
      P = len(end);
      return;
    case 5:
      if (end - P < 4) return fail(ERR_MALFORMED);
      P += 4;
      return;
    default:
      fail(ERR_MALFORMED);
  }
}

function fixed32(end: usize): u32 {
  if (end - P < 4) {
    fail(ERR_MALFORMED);
    return 0;
  }
  const v = load<u32>(P);
  P += 4;
  return v;
}

/** A fixed64 of nanoseconds as microseconds (truncated); past 2^53 µs the twin's rounding takes over. */
function micros(end: usize): u64 {
  if (end - P < 8) {
    fail(ERR_MALFORMED);
    return 0;
  }
  const us = load<u64>(P) / 1000;
  P += 8;
  if (us > MAX_SAFE) fail(ERR_UNSUPPORTED);
  return us;
}

// ---------------------------------------------------------------- text out

const HEX = memory.data<u8>([48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102]);

/** JSON.stringify's escape of each byte: 0 = as is, else the byte after the backslash ('u' = \u00XX). */
const ESC = memory.data(256);
function initEsc(): void {
  for (let c = 0; c < 0x20; c++) store<u8>(ESC + <usize>c, 0x75);
  store<u8>(ESC + 0x08, 0x62);
  store<u8>(ESC + 0x0c, 0x66);
  store<u8>(ESC + 0x0a, 0x6e);
  store<u8>(ESC + 0x0d, 0x72);
  store<u8>(ESC + 0x09, 0x74);
  store<u8>(ESC + 0x22, 0x22);
  store<u8>(ESC + 0x5c, 0x5c);
}
initEsc();

/** Input bytes [s, e) as a JSON string literal (UTF-8 copied through). */
function jsonStr(o: Buf, s: usize, e: usize): void {
  o.reserve(<i32>(e - s) + 2);
  let q = o.ptr + <usize>o.len;
  store<u8>(q++, 0x22);
  for (let i = s; i < e; i++) {
    const c = load<u8>(i);
    const x = load<u8>(ESC + <usize>c);
    if (x == 0) store<u8>(q++, c);
    else {
      // An escape takes up to 6 bytes: make room for it and the rest of the string.
      o.len = <i32>(q - o.ptr);
      o.reserve(<i32>(e - i) + 7);
      q = o.ptr + <usize>o.len;
      store<u8>(q++, 0x5c);
      store<u8>(q++, x);
      if (x == 0x75) {
        store<u8>(q++, 0x30);
        store<u8>(q++, 0x30);
        store<u8>(q++, load<u8>(HEX + <usize>(c >> 4)));
        store<u8>(q++, load<u8>(HEX + <usize>(c & 15)));
      }
    }
  }
  store<u8>(q++, 0x22);
  o.len = <i32>(q - o.ptr);
}

/** Input bytes [s, e) as a quoted CSV text cell: the quote byte doubled, NUL as U+FFFD. */
function csvText(o: Buf, s: usize, e: usize): void {
  o.reserve(<i32>(e - s) + 2);
  let q = o.ptr + <usize>o.len;
  store<u8>(q++, <u8>Q);
  for (let i = s; i < e; i++) {
    const c = load<u8>(i);
    if (c > 1) store<u8>(q++, c);
    else {
      o.len = <i32>(q - o.ptr);
      o.reserve(<i32>(e - i) + 4);
      q = o.ptr + <usize>o.len;
      if (c == 1) {
        store<u8>(q++, 1);
        store<u8>(q++, 1);
      } else {
        store<u8>(q++, 0xef);
        store<u8>(q++, 0xbf);
        store<u8>(q++, 0xbd);
      }
    }
  }
  store<u8>(q++, <u8>Q);
  o.len = <i32>(q - o.ptr);
}

/** Input bytes [s, e) as lower-case hex. */
function hex(o: Buf, s: usize, e: usize): void {
  o.reserve(<i32>(e - s) * 2);
  let q = o.ptr + <usize>o.len;
  for (let i = s; i < e; i++) {
    const c = load<u8>(i);
    store<u8>(q++, load<u8>(HEX + <usize>(c >> 4)));
    store<u8>(q++, load<u8>(HEX + <usize>(c & 15)));
  }
  o.len = <i32>(q - o.ptr);
}

function hexOrNull(o: Buf, s: usize, e: usize): void {
  if (s == e) return o.lit(L_NULL);
  o.byte(0x22);
  hex(o, s, e);
  o.byte(0x22);
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Input bytes [s, e) as padded base64 (Buffer's base64). */
function base64(o: Buf, s: usize, e: usize): void {
  const n = <i32>(e - s);
  o.reserve(((n + 2) / 3) * 4);
  let i = s;
  for (; e - i >= 3; i += 3) {
    const v = (<u32>load<u8>(i) << 16) | (<u32>load<u8>(i + 1) << 8) | <u32>load<u8>(i + 2);
    o.byte(B64.charCodeAt(v >> 18));
    o.byte(B64.charCodeAt((v >> 12) & 63));
    o.byte(B64.charCodeAt((v >> 6) & 63));
    o.byte(B64.charCodeAt(v & 63));
  }
  if (e - i == 1) {
    const v = <u32>load<u8>(i) << 16;
    o.byte(B64.charCodeAt(v >> 18));
    o.byte(B64.charCodeAt((v >> 12) & 63));
    o.lit(L_PAD2);
  } else if (e - i == 2) {
    const v = (<u32>load<u8>(i) << 16) | (<u32>load<u8>(i + 1) << 8);
    o.byte(B64.charCodeAt(v >> 18));
    o.byte(B64.charCodeAt((v >> 12) & 63));
    o.byte(B64.charCodeAt((v >> 6) & 63));
    o.byte(0x3d);
  }
}

/** Comma unless the last byte opened an object or array. */
@inline function sep(o: Buf): void {
  const last = o.last();
  if (last != 0x7b && last != 0x5b) o.byte(COMMA);
}

function isAscii(s: usize, e: usize): bool {
  let any: u32 = 0;
  for (let i = s; i < e; i++) any |= load<u8>(i);
  return any < 0x80;
}

/** Whether [p, p + n) is valid UTF-8 (what TextDecoder decodes without a replacement character). */
function validUtf8(p: usize, n: i32): bool {
  const e = p + <usize>n;
  let i = p;
  while (i < e) {
    if (e - i >= 8 && (load<u64>(i) & 0x8080808080808080) == 0) {
      i += 8;
      continue;
    }
    const c = <u32>load<u8>(i);
    if (c < 0x80) {
      i++;
      continue;
    }
    let k: i32;
    let lo: u32 = 0x80;
    let hi: u32 = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) k = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      k = 2;
      if (c == 0xe0) lo = 0xa0;
      else if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      k = 3;
      if (c == 0xf0) lo = 0x90;
      else if (c == 0xf4) hi = 0x8f;
    } else return false;
    if (e - i <= <usize>k) return false;
    const c1 = <u32>load<u8>(i + 1);
    if (c1 < lo || c1 > hi) return false;
    for (let j = 2; j <= k; j++) {
      const cj = <u32>load<u8>(i + <usize>j);
      if (cj < 0x80 || cj > 0xbf) return false;
    }
    i += <usize>(k + 1);
  }
  return true;
}

// ---------------------------------------------------------------- picked keys

/** Bits set for (group, length, first byte, last byte) of every picked key: most keys are ruled out by one load. */
const sigs = memory.data(3 * 512);

@inline function keySig(group: i32, n: i32, s: usize): usize {
  return <usize>(group * 4096) + <usize>((((n * 31 + <i32>load<u8>(s)) * 31 + <i32>load<u8>(s + <usize>(n - 1))) & 4095));
}

/** The id of key [s, e) in `group` (its index among that group's keys), or -1. */
function keyId(group: i32, s: usize, e: usize): i32 {
  const n = <i32>(e - s);
  const h = keySig(group, n, s);
  if ((<u32>load<u8>(sigs + (h >> 3)) & (1 << <u32>(h & 7))) == 0) return -1;
  let p = keys.ptr;
  const end = keys.ptr + <usize>keys.len;
  let id = 0;
  while (p < end) {
    const g = <i32>load<u8>(p);
    const k = <i32>load<u8>(p + 1);
    if (g == group) {
      if (k == n && memory.compare(p + 2, s, <usize>n) == 0) return id;
      id++;
    }
    p += 2 + <usize>k;
  }
  return -1;
}

function pick(key: i32, type: i32, a: f64, b: f64): void {
  picks.pushF64(<f64>key);
  picks.pushF64(<f64>type);
  picks.pushF64(a);
  picks.pushF64(b);
}

// ---------------------------------------------------------------- AnyValue → JSON

/** AnyValue [P, end) as JSON into `o`; with `key` >= 0 its value is also recorded as a pick. */
function anyValue(o: Buf, end: usize, depth: i32, key: i32): void {
  if (depth > MAX_DEPTH) return fail(ERR_MALFORMED);
  const st = o.len;
  let type = T_NULL;
  let a: f64 = 0;
  let b: f64 = 0;
  while (P < end && err == 0) {
    const t = v32(end);
    switch (t) {
      case 0x0a: {
        const e = len(end);
        o.len = st;
        jsonStr(o, P, e);
        type = isAscii(P, e) ? T_ASCII : T_UTF8;
        a = <f64>(P - inPtr);
        b = <f64>(e - P);
        P = e;
        break;
      }
      case 0x10: {
        const v = v64(end) != 0;
        o.len = st;
        o.lit(v ? L_TRUE : L_FALSE);
        type = T_BOOL;
        a = v ? 1 : 0;
        break;
      }
      case 0x18: {
        const v = <i64>v64(end);
        o.len = st;
        o.signed(v);
        if (v >= -(<i64>MAX_SAFE) && v <= <i64>MAX_SAFE) {
          type = T_NUMBER;
          a = <f64>v;
        } else {
          type = T_BIGINT;
          a = <f64>(<u32>v);
          b = <f64>(<u32>(v >>> 32));
        }
        break;
      }
      case 0x21: {
        if (end - P < 8) return fail(ERR_MALFORMED);
        const d = load<f64>(P);
        P += 8;
        o.len = st;
        // As doubleJson (pipeline/decode/otlp/normalise.ts): JSON has no NaN or infinities, -0 is 0.
        if (isNaN(d)) o.lit(L_NAN);
        else if (!isFinite(d)) o.lit(d > 0 ? L_INF : L_NEG_INF);
        else if (d == 0) o.byte(0x30);
        else {
          o.reserve(32);
          o.len += numberText(d, o.ptr + <usize>o.len);
        }
        type = T_NUMBER;
        a = d;
        break;
      }
      case 0x2a:
      case 0x32: {
        const e = len(end);
        o.len = st;
        const isArray = t == 0x2a;
        o.byte(isArray ? 0x5b : 0x7b);
        while (P < e && err == 0) {
          const t2 = v32(e);
          if (t2 == 0x0a) {
            const e2 = len(e);
            if (err != 0) return;
            if (isArray) {
              sep(o);
              anyValue(o, e2, depth + 1, -1);
            } else keyValue(o, e2, depth + 1, -1);
            P = e2;
          } else skip(t2, e);
        }
        o.byte(isArray ? 0x5d : 0x7d);
        type = T_JSON;
        break;
      }
      case 0x3a: {
        const e = len(end);
        o.len = st;
        o.byte(0x22);
        base64(o, P, e);
        o.byte(0x22);
        type = T_BYTES;
        a = <f64>(P - inPtr);
        b = <f64>(e - P);
        P = e;
        break;
      }
      default:
        skip(t, end);
    }
  }
  if (err != 0) return;
  if (o.len == st) {
    o.lit(L_NULL);
    type = T_NULL;
  }
  if (key < 0) return;
  if (type == T_JSON) {
    a = <f64>PJ.len;
    b = <f64>(o.len - st);
    PJ.copy(o.ptr + <usize>st, o.len - st);
  }
  pick(key, type, a, b);
}

/** KeyValue [P, end) → `"key":value` appended to `o`; a key of `group` is also picked. */
function keyValue(o: Buf, end: usize, depth: i32, group: i32): void {
  let ks: usize = 0;
  let ke: usize = 0;
  let vs: usize = 0;
  let ve: usize = 0;
  let hasValue = false;
  while (P < end && err == 0) {
    const t = v32(end);
    if (t == 0x0a) {
      ke = len(end);
      ks = P;
      P = ke;
    } else if (t == 0x12) {
      ve = len(end);
      vs = P;
      P = ve;
      hasValue = true;
    } else skip(t, end);
  }
  if (err != 0) return;
  sep(o);
  jsonStr(o, ks, ke);
  o.byte(0x3a);
  const key = group >= 0 && ke > ks ? keyId(group, ks, ke) : -1;
  if (hasValue) {
    P = vs;
    anyValue(o, ve, depth, key);
  } else {
    o.lit(L_NULL);
    if (key >= 0) pick(key, T_NULL, 0, 0);
  }
  P = end;
}

/** The KeyValue ranges collected in `ranges` as a JSON object. */
function writeRanges(o: Buf, group: i32): void {
  o.byte(0x7b);
  for (let i = 0; i < ranges.len && err == 0; i += 2) {
    P = inPtr + <usize>ranges.get32(i);
    keyValue(o, inPtr + <usize>ranges.get32(i + 1), 1, group);
  }
  o.byte(0x7d);
}

// ---------------------------------------------------------------- spans

const EXCEPTION = memory.data<u8>([101, 120, 99, 101, 112, 116, 105, 111, 110]); // 'exception'

/** Span.Event [P, end) appended to E; returns the index of its exception.type pick, or -1. */
function event(end: usize, wantException: bool): i32 {
  let tUs: u64 = 0;
  let ns: usize = 0;
  let ne: usize = 0;
  ranges.reset();
  while (P < end && err == 0) {
    const t = v32(end);
    if (t == 0x09) tUs = micros(end);
    else if (t == 0x12) {
      ne = len(end);
      ns = P;
      P = ne;
    } else if (t == 0x1a) {
      const e = len(end);
      ranges.push32(<i32>(P - inPtr));
      ranges.push32(<i32>(e - inPtr));
      P = e;
    } else skip(t, end);
  }
  if (err != 0) return -1;
  const isExc = wantException && ne - ns == 9 && memory.compare(ns, EXCEPTION, 9) == 0;
  const mark = picks.len;
  E.byte(E.len == 0 ? 0x5b : COMMA);
  E.lit(L_EV_NAME);
  jsonStr(E, ns, ne);
  E.lit(L_EV_TS);
  E.decimal(tUs);
  E.lit(L_ATTRS);
  writeRanges(E, isExc ? 2 : -1);
  E.byte(0x7d);
  P = end;
  if (!isExc || picks.len == mark) return -1;
  // The last exception.type wins; it counts when it is a non-empty string (or bytes, as base64).
  const last = picks.len - PICK_STRIDE;
  const type = <i32>picks.getF64(last + 1);
  if ((type == T_ASCII || type == T_UTF8 || type == T_BYTES) && picks.getF64(last + 3) > 0) {
    if (last != mark) for (let i = 0; i < PICK_STRIDE; i++) picks.setF64(mark + i, picks.getF64(last + i));
    picks.len = mark + PICK_STRIDE;
    return mark / PICK_STRIDE;
  }
  picks.len = mark;
  return -1;
}


/** Span.Link [P, end) appended to L. */
function link(end: usize): void {
  let ts: usize = 0;
  let te: usize = 0;
  let ss: usize = 0;
  let se: usize = 0;
  let sts: usize = 0;
  let ste: usize = 0;
  let flags: u32 = 0;
  ranges.reset();
  while (P < end && err == 0) {
    const t = v32(end);
    if (t == 0x0a) {
      te = len(end);
      ts = P;
      P = te;
    } else if (t == 0x12) {
      se = len(end);
      ss = P;
      P = se;
    } else if (t == 0x1a) {
      ste = len(end);
      sts = P;
      P = ste;
    } else if (t == 0x22) {
      const e = len(end);
      ranges.push32(<i32>(P - inPtr));
      ranges.push32(<i32>(e - inPtr));
      P = e;
    } else if (t == 0x35) flags = fixed32(end);
    else skip(t, end);
  }
  if (err != 0) return;
  L.byte(L.len == 0 ? 0x5b : COMMA);
  L.lit(L_LK_TRACE);
  hexOrNull(L, ts, te);
  L.lit(L_SPAN_ID);
  hexOrNull(L, ss, se);
  L.lit(L_LK_STATE);
  if (ste > sts) jsonStr(L, sts, ste);
  else L.lit(L_NULL);
  L.lit(L_ATTRS);
  writeRanges(L, -1);
  L.lit(L_FLAGS);
  L.decimal(flags);
  L.byte(0x7d);
  P = end;
}

function allZero(s: usize, e: usize): bool {
  for (let i = s; i < e; i++) if (load<u8>(i) != 0) return false;
  return true;
}

@inline function textOrNull(s: usize, e: usize): void {
  if (e > s) csvText(O, s, e);
}

/** A JSON buffer as a quoted CSV cell (JSON holds neither the quote byte nor NUL). */
@inline function jsonCell(b: Buf): void {
  O.byte(Q);
  O.copy(b.ptr, b.len);
  O.byte(Q);
}

// One function: a span's fields are one pass over its bytes, and its cells interleave with the
// TypeScript part in a fixed order that src/pipeline/decode/otlp/spans-wasm.ts mirrors.
function span(res: i32, scopeNs: usize, scopeNe: usize, scopeVs: usize, scopeVe: usize, end: usize): void {
  let tS: usize = 0, tE: usize = 0, sS: usize = 0, sE: usize = 0, pS: usize = 0, pE: usize = 0;
  let hasParent = false;
  let stS: usize = 0, stE: usize = 0, nS: usize = 0, nE: usize = 0, mS: usize = 0, mE: usize = 0;
  let flags: u32 = 0;
  let kind: i32 = 0;
  let statusCode: i32 = 0;
  let startUs: u64 = 0;
  let endUs: u64 = 0;
  let exc: i32 = -1;
  const pickStart = picks.len;
  A.len = 0;
  A.byte(0x7b);
  E.len = 0;
  L.len = 0;
  while (P < end && err == 0) {
    const t = v32(end);
    switch (t) {
      case 0x0a: tE = len(end); tS = P; P = tE; break;
      case 0x12: sE = len(end); sS = P; P = sE; break;
      case 0x1a: stE = len(end); stS = P; P = stE; break;
      case 0x22: pE = len(end); pS = P; P = pE; hasParent = true; break;
      case 0x2a: nE = len(end); nS = P; P = nE; break;
      case 0x30: kind = <i32>v32(end); break;
      case 0x39: startUs = micros(end); break;
      case 0x41: endUs = micros(end); break;
      case 0x4a: {
        const e = len(end);
        if (err == 0) keyValue(A, e, 1, 0);
        P = e;
        break;
      }
      case 0x5a: {
        const e = len(end);
        if (err != 0) break;
        const x = event(e, exc < 0);
        if (x >= 0) exc = x;
        break;
      }
      case 0x6a: {
        const e = len(end);
        if (err == 0) link(e);
        break;
      }
      case 0x7a: {
        const e = len(end);
        while (P < e && err == 0) {
          const t2 = v32(e);
          if (t2 == 0x12) {
            mE = len(e);
            mS = P;
            P = mE;
          } else if (t2 == 0x18) statusCode = <i32>v32(e);
          else skip(t2, e);
        }
        P = e;
        break;
      }
      case 0x85: flags = fixed32(end); break;
      default: skip(t, end);
    }
  }
  if (err != 0) return;
  A.byte(0x7d);

  let reason = 0;
  if (tE - tS != 16 || allZero(tS, tE)) reason = 1;
  else if (sE - sS != 8 || allZero(sS, sE)) reason = 2;
  else if (hasParent && pE > pS && !(pE - pS == 8 && allZero(pS, pE))) {
    if (pE - pS != 8) reason = 3;
  } else hasParent = false;
  if (reason != 0) {
    rejects.push32(reason);
    picks.len = pickStart;
    return;
  }
  const start = startUs != 0 ? startUs : endUs != 0 ? endUs : nowUs;
  const stop = endUs != 0 ? endUs : start;

  const row = O.len;
  O.decimal(start);
  O.byte(COMMA);
  const svc = O.len;
  O.byte(COMMA);
  O.byte(Q);
  hex(O, tS, tE);
  O.byte(Q);
  O.byte(COMMA);
  O.byte(Q);
  hex(O, sS, sE);
  O.byte(Q);
  O.byte(COMMA);
  if (hasParent) {
    O.byte(Q);
    hex(O, pS, pE);
    O.byte(Q);
  }
  O.byte(COMMA);
  textOrNull(stS, stE);
  O.byte(COMMA);
  O.decimal(flags);
  O.byte(COMMA);
  csvText(O, nS, nE);
  O.byte(COMMA);
  O.signed(kind);
  O.byte(COMMA);
  O.signed(statusCode);
  O.byte(COMMA);
  textOrNull(mS, mE);
  O.byte(COMMA);
  O.decimal(stop > start ? stop - start : 0);
  O.byte(COMMA);
  O.decimal(stop);
  O.byte(COMMA);
  textOrNull(scopeNs, scopeNe);
  O.byte(COMMA);
  textOrNull(scopeVs, scopeVe);
  O.byte(COMMA);
  jsonCell(R);
  O.byte(COMMA);
  jsonCell(A);
  O.byte(COMMA);
  if (E.len > 0) {
    E.byte(0x5d);
    jsonCell(E);
  }
  O.byte(COMMA);
  if (L.len > 0) {
    L.byte(0x5d);
    jsonCell(L);
  }
  O.byte(COMMA);

  spans.push32(res);
  spans.push32(kind);
  spans.push32(statusCode);
  spans.push32(nE > nS ? <i32>(nS - inPtr) : 0); // no name field: nS is 0, not an input position
  spans.push32(<i32>(nE - nS));
  spans.push32(isAscii(nS, nE) ? 1 : 0);
  spans.push32(exc);
  spans.push32(row);
  spans.push32(svc);
  spans.push32(O.len);
  spans.push32(pickStart / PICK_STRIDE);
  spans.push32(picks.len / PICK_STRIDE);
  times.pushF64(<f64>start);
}

/** The Resource message [P, end): its attribute JSON into R, its picks recorded. */
function resource(end: usize): void {
  R.len = 0;
  R.byte(0x7b);
  while (P < end && err == 0) {
    const t = v32(end);
    if (t == 0x0a) {
      const e = len(end);
      if (err == 0) keyValue(R, e, 1, 1);
      P = e;
    } else skip(t, end);
  }
  R.byte(0x7d);
}

/** Resource → Scope → span walk; fields may come in any order, so ranges are collected first. */
function walk(end: usize): void {
  while (P < end && err == 0) {
    const t = v32(end);
    if (t != 0x0a) {
      skip(t, end);
      continue;
    }
    const re = len(end);
    let rp0 = picks.len;
    let rp1 = rp0;
    R.len = 0;
    R.lit(L_EMPTY);
    scopes.reset();
    while (P < re && err == 0) {
      const t2 = v32(re);
      if (t2 == 0x0a) {
        const e = len(re);
        if (err != 0) break;
        rp0 = picks.len;
        resource(e);
        rp1 = picks.len;
        P = e;
      } else if (t2 == 0x12) {
        const e = len(re);
        scopes.push32(<i32>(P - inPtr));
        scopes.push32(<i32>(e - inPtr));
        P = e;
      } else skip(t2, re);
    }
    if (err != 0) return;
    const res = resources.len >> 1;
    resources.push32(rp0 / PICK_STRIDE);
    resources.push32(rp1 / PICK_STRIDE);
    for (let i = 0; i < scopes.len && err == 0; i += 2) {
      P = inPtr + <usize>scopes.get32(i);
      const se = inPtr + <usize>scopes.get32(i + 1);
      let nS: usize = 0, nE: usize = 0, vS: usize = 0, vE: usize = 0;
      recs.reset();
      while (P < se && err == 0) {
        const t3 = v32(se);
        if (t3 == 0x0a) {
          const e = len(se);
          nS = 0;
          nE = 0;
          vS = 0;
          vE = 0;
          while (P < e && err == 0) {
            const t4 = v32(e);
            if (t4 == 0x0a) {
              nE = len(e);
              nS = P;
              P = nE;
            } else if (t4 == 0x12) {
              vE = len(e);
              vS = P;
              P = vE;
            } else skip(t4, e);
          }
          P = e;
        } else if (t3 == 0x12) {
          const e = len(se);
          recs.push32(<i32>(P - inPtr));
          recs.push32(<i32>(e - inPtr));
          P = e;
        } else skip(t3, se);
      }
      for (let j = 0; j < recs.len && err == 0; j += 2) {
        P = inPtr + <usize>recs.get32(j);
        span(res, nS, nE, vS, vE, inPtr + <usize>recs.get32(j + 1));
      }
    }
    P = re;
  }
}

/**
 * Transcodes the request at inputPtr. Returns 0, ERR_MALFORMED or ERR_UNSUPPORTED; on 0 the
 * outputs hold one record per accepted span, and the row parts in O are valid UTF-8.
 */
export function transcode(n: i32, now: f64): i32 {
  err = 0;
  nowUs = <u64>now;
  O.len = 0;
  spans.reset();
  times.reset();
  picks.reset();
  resources.reset();
  rejects.reset();
  PJ.len = 0;
  P = inPtr;
  walk(inPtr + <usize>n);
  if (err == 0 && !validUtf8(O.ptr, O.len)) err = ERR_UNSUPPORTED;
  return err;
}

/**
 * Interleaves the rows: for span i of resource r, O's row up to the service cell, the service
 * cell, the rest of the row, the span's JS cells, a comma, the resource's JS cells, a newline. JS
 * wrote the cells at tailsPtr: per resource (service start, service end = cells start, cells end)
 * and per span (cells start, cells end) as i32 offsets into them, at `index` (an offset there).
 */
export function assemble(index: i32): void {
  const base = tails.ptr;
  const ix = base + <usize>index;
  const nRes = resources.len >> 1;
  C.len = 0;
  C.reserve(O.len + index);
  for (let i = 0; i < spans.len; i += SPAN_STRIDE) {
    const r = spans.get32(i);
    const row = <usize>spans.get32(i + 7);
    const svc = <usize>spans.get32(i + 8);
    const rowEnd = <usize>spans.get32(i + 9);
    const rp = ix + <usize>(r * 12);
    const sp = ix + <usize>(nRes * 12 + (i / SPAN_STRIDE) * 8);
    C.copy(O.ptr + row, <i32>(svc - row));
    const s0 = load<i32>(rp);
    const s1 = load<i32>(rp + 4);
    const s2 = load<i32>(rp + 8);
    C.copy(base + <usize>s0, s1 - s0);
    C.copy(O.ptr + svc, <i32>(rowEnd - svc));
    const c0 = load<i32>(sp);
    C.copy(base + <usize>c0, load<i32>(sp + 4) - c0);
    C.byte(COMMA);
    C.copy(base + <usize>s1, s2 - s1);
    C.byte(10);
  }
}

const tails = new Buf();

/** A buffer of at least `len` bytes for the JS cells and their index. */
export function tailsPtr(n: i32): usize {
  tails.len = 0;
  tails.reserve(n);
  return tails.ptr;
}
