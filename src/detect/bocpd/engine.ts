// Two interchangeable engines over the same flat layouts: the WASM module (assembly/bocpd.ts) and
// the TypeScript reference (reference.ts). Both take concatenated series, per-series states and
// return events, and read timestamped series through their seasonal contexts (assembly/_seasonal.ts,
// timed.ts readPoints); the public API (index.ts) packs and unpacks.
//
// WASM memory ownership: the engine allocates ONE pinned ArrayBuffer inside the module (__new +
// __pin) holding params | xs | ns | offsets | states | events | info, grows it (unpin old, allocate
// bigger) only when a batch needs more, and never frees it while the engine lives. Inputs are
// written straight into Float64Array views of that buffer; states and events are copied out once.
import { instantiateWasm } from '../../compute/wasm.js';
import { EVENT_W, P } from './layout.js';
import { runBatch } from './reference.js';
import { T, readPoints, type SeasonalBatch, type TimedModel } from './timed.js';

export interface BatchInput {
  params: Float64Array;
  xs: Float64Array;
  /** calls per point for the binomial model, else may be empty */
  ns: Float64Array;
  /** nSeries + 1 offsets into xs */
  offsets: Float64Array;
  nSeries: number;
  /** nSeries * stateSize, updated in place */
  states: Float64Array;
  stateSize: number;
}

export interface Engine {
  readonly name: 'wasm' | 'ts';
  /** Runs the batch; states are updated in place; returns events (EVENT_W per event). */
  run(b: BatchInput): Float64Array;
  /** The seasonal path's first reading (timed.ts readPoints): contexts and residuals written in place. */
  seasonal(m: TimedModel, b: SeasonalBatch): void;
}

/** Minimum event capacity per call; a batch needing more is done in several passes. */
const MIN_EVENTS = 1 << 14;

export class TsEngine implements Engine {
  readonly name = 'ts' as const;
  run(b: BatchInput): Float64Array {
    const ns = b.ns.length === b.xs.length ? b.ns : new Float64Array(b.xs.length);
    const cap = Math.max(MIN_EVENTS, maxLen(b.offsets, b.nSeries));
    const ev = new Float64Array(cap * EVENT_W);
    const info = new Float64Array(2);
    const chunks: Float64Array[] = [];
    let first = 0;
    while (first < b.nSeries) {
      runBatch(b.params, b.xs, ns, b.offsets, b.nSeries, b.states, b.stateSize, ev, cap, first, info);
      chunks.push(ev.slice(0, info[0]! * EVENT_W));
      first = info[1]!;
    }
    return concat(chunks);
  }

  seasonal(m: TimedModel, b: SeasonalBatch): void {
    readPoints(m, b);
  }
}

interface BocpdExports {
  runBatch(
    params: number,
    xs: number,
    ns: number,
    offsets: number,
    nSeries: number,
    states: number,
    stateSize: number,
    ev: number,
    evCap: number,
    firstSeries: number,
    info: number,
  ): void;
  lgamma(x: number): number;
  seasonalReading(model: number, k0: number, n0: number, ctxs: number, xs: number, ns: number, out: number, records: number, offsets: number, buckets: number, nSeries: number): void;
}

export class WasmEngine implements Engine {
  readonly name = 'wasm' as const;
  private readonly m = instantiateWasm<BocpdExports>('bocpd');
  private ptr = 0;
  private bytes = 0;

  /** Ensures the pinned scratch buffer holds `need` bytes; returns its address. */
  private reserve(need: number): number {
    if (need <= this.bytes) return this.ptr;
    if (this.ptr) this.m.__unpin(this.ptr);
    const size = Math.max(need, this.bytes * 2, 1 << 16);
    this.ptr = this.m.__pin(this.m.__new(size, 1)); // class id 1 = ArrayBuffer
    this.bytes = size;
    this.m.__collect();
    return this.ptr;
  }

  run(b: BatchInput): Float64Array {
    const nPts = b.xs.length;
    const hasNs = b.ns.length === nPts;
    const cap = Math.max(MIN_EVENTS, maxLen(b.offsets, b.nSeries));
    // layout in f64 slots
    const oP = 0;
    const oX = oP + P.size;
    const oN = oX + nPts;
    const oO = oN + (hasNs ? nPts : 0);
    const oS = oO + b.nSeries + 1;
    const oE = oS + b.states.length;
    const oI = oE + cap * EVENT_W;
    const total = oI + 2;
    const base = this.reserve(total * 8);
    const mem = new Float64Array(this.m.memory.buffer, base, total);
    mem.set(b.params, oP);
    mem.set(b.xs, oX);
    if (hasNs) mem.set(b.ns, oN);
    mem.set(b.offsets.subarray(0, b.nSeries + 1), oO);
    mem.set(b.states, oS);
    const chunks: Float64Array[] = [];
    let first = 0;
    // ns pointer: for models other than binomial it is never read; point it at xs when absent
    const nsPtr = base + (hasNs ? oN : oX) * 8;
    while (first < b.nSeries) {
      this.m.runBatch(base + oP * 8, base + oX * 8, nsPtr, base + oO * 8, b.nSeries, base + oS * 8, b.stateSize, base + oE * 8, cap, first, base + oI * 8);
      const view = new Float64Array(this.m.memory.buffer, base, total);
      const written = view[oI]!;
      chunks.push(view.slice(oE, oE + written * EVENT_W));
      first = view[oI + 1]!;
    }
    b.states.set(new Float64Array(this.m.memory.buffer, base + oS * 8, b.states.length));
    return concat(chunks);
  }

  seasonal(m: TimedModel, b: SeasonalBatch): void {
    const nPts = b.offsets[b.nSeries]! - b.offsets[0]!;
    const nCtx = b.nSeries * T.size;
    // layout in f64 slots: contexts | xs | ns | out | records | offsets | buckets (offsets rebased to 0)
    const oC = 0;
    const oX = oC + nCtx;
    const oN = oX + nPts;
    const oR = oN + (m.binomial ? nPts : 0);
    const oW = oR + nPts;
    const oO = oW + nPts + 1;
    const oB = oO + b.nSeries + 1;
    const total = oB + b.nSeries;
    const base = this.reserve(total * 8);
    const mem = new Float64Array(this.m.memory.buffer, base, total);
    const first = b.offsets[0]!;
    mem.set(b.contexts.subarray(0, nCtx), oC);
    mem.set(b.xs.subarray(first, first + nPts), oX);
    if (m.binomial) mem.set(b.ns.subarray(first, first + nPts), oN);
    for (let i = 0; i <= b.nSeries; i++) mem[oO + i] = b.offsets[i]! - first;
    mem.set(b.buckets.subarray(0, b.nSeries), oB);
    const at = (slot: number): number => base + slot * 8;
    this.m.seasonalReading(m.kind, m.k0, m.n0, at(oC), at(oX), at(m.binomial ? oN : oX), at(oR), at(oW), at(oO), at(oB), b.nSeries);
    const view = new Float64Array(this.m.memory.buffer, base, total);
    b.contexts.set(view.subarray(oC, oC + nCtx));
    b.out.set(view.subarray(oR, oR + nPts), first);
    const beaten = view[oW]!;
    b.records[0] = beaten;
    for (let j = 1; j <= beaten; j++) b.records[j] = view[oW + j]! + first; // indices into b.xs
  }
}

function maxLen(offsets: Float64Array, n: number): number {
  let m = 0;
  for (let i = 0; i < n; i++) m = Math.max(m, offsets[i + 1]! - offsets[i]!);
  return m;
}

function concat(chunks: Float64Array[]): Float64Array {
  if (chunks.length === 1) return chunks[0]!;
  let n = 0;
  for (const c of chunks) n += c.length;
  const out = new Float64Array(n);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

let shared: WasmEngine | undefined;
/** One WASM engine per thread (the module instance and its scratch buffer are reused). */
export function wasmEngine(): WasmEngine {
  return (shared ??= new WasmEngine());
}
export const tsEngine: Engine = new TsEngine();
