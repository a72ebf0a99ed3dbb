// One engine call for many series: packing the inputs and states, reading the events back. A series
// with a timestamp goes the seasonal path (timed.ts): its residuals are fed instead of its values,
// and its changes are read back through the envelope's verdict.
import { BUCKET_US } from '../../core/time.js';
import type { Engine } from './engine.js';
import { E, EVENT_W, S } from './layout.js';
import { MARGIN, T, enterBucket, levelBefore, newContext, rawAt, rawSum, rawWeight, takePoint, type TimedModel } from './timed.js';
import { addPoint, anyHeld, cleared, dropAtOrAbove, hold } from './held.js';

export interface SeriesInput {
  /** One value per point; NaN for a missing point. error_rate: errors per bucket. */
  values: ArrayLike<number>;
  /** error_rate (binomial model) only: calls per bucket; 0 or NaN = no observation. */
  calls?: ArrayLike<number>;
  /**
   * Timestamp (µs since the epoch) of values[0]: each value is then one 5-minute bucket, the next
   * value the next bucket. Turns on the seasonal path.
   */
  start?: number;
}

export interface ChangePoint {
  /** First point of the new regime (absolute index since the state was created). */
  index: number;
  /** The point whose arrival reported the change (absolute index). */
  at: number;
  /** Mean of the regime before the change, raw units. */
  before: number;
  /**
   * Mean from the change on, raw units: up to the next change or the last point of the call; on
   * the seasonal path, up to the point that reported it.
   */
  after: number;
}

export interface RunResult {
  changes: ChangePoint[];
  /** Pass it back with the next points to resume. */
  state: Float64Array;
}

/** What a batch needs of its detector. */
export interface BatchCore {
  engine: Engine;
  params: Float64Array;
  /** The same with BOCPD's lag for the seasonal path. */
  timedParams: Float64Array;
  /** Slots of the detector's own part of a state. */
  stateSize: number;
  tag: number;
  binomial: boolean;
  timed: TimedModel;
}

interface Packed {
  xs: ArrayLike<number>;
  ns: ArrayLike<number> | undefined;
  state: Float64Array | undefined;
}

/** Runs the packed series in one engine call: their new states (stateSize each) and the events. */
function runEngine(core: BatchCore, params: Float64Array, items: readonly Packed[]): { states: Float64Array; events: Float64Array } {
  const n = items.length;
  const ss = core.stateSize;
  const offsets = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i]! + items[i]!.xs.length;
  const total = offsets[n]!;
  const xs = new Float64Array(total);
  const ns = core.binomial ? new Float64Array(total) : new Float64Array(0);
  const states = new Float64Array(n * ss);
  for (let i = 0; i < n; i++) {
    const it = items[i]!;
    xs.set(it.xs, offsets[i]);
    if (core.binomial) ns.set(it.ns!, offsets[i]);
    if (it.state) states.set(it.state.subarray(0, ss), i * ss);
    else {
      states[i * ss + S.cLast] = -1;
      states[i * ss + S.model] = core.tag;
    }
  }
  const events = n ? core.engine.run({ params, xs, ns, offsets, nSeries: n, states, stateSize: ss }) : new Float64Array(0);
  return { states, events };
}

/** Checks a series' calls and its state against the detector; returns the state's detector part size plus context, if any. */
function check(core: BatchCore, i: number, s: SeriesInput, prev: Float64Array | undefined): void {
  if (core.binomial && (!s.calls || s.calls.length !== s.values.length)) {
    throw new RangeError(`bocpd: series ${i}: error_rate needs calls[] of the same length as values[]`);
  }
  if (!prev) return;
  const ss = core.stateSize;
  const timed = prev[S.timed] === 1;
  if (prev.length !== ss + (timed ? T.size : 0)) throw new RangeError(`bocpd: series ${i}: state has ${prev.length} slots, this configuration needs ${ss} (${ss + T.size} with a timestamp)`);
  if (prev[S.model] !== core.tag) throw new RangeError(`bocpd: series ${i}: state was made by another observation model`);
  if (timed && s.start === undefined) throw new RangeError(`bocpd: series ${i}: the state is a timestamped series'; give the new points' start`);
}

/** Series without a timestamp: values straight to the engine. */
export function runPlain(core: BatchCore, series: readonly SeriesInput[], states: ReadonlyArray<Float64Array | undefined>): RunResult[] {
  series.forEach((s, i) => check(core, i, s, states[i]));
  const { states: st, events } = runEngine(
    core,
    core.params,
    series.map((s, i) => ({ xs: s.values, ns: s.calls, state: states[i] })),
  );
  const ss = core.stateSize;
  const out: RunResult[] = series.map((_, i) => ({ changes: [], state: st.slice(i * ss, (i + 1) * ss) }));
  for (let e = 0; e < events.length; e += EVENT_W) {
    out[events[e + E.series]!]!.changes.push({ index: events[e + E.index]!, at: events[e + E.at]!, before: events[e + E.before]!, after: events[e + E.after]! });
  }
  return out;
}

/** A timestamped series between the two readings: its residuals and contexts before and after. */
interface Prepared {
  /** Bucket of the first point fed (gap points included) and its index. */
  bucket: number;
  t0: number;
  xs: Float64Array;
  calls: Float64Array | undefined;
  residuals: Float64Array;
  before: Float64Array;
  after: Float64Array;
}

/** The first reading: the residuals to feed, through a copy of the context. */
function prepare(core: BatchCore, i: number, s: SeriesInput, prev: Float64Array | undefined): Prepared {
  const ss = core.stateSize;
  const before = new Float64Array(T.size);
  if (prev && prev.length > ss) before.set(prev.subarray(ss));
  else newContext(before, 0);
  const t0 = prev ? prev[S.t]! : 0;
  const first = Math.floor(s.start! / BUCKET_US);
  if (!Number.isFinite(first)) throw new RangeError(`bocpd: series ${i}: start must be a timestamp in µs`);
  if (!(before[T.origin]! === before[T.origin])) before[T.origin] = first - t0;
  const next = before[T.origin]! + t0;
  if (first < next) throw new RangeError(`bocpd: series ${i}: start is ${next - first} buckets before the next point the state expects`);
  const gap = first - next;
  const len = gap + s.values.length;
  const xs = new Float64Array(len).fill(NaN);
  xs.set(s.values, gap);
  let calls: Float64Array | undefined;
  if (core.binomial) {
    calls = new Float64Array(len);
    calls.set(s.calls!, gap);
  }
  const after = before.slice();
  const residuals = new Float64Array(len);
  for (let k = 0; k < len; k++) {
    enterBucket(after, 0, core.timed, next + k);
    residuals[k] = takePoint(after, 0, core.timed, next + k, xs[k]!, calls ? calls[k]! : 1);
  }
  return { bucket: next, t0, xs, calls, residuals, before, after };
}

/**
 * The second reading, when the engine reported changes or one is waiting: the same steps again
 * from the context as it was, with the changes taken in at the points that reported them.
 */
function readBack(core: BatchCore, p: Prepared, events: Float64Array, evs: readonly number[]): { changes: ChangePoint[]; context: Float64Array } {
  const m = core.timed;
  const c = p.before.slice();
  const unit = m.binomial ? 100 : 1; // the engine's means of error_rate are percentages
  const changes: ChangePoint[] = [];
  const report = (index: number, at: number, before: number, after: number): void => {
    const raw = rawAt(c, 0, m, c[T.origin]! + index);
    changes.push({ index, at, before: raw(before), after: raw(after) });
  };
  let e = 0;
  for (let k = 0; k < p.xs.length; k++) {
    const bucket = p.bucket + k;
    const t = p.t0 + k;
    const n = p.calls ? p.calls[k]! : 1;
    enterBucket(c, 0, m, bucket);
    const r = takePoint(c, 0, m, bucket, p.xs[k]!, n);
    if (m.observed(p.xs[k]!, n)) addPoint(c, T.held, rawSum(m, r, n), rawWeight(m, n));
    if (e < evs.length && events[evs[e]! + E.at] === t) {
      const ev = evs[e++]!;
      const index = events[ev + E.index]!;
      const before = events[ev + E.before]!;
      const sum = events[ev + E.sum]!;
      const weight = events[ev + E.weight]!;
      const level = (unit * sum) / weight;
      if (level > before) {
        const from = levelBefore(c, 0, c[T.origin]! + index, bucket);
        hold(c, T.held, m.excess, { start: index, before, sum, weight }, from.level, from.aux, T.envelope, c[T.origin]! + index);
      }
      else {
        // the series fell back: a change waiting from a level as high ends (not on a lone low point)
        dropAtOrAbove(c, T.held, Math.max(level, (unit * rawSum(m, r, n)) / rawWeight(m, n)));
        report(index, t, before, level);
      }
    }
    const h = cleared(c, T.held, m.excess, t, MARGIN);
    if (h) report(h.start, t, h.before, (unit * h.sum) / h.weight);
  }
  return { changes, context: c };
}

/** Timestamped series: residuals to the engine (BOCPD's lag on this path), changes read back through the envelope. */
export function runTimed(core: BatchCore, series: readonly SeriesInput[], states: ReadonlyArray<Float64Array | undefined>): RunResult[] {
  series.forEach((s, i) => check(core, i, s, states[i]));
  const prepared = series.map((s, i) => prepare(core, i, s, states[i]));
  const { states: st, events } = runEngine(
    core,
    core.timedParams,
    prepared.map((p, i) => ({ xs: p.residuals, ns: p.calls, state: states[i] })),
  );
  const bySeries: number[][] = prepared.map(() => []);
  for (let e = 0; e < events.length; e += EVENT_W) bySeries[events[e + E.series]!]!.push(e);
  const ss = core.stateSize;
  return prepared.map((p, i) => {
    const read = bySeries[i]!.length || anyHeld(p.before, T.held) ? readBack(core, p, events, bySeries[i]!) : { changes: [], context: p.after };
    const state = new Float64Array(ss + T.size);
    state.set(st.subarray(i * ss, (i + 1) * ss));
    state[S.timed] = 1;
    state.set(read.context, ss);
    return { changes: read.changes, state };
  });
}
