// ExportMetricsServiceRequest (protobuf) -> the metric tables: gauge, sum, histogram, exponential
// histogram and summary points with their exemplars, written through the shared MetricSink of
// normalise.ts.
import {
  MetricSink,
  doubleJson,
  type ExpHistogramPoint,
  type HistogramPoint,
  type MetricCtx,
  type NumberPoint,
  type ResourceCtx,
  type ScopeCtx,
  type SummaryPoint,
} from './normalise.js';
import type { DecodeOptions, DecodeResult } from './batch.js';
import { P, double, fail, fixed64, int64Value, len, micros, readStr, seek, skip, uint64Value, v32, v64 } from './proto-wire.js';
import { A, E, lit } from './proto-json-out.js';
import { addRange, attr, clearRanges, nowOf, run, walk, writeRanges } from './proto-common.js';

const L_EX_TS = lit('{"timestamp_us":');
const L_EX_VALUE = lit(',"value":');
const L_EX_TRACE = lit(',"trace_id":');
const L_SPAN_ID = lit(',"span_id":');
const L_EX_FATTRS = lit(',"filtered_attributes":');

/** Exemplar [P, end) appended to E. */
function exemplar(end: number): void {
  let tUs = 0;
  let value = 'null';
  let ss = 0;
  let se = 0;
  let ts = 0;
  let te = 0;
  clearRanges();
  while (P < end) {
    const t = v32(end);
    switch (t) {
      case 0x11: tUs = micros(end); break;
      case 0x19: value = doubleJson(double(end)); break;
      case 0x31: fixed64(end); value = String(int64Value()); break;
      case 0x22: se = len(end); ss = P; seek(se); break;
      case 0x2a: te = len(end); ts = P; seek(te); break;
      case 0x3a: { const e = len(end); addRange(P, e); seek(e); break; }
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
  seek(end);
}

function addExemplar(end: number): void {
  const e = len(end);
  exemplar(e);
  seek(e);
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
      case 0x42: { const e = len(end); p.positiveCounts = []; p.positiveOffset = buckets(e, p.positiveCounts); seek(e); break; }
      case 0x4a: { const e = len(end); p.negativeCounts = []; p.negativeOffset = buckets(e, p.negativeCounts); seek(e); break; }
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
        seek(e);
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
        seek(de);
        break;
      default: skip(t, end);
    }
  }
  if (kind === Kind.None) return;
  const mc: MetricCtx = { name, description: description || null, unit: unit || null };
  // Data message: field 1 = repeated points; 2 = temporality; 3 = is_monotonic.
  seek(ds);
  const pts: number[] = [];
  let temporality = 0;
  let monotonic = false;
  while (P < de) {
    const t = v32(de);
    if (t === 0x0a) {
      const e = len(de);
      pts.push(P, e);
      seek(e);
    } else if (t === 0x10) temporality = v32(de) | 0;
    else if (t === 0x18) monotonic = v32(de) !== 0;
    else skip(t, de);
  }
  if (!sink.check(mc, pts.length / 2)) {
    seek(end);
    return;
  }
  for (let i = 0; i < pts.length; i += 2) {
    seek(pts[i]!);
    const e = pts[i + 1]!;
    switch (kind) {
      case Kind.Gauge: sink.addGauge(res, sc, mc, numberPoint(e)); break;
      case Kind.Sum: sink.addSum(res, sc, mc, numberPoint(e), temporality, monotonic); break;
      case Kind.Histogram: sink.addHistogram(res, sc, mc, histogramPoint(e), temporality); break;
      case Kind.Exp: sink.addExpHistogram(res, sc, mc, expPoint(e), temporality); break;
      case Kind.Summary: sink.addSummary(res, sc, mc, summaryPoint(e)); break;
    }
  }
  seek(end);
}

/** ExportMetricsServiceRequest (protobuf) → metric table batches. Throws MalformedError. */
export function decodeMetrics(body: Uint8Array, opts?: DecodeOptions): DecodeResult {
  const sink = new MetricSink(nowOf(opts));
  return run(body, () => {
    walk((res, sc, end) => metric(res, sc, end, sink));
    return sink.result();
  });
}
