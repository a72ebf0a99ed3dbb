// ExportTraceServiceRequest (protobuf) -> svc_spans rows: spans, their events (with the first
// exception's type picked) and links, written through the shared SpanSink of normalise.ts.
import { SpanSink, type Picked, type ResourceCtx, type ScopeCtx } from './normalise.js';
import type { DecodeOptions, DecodeResult } from './batch.js';
import { P, fixed32, len, micros, readHex, readStr, seek, skip, str, v32 } from './proto-wire.js';
import { A, E, L, L_NULL, lit } from './proto-json-out.js';
import { EXC_PK, SPAN_PK, addRange, attr, clearRanges, nowOf, run, walk, writeRanges } from './proto-common.js';

const L_EV_NAME = lit('{"name":');
const L_EV_TS = lit(',"timestamp_us":');
const L_ATTRS = lit(',"attributes":');
const L_LK_TRACE = lit('{"trace_id":');
const L_SPAN_ID = lit(',"span_id":');
const L_LK_STATE = lit(',"trace_state":');
const L_FLAGS = lit(',"flags":');

const EXCEPTION = 'exception';

/** Span.Event [P, end) appended to E; returns its exception.type when it is an exception event. */
function event(end: number, wantException: boolean): string | null {
  let tUs = 0;
  let ns = 0;
  let ne = 0;
  clearRanges();
  while (P < end) {
    const t = v32(end);
    if (t === 0x09) tUs = micros(end);
    else if (t === 0x12) {
      ne = len(end);
      ns = P;
      seek(ne);
    } else if (t === 0x1a) {
      const e = len(end);
      addRange(P, e);
      seek(e);
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
  seek(end);
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
  clearRanges();
  while (P < end) {
    const t = v32(end);
    switch (t) {
      case 0x0a: te = len(end); ts = P; seek(te); break;
      case 0x12: se = len(end); ss = P; seek(se); break;
      case 0x1a: ste = len(end); sts = P; seek(ste); break;
      case 0x22: { const e = len(end); addRange(P, e); seek(e); break; }
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
  seek(end);
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
        seek(e);
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

/** ExportTraceServiceRequest (protobuf) → svc_spans batch. Throws MalformedError. */
export function decodeTraces(body: Uint8Array, opts?: DecodeOptions): DecodeResult {
  const sink = new SpanSink(nowOf(opts));
  return run(body, () => {
    walk((res, sc, end) => span(res, sc, end, sink));
    return sink.result();
  });
}
