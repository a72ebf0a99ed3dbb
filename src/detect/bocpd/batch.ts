// One engine call for many series: packing the inputs and states, reading the events back. A series
// with a timestamp goes the seasonal path (timed.ts): its residuals are fed instead of its values,
// and its changes are read back through the envelope's verdict.
import { BUCKET_US, BUCKETS_PER_DAY } from '../../core/time.js';
import type { Engine } from './engine.js';
import { E, EVENT_W, MODEL, S } from './layout.js';
import { MARGIN, T, engineUnit, levelBefore, newContext, noteFall, rawAt, rawSum, rawWeight, riseBase, stillUp, usualAt, USUAL_SHARE, type TimedModel } from './timed.js';
import { addPoint, anyHeld, cleared, dropEnded, hold, newHeld } from './held.js';
import { QUIET_SPAN, RECENT_EXCESS, lastReported, noteReported, recentExcess, spreadShare } from './envelope.js';
import { dailyActive } from './profile.js';

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
  /**
   * Mean of the regime before the change, raw units; on the seasonal path, that regime's level at the
   * time of day (and week) of the change's first point.
   */
  before: number;
  /**
   * Mean from the change on, raw units: up to the next change or the last point of the call; on
   * the seasonal path, up to the point that reported it, at the time of day of the change's first point.
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

/** A batch packed for one engine call: concatenated points (and calls), offsets, and the detectors' states. */
interface Packed {
  xs: Float64Array;
  ns: Float64Array;
  offsets: Float64Array;
  states: Float64Array;
}

/** Packs room for series of `lengths` points, each state from `states[i]` (the detector's part) or fresh. */
function pack(core: BatchCore, lengths: readonly number[], states: ReadonlyArray<Float64Array | undefined>): Packed {
  const n = lengths.length;
  const ss = core.stateSize;
  const offsets = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i]! + lengths[i]!;
  const total = offsets[n]!;
  const packed = { xs: new Float64Array(total), ns: new Float64Array(core.binomial ? total : 0), offsets, states: new Float64Array(n * ss) };
  for (let i = 0; i < n; i++) {
    const prev = states[i];
    if (prev) packed.states.set(prev.subarray(0, ss), i * ss);
    else {
      packed.states[i * ss + S.cLast] = -1;
      packed.states[i * ss + S.model] = core.tag;
    }
  }
  return packed;
}

/** One engine call over the packed batch: the states are updated in place; returns the events. */
function runEngine(core: BatchCore, params: Float64Array, b: Packed): Float64Array {
  const n = b.offsets.length - 1;
  return n ? core.engine.run({ params, xs: b.xs, ns: b.ns, offsets: b.offsets, nSeries: n, states: b.states, stateSize: core.stateSize }) : new Float64Array(0);
}

/** Checks a series' calls and its state against the detector. */
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
  const b = pack(
    core,
    series.map((s) => s.values.length),
    states,
  );
  series.forEach((s, i) => {
    b.xs.set(s.values, b.offsets[i]);
    if (core.binomial) b.ns.set(s.calls!, b.offsets[i]);
  });
  const events = runEngine(core, core.params, b);
  const ss = core.stateSize;
  const out: RunResult[] = series.map((_, i) => ({ changes: [], state: b.states.slice(i * ss, (i + 1) * ss) }));
  for (let e = 0; e < events.length; e += EVENT_W) {
    out[events[e + E.series]!]!.changes.push({ index: events[e + E.index]!, at: events[e + E.at]!, before: events[e + E.before]!, after: events[e + E.after]! });
  }
  return out;
}

/** A timestamped series between the two readings. */
interface Prepared {
  /** Bucket of its first point fed (gap points included) and that point's index. */
  bucket: number;
  t0: number;
  /** Where its points are in the batch's raw input (`raw`, gap points NaN) and residuals. */
  offset: number;
  length: number;
  /** The context before these points (not to be modified: it may be the caller's). */
  before: Float64Array;
  /** The new state: the context after these points in place, the detector's part filled in after the engine. */
  state: Float64Array;
}

/** Where a timestamped series' new points start, and its context before them. */
function locate(core: BatchCore, i: number, s: SeriesInput, prev: Float64Array | undefined): { before: Float64Array; t0: number; next: number; gap: number } {
  const ss = core.stateSize;
  const t0 = prev ? prev[S.t]! : 0;
  const first = Math.floor(s.start! / BUCKET_US);
  if (!Number.isFinite(first)) throw new RangeError(`bocpd: series ${i}: start must be a timestamp in µs`);
  let before: Float64Array;
  if (prev && prev.length > ss && prev[ss + T.origin]! === prev[ss + T.origin]) before = prev.subarray(ss);
  else {
    before = new Float64Array(T.size);
    if (prev && prev.length > ss) before.set(prev.subarray(ss));
    else newContext(before, 0);
    before[T.origin] = first - t0;
  }
  const next = before[T.origin]! + t0;
  if (first < next) throw new RangeError(`bocpd: series ${i}: start is ${next - first} buckets before the next point the state expects`);
  return { before, t0, next, gap: first - next };
}

/**
 * The second reading, when the engine reported changes or one is waiting: the same steps again
 * from the context as it was, with the changes taken in at the points that reported them.
 */
function readBack(core: BatchCore, p: Prepared, raw: Float64Array, ns: Float64Array, events: Float64Array, evs: readonly number[], records: readonly number[]): { changes: ChangePoint[]; context: Float64Array } {
  const m = core.timed;
  const c = p.before.slice();
  const unit = engineUnit(m);
  const changes: ChangePoint[] = [];
  const report = (index: number, at: number, before: number, after: number): void => {
    const toRaw = rawAt(c, 0, m, c[T.origin]! + index);
    changes.push({ index, at, before: toRaw(before), after: toRaw(after) });
  };
  /** A worsening starting at point `start`: reported, and remembered until the series falls back. */
  const worsened = (start: number, at: number, before: number, after: number): void => {
    c[T.raised] = before / unit;
    noteReported(c, T.envelope, c[T.origin]! + start);
    report(start, at, before, after);
  };
  let e = 0;
  let rec = 0;
  for (let k = 0; k < p.length; k++) {
    // the context moves through the engine's own reading, so that a series read in pieces or whole
    // gets the same context whichever stretches are read here; with nothing waiting, up to the next
    // event the points only move it
    const idle = !anyHeld(c, T.held) && !(c[T.downFrom]! === c[T.downFrom]);
    const nextEvent = e < evs.length ? events[evs[e]! + E.at]! - p.t0 : p.length;
    const nextRecord = rec < records.length ? records[rec]! : p.length;
    const stop = idle ? Math.min(nextEvent, nextRecord) : k + 1;
    if (stop > k + 1) {
      readStretch(core, c, p, raw, ns, k, stop);
      k = stop - 1;
      continue;
    }
    const bucket = p.bucket + k;
    const t = p.t0 + k;
    const x = raw[p.offset + k]!;
    const n = m.binomial ? ns[p.offset + k]! : 1;
    const r = readStretch(core, c, p, raw, ns, k, k + 1)[0]!;
    const point = (unit * rawSum(m, r, n)) / rawWeight(m, n); // the point in the engine's units
    if (m.observed(x, n) && r === r) {
      addPoint(c, T.held, rawSum(m, r, n), rawWeight(m, n));
      // a fall reported on its first point is read with the point after it: a lone low point (a
      // missing bucket's zero) does not end a waiting change
      if (c[T.downFrom]! === c[T.downFrom]) fallBack(c, m, c[T.downFrom]!, Math.max(c[T.downTo]!, point), c[T.downTo]!);
    }
    if (e < evs.length && events[evs[e]! + E.at] === t) {
      const ev = evs[e++]!;
      const index = events[ev + E.index]!;
      const before = events[ev + E.before]!;
      const sum = events[ev + E.sum]!;
      const weight = events[ev + E.weight]!;
      const level = (unit * sum) / weight;
      if (level > before) {
        const from = levelBefore(c, 0, c[T.origin]! + index, bucket);
        // measured from the level before it (or before the outage it recovers from) and from most of
        // the usual level: the return from a dip is no worsening
        const base = riseBase(c, 0, from.level, before / unit);
        const usual = USUAL_SHARE * usualAt(c, 0, m, c[T.origin]! + index);
        hold(c, T.held, m.excess, { start: index, before, sum, weight }, usual > base ? usual : base, from.aux, T.envelope, c[T.origin]! + index);
      } else {
        if (index === t) {
          c[T.downFrom] = before;
          c[T.downTo] = level;
        } else fallBack(c, m, before, Math.max(level, point), level);
        report(index, t, before, level);
      }
    }
    if (rec < records.length && records[rec] === k) {
      rec++;
      // a new record for the week: the worsening is the point itself, unless it belongs to a
      // worsening whose start was reported in the last two hours (the span the envelope keeps quiet
      // for it), or in the last day while it still stands (ONGOING_SPAN); whatever waited is part of it
      const since = bucket - lastReported(c, T.envelope);
      if (!(since < QUIET_SPAN || (since < ONGOING_SPAN && stillUp(c, 0, m, bucket)))) {
        newHeld(c, T.held);
        worsened(t, t, unit * levelBefore(c, 0, bucket, bucket).level, point);
        continue;
      }
    }
    const h = cleared(c, T.held, m.excess, t, MARGIN, dailyActive(c, T.profile), (l, a, points) => m.shrink(l, a, points, spreadShare(c, T.spread, points)));
    if (h) {
      const start = onset(c, m, h, t);
      // a change starting where the last reported worsening did (a week's record BOCPD then found
      // too) is that worsening
      if (c[T.origin]! + start !== lastReported(c, T.envelope)) worsened(start, t, h.before, (unit * h.sum) / h.weight);
    }
  }
  return { changes, context: c };
}

/** Carries the context `c` of series `p` over its points from .. to-1 through the engine; returns their residuals. */
function readStretch(core: BatchCore, c: Float64Array, p: Prepared, raw: Float64Array, ns: Float64Array, from: number, to: number): Float64Array {
  const at = p.offset + from;
  const len = to - from;
  const out = new Float64Array(len);
  core.engine.seasonal(core.timed, {
    contexts: c,
    xs: raw.subarray(at, at + len),
    ns: core.binomial ? ns.subarray(at, at + len) : ns,
    out,
    records: new Float64Array(len + 1), // unused: the first reading named the records
    offsets: new Float64Array([0, len]),
    buckets: new Float64Array([p.bucket + from]),
    nSeries: 1,
  });
  return out;
}

/**
 * The series fell back from `before` to `level`, `low` at its lowest (the engine's units; `level` at
 * least the latest point, so that a lone low point is not taken for the end of a change): a change
 * waiting from a level as high ends, and a deep fall makes the next rise a recovery (noteFall).
 */
function fallBack(c: Float64Array, m: TimedModel, before: number, level: number, low: number): void {
  c[T.downFrom] = c[T.downTo] = NaN;
  const unit = engineUnit(m);
  dropEnded(c, T.held, level, m.excess, level / unit);
  noteFall(c, 0, before / unit, low / unit, !m.binomial, m.kind === MODEL.poisson);
}

/**
 * A week's record within this many buckets (a day) of a reported worsening that still stands
 * (timed.ts stillUp) is part of that worsening: after a lasting step, the day's next peak at the new
 * level was a record, and a second row for the same change (20 generated series doubled from day 10
 * on, rows in the week after the step's: latency 14 -> 5, log volume 16 -> 12, error logs 39 -> 35,
 * against 1, 9 and 15 unchanged). Calibration, seeds 501-540 and 401-440 and bench:detect-lag
 * unchanged; with no limit, a worsening never followed by a fall kept a real shift's record from
 * being written days later (calibration 156 -> 155 found), and half a day left 10 of the latency rows.
 */
const ONGOING_SPAN = BUCKETS_PER_DAY;

/**
 * A step in the last hour must rise this many noise units above the buckets before it to be taken
 * for a worsening's onset (calibration: generated seeds 1-10, 151 -> 152 of 160 found, the same from
 * 2 to 4; NAB unchanged).
 */
const STEP = 3;

/**
 * Where a worsening reported at `t` began: BOCPD's start, or a bucket of the last hour where the
 * series stepped up from a level it had held since that start (BOCPD, its regime's mean compared with
 * the old one, can place the start of a shift at an earlier, slighter rise it merged into it). The
 * buckets before the step sit within one noise unit of the level, the level before the step is still
 * the one the change was measured from, and the buckets from the step on are STEP units higher.
 */
function onset(c: Float64Array, m: TimedModel, h: { start: number; base: number; aux: number }, t: number): number {
  const ex = new Float64Array(RECENT_EXCESS);
  recentExcess(c, T.envelope, m.excess, m.binomial, ex);
  const first = t - (RECENT_EXCESS - 1); // the index ex[0] is at
  const lo = Math.max(h.start, first);
  const mean = (from: number, to: number): number => {
    let sum = 0;
    let n = 0;
    for (let i = from; i < to; i++) {
      const v = ex[i - first]!;
      if (v > -Infinity) {
        sum += v;
        n++;
      }
    }
    return n ? sum / n : NaN;
  };
  let best = h.start;
  let step = STEP;
  for (let j = lo + 1; j <= t; j++) {
    const before = mean(lo, j);
    const rise = mean(j, t + 1) - before;
    if (!(before <= 1 && rise >= step)) continue;
    const level = levelBefore(c, 0, c[T.origin]! + j, c[T.origin]! + t).level;
    if (!(m.excess(level, h.base, h.aux) <= 1)) continue;
    best = j;
    step = rise;
  }
  return best;
}

/** The points that beat the week's record in the first reading (its `records`), per series and counted from its first point. */
function recordsBySeries(beaten: Float64Array, offsets: Float64Array): number[][] {
  const out: number[][] = Array.from({ length: offsets.length - 1 }, () => []);
  for (let j = 1, i = 0; j <= beaten[0]!; j++) {
    const k = beaten[j]!;
    while (k >= offsets[i + 1]!) i++;
    out[i]!.push(k - offsets[i]!);
  }
  return out;
}

/** Timestamped series: residuals to the engine (BOCPD's lag on this path), changes read back through the envelope. */
export function runTimed(core: BatchCore, series: readonly SeriesInput[], states: ReadonlyArray<Float64Array | undefined>): RunResult[] {
  series.forEach((s, i) => check(core, i, s, states[i]));
  const ss = core.stateSize;
  const where = series.map((s, i) => locate(core, i, s, states[i]));
  const b = pack(
    core,
    series.map((s, i) => where[i]!.gap + s.values.length),
    states,
  );
  const raw = new Float64Array(b.xs.length).fill(NaN);
  // The first reading: each series' context carried forward, its residuals into the batch.
  const contexts = new Float64Array(series.length * T.size);
  const buckets = new Float64Array(series.length);
  series.forEach((s, i) => {
    const w = where[i]!;
    raw.set(s.values, b.offsets[i]! + w.gap);
    if (core.binomial) b.ns.set(s.calls!, b.offsets[i]! + w.gap);
    contexts.set(w.before, i * T.size);
    buckets[i] = w.next;
  });
  const beaten = new Float64Array(raw.length + 1);
  core.engine.seasonal(core.timed, { contexts, xs: raw, ns: b.ns, out: b.xs, records: beaten, offsets: b.offsets, buckets, nSeries: series.length });
  const records = recordsBySeries(beaten, b.offsets);
  const prepared: Prepared[] = series.map((_, i) => {
    const offset = b.offsets[i]!;
    const state = new Float64Array(ss + T.size);
    state.set(contexts.subarray(i * T.size, (i + 1) * T.size), ss);
    return { bucket: buckets[i]!, t0: where[i]!.t0, offset, length: b.offsets[i + 1]! - offset, before: where[i]!.before, state };
  });
  const events = runEngine(core, core.timedParams, b);
  const bySeries: number[][] = prepared.map(() => []);
  for (let e = 0; e < events.length; e += EVENT_W) bySeries[events[e + E.series]!]!.push(e);
  return prepared.map((p, i) => {
    const state = p.state;
    state.set(b.states.subarray(i * ss, (i + 1) * ss));
    state[S.timed] = 1;
    if (!bySeries[i]!.length && !records[i]!.length && !anyHeld(p.before, T.held) && !(p.before[T.downFrom]! === p.before[T.downFrom])) return { changes: [], state };
    const read = readBack(core, p, raw, b.ns, events, bySeries[i]!, records[i]!);
    state.set(read.context, ss);
    return { changes: read.changes, state };
  });
}
