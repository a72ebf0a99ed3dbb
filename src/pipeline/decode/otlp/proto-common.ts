// What the three OTLP protobuf requests share: AnyValue and KeyValue decoding into attribute JSON
// (with the promoted keys picked on the way), Resource and InstrumentationScope, the
// Resource{X} -> Scope{X} -> records walk, and one decode's set-up and tear-down.
import {
  RESOURCE_PICK,
  SPAN_PICK,
  EMPTY_SCOPE,
  doubleJson,
  makeResource,
  type Picked,
  type ResourceCtx,
  type ScopeCtx,
} from './normalise.js';
import { MalformedError, type DecodeOptions } from './batch.js';
import { B, BUF, HI, LO, P, clearInput, double, fail, int64Value, len, readStr, seek, setInput, skip, str, v32, v64 } from './proto-wire.js';
import { L_FALSE, L_NULL, L_TRUE, Out, R, trimOutputs } from './proto-json-out.js';

/** Deepest AnyValue nesting accepted (protobuf's own default recursion limit is 100). */
export const MAX_DEPTH = 64;

/**
 * A set of attribute keys whose values the promoted columns need. `sig` holds (length, first byte,
 * last byte) of every key, so most keys are ruled out from their bytes without decoding them.
 */
export interface Pick {
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

export const SPAN_PK = makePick(SPAN_PICK);
const RESOURCE_PK = makePick(RESOURCE_PICK);
export const EXC_PK = makePick(new Set(['exception.type']));

// ------------------------------------------------------------------ AnyValue → JSON

/** The JS value of the last AnyValue decoded with want=true (scalars; COMPLEX for arrays/kvlists). */
export let LASTV: unknown;
export const COMPLEX = Symbol('complex');

/** Writes AnyValue [P, end) as JSON into `o`. With `want`, also sets LASTV. */
export function anyValue(o: Out, end: number, depth: number, want: boolean): void {
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
        seek(e);
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
            seek(e2);
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
            seek(e2);
          } else skip(t2, e);
        }
        o.byte(0x7d);
        LASTV = COMPLEX;
        break;
      }
      case 0x3a: {
        const e = len(end);
        const b64 = BUF.base64Slice(P, e);
        seek(e);
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
      seek(ke);
    } else if (t === 0x12) {
      ve = len(end);
      vs = P;
      seek(ve);
    } else skip(t, end);
  }
  o.sep();
  o.jsonStr(ks, ke);
  o.byte(0x3a);
  let key: string | null = null;
  if (pick !== null && ke > ks && pick.sig.has((ke - ks) * 65536 + B[ks]! * 256 + B[ke - 1]!) && (key = str(ks, ke), pick.keys.has(key))) {
    const vstart = o.n;
    if (vs >= 0) {
      seek(vs);
      anyValue(o, ve, depth, true);
    } else {
      o.lit(L_NULL);
      LASTV = null;
    }
    picked![key] = LASTV === COMPLEX ? JSON.parse(o.text(vstart)) : LASTV;
  } else if (vs >= 0) {
    seek(vs);
    anyValue(o, ve, depth, false);
  } else o.lit(L_NULL);
  seek(end);
}

/** A repeated KeyValue field occurrence at P: appended to the open JSON object in `o`. */
export function attr(o: Out, end: number, pick: Pick | null, picked: Picked | null): void {
  const e = len(end);
  keyValue(o, e, 1, pick, picked);
  seek(e);
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
export function walk(onRecord: (res: ResourceCtx, sc: ScopeCtx, end: number) => void): void {
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
        seek(e);
      } else if (t2 === 0x12) {
        const e = len(re);
        scopes.push(P, e);
        seek(e);
      } else skip(t2, re);
    }
    const r = res ?? emptyResource();
    for (let i = 0; i < scopes.length; i += 2) {
      seek(scopes[i]!);
      const se = scopes[i + 1]!;
      let sc: ScopeCtx = EMPTY_SCOPE;
      const recs: number[] = [];
      while (P < se) {
        const t3 = v32(se);
        if (t3 === 0x0a) {
          const e = len(se);
          sc = scope(e);
          seek(e);
        } else if (t3 === 0x12) {
          const e = len(se);
          recs.push(P, e);
          seek(e);
        } else skip(t3, se);
      }
      for (let j = 0; j < recs.length; j += 2) {
        seek(recs[j]!);
        onRecord(r, sc, recs[j + 1]!);
      }
      seek(se);
    }
    seek(re);
  }
}

/** Attribute-field ranges of the current nested message (events, links, exemplars; never re-entered). */
const RANGES: number[] = [];
let RN = 0;

export function clearRanges(): void {
  RN = 0;
}

/** Records the attribute field [s, e) of the current nested message. */
export function addRange(s: number, e: number): void {
  RANGES[RN++] = s;
  RANGES[RN++] = e;
}

export function writeRanges(o: Out, pick: Pick | null, picked: Picked | null): void {
  o.byte(0x7b);
  for (let i = 0; i < RN; i += 2) {
    seek(RANGES[i]!);
    keyValue(o, RANGES[i + 1]!, 1, pick, picked);
  }
  o.byte(0x7d);
}

export function nowOf(opts?: DecodeOptions): number {
  return opts?.nowUs ?? Date.now() * 1000;
}

export function run<T>(body: Uint8Array, f: () => T): T {
  setInput(body);
  try {
    return f();
  } catch (e) {
    if (e instanceof MalformedError) throw e;
    if (e instanceof RangeError) throw new MalformedError('payload too complex: ' + e.message);
    throw e;
  } finally {
    clearInput();
    trimOutputs();
  }
}
