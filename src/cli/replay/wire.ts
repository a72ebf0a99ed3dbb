// OTLP protobuf as `tds replay` handles it, without decoding it: walk an export request by its shape
// (replay/shape.ts) to count its records and read or move its timestamps (fixed64, patched in place:
// the bytes keep their length), rebuild the few bytes above the resource to change service.name,
// tell a request's signal from its structure, and split a file into requests (one request, the
// Collector file exporter's 4-byte big-endian length prefixes, or protobuf varint prefixes).
// Every read is bounds-checked; the walk only descends the shape's fixed few levels.
import { pushVarint } from '../../core/varint.js';
import { REQUESTS, SIGNALS, UNKNOWN_SERVICE, type Shape, type Signal } from './shape.js';

export class WireError extends Error {}

interface Cursor {
  b: Uint8Array;
  pos: number;
  end: number;
}

function varint(c: Cursor): number {
  // Most tags and lengths of a request fit one byte.
  if (c.pos < c.end && c.b[c.pos]! < 0x80) return c.b[c.pos++]!;
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (c.pos >= c.end) throw new WireError(`truncated varint at byte ${c.pos}`);
    const x = c.b[c.pos++]!;
    v += (x & 0x7f) * mul;
    if (x < 0x80) return v;
    mul *= 128;
  }
  throw new WireError(`varint longer than 10 bytes at byte ${c.pos}`);
}

/** One field: its number, wire type, and where its value lies ([start, end) of the bytes, or the fixed value's). */
interface Field {
  no: number;
  wt: number;
  start: number;
  end: number;
}

/**
 * Reads the field at the cursor into `f` (no allocation: the walk reads millions of fields) and moves
 * past it; throws WireError when it runs past the end.
 */
function readField(c: Cursor, f: Field): void {
  const tag = varint(c);
  const no = Math.floor(tag / 8);
  const wt = tag & 7;
  if (no === 0) throw new WireError(`field number 0 at byte ${c.pos}`);
  let start = c.pos;
  if (wt === 2) {
    const len = varint(c);
    start = c.pos;
    c.pos += len;
  } else if (wt === 0) varint(c);
  else if (wt === 1) c.pos += 8;
  else if (wt === 5) c.pos += 4;
  else throw new WireError(`unsupported wire type ${wt} at byte ${start}`);
  if (c.pos > c.end) throw new WireError(`field ${no} runs past the end of its message (byte ${c.end})`);
  f.no = no;
  f.wt = wt;
  f.start = start;
  f.end = c.pos;
}

function nextField(c: Cursor): Field {
  const tag = varint(c);
  const no = Math.floor(tag / 8);
  const wt = tag & 7;
  if (no === 0) throw new WireError(`field number 0 at byte ${c.pos}`);
  let start = c.pos;
  switch (wt) {
    case 0:
      varint(c);
      break;
    case 1:
      c.pos += 8;
      break;
    case 2: {
      const len = varint(c);
      start = c.pos;
      c.pos += len;
      break;
    }
    case 5:
      c.pos += 4;
      break;
    default:
      throw new WireError(`unsupported wire type ${wt} at byte ${start}`);
  }
  if (c.pos > c.end) throw new WireError(`field ${no} runs past the end of its message (byte ${c.end})`);
  return { no, wt, start, end: c.pos };
}

export interface WalkStats {
  records: number;
  /** Smallest and largest non-zero timestamp, nanoseconds, after the shift (0n when none). */
  minNs: bigint;
  maxNs: bigint;
  /** Records whose message shows the signal (replay/wire.ts sniff). */
  evidence: number;
}

export interface WalkOptions {
  /** Adds this many nanoseconds to every non-zero timestamp, in place. */
  shiftNs?: bigint;
}

/** A walk's running counts; timestamps as exact (high, low) 32-bit halves, made bigints once at the end. */
interface Acc {
  records: number;
  evidence: number;
  minHi: number;
  minLo: number;
  maxHi: number;
  maxLo: number;
  view: DataView;
  shiftNs: bigint;
  /** Collect the evidence of sniffSignal (the fields of each record). */
  sniff: boolean;
  /** Check every field's wire type against the shape's (telling a signal apart; a send-time walk leaves that to the server). */
  strict: boolean;
}

/** A shape's timestamps and children by field number (a lookup a field, not a search). */
interface Index {
  times: (Shape['times'][number] | undefined)[];
  children: (Shape['children'][number] | undefined)[];
}
const indexes = new WeakMap<Shape, Index>();
function indexOf(s: Shape): Index {
  let i = indexes.get(s);
  if (!i) {
    i = { times: [], children: [] };
    for (const t of s.times) i.times[t.no] = t;
    for (const ch of s.children) i.children[ch.no] = ch;
    indexes.set(s, i);
  }
  return i;
}

/** A timestamp at `at`: moved by the shift (in place), then counted into the range; 0 (unset) stays unset. */
function onTime(a: Acc, at: number): void {
  let lo = a.view.getUint32(at, true);
  let hi = a.view.getUint32(at + 4, true);
  if (!hi && !lo) return;
  if (a.shiftNs) {
    const v = ((BigInt(hi) << 32n) | BigInt(lo)) + a.shiftNs;
    if (v <= 0n || v >= 1n << 64n) throw new WireError(`a timestamp moved by ${a.shiftNs} ns leaves the range of fixed64`);
    a.view.setBigUint64(at, v, true);
    lo = Number(v & 0xffffffffn);
    hi = Number(v >> 32n);
  }
  if ((!a.minHi && !a.minLo) || hi < a.minHi || (hi === a.minHi && lo < a.minLo)) ((a.minHi = hi), (a.minLo = lo));
  if (hi > a.maxHi || (hi === a.maxHi && lo > a.maxLo)) ((a.maxHi = hi), (a.maxLo = lo));
}

function walkMessage(b: Uint8Array, start: number, end: number, s: Shape, a: Acc): void {
  if (s.record) a.records++;
  const idx = indexOf(s);
  const strict = a.strict && s.wire;
  const fields: Field[] | null = a.sniff && s.shows ? [] : null;
  // A walk that moves nothing and checks nothing leaves a record once it has read the record's own
  // times (a span's attributes are most of its bytes); its events' times fall inside it.
  const leaveEarly = s.record && !a.shiftNs && !a.strict && s.times.length > 0 && !s.times.some((t) => t.repeated);
  let timesSeen = 0;
  const c: Cursor = { b, pos: start, end };
  const f: Field = { no: 0, wt: 0, start: 0, end: 0 };
  while (c.pos < end) {
    if (leaveEarly && timesSeen === s.times.length) return;
    readField(c, f);
    if (fields) fields.push({ ...f });
    if (strict) {
      const allowed = s.wire![f.no];
      if (allowed && !allowed.includes(f.wt)) throw new WireError(`field ${f.no} has wire type ${f.wt}, not ${allowed.join(' or ')}`);
    }
    const t = idx.times[f.no];
    if (t) {
      timesSeen++;
      if (f.wt === 1) onTime(a, f.start);
      else if (f.wt === 2 && t.repeated) {
        if ((f.end - f.start) % 8) throw new WireError(`packed fixed64 field ${f.no} is not a multiple of 8 bytes`);
        for (let at = f.start; at < f.end; at += 8) onTime(a, at);
      } else throw new WireError(`timestamp field ${f.no} has wire type ${f.wt}`);
      continue;
    }
    const ch = idx.children[f.no];
    if (!ch || ch.shape === 'resource') continue;
    if (f.wt !== 2) throw new WireError(`field ${f.no} should be a message, has wire type ${f.wt}`);
    walkMessage(b, f.start, f.end, ch.shape, a);
  }
  if (fields) {
    const has = (no: number, wt?: number, len?: number) => fields.some((x) => x.no === no && (wt === undefined || x.wt === wt) && (len === undefined || x.end - x.start === len));
    if (s.shows!(has)) a.evidence++;
  }
}

const ns = (hi: number, lo: number) => (BigInt(hi) << 32n) | BigInt(lo);

/**
 * Walks one export request of `signal`: counts its records and reads its timestamps; with
 * `shiftNs` it moves them in `b` itself. Throws WireError on bytes that are not such a request
 * (`check`: every field's wire type checked too; `sniff`: and the evidence of the signal counted).
 */
export function walkRequest(b: Uint8Array, signal: Signal, o: WalkOptions = {}, check: 'structure' | 'wire' | 'sniff' = 'structure'): WalkStats {
  const a: Acc = {
    records: 0,
    evidence: 0,
    minHi: 0,
    minLo: 0,
    maxHi: 0,
    maxLo: 0,
    view: new DataView(b.buffer, b.byteOffset, b.byteLength),
    shiftNs: o.shiftNs ?? 0n,
    sniff: check === 'sniff',
    strict: check !== 'structure',
  };
  walkMessage(b, 0, b.length, REQUESTS[signal].shape, a);
  if (a.sniff && signal === 'profiles' && hasTopField(b, 2)) a.evidence++; // the request-wide dictionary
  return { records: a.records, evidence: a.evidence, minNs: ns(a.minHi, a.minLo), maxNs: ns(a.maxHi, a.maxLo) };
}

function hasTopField(b: Uint8Array, no: number): boolean {
  const c: Cursor = { b, pos: 0, end: b.length };
  while (c.pos < c.end) if (nextField(c).no === no) return true;
  return false;
}

/**
 * The signal of an export request from its structure: the one whose messages all agree with their
 * wire types and show it; null when none or several do (an empty request, or too little to tell).
 */
export function sniffSignal(b: Uint8Array): Signal | null {
  const found: Signal[] = [];
  for (const s of SIGNALS) {
    try {
      if (walkRequest(b, s, {}, 'sniff').evidence > 0) found.push(s);
    } catch {
      // not this signal
    }
  }
  return found.length === 1 ? found[0]! : null;
}

// --- writing ----------------------------------------------------------------------------------

function varintBytes(n: number): number[] {
  const out: number[] = [];
  pushVarint(out, n);
  return out;
}

function lenField(no: number, body: Uint8Array): Uint8Array {
  const head = [...varintBytes(no * 8 + 2), ...varintBytes(body.length)];
  const out = new Uint8Array(head.length + body.length);
  out.set(head, 0);
  out.set(body, head.length);
  return out;
}

const utf8 = new TextEncoder();
const text = new TextDecoder();

function stringValue(v: string): Uint8Array {
  return lenField(1, utf8.encode(v)); // AnyValue.string_value
}

function keyValue(key: string, value: string): Uint8Array {
  return Buffer.concat([lenField(1, utf8.encode(key)), lenField(2, stringValue(value))]);
}

/** The string of an AnyValue's string_value, or null when it holds something else. */
function anyString(b: Uint8Array, start: number, end: number): string | null {
  const c: Cursor = { b, pos: start, end };
  let out: string | null = null;
  while (c.pos < end) {
    const f = nextField(c);
    if (f.no === 1 && f.wt === 2) out = text.decode(b.subarray(f.start, f.end));
  }
  return out;
}

/** The fields of the message [start, end), each one `edit` returns bytes for replaced by them, the others copied as they are. */
function rewrite(b: Uint8Array, start: number, end: number, edit: (f: Field) => Uint8Array | null): Uint8Array[] {
  const parts: Uint8Array[] = [];
  const c: Cursor = { b, pos: start, end };
  while (c.pos < end) {
    const at = c.pos;
    const f = nextField(c);
    parts.push(edit(f) ?? b.subarray(at, f.end));
  }
  return parts;
}

/** A KeyValue's key, and its value when that is a string. */
function keyValueOf(b: Uint8Array, kv: Field): { key: string | null; value: string | null } {
  const c: Cursor = { b, pos: kv.start, end: kv.end };
  let key: string | null = null;
  let value: string | null = null;
  while (c.pos < kv.end) {
    const g = nextField(c);
    if (g.no === 1 && g.wt === 2) key = text.decode(b.subarray(g.start, g.end));
    else if (g.no === 2 && g.wt === 2) value = anyString(b, g.start, g.end);
  }
  return { key, value };
}

const isMessage = (f: Field, no: number) => f.no === no && f.wt === 2;

/** A Resource with `service.name` prefixed (set to prefix + unknown_service when it has none). */
function prefixResource(b: Uint8Array, start: number, end: number, prefix: string): Uint8Array {
  let found = false;
  const parts = rewrite(b, start, end, (f) => {
    if (found || !isMessage(f, 1)) return null;
    const { key, value } = keyValueOf(b, f);
    if (key !== 'service.name') return null;
    found = true;
    return lenField(1, keyValue(key, prefix + (value || UNKNOWN_SERVICE)));
  });
  if (!found) parts.push(lenField(1, keyValue('service.name', prefix + UNKNOWN_SERVICE)));
  return Buffer.concat(parts);
}

/** A ResourceX (ResourceSpans, ResourceLogs, ...) with its resource's service name prefixed. */
function prefixResourceX(b: Uint8Array, start: number, end: number, prefix: string): Uint8Array {
  let found = false;
  const parts = rewrite(b, start, end, (f) => {
    if (found || !isMessage(f, 1)) return null;
    found = true;
    return lenField(1, prefixResource(b, f.start, f.end, prefix));
  });
  if (!found) parts.unshift(lenField(1, prefixResource(new Uint8Array(0), 0, 0, prefix)));
  return Buffer.concat(parts);
}

/** The request with every resource's service.name prefixed (the rest of its bytes as they were). */
export function prefixServices(b: Uint8Array, prefix: string): Uint8Array {
  return Buffer.concat(rewrite(b, 0, b.length, (f) => (isMessage(f, 1) ? lenField(1, prefixResourceX(b, f.start, f.end, prefix)) : null)));
}

// --- framing ----------------------------------------------------------------------------------

export type Framing = 'single' | 'u32be' | 'varint';

interface Split {
  messages: Uint8Array[];
  /** A last frame cut short: its number (from 1), the bytes its prefix announces and those present. */
  truncated: { at: number; want: number; have: number } | null;
}

/** Splits a buffer by a framing; null when the prefixes do not tile it (but for a last frame cut short). */
function split(b: Uint8Array, framing: Framing): Split | null {
  if (framing === 'single') return { messages: [b], truncated: null };
  const out: Split = { messages: [], truncated: null };
  const c: Cursor = { b, pos: 0, end: b.length };
  while (c.pos < c.end) {
    let len: number;
    if (framing === 'u32be') {
      if (c.end - c.pos < 4) return null;
      len = new DataView(b.buffer, b.byteOffset + c.pos, 4).getUint32(0, false);
      c.pos += 4;
    } else {
      try {
        len = varint(c);
      } catch {
        return null;
      }
    }
    if (c.pos + len > c.end) {
      out.truncated = { at: out.messages.length + 1, want: len, have: c.end - c.pos };
      return out;
    }
    out.messages.push(b.subarray(c.pos, c.pos + len));
    c.pos += len;
  }
  return out;
}

/** A message of a framing is an export request (of `signal`, when known) or a compressed frame. */
function isRequest(m: Uint8Array, signal: Signal | null): boolean {
  if (isCompressed(m)) return true;
  if (signal) {
    try {
      walkRequest(m, signal, {}, 'wire');
      return true;
    } catch {
      return false;
    }
  }
  return m.length === 0 || sniffSignal(m) !== null;
}

/** Messages of a framing checked before it is taken for the file's. */
const CHECKED_FRAMES = 3;

export const isCompressed = (m: Uint8Array) => (m[0] === 0x1f && m[1] === 0x8b) || (m[0] === 0x28 && m[1] === 0xb5 && m[2] === 0x2f && m[3] === 0xfd);

/**
 * The export requests a protobuf file holds, and how it frames them: the Collector file exporter's
 * 4-byte big-endian length prefixes (its first byte is 0 below 16 MiB), one request, or protobuf
 * varint prefixes, whichever tiles the file into messages that read as requests; a last frame cut
 * short (a recording that stopped mid-write) is reported, the frames before it kept. Throws
 * WireError when no framing fits.
 */
export function splitFile(b: Uint8Array, signal: Signal | null): Split & { framing: Framing } {
  const order: Framing[] = b[0] === 0 ? ['u32be', 'varint'] : ['single', 'u32be', 'varint'];
  for (const framing of order) {
    const s = split(b, framing);
    // A framing that tiles the file and whose first messages read as requests is the file's: the
    // rest are walked as they are sent (a bad one is reported then), not twice.
    if (s && s.messages.length && s.messages.slice(0, CHECKED_FRAMES).every((m) => isRequest(m, signal))) return { framing, ...s };
  }
  throw new WireError(signal ? `not OTLP ${signal} protobuf: neither one export request nor length-prefixed ones` : 'not OTLP protobuf that tells its signal: neither one export request nor length-prefixed ones (name the signal with --signal if the file holds empty or unusual requests)');
}

/** The OTLP/JSON-free signal of one request: from the file's name hint, else its structure. */
export function signalOf(m: Uint8Array, hint: Signal | null): Signal | null {
  return hint ?? sniffSignal(m);
}
