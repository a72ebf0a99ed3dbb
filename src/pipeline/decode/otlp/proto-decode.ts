// A lean, hand-written protobuf decoder for ExportTraceServiceRequest, ExportLogsServiceRequest and
// ExportMetricsServiceRequest (field numbers: proto/opentelemetry/...). No reflection, no
// intermediate message objects: varints are read straight from the Uint8Array, strings are sliced
// with Buffer's native UTF-8 decoder (ASCII fast path for short ones), ids become hex directly and
// attribute JSON text is built while the KeyValues are read. The rows come out through the shared
// sinks of normalise.ts, so the OTLP/JSON decoder yields identical rows.
//
// Robustness: every read is bounds-checked against the end of its enclosing message; truncated
// varints, lengths past the end, wire types 3/4/6/7, field number 0 and AnyValue nesting deeper
// than MAX_DEPTH throw MalformedError (code 'MALFORMED'). A known field with an unexpected wire type
// is skipped like an unknown field. Invalid UTF-8 is decoded with U+FFFD replacement characters
// (the text is kept, the bytes that are not UTF-8 are marked), never rejected.
import {
  EMPTY_SCOPE,
  LogSink,
  MetricSink,
  RESOURCE_PICK,
  SPAN_PICK,
  SpanSink,
  doubleJson,
  makeResource,
  nanosToMicros,
  type ExpHistogramPoint,
  type HistogramPoint,
  type MetricCtx,
  type NumberPoint,
  type Picked,
  type ResourceCtx,
  type ScopeCtx,
  type SummaryPoint,
} from './normalise.js';
import { MalformedError, type DecodeOptions, type DecodeResult } from './batch.js';
import { ByteSink, type NodeBuffer } from '../../../store/byte-sink.js';

/** Deepest AnyValue nesting accepted (protobuf's own default recursion limit is 100). */
export const MAX_DEPTH = 64;

interface Utf8Buffer extends NodeBuffer {
  hexSlice(start: number, end: number): string;
}

let B: Uint8Array = new Uint8Array(0);
let BUF: Utf8Buffer = Buffer.alloc(0) as Utf8Buffer;
let P = 0;
const F64 = new Float64Array(1);
const F64B = new Uint8Array(F64.buffer);


function fail(msg: string): never {
  throw new MalformedError(msg + ' at byte ' + P);
}

function setInput(body: Uint8Array): void {
  B = body;
  BUF = (Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)) as Utf8Buffer;
  P = 0;
}

/** A varint's low 32 bits as an unsigned number (tags, enums, uint32, int32 after `| 0`). */
function v32(end: number): number {
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
let LO = 0;
let HI = 0;
function v64(end: number): void {
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
function int64Value(): number | bigint {
  if (HI < 0x200000) return HI * TWO32 + LO;
  if (HI >= 0xffe00000) {
    // negative; -(2^64 - v)
    const v = (HI - TWO32) * TWO32 + LO;
    if (v >= -9007199254740991) return v;
  }
  return BigInt.asIntN(64, (BigInt(HI) << 32n) | BigInt(LO));
}

/** (LO, HI) as an unsigned int64: number when safe, else bigint. */
function uint64Value(): number | bigint {
  if (HI < 0x200000) return HI * TWO32 + LO;
  return (BigInt(HI) << 32n) | BigInt(LO);
}

/** Reads a length prefix; returns the end offset of the delimited bytes (start is P). */
function len(end: number): number {
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

function skip(tag: number, end: number): void {
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

function fixed32(end: number): number {
  if (P + 4 > end) fail('truncated fixed32');
  const p = P;
  P += 4;
  return (B[p]! | (B[p + 1]! << 8) | (B[p + 2]! << 16)) + B[p + 3]! * 0x1000000;
}

/** fixed64 into (LO, HI). */
function fixed64(end: number): void {
  if (P + 8 > end) fail('truncated fixed64');
  const p = P;
  P += 8;
  LO = (B[p]! | (B[p + 1]! << 8) | (B[p + 2]! << 16)) + B[p + 3]! * 0x1000000;
  HI = (B[p + 4]! | (B[p + 5]! << 8) | (B[p + 6]! << 16)) + B[p + 7]! * 0x1000000;
}

function micros(end: number): number {
  fixed64(end);
  return nanosToMicros(LO, HI);
}

function double(end: number): number {
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

function str(s: number, e: number): string {
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
function readStr(end: number): string {
  const e = len(end);
  const s = P;
  P = e;
  return str(s, e);
}

/** A length-delimited bytes field at P, as lower-case hex. */
function readHex(end: number): string {
  const e = len(end);
  const r = e === P ? '' : BUF.hexSlice(P, e);
  P = e;
  return r;
}

// ------------------------------------------------------------------ JSON output buffers
//
// Attribute, event, link and exemplar JSON is written as bytes straight from the input (keys and
// string values are copied with JSON escaping, never decoded to JS strings), then turned into one
// flat string per column value with a single native slice.

class Out extends ByteSink {
  nonAscii = false;

  reset(): void {
    this.n = 0;
    this.nonAscii = false;
  }

  /** Gives back memory after an unusually large record. */
  trim(): void {
    this.shrink();
    this.reset();
  }

  /** Appends an ASCII-only string (digits, literals, base64, hex). */
  ascii(s: string): void {
    const k = s.length;
    this.ensure(k);
    const b = this.b;
    let n = this.n;
    for (let i = 0; i < k; i++) b[n++] = s.charCodeAt(i);
    this.n = n;
  }

  /** Appends pre-encoded ASCII bytes (see lit()). */
  lit(x: Uint8Array): void {
    const k = x.length;
    this.ensure(k);
    const b = this.b;
    let n = this.n;
    for (let i = 0; i < k; i++) b[n++] = x[i]!;
    this.n = n;
  }

  /** Comma unless the last byte opened an object or array. */
  sep(): void {
    const last = this.b[this.n - 1];
    if (last !== 0x7b && last !== 0x5b) this.byte(0x2c);
  }

  /** Input bytes [s, e) as a JSON string literal (UTF-8 copied through; escapes as JSON.stringify). */
  jsonStr(s: number, e: number): void {
    this.ensure(e - s + 2);
    let b = this.b;
    let n = this.n;
    let any = 0;
    b[n++] = 0x22;
    for (let i = s; i < e; i++) {
      const c = B[i]!;
      any |= c;
      if (ESC[c] === 0) b[n++] = c;
      else {
        // An escape takes up to 6 bytes: make room for it and the rest of the string.
        this.n = n;
        this.ensure(e - i + 7);
        b = this.b;
        b[n++] = 0x5c;
        const x = ESC[c]!;
        if (x !== 0x75) b[n++] = x;
        else {
          b[n++] = 0x75; b[n++] = 0x30; b[n++] = 0x30;
          b[n++] = HEXC[c >> 4]!; b[n++] = HEXC[c & 15]!;
        }
      }
    }
    b[n++] = 0x22;
    if (any >= 0x80) this.nonAscii = true;
    this.n = n;
  }

  /** Input bytes [s, e) as lower-case hex in quotes, or null when empty. */
  hexOrNull(s: number, e: number): void {
    if (s === e) return this.lit(L_NULL);
    this.ensure((e - s) * 2 + 2);
    const b = this.b;
    let n = this.n;
    b[n++] = 0x22;
    for (let i = s; i < e; i++) {
      const c = B[i]!;
      b[n++] = HEXC[c >> 4]!;
      b[n++] = HEXC[c & 15]!;
    }
    b[n++] = 0x22;
    this.n = n;
  }

  /** The text written since `from`. */
  text(from: number): string {
    return this.nonAscii ? this.b.utf8Slice(from, this.n) : this.b.latin1Slice(from, this.n);
  }
}

const lit = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const L_NULL = lit('null');
const L_TRUE = lit('true');
const L_FALSE = lit('false');
const L_EV_NAME = lit('{"name":');
const L_EV_TS = lit(',"timestamp_us":');
const L_ATTRS = lit(',"attributes":');
const L_LK_TRACE = lit('{"trace_id":');
const L_SPAN_ID = lit(',"span_id":');
const L_LK_STATE = lit(',"trace_state":');
const L_FLAGS = lit(',"flags":');
const L_EX_TS = lit('{"timestamp_us":');
const L_EX_VALUE = lit(',"value":');
const L_EX_TRACE = lit(',"trace_id":');
const L_EX_FATTRS = lit(',"filtered_attributes":');
const HEXC = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** JSON escape of each byte: 0 = copy as is; else the character after the backslash ('u' = \u00XX). */
const ESC = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) ESC[c] = 0x75;
ESC[0x08] = 0x62;
ESC[0x0c] = 0x66;
ESC[0x0a] = 0x6e;
ESC[0x0d] = 0x72;
ESC[0x09] = 0x74;
ESC[0x22] = 0x22;
ESC[0x5c] = 0x5c;

const A = new Out(8192, 1 << 20); // attributes of the current record
const E = new Out(8192, 1 << 20); // events of the current span / exemplars of the current point
const L = new Out(8192, 1 << 20); // links of the current span
const R = new Out(8192, 1 << 20); // resource attributes
const V = new Out(8192, 1 << 20); // log bodies

// ------------------------------------------------------------------ picked keys

/**
 * A set of attribute keys whose values the promoted columns need. `sig` holds (length, first byte,
 * last byte) of every key, so most keys are ruled out from their bytes without decoding them.
 */
interface Pick {
  keys: ReadonlySet<string>;
  sig: Set<number>;
}

function makePick(keys: ReadonlySet<string>): Pick {
  const sig = new Set<number>();
  for (const k of keys) {
    const b = Buffer.from(k, 'utf8');
    sig.add(b.length * 65536 + b[0]! * 256 + b[b.length - 1]!);
  }
  return { keys, sig };
}

const SPAN_PK = makePick(SPAN_PICK);
const RESOURCE_PK = makePick(RESOURCE_PICK);
const EXC_PK = makePick(new Set(['exception.type']));

// ------------------------------------------------------------------ AnyValue → JSON

/** The JS value of the last AnyValue decoded with want=true (scalars; COMPLEX for arrays/kvlists). */
let LASTV: unknown;
const COMPLEX = Symbol('complex');

/** Writes AnyValue [P, end) as JSON into `o`. With `want`, also sets LASTV. */
function anyValue(o: Out, end: number, depth: number, want: boolean): void {
  if (depth > MAX_DEPTH) fail('AnyValue nested deeper than ' + MAX_DEPTH);
  const st = o.n;
  LASTV = null;
  while (P < end) {
    const t = v32(end);
    switch (t) {
      case 0x0a: {
        const e = len(end);
        o.n = st;
        o.jsonStr(P, e);
        if (want) LASTV = str(P, e);
        P = e;
        break;
      }
      case 0x10: {
        v64(end);
        const v = LO !== 0 || HI !== 0;
        o.n = st;
        o.lit(v ? L_TRUE : L_FALSE);
        if (want) LASTV = v;
        break;
      }
      case 0x18: {
        v64(end);
        const v = int64Value();
        o.n = st;
        if (typeof v === 'number') o.decimal(v);
        else o.ascii(String(v));
        if (want) LASTV = v;
        break;
      }
      case 0x21: {
        const d = double(end);
        o.n = st;
        o.ascii(doubleJson(d));
        if (want) LASTV = d;
        break;
      }
      case 0x2a: {
        const e = len(end);
        o.n = st;
        o.byte(0x5b);
        while (P < e) {
          const t2 = v32(e);
          if (t2 === 0x0a) {
            const e2 = len(e);
            o.sep();
            anyValue(o, e2, depth + 1, false);
            P = e2;
          } else skip(t2, e);
        }
        o.byte(0x5d);
        LASTV = COMPLEX;
        break;
      }
      case 0x32: {
        const e = len(end);
        o.n = st;
        o.byte(0x7b);
        while (P < e) {
          const t2 = v32(e);
          if (t2 === 0x0a) {
            const e2 = len(e);
            keyValue(o, e2, depth + 1, null, null);
            P = e2;
          } else skip(t2, e);
        }
        o.byte(0x7d);
        LASTV = COMPLEX;
        break;
      }
      case 0x3a: {
        const e = len(end);
        const b64 = BUF.base64Slice(P, e);
        P = e;
        o.n = st;
        o.byte(0x22);
        o.ascii(b64);
        o.byte(0x22);
        if (want) LASTV = b64;
        break;
      }
      default:
        skip(t, end);
    }
  }
  if (o.n === st) o.lit(L_NULL);
}

/** One KeyValue message [P, end) → `"key":value` appended to `o` (with a separating comma). */
function keyValue(o: Out, end: number, depth: number, pick: Pick | null, picked: Picked | null): void {
  let ks = 0;
  let ke = 0;
  let vs = -1;
  let ve = -1;
  while (P < end) {
    const t = v32(end);
    if (t === 0x0a) {
      ke = len(end);
      ks = P;
      P = ke;
    } else if (t === 0x12) {
      ve = len(end);
      vs = P;
      P = ve;
    } else skip(t, end);
  }
  o.sep();
  o.jsonStr(ks, ke);
  o.byte(0x3a);
  let key: string | null = null;
  if (pick !== null && ke > ks && pick.sig.has((ke - ks) * 65536 + B[ks]! * 256 + B[ke - 1]!) && (key = str(ks, ke), pick.keys.has(key))) {
    const vstart = o.n;
    if (vs >= 0) {
      P = vs;
      anyValue(o, ve, depth, true);
    } else {
      o.lit(L_NULL);
      LASTV = null;
    }
    picked![key] = LASTV === COMPLEX ? JSON.parse(o.text(vstart)) : LASTV;
  } else if (vs >= 0) {
    P = vs;
    anyValue(o, ve, depth, false);
  } else o.lit(L_NULL);
  P = end;
}

/** A repeated KeyValue field occurrence at P: appended to the open JSON object in `o`. */
function attr(o: Out, end: number, pick: Pick | null, picked: Picked | null): void {
  const e = len(end);
  keyValue(o, e, 1, pick, picked);
  P = e;
}

// ------------------------------------------------------------------ resource and scope

/** Resource message [P, end). */
function resource(end: number): ResourceCtx {
  const picked: Picked = {};
  R.reset();
  R.byte(0x7b);
  while (P < end) {
    const t = v32(end);
    if (t === 0x0a) attr(R, end, RESOURCE_PK, picked);
    else skip(t, end);
  }
  R.byte(0x7d);
  return makeResource(R.text(0), picked);
}

function emptyResource(): ResourceCtx {
  return makeResource('{}', {});
}

function scope(end: number): ScopeCtx {
  let name = '';
  let version = '';
  while (P < end) {
    const t = v32(end);
    if (t === 0x0a) name = readStr(end);
    else if (t === 0x12) version = readStr(end);
    else skip(t, end);
  }
  return { name: name || null, version: version || null };
}

/**
 * The common Resource{X} → Scope{X} → records walk (records are field 2 of the scope message).
 * Fields may come in any order, so record ranges are collected first and decoded once resource and
 * scope are known.
 */
function walk(onRecord: (res: ResourceCtx, sc: ScopeCtx, end: number) => void): void {
  const end = B.length;
  while (P < end) {
    const t = v32(end);
    if (t !== 0x0a) {
      skip(t, end);
      continue;
    }
    const re = len(end);
    let res: ResourceCtx | null = null;
    const scopes: number[] = [];
    while (P < re) {
      const t2 = v32(re);
      if (t2 === 0x0a) {
        const e = len(re);
        res = resource(e);
        P = e;
      } else if (t2 === 0x12) {
        const e = len(re);
        scopes.push(P, e);
        P = e;
      } else skip(t2, re);
    }
    const r = res ?? emptyResource();
    for (let i = 0; i < scopes.length; i += 2) {
      P = scopes[i]!;
      const se = scopes[i + 1]!;
      let sc: ScopeCtx = EMPTY_SCOPE;
      const recs: number[] = [];
      while (P < se) {
        const t3 = v32(se);
        if (t3 === 0x0a) {
          const e = len(se);
          sc = scope(e);
          P = e;
        } else if (t3 === 0x12) {
          const e = len(se);
          recs.push(P, e);
          P = e;
        } else skip(t3, se);
      }
      for (let j = 0; j < recs.length; j += 2) {
        P = recs[j]!;
        onRecord(r, sc, recs[j + 1]!);
      }
      P = se;
    }
    P = re;
  }
}

/** Attribute-field ranges of the current nested message (events, links, exemplars; never re-entered). */
const RANGES: number[] = [];
let RN = 0;

function writeRanges(o: Out, pick: Pick | null, picked: Picked | null): void {
  o.byte(0x7b);
  for (let i = 0; i < RN; i += 2) {
    P = RANGES[i]!;
    keyValue(o, RANGES[i + 1]!, 1, pick, picked);
  }
  o.byte(0x7d);
}

// ------------------------------------------------------------------ traces

const EXCEPTION = 'exception';

/** Span.Event [P, end) appended to E; returns its exception.type when it is an exception event. */
function event(end: number, wantException: boolean): string | null {
  let tUs = 0;
  let ns = 0;
  let ne = 0;
  RN = 0;
  while (P < end) {
    const t = v32(end);
    if (t === 0x09) tUs = micros(end);
    else if (t === 0x12) {
      ne = len(end);
      ns = P;
      P = ne;
    } else if (t === 0x1a) {
      const e = len(end);
      RANGES[RN++] = P;
      RANGES[RN++] = e;
      P = e;
    } else skip(t, end);
  }
  const isExc = wantException && ne - ns === 9 && str(ns, ne) === EXCEPTION;
  const ep: Picked | null = isExc ? {} : null;
  E.byte(E.n === 0 ? 0x5b : 0x2c);
  E.lit(L_EV_NAME);
  E.jsonStr(ns, ne);
  E.lit(L_EV_TS);
  E.decimal(tUs);
  E.lit(L_ATTRS);
  writeRanges(E, ep && EXC_PK, ep);
  E.byte(0x7d);
  P = end;
  const x = ep?.['exception.type'];
  return typeof x === 'string' && x !== '' ? x : null;
}

/** Span.Link [P, end) appended to L. */
function link(end: number): void {
  let ts = 0;
  let te = 0;
  let ss = 0;
  let se = 0;
  let sts = 0;
  let ste = 0;
  let flags = 0;
  RN = 0;
  while (P < end) {
    const t = v32(end);
    switch (t) {
      case 0x0a: te = len(end); ts = P; P = te; break;
      case 0x12: se = len(end); ss = P; P = se; break;
      case 0x1a: ste = len(end); sts = P; P = ste; break;
      case 0x22: { const e = len(end); RANGES[RN++] = P; RANGES[RN++] = e; P = e; break; }
      case 0x35: flags = fixed32(end); break;
      default: skip(t, end);
    }
  }
  L.byte(L.n === 0 ? 0x5b : 0x2c);
  L.lit(L_LK_TRACE);
  L.hexOrNull(ts, te);
  L.lit(L_SPAN_ID);
  L.hexOrNull(ss, se);
  L.lit(L_LK_STATE);
  if (ste > sts) L.jsonStr(sts, ste);
  else L.lit(L_NULL);
  L.lit(L_ATTRS);
  writeRanges(L, null, null);
  L.lit(L_FLAGS);
  L.decimal(flags);
  L.byte(0x7d);
  P = end;
}

function span(res: ResourceCtx, sc: ScopeCtx, end: number, sink: SpanSink): void {
  let traceId = '';
  let spanId = '';
  let parent: string | null = null;
  let traceState = '';
  let flags = 0;
  let name = '';
  let kind = 0;
  let startUs = 0;
  let endUs = 0;
  let statusCode = 0;
  let statusMessage = '';
  let exceptionType: string | null = null;
  const picked: Picked = {};
  A.reset();
  A.byte(0x7b);
  E.reset();
  L.reset();
  while (P < end) {
    const t = v32(end);
    switch (t) {
      case 0x0a:
        traceId = readHex(end);
        break;
      case 0x12:
        spanId = readHex(end);
        break;
      case 0x1a:
        traceState = readStr(end);
        break;
      case 0x22:
        parent = readHex(end);
        break;
      case 0x2a:
        name = readStr(end);
        break;
      case 0x30:
        kind = v32(end) | 0;
        break;
      case 0x39:
        startUs = micros(end);
        break;
      case 0x41:
        endUs = micros(end);
        break;
      case 0x4a:
        attr(A, end, SPAN_PK, picked);
        break;
      case 0x5a: {
        const e = len(end);
        const x = event(e, exceptionType === null);
        if (x !== null) exceptionType = x;
        break;
      }
      case 0x6a: {
        const e = len(end);
        link(e);
        break;
      }
      case 0x7a: {
        const e = len(end);
        while (P < e) {
          const t2 = v32(e);
          if (t2 === 0x12) statusMessage = readStr(e);
          else if (t2 === 0x18) statusCode = v32(e) | 0;
          else skip(t2, e);
        }
        P = e;
        break;
      }
      case 0x85: // field 16, wire type 5: the two-byte tag 0x85 0x01
        flags = fixed32(end);
        break;
      default:
        skip(t, end);
    }
  }
  A.byte(0x7d);
  let eventsJson: string | null = null;
  if (E.n > 0) {
    E.byte(0x5d);
    eventsJson = E.text(0);
  }
  let linksJson: string | null = null;
  if (L.n > 0) {
    L.byte(0x5d);
    linksJson = L.text(0);
  }
  sink.add(res, sc, {
    traceId,
    spanId,
    parentSpanId: parent,
    traceState: traceState || null,
    flags,
    name,
    kind,
    startUs,
    endUs,
    attrsJson: A.text(0),
    attrs: picked,
    eventsJson,
    exceptionType,
    linksJson,
    statusCode,
    statusMessage: statusMessage || null,
  });
}

function nowOf(opts?: DecodeOptions): number {
  return opts?.nowUs ?? Date.now() * 1000;
}

const EMPTY = new Uint8Array(0);
const EMPTY_BUF = Buffer.alloc(0) as Utf8Buffer;

function run<T>(body: Uint8Array, f: () => T): T {
  setInput(body);
  try {
    return f();
  } catch (e) {
    if (e instanceof MalformedError) throw e;
    if (e instanceof RangeError) throw new MalformedError('payload too complex: ' + e.message);
    throw e;
  } finally {
    B = EMPTY;
    BUF = EMPTY_BUF;
    A.trim();
    E.trim();
    L.trim();
    R.trim();
    V.trim();
  }
}

/** ExportTraceServiceRequest (protobuf) → svc_spans batch. Throws MalformedError. */
export function decodeTraces(body: Uint8Array, opts?: DecodeOptions): DecodeResult {
  const sink = new SpanSink(nowOf(opts));
  return run(body, () => {
    walk((res, sc, end) => span(res, sc, end, sink));
    return sink.result();
  });
}

// ------------------------------------------------------------------ logs

function logRecord(res: ResourceCtx, sc: ScopeCtx, end: number, sink: LogSink): void {
  let timeUs = 0;
  let observedUs = 0;
  let sevNum = 0;
  let sevText = '';
  let body: string | null = null;
  let flags = 0;
  let traceId: string | null = null;
  let spanId: string | null = null;
  let eventName = '';
  A.reset();
  A.byte(0x7b);
  while (P < end) {
    const t = v32(end);
    switch (t) {
      case 0x09:
        timeUs = micros(end);
        break;
      case 0x59:
        observedUs = micros(end);
        break;
      case 0x10:
        sevNum = v32(end) | 0;
        break;
      case 0x1a:
        sevText = readStr(end);
        break;
      case 0x2a: {
        const e = len(end);
        // A body that is one string_value (almost every log record) is read as it is: the JSON copy
        // anyValue also writes, byte by byte, is for other values only (7% of log ingest's thread).
        const at = P;
        let one = false;
        if (P < e && B[P] === 0x0a) {
          P++;
          const se = len(e);
          if (se === e) {
            body = str(P, se);
            one = true;
          }
        }
        if (!one) {
          P = at;
          V.reset();
          anyValue(V, e, 1, true);
          body = typeof LASTV === 'string' && V.b[0] === 0x22 ? (LASTV as string) : LASTV === null ? null : V.text(0);
        }
        P = e;
        break;
      }
      case 0x32:
        attr(A, end, null, null);
        break;
      case 0x45:
        flags = fixed32(end);
        break;
      case 0x4a:
        traceId = readHex(end);
        break;
      case 0x52:
        spanId = readHex(end);
        break;
      case 0x62:
        eventName = readStr(end);
        break;
      default:
        skip(t, end);
    }
  }
  A.byte(0x7d);
  sink.add(res, sc, {
    timeUs,
    observedUs,
    severityNumber: sevNum,
    severityText: sevText || null,
    body,
    attrsJson: A.text(0),
    flags,
    traceId,
    spanId,
    eventName: eventName || null,
  });
}

/** ExportLogsServiceRequest (protobuf) → svc_logs batch. Throws MalformedError. */
export function decodeLogs(body: Uint8Array, opts?: DecodeOptions): DecodeResult {
  const sink = new LogSink(nowOf(opts));
  return run(body, () => {
    walk((res, sc, end) => logRecord(res, sc, end, sink));
    return sink.result();
  });
}

// ------------------------------------------------------------------ metrics

/** Exemplar [P, end) appended to E. */
function exemplar(end: number): void {
  let tUs = 0;
  let value = 'null';
  let ss = 0;
  let se = 0;
  let ts = 0;
  let te = 0;
  RN = 0;
  while (P < end) {
    const t = v32(end);
    switch (t) {
      case 0x11: tUs = micros(end); break;
      case 0x19: value = doubleJson(double(end)); break;
      case 0x31: fixed64(end); value = String(int64Value()); break;
      case 0x22: se = len(end); ss = P; P = se; break;
      case 0x2a: te = len(end); ts = P; P = te; break;
      case 0x3a: { const e = len(end); RANGES[RN++] = P; RANGES[RN++] = e; P = e; break; }
      default: skip(t, end);
    }
  }
  E.byte(E.n === 0 ? 0x5b : 0x2c);
  E.lit(L_EX_TS);
  E.decimal(tUs);
  E.lit(L_EX_VALUE);
  E.ascii(value);
  E.lit(L_EX_TRACE);
  E.hexOrNull(ts, te);
  E.lit(L_SPAN_ID);
  E.hexOrNull(ss, se);
  E.lit(L_EX_FATTRS);
  writeRanges(E, null, null);
  E.byte(0x7d);
  P = end;
}

function addExemplar(end: number): void {
  const e = len(end);
  exemplar(e);
  P = e;
}

function beginPoint(): void {
  A.reset();
  A.byte(0x7b);
  E.reset();
}

function attrsText(): string {
  A.byte(0x7d);
  return A.text(0);
}

function exemplarsJson(): string | null {
  if (E.n === 0) return null;
  E.byte(0x5d);
  return E.text(0);
}

function numberPoint(end: number): NumberPoint {
  beginPoint();
  let startUs = 0;
  let timeUs = 0;
  let value: number | null = null;
  let flags = 0;
  while (P < end) {
    const t = v32(end);
    switch (t) {
      case 0x3a: attr(A, end, null, null); break;
      case 0x11: startUs = micros(end); break;
      case 0x19: timeUs = micros(end); break;
      case 0x21: value = double(end); break;
      case 0x31: fixed64(end); value = Number(int64Value()); break;
      case 0x2a: addExemplar(end); break;
      case 0x40: flags = v32(end); break;
      default: skip(t, end);
    }
  }
  return { timeUs, startUs, attrsJson: attrsText(), flags, exemplarsJson: exemplarsJson(), value };
}

/** A repeated fixed64 field (packed or not) appended to `out`. */
function repFixed64(t: number, end: number, out: (number | bigint)[]): void {
  if ((t & 7) === 2) {
    const e = len(end);
    if ((e - P) % 8 !== 0) fail('packed fixed64 length not a multiple of 8');
    while (P < e) {
      fixed64(e);
      out.push(uint64Value());
    }
  } else {
    fixed64(end);
    out.push(uint64Value());
  }
}

function repDouble(t: number, end: number, out: number[]): void {
  if ((t & 7) === 2) {
    const e = len(end);
    if ((e - P) % 8 !== 0) fail('packed double length not a multiple of 8');
    while (P < e) out.push(double(e));
  } else out.push(double(end));
}

function repUvarint(t: number, end: number, out: (number | bigint)[]): void {
  if ((t & 7) === 2) {
    const e = len(end);
    while (P < e) {
      v64(e);
      out.push(uint64Value());
    }
  } else {
    v64(end);
    out.push(uint64Value());
  }
}

function histogramPoint(end: number): HistogramPoint {
  beginPoint();
  const p: HistogramPoint = {
    timeUs: 0, startUs: 0, attrsJson: '', flags: 0, exemplarsJson: null,
    count: 0, sum: null, min: null, max: null, bucketCounts: [], explicitBounds: [],
  };
  while (P < end) {
    const t = v32(end);
    switch (t) {
      case 0x4a: attr(A, end, null, null); break;
      case 0x11: p.startUs = micros(end); break;
      case 0x19: p.timeUs = micros(end); break;
      case 0x21: fixed64(end); p.count = uint64Value(); break;
      case 0x29: p.sum = double(end); break;
      case 0x31: case 0x32: repFixed64(t, end, p.bucketCounts); break;
      case 0x39: case 0x3a: repDouble(t, end, p.explicitBounds); break;
      case 0x42: addExemplar(end); break;
      case 0x50: p.flags = v32(end); break;
      case 0x59: p.min = double(end); break;
      case 0x61: p.max = double(end); break;
      default: skip(t, end);
    }
  }
  p.attrsJson = attrsText();
  p.exemplarsJson = exemplarsJson();
  return p;
}

function buckets(end: number, out: (number | bigint)[]): number {
  let offset = 0;
  while (P < end) {
    const t = v32(end);
    if (t === 0x08) {
      const z = v32(end);
      offset = (z >>> 1) ^ -(z & 1);
    } else if (t === 0x10 || t === 0x12) repUvarint(t, end, out);
    else skip(t, end);
  }
  return offset;
}

function expPoint(end: number): ExpHistogramPoint {
  beginPoint();
  const p: ExpHistogramPoint = {
    timeUs: 0, startUs: 0, attrsJson: '', flags: 0, exemplarsJson: null,
    count: 0, sum: null, min: null, max: null, scale: 0, zeroCount: 0, zeroThreshold: 0,
    positiveOffset: 0, positiveCounts: [], negativeOffset: 0, negativeCounts: [],
  };
  while (P < end) {
    const t = v32(end);
    switch (t) {
      case 0x0a: attr(A, end, null, null); break;
      case 0x11: p.startUs = micros(end); break;
      case 0x19: p.timeUs = micros(end); break;
      case 0x21: fixed64(end); p.count = uint64Value(); break;
      case 0x29: p.sum = double(end); break;
      case 0x30: { const z = v32(end); p.scale = (z >>> 1) ^ -(z & 1); break; }
      case 0x39: fixed64(end); p.zeroCount = uint64Value(); break;
      case 0x42: { const e = len(end); p.positiveCounts = []; p.positiveOffset = buckets(e, p.positiveCounts); P = e; break; }
      case 0x4a: { const e = len(end); p.negativeCounts = []; p.negativeOffset = buckets(e, p.negativeCounts); P = e; break; }
      case 0x50: p.flags = v32(end); break;
      case 0x5a: addExemplar(end); break;
      case 0x61: p.min = double(end); break;
      case 0x69: p.max = double(end); break;
      case 0x71: p.zeroThreshold = double(end); break;
      default: skip(t, end);
    }
  }
  p.attrsJson = attrsText();
  p.exemplarsJson = exemplarsJson();
  return p;
}

function summaryPoint(end: number): SummaryPoint {
  beginPoint();
  const p: SummaryPoint = {
    timeUs: 0, startUs: 0, attrsJson: '', flags: 0, exemplarsJson: null, count: 0, sum: 0, quantiles: [], values: [],
  };
  while (P < end) {
    const t = v32(end);
    switch (t) {
      case 0x3a: attr(A, end, null, null); break;
      case 0x11: p.startUs = micros(end); break;
      case 0x19: p.timeUs = micros(end); break;
      case 0x21: fixed64(end); p.count = uint64Value(); break;
      case 0x29: p.sum = double(end); break;
      case 0x32: {
        const e = len(end);
        let q = 0;
        let v = 0;
        while (P < e) {
          const t2 = v32(e);
          if (t2 === 0x09) q = double(e);
          else if (t2 === 0x11) v = double(e);
          else skip(t2, e);
        }
        p.quantiles.push(q);
        p.values.push(v);
        P = e;
        break;
      }
      case 0x40: p.flags = v32(end); break;
      default: skip(t, end);
    }
  }
  p.attrsJson = attrsText();
  return p;
}

const enum Kind {
  None = 0,
  Gauge = 5,
  Sum = 7,
  Histogram = 9,
  Exp = 10,
  Summary = 11,
}

function metric(res: ResourceCtx, sc: ScopeCtx, end: number, sink: MetricSink): void {
  let name = '';
  let description = '';
  let unit = '';
  let kind = Kind.None;
  let ds = 0;
  let de = 0;
  while (P < end) {
    const t = v32(end);
    switch (t) {
      case 0x0a: name = readStr(end); break;
      case 0x12: description = readStr(end); break;
      case 0x1a: unit = readStr(end); break;
      case 0x2a: case 0x3a: case 0x4a: case 0x52: case 0x5a:
        de = len(end);
        ds = P;
        kind = (t >>> 3) as Kind;
        P = de;
        break;
      default: skip(t, end);
    }
  }
  if (kind === Kind.None) return;
  const mc: MetricCtx = { name, description: description || null, unit: unit || null };
  // Data message: field 1 = repeated points; 2 = temporality; 3 = is_monotonic.
  P = ds;
  const pts: number[] = [];
  let temporality = 0;
  let monotonic = false;
  while (P < de) {
    const t = v32(de);
    if (t === 0x0a) {
      const e = len(de);
      pts.push(P, e);
      P = e;
    } else if (t === 0x10) temporality = v32(de) | 0;
    else if (t === 0x18) monotonic = v32(de) !== 0;
    else skip(t, de);
  }
  if (!sink.check(mc, pts.length / 2)) {
    P = end;
    return;
  }
  for (let i = 0; i < pts.length; i += 2) {
    P = pts[i]!;
    const e = pts[i + 1]!;
    switch (kind) {
      case Kind.Gauge: sink.addGauge(res, sc, mc, numberPoint(e)); break;
      case Kind.Sum: sink.addSum(res, sc, mc, numberPoint(e), temporality, monotonic); break;
      case Kind.Histogram: sink.addHistogram(res, sc, mc, histogramPoint(e), temporality); break;
      case Kind.Exp: sink.addExpHistogram(res, sc, mc, expPoint(e), temporality); break;
      case Kind.Summary: sink.addSummary(res, sc, mc, summaryPoint(e)); break;
    }
  }
  P = end;
}

/** ExportMetricsServiceRequest (protobuf) → metric table batches. Throws MalformedError. */
export function decodeMetrics(body: Uint8Array, opts?: DecodeOptions): DecodeResult {
  const sink = new MetricSink(nowOf(opts));
  return run(body, () => {
    walk((res, sc, end) => metric(res, sc, end, sink));
    return sink.result();
  });
}
