// Baselines from the 5-minute series, and where each one ends. An incident often began before the
// window an agent asks about (the default last 15 minutes, 40 minutes into the trouble): the hour
// before the window then already holds the fault and would hide it. So each series is searched for
// the point where its current regime began — a worsening change point recorded by the detection pass
// when there is one, else the split of the look-back that best explains the window as a new regime
// (a likelihood ratio, required to beat "the regime began in the window" by a clear margin) — and
// the baseline is the stretch before it, never shorter than MIN_BASE_BUCKETS.
import { weightedMedian } from './stats.js';
import type { Bucket, SeriesRows } from './reads/index.js';
import { BUCKET_US } from '../core/time.js';

export const MIN_BASE_BUCKETS = 3;
/** Natural-log likelihood margin a split inside the look-back needs over "the change is in the window". */
const ONSET_MARGIN = 8;

/** Series rows grouped by signal → `service\0entity` → buckets sorted by time. */
export type SeriesIndex = Map<string, Map<string, Bucket[]>>;

export const seriesKey = (service: string, entity: string) => `${service}\u0000${entity}`;

export function indexSeries(rows: readonly SeriesRows[]): SeriesIndex {
  const out: SeriesIndex = new Map();
  for (const r of rows) {
    let bySignal = out.get(r.signal);
    if (!bySignal) out.set(r.signal, (bySignal = new Map()));
    const key = seriesKey(r.service_name, r.operation);
    const l = bySignal.get(key);
    if (l) l.push(...r.buckets);
    else bySignal.set(key, r.buckets);
  }
  for (const bySignal of out.values()) for (const l of bySignal.values()) l.sort((a, b) => a.t - b.t);
  return out;
}

const xlogy = (x: number, y: number) => (x > 0 ? x * Math.log(y) : 0);
function binomLl(k: number, n: number): number {
  if (n <= 0) return 0;
  const p = k / n;
  return xlogy(k, p) + xlogy(n - k, 1 - p);
}

/**
 * Index of the first bucket of the current error regime, given the window's calls and errors:
 * buckets[j..] and the window are "after". `buckets.length` when the regime began in the window.
 */
export function errorOnset(buckets: readonly Bucket[], winK: number, winN: number): number {
  return pickOnset(errorSplits(buckets, winK, winN), buckets.length);
}

/** Per split j (0..len), the log-likelihood ratio of "errors worsened at bucket j"; -Infinity where no split is allowed. */
function errorSplits(buckets: readonly Bucket[], winK: number, winN: number): number[] {
  const len = buckets.length;
  const llr = new Array<number>(len + 1).fill(-Infinity);
  if (len < MIN_BASE_BUCKETS + 1) return llr;
  let bk = 0;
  let bn = 0;
  let ak = winK;
  let an = winN;
  for (const b of buckets) {
    ak += b.k;
    an += b.n;
  }
  for (let j = 0; j <= len; j++) {
    if (j > 0) {
      const b = buckets[j - 1]!;
      bk += b.k;
      bn += b.n;
      ak -= b.k;
      an -= b.n;
    }
    // Only a worsening split counts, with a baseline long enough to trust.
    if (j < MIN_BASE_BUCKETS || bn <= 0 || an <= 0 || ak / an <= bk / bn) continue;
    llr[j] = binomLl(bk, bn) + binomLl(ak, an) - binomLl(bk + ak, bn + an);
  }
  return llr;
}

/**
 * The same for a level (latency p95 per bucket, on a log scale): Gaussian mean shift between the
 * buckets before j and those from j on plus the window (given as `winValue` weighted as `winWeight` buckets).
 */
export function levelOnset(buckets: readonly Bucket[], winValue: number, winWeight: number): number {
  return pickOnset(levelSplits(buckets, winValue, winWeight), buckets.length);
}

/** Per split j (0..len), the log-likelihood ratio of "the level rose at bucket j"; -Infinity where no split is allowed. */
function levelSplits(buckets: readonly Bucket[], winValue: number, winWeight: number): number[] {
  const len = buckets.length;
  const llr = new Array<number>(len + 1).fill(-Infinity);
  if (len < MIN_BASE_BUCKETS + 1 || !(winValue > 0)) return llr;
  const xs = buckets.map((b) => Math.log(Math.max(b.value, 1)));
  const w = Math.max(1, winWeight);
  const wx = Math.log(Math.max(winValue, 1));
  // Prefix sums, so each split costs O(1): the sum of squared deviations of weight c, sum sx and
  // sum of squares sxx is sxx - sx^2 / c.
  const s1 = [0];
  const s2 = [0];
  for (const x of xs) {
    s1.push(s1[s1.length - 1]! + x);
    s2.push(s2[s2.length - 1]! + x * x);
  }
  const sse = (c: number, sx: number, sxx: number) => Math.max(0, sxx - (sx * sx) / c);
  const total = sse(len + w, s1[len]! + w * wx, s2[len]! + w * wx * wx) + 1e-9;
  const n = len + w;
  // Noise floor: bucket p95s of a steady service still vary by a few percent.
  const floor = 0.05 ** 2 * n;
  for (let j = MIN_BASE_BUCKETS; j <= len; j++) {
    const ac = len - j + w;
    const ax = s1[len]! - s1[j]! + w * wx;
    const axx = s2[len]! - s2[j]! + w * wx * wx;
    if (ax / ac <= s1[j]! / j) continue;
    const split = sse(j, s1[j]!, s2[j]!) + sse(ac, ax, axx) + 1e-9;
    llr[j] = (n / 2) * Math.log((total + floor) / (split + floor));
  }
  return llr;
}

function pickOnset(llr: readonly number[], len: number): number {
  let best = -1;
  for (let j = 0; j < len; j++) if (best < 0 || llr[j]! > llr[best]!) best = j;
  return best >= 0 && llr[best]! > Math.max(llr[len]!, 0) + ONSET_MARGIN ? best : len;
}

/**
 * The bucket index where a known change point (µs) begins, or -1. An onset inside a bucket leaves
 * that bucket mixed, and the detector may count it to the old regime: when the series' own split
 * likelihood (`llr`) prefers the bucket before, the baseline ends there, so it never holds the mixed
 * bucket and agrees with the split found from raw telemetry before any pass.
 */
export function onsetFromShift(buckets: readonly Bucket[], tsShiftUs: number | undefined, llr: readonly number[] = []): number {
  if (tsShiftUs === undefined) return -1;
  const j = buckets.findIndex((b) => b.t >= tsShiftUs);
  if (j < MIN_BASE_BUCKETS) return -1;
  return j - 1 >= MIN_BASE_BUCKETS && (llr[j - 1] ?? -Infinity) > (llr[j] ?? -Infinity) ? j - 1 : j;
}

export interface OpBaseline {
  n: number;
  k: number;
  /** Weighted median of the baseline buckets' p95, µs; NaN without latency buckets. */
  p95: number;
  /** First bucket of the current regime (µs) when it began before the window, else null. */
  onset_us: number | null;
}

/**
 * The baseline of one operation: error buckets and latency buckets cut at their onsets (the earlier
 * of the two when both moved, so neither baseline holds the fault), limited to the last `maxBuckets`.
 */
export function opBaseline(
  errBuckets: readonly Bucket[],
  latBuckets: readonly Bucket[],
  win: { n: number; k: number; p95: number; windowBuckets: number },
  shiftUs: number | undefined,
  maxBuckets: number,
  reference?: { from: number; to: number },
): OpBaseline {
  if (reference) return fromBuckets(inReference(errBuckets, reference), inReference(latBuckets, reference), null);
  const errLlr = errorSplits(errBuckets, win.k, win.n);
  const latLlr = levelSplits(latBuckets, win.p95, win.windowBuckets);
  const recordedErr = onsetFromShift(errBuckets, shiftUs, errLlr);
  const recordedLat = onsetFromShift(latBuckets, shiftUs, latLlr);
  const je = recordedErr >= 0 ? recordedErr : pickOnset(errLlr, errBuckets.length);
  const jl = recordedLat >= 0 ? recordedLat : pickOnset(latLlr, latBuckets.length);
  const te = je < errBuckets.length ? errBuckets[je]!.t : Infinity;
  const tl = jl < latBuckets.length ? latBuckets[jl]!.t : Infinity;
  const cut = Math.min(te, tl);
  const keep = (bs: readonly Bucket[]) => {
    const before = bs.filter((b) => b.t < cut);
    // A cut that would leave too little keeps the earliest buckets rather than none.
    const base = before.length >= MIN_BASE_BUCKETS || !Number.isFinite(cut) ? before : bs.slice(0, MIN_BASE_BUCKETS);
    return base.slice(-maxBuckets);
  };
  return fromBuckets(keep(errBuckets), keep(latBuckets), Number.isFinite(cut) ? cut : null);
}

/** The buckets of a named reference stretch. */
export const inReference = (bs: readonly Bucket[], ref: { from: number; to: number }) => bs.filter((b) => b.t >= ref.from && b.t + BUCKET_US <= ref.to);

function fromBuckets(eb: readonly Bucket[], lb: readonly Bucket[], onset: number | null): OpBaseline {
  return {
    n: eb.reduce((s, b) => s + b.n, 0),
    k: eb.reduce((s, b) => s + b.k, 0),
    p95: weightedMedian(
      lb.map((b) => b.value),
      lb.map((b) => b.n),
    ),
    onset_us: onset,
  };
}

/** Per-bucket counts of a service-level series before the window (zero-filled over `buckets` slots). */
export function countsPerBucket(buckets: readonly Bucket[] | undefined, fromUs: number, slots: number): { mean: number; values: number[] } {
  const first = Math.floor(fromUs / BUCKET_US) - slots;
  const values = new Array<number>(slots).fill(0);
  for (const b of buckets ?? []) {
    const i = Math.floor(b.t / BUCKET_US) - first;
    if (i >= 0 && i < slots) values[i] = b.value;
  }
  return { mean: values.reduce((s, x) => s + x, 0) / Math.max(1, slots), values };
}
