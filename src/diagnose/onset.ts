// When did the current regime begin, and what came just before it? Fine-grained bins of one
// operation's calls (count, errors, the sum and sum of squares of log duration) are split into
// segments of constant level by penalised optimal partitioning (PELT). Neighbouring segments whose
// levels differ by less than a practical amount are merged, so a busy series' tiny drifts are no
// change. The onset is the start of the last segment worse than the one before it; that one is the
// baseline: the most recent stable stretch, with earlier incidents left out whatever their age.
// Bins are narrow and placed by absolute time, so where 5-minute boundaries fall does not matter.

import { median } from './stats.js';

export interface Bin {
  /** Start of the bin, µs. */
  t: number;
  /** Calls in the bin (0: no observation, as in a gap). */
  n: number;
  errors: number;
  /** Σ ln(duration µs + 1) and Σ ln(duration µs + 1)² over the bin's calls. */
  sumLog: number;
  sumLog2: number;
}

export interface Segment {
  /** First and last bin start (µs) of the segment, inclusive. */
  from: number;
  to: number;
  bins: number;
  n: number;
  errors: number;
  /** Call-weighted mean of ln(duration + 1): exp() of it is a typical duration. */
  meanLog: number;
  errorRate: number;
}

export interface Onset {
  /** First bin of the current regime, µs. */
  at: number;
  baseline: Segment;
  current: Segment;
  /** Segments of the whole series, oldest first, after merging. */
  segments: Segment[];
}

export interface OnsetOptions {
  /** A latency change counts when typical duration moves by at least this factor. Default 1.25. */
  latencyFactor?: number;
  /** An error-rate change counts when it moves by at least this many points (0-1) and doubles. Default 0.02. */
  errorPoints?: number;
  /** Penalty per change point, in units of ln(observed bins). Default 4. */
  penalty?: number;
  /** How long a series may wander by itself before that counts as a change (µs). Default 60 s. */
  wanderUs?: number;
}

const DEFAULTS: Required<OnsetOptions> = { latencyFactor: 1.25, errorPoints: 0.02, penalty: 4, wanderUs: 60_000_000 };

/** The bins' usual width: the median gap between consecutive observed bins. */
function medianWidth(bins: readonly Bin[]): number {
  const gaps: number[] = [];
  for (let i = 1; i < bins.length; i++) gaps.push(bins[i]!.t - bins[i - 1]!.t);
  return median(gaps);
}

/** Variance-stabilised error rate (Freeman–Tukey-like arcsine): its variance is about 1/(4n). */
const errorScale = (errors: number, n: number) => Math.asin(Math.sqrt((errors + 3 / 8) / (n + 3 / 4)));

/**
 * Extra variance between bins beyond sampling noise. Real series wander (load, GC, neighbours) over
 * tens of seconds, so neighbouring bins look alike: differences at lags up to a minute are taken and
 * the largest robust estimate kept. Differences only straddle a shift near it, so the median ignores it.
 */
function betweenBinVariance(xs: readonly number[], noise: readonly number[], maxLag: number): number {
  const sampling = median([...noise]);
  let best = 0;
  for (let lag = 1; lag <= maxLag; lag++) {
    const d: number[] = [];
    for (let i = lag; i < xs.length; i++) d.push(xs[i]! - xs[i - lag]!);
    if (d.length < 5) break;
    const mid = median(d);
    const mad = median(d.map((x) => Math.abs(x - mid))) * 1.4826;
    best = Math.max(best, (mad * mad) / 2 - sampling);
  }
  return best;
}

/** One channel as weighted observations: value and weight per bin, prefix sums for O(1) segment costs. */
interface Channel {
  w: Float64Array;
  wx: Float64Array;
  wxx: Float64Array;
}

function channel(values: number[], noise: number[], maxLag: number): Channel {
  const tau = betweenBinVariance(values, noise, maxLag);
  const k = values.length;
  const c: Channel = { w: new Float64Array(k + 1), wx: new Float64Array(k + 1), wxx: new Float64Array(k + 1) };
  for (let i = 0; i < k; i++) {
    const w = 1 / (noise[i]! + tau + 1e-9);
    c.w[i + 1] = c.w[i]! + w;
    c.wx[i + 1] = c.wx[i]! + w * values[i]!;
    c.wxx[i + 1] = c.wxx[i]! + w * values[i]! * values[i]!;
  }
  return c;
}

/** Weighted residual sum of squares of bins [a, b) around their weighted mean: -2 log-likelihood up to constants. */
function cost(c: Channel, a: number, b: number): number {
  const w = c.w[b]! - c.w[a]!;
  if (w <= 0) return 0;
  const sx = c.wx[b]! - c.wx[a]!;
  return Math.max(0, c.wxx[b]! - c.wxx[a]! - (sx * sx) / w);
}

/** PELT over the observed bins (Killick et al. 2012): the start index of every segment, the first 0. */
function partition(channels: readonly Channel[], k: number, beta: number, minLen: number): number[] {
  const segCost = (a: number, b: number) => channels.reduce((sum, c) => sum + cost(c, a, b), 0);
  const F = new Float64Array(k + 1).fill(Infinity);
  const last = new Int32Array(k + 1);
  F[0] = -beta;
  let candidates: number[] = [0];
  for (let t = minLen; t <= k; t++) {
    for (const s of candidates) {
      if (t - s < minLen) continue;
      const v = F[s]! + segCost(s, t) + beta;
      if (v < F[t]!) {
        F[t] = v;
        last[t] = s;
      }
    }
    // Pruning: a start that cannot beat the best even without its penalty never will later.
    candidates = candidates.filter((s) => t - s < minLen || F[s]! + segCost(s, t) <= F[t]!);
    if (t + minLen <= k) candidates.push(t);
  }
  if (!Number.isFinite(F[k]!)) return [0];
  const starts: number[] = [];
  for (let t = k; t > 0; t = last[t]!) starts.unshift(last[t]!);
  return starts;
}

function summarise(bins: readonly Bin[], a: number, b: number): Segment {
  let n = 0;
  let errors = 0;
  let sumLog = 0;
  for (let i = a; i < b; i++) {
    n += bins[i]!.n;
    errors += bins[i]!.errors;
    sumLog += bins[i]!.sumLog;
  }
  return { from: bins[a]!.t, to: bins[b - 1]!.t, bins: b - a, n, errors, meanLog: n ? sumLog / n : 0, errorRate: n ? errors / n : 0 };
}

/** Whether `next` is a practical change from `prev` (either way), and whether it is worse. */
export function compareSegments(prev: Segment, next: Segment, o: Required<OnsetOptions> = DEFAULTS): { changed: boolean; worse: boolean } {
  const dLat = next.meanLog - prev.meanLog;
  const dErr = next.errorRate - prev.errorRate;
  const latChanged = Math.abs(dLat) >= Math.log(o.latencyFactor);
  const hi = Math.max(prev.errorRate, next.errorRate);
  const lo = Math.min(prev.errorRate, next.errorRate);
  const errChanged = Math.abs(dErr) >= o.errorPoints && hi >= 2 * lo;
  const worse = (latChanged && dLat > 0) || (errChanged && dErr > 0);
  return { changed: latChanged || errChanged, worse };
}

/** Segments of the series: PELT on latency and error level, then neighbours that differ too little merged. */
export function segmentSeries(input: readonly Bin[], options: OnsetOptions = {}): Segment[] {
  const o = { ...DEFAULTS, ...options };
  const bins = input.filter((b) => b.n > 0);
  if (!bins.length) return [];
  const means = bins.map((b) => b.sumLog / b.n);
  const within = median(bins.filter((b) => b.n >= 2).map((b) => Math.max(0, b.sumLog2 / b.n - (b.sumLog / b.n) ** 2)));
  const lag = Math.max(1, Math.round(o.wanderUs / Math.max(1, medianWidth(bins))));
  const lat = channel(means, bins.map((b) => within / b.n), lag);
  const err = channel(bins.map((b) => errorScale(b.errors, b.n)), bins.map((b) => 1 / (4 * b.n)), lag);
  const starts = partition([lat, err], bins.length, o.penalty * Math.log(Math.max(bins.length, 2)), 2);
  let segs = starts.map((s, i) => summarise(bins, s, starts[i + 1] ?? bins.length));
  // Merge the closest practically-equal neighbours until every boundary is a practical change.
  for (;;) {
    let pick = -1;
    let smallest = Infinity;
    for (let i = 1; i < segs.length; i++) {
      if (compareSegments(segs[i - 1]!, segs[i]!, o).changed) continue;
      const d = Math.abs(segs[i]!.meanLog - segs[i - 1]!.meanLog) + Math.abs(segs[i]!.errorRate - segs[i - 1]!.errorRate);
      if (d < smallest) {
        smallest = d;
        pick = i;
      }
    }
    if (pick < 0) return segs;
    const a = bins.findIndex((b) => b.t === segs[pick - 1]!.from);
    const b = bins.findIndex((x) => x.t === segs[pick]!.to) + 1;
    segs = [...segs.slice(0, pick - 1), summarise(bins, a, b), ...segs.slice(pick + 1)];
  }
}

/**
 * The onset of the current regime: the start of the last segment that is worse than the one before
 * it, with that one as the baseline. Null when the series never worsened.
 */
export function findOnset(bins: readonly Bin[], options: OnsetOptions = {}): Onset | null {
  const o = { ...DEFAULTS, ...options };
  const segments = segmentSeries(bins, o);
  for (let i = segments.length - 1; i > 0; i--) {
    if (compareSegments(segments[i - 1]!, segments[i]!, o).worse) {
      return { at: segments[i]!.from, baseline: segments[i - 1]!, current: segments[i]!, segments };
    }
  }
  return null;
}
