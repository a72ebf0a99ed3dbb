// How far above its own recent level a series has risen lately, at several time scales: for each
// scale of 2^j buckets (j = 0..5: 5 to 160 minutes), the excess of each aligned block's mean over the
// level the series had when the block began, in that level's noise (the detector's noise model, so
// quiet and busy hours, low and high counts compare). The last hour's blocks are kept one by one,
// older ones as the highest of each of the past seven days.
//
// A worsening regime is reported only when its own excess over the level before it rises above a
// bar (barFor): bursts, cron jobs and jumps the series has made before are not shifts; a rise it
// has not made in a week is. A block counts when at least half its buckets had a value. The longer
// blocks of a reported worsening's first hours do not count: an incident reported once does not hide
// the next one like it.
//
// Constants marked (calibration) were chosen on NAB realAWSCloudwatch ec2_cpu_* and the generated
// series of seeds 1-10 (bench/eval-seasonal.ts), with the other NAB series and seeds 101-110 kept
// for reporting.
import { BUCKETS_PER_DAY } from '../../core/time.js';

/** Scales 1, 2, 4, ..., 32 buckets. */
export const SCALES = 6;
/** Levels a regime is judged against: the highest and the second-highest day, per scale. */
export const LEVELS = 2 * SCALES;
/** Buckets of recent blocks kept one by one (an hour): a regime found within it is judged against what came just before it. */
const RECENT = 12;
const DAYS = 7;
/**
 * A regime of one point must rise above the highest excess of the past week (a lone burst recurs at
 * any time); longer ones above the second-highest day's, so that an incident like one earlier in the
 * week is reported again, and at once (calibration: with the highest up to 40 minutes, every repeated
 * generated shift waited 40 minutes behind the one before it; the second-highest for a lone point let
 * NAB's bursts through).
 */
const SHORT = 2;
/**
 * Longer regimes are held to the second-highest day only once this many days have values (today's
 * and a first, partial one among them): the second-highest of three such days says little about
 * which rises recur daily, and a series' third day wrote a third of the false rows left on seeds
 * 501-540. Calibration (seeds 1-10): false rows 41 → 40 with 4, 39 with 5 (which found one shift
 * fewer on seeds 501-540); seeds 501-540 166 → 155 and 401-440 161 → 153 with 4, the same shifts;
 * NAB ec2_cpu_* unchanged.
 */
const SECOND_AFTER_DAYS = 4;
/** A bar is raised by at least this factor (calibration: NAB's bursty series, whose bursts vary in height). */
const RELATIVE = 1.25;
/**
 * A regime's excess must be at least this many noise units of a mean over its points (calibration:
 * slow drifts of the residual cleared lower bars). Where a mean's noise shrinks with its length
 * (TimedModel.shrink: counts' Poisson part, errors' binomial part) the floor in one bucket's units
 * shrinks with it (calibration: generated seeds 1-10, where low counts tripled for hours stayed
 * under 4 units of one bucket).
 */
const FLOOR = 4;
/**
 * Blocks of at least 2^QUIET_SCALE buckets (40 minutes) that overlap the first QUIET_SPAN buckets of
 * a reported worsening do not count (calibration: generated shifts found 139 → 145 of 160 on seeds
 * 1-10, most of the rest waited behind earlier shifts; from blocks of 4 buckets on, NAB's reported
 * bursts let the next ones through: 0.36 false a day). Two hours: the recent level follows a new
 * regime within about one, after which blocks measure little excess (12 to 48 gave the same).
 */
const QUIET_SCALE = 3;
export const QUIET_SPAN = 24;


const dayOf = (bucket: number): number => Math.floor(bucket / BUCKETS_PER_DAY);

const SUM = 0; // the block in progress: raw sum, weight, points, and the level (and its noise's aux) it began from
const WEIGHT = 1;
const COUNT = 2;
const BASE = 3;
const AUX = 4;
const DAY = 5; // DAYS slots: the highest block excess of each of the last days (by day index mod 7)
const RING = DAY + DAYS; // recent block excesses by block index mod ringSize(j)

const ringSize = (j: number): number => Math.ceil(RECENT / (1 << j));
const scaleAt: number[] = [];
let size = 2;
for (let j = 0; j < SCALES; j++) {
  scaleAt.push(size);
  size += RING + ringSize(j);
}

/** Offsets in the envelope's part of the state. */
export const V = {
  last: 0, // the bucket advanced to; NaN before the first
  reported: 1, // the first bucket of the last reported worsening (QUIET_SPAN); NaN before one
  size,
} as const;

const at = (o: number, j: number): number => o + scaleAt[j]!;
/** Offset of scale j's slots in the envelope (assembly/_seasonal.ts mirrors them). */
export const scaleOffset = (j: number): number => scaleAt[j]!;

/** A mean's excess over a level, in noise units of one bucket at that level (`aux`: what the noise is made from). */
export type Excess = (mean: number, level: number, aux: number) => number;
/**
 * The noise of a mean over `points` buckets at a level, as a share of one bucket's (see
 * TimedModel.shrink); `measured`: that share as the series' own blocks showed it (spreadShare), NaN
 * while unknown.
 */
export type Shrink = (level: number, aux: number, points: number, measured: number) => number;

/** Whether block b of scale j is one of a reported worsening's first hours (QUIET_SCALE). */
const quiet = (e: Float64Array, o: number, j: number, b: number): boolean => {
  const from = lastReported(e, o);
  return j >= QUIET_SCALE && b << j < from + QUIET_SPAN && (b + 1) << j > from;
};

export function newEnvelope(e: Float64Array, o: number): void {
  e.fill(-Infinity, o, o + V.size);
  e[o + V.last] = e[o + V.reported] = NaN;
  for (let j = 0; j < SCALES; j++) e.fill(0, at(o, j) + SUM, at(o, j) + DAY);
}

/**
 * Goes back to before `bucket`, for a series fed again from there: the levels of that day and later
 * and the blocks in progress are forgotten, to be rebuilt from the points fed again.
 */
export function rewindEnvelope(e: Float64Array, o: number, bucket: number): void {
  const last = e[o + V.last]!;
  if (!(last === last)) return;
  const to = dayOf(last);
  for (let j = 0; j < SCALES; j++) {
    const s = at(o, j);
    e.fill(0, s + SUM, s + DAY);
    e.fill(-Infinity, s + RING, s + RING + ringSize(j));
    for (let d = Math.max(dayOf(bucket), to - DAYS + 1); d <= to; d++) e[s + DAY + (d % DAYS)] = -Infinity;
  }
  e[o + V.last] = NaN;
  if (e[o + V.reported]! >= bucket) e[o + V.reported] = NaN; // it will be reported again if it is
}

/** The first bucket of the last reported worsening; NaN before one. */
export const lastReported = (e: Float64Array, o: number): number => e[o + V.reported]!;

/** A worsening starting at `bucket` was reported. */
export function noteReported(e: Float64Array, o: number, bucket: number): void {
  e[o + V.reported] = bucket;
}

/** The excess of scale j's block in progress (slots at `s`), or -Infinity while fewer than half its buckets had a value. */
function blockExcess(e: Float64Array, s: number, j: number, excessOf: Excess, binomial: boolean): number {
  const covered = e[s + COUNT]! >= Math.max(1, (1 << j) / 2) && e[s + WEIGHT]! > 0;
  return covered ? excessOf(e[s + SUM]! / e[s + WEIGHT]!, e[s + BASE]!, binomial ? e[s + WEIGHT]! / e[s + COUNT]! : e[s + AUX]!) : -Infinity;
}

/**
 * Brings the envelope to `bucket`: ends the blocks passed (the last hour's stay one by one, older ones
 * count for their day). `binomial`: a block's noise is that of its own calls a bucket, not of the
 * series' usual traffic (one error among 5 night calls is no rise of 20 points in the noise of 25).
 */
export function advanceEnvelope(e: Float64Array, o: number, bucket: number, excessOf: Excess, binomial: boolean, sp: number): void {
  const last = e[o + V.last]!;
  e[o + V.last] = bucket;
  if (!(last === last) || bucket <= last) return;
  const today = dayOf(bucket);
  for (let d = Math.max(dayOf(last) + 1, today - DAYS + 1); d <= today; d++) {
    for (let j = 0; j < SCALES; j++) e[at(o, j) + DAY + (d % DAYS)] = -Infinity;
  }
  for (let j = 0; j < SCALES; j++) {
    const s = at(o, j);
    const from = last >> j;
    const to = bucket >> j;
    if (from === to) continue;
    const r = ringSize(j);
    const excess = blockExcess(e, s, j, excessOf, binomial);
    if (sp >= 0 && excess > -Infinity && !quiet(e, o, j, from)) noteSpread(e, sp, j, excess);
    e[s + SUM] = e[s + WEIGHT] = e[s + COUNT] = 0;
    // Blocks from .. to-1 end (only `from` had points); each takes the ring slot of the block r
    // before it, which then counts for its day. After r + 1 of them the ring holds only empty blocks.
    for (let b = from; b < Math.min(to, from + r + 1); b++) {
      const q = s + RING + (b % r);
      const old = dayOf((b - r) << j);
      const k = s + DAY + (old % DAYS);
      if (old > today - DAYS && e[q]! > e[k]! && !quiet(e, o, j, b - r)) e[k] = e[q]!;
      e[q] = b === from ? excess : -Infinity;
    }
  }
}

/**
 * How far a block's mean strays from the level it began at, per scale: the mean of |excess| over
 * the blocks of about the last SPREAD_DAYS days, and how many blocks it has seen. A series whose noise
 * is independent from bucket to bucket has blocks of 2^j buckets 2^(j/2) times nearer their level
 * than single buckets; one that wanders, not much nearer. Kept apart from the envelope, at `sp`, for
 * the models whose TimedModel.shrink reads it (timed.ts keepsSpread); -1 for the others.
 */
export const SPREAD_SIZE = 2 * SCALES;
const SPREAD_DAYS = 2;
/** A scale's spread is used once it has seen a day of blocks. */
const SPREAD_WARM_DAYS = 1;

function noteSpread(c: Float64Array, sp: number, j: number, excess: number): void {
  const n = c[sp + SCALES + j]! + 1;
  c[sp + SCALES + j] = n;
  const w = 1 / Math.min(n, (SPREAD_DAYS * BUCKETS_PER_DAY) >> j);
  c[sp + j] = c[sp + j]! + (Math.abs(excess) - c[sp + j]!) * w;
}

/** The spread of a mean over `points` buckets as a share of one bucket's, as the series showed it; NaN while unknown. */
export function spreadShare(c: Float64Array, sp: number, points: number): number {
  const j = Math.min(SCALES - 1, Math.floor(Math.log2(points)));
  const warm = (k: number): boolean => c[sp + SCALES + k]! >= (SPREAD_WARM_DAYS * BUCKETS_PER_DAY) >> k;
  return warm(0) && warm(j) && c[sp]! > 0 ? c[sp + j]! / c[sp]! : NaN;
}

/**
 * Takes in one observed point at the bucket the envelope was advanced to: its raw sum and weight as
 * the detector counts them, and the series' level (and its noise's aux) just before it: a block is
 * measured from the level at its first point.
 */
export function absorbPoint(e: Float64Array, o: number, sum: number, weight: number, level: number, aux: number): void {
  for (let j = 0; j < SCALES; j++) {
    const s = at(o, j);
    if (e[s + COUNT] === 0) {
      e[s + BASE] = level;
      e[s + AUX] = aux;
    }
    e[s + SUM] = e[s + SUM]! + sum;
    e[s + WEIGHT] = e[s + WEIGHT]! + weight;
    e[s + COUNT] = e[s + COUNT]! + 1;
  }
}

/**
 * The levels a regime starting at `bucket` is judged against, to out[oo .. oo + LEVELS): per scale,
 * the highest block excess of the past week among the blocks that ended before `bucket`, then per
 * scale the second-highest day's (the highest when fewer than three days have any); -Infinity where
 * there is none. Blocks more than an hour old count whatever their end.
 */
export function levelsBefore(e: Float64Array, o: number, bucket: number, out: Float64Array, oo: number): void {
  const last = e[o + V.last]!;
  const days = new Float64Array(DAYS);
  for (let j = 0; j < SCALES; j++) {
    const s = at(o, j);
    for (let d = 0; d < DAYS; d++) days[d] = e[s + DAY + d]!;
    const r = ringSize(j);
    const current = last >> j; // the block in progress; the ring holds the r before it
    for (let b = current - r; b < current; b++) {
      const d = dayOf(b << j) % DAYS;
      if ((b + 1) << j <= bucket && e[s + RING + (b % r)]! > days[d]! && !quiet(e, o, j, b)) days[d] = e[s + RING + (b % r)]!;
    }
    days.sort();
    out[oo + j] = days[DAYS - 1]!;
    out[oo + SCALES + j] = days[DAYS - SECOND_AFTER_DAYS]! > -Infinity ? days[DAYS - 2]! : days[DAYS - 1]!;
  }
}

/**
 * The bar a regime of `points` buckets must clear, for blocks of half its length (blocks aligned on
 * the grid only approximate a regime's own span), read linearly in the block length between the
 * scales either side of it, or at a smaller scale when those have no block yet: at a scale, the level
 * (see SHORT; the highest until the series' daily profile is `learnt`, as a day or two of history,
 * partial days among them, do not say which rises recur daily) plus `margin` noise units of a mean
 * over a block of that scale, at least RELATIVE times the level and FLOOR noise units of a mean over
 * the regime (`shrink`: that mean's noise as a share of one bucket's). Read at the smaller scale
 * alone, the bar stepped down only as a regime reached 8, 16 or 32 points, and most shifts that waited
 * were written just then (calibration: generated seeds 1-10, the same 156 of 160 found, error logs'
 * median lag 32 -> 27 min, 37 -> 41 false rows; seeds 501-540 614 -> 621 of 637 found, 150 -> 152
 * false rows; NAB unchanged; bench/README.md). -Infinity with no history.
 */
export function barFor(levels: Float64Array, oo: number, points: number, margin: number, learnt: boolean, shrink: number): number {
  const k = points < SHORT || !learnt ? 0 : SCALES;
  const at = (j: number): number => {
    const level = levels[oo + k + j]!;
    return level > -Infinity ? Math.max(level + margin / Math.sqrt(1 << j), level * RELATIVE, FLOOR * shrink) : -Infinity;
  };
  const half = points / 2;
  for (let j = Math.min(SCALES - 1, Math.max(0, Math.floor(Math.log2(half)))); j >= 0; j--) {
    const bar = at(j);
    if (!(bar > -Infinity)) continue;
    const f = half / (1 << j) - 1; // the way from this scale's blocks to the next one's, in length
    const next = f > 0 && f < 1 && j + 1 < SCALES ? at(j + 1) : -Infinity;
    return next > -Infinity ? bar + (next - bar) * f : bar;
  }
  return -Infinity;
}

/** Buckets whose one-bucket excess recentExcess gives: the last hour's and the one in progress. */
export const RECENT_EXCESS = RECENT + 1;

/**
 * The one-bucket excess of each of the last RECENT buckets and of the one in progress (its points so
 * far), oldest first, to out[0 .. RECENT_EXCESS); -Infinity where a bucket had no value.
 */
export function recentExcess(e: Float64Array, o: number, excessOf: Excess, binomial: boolean, out: Float64Array): void {
  const s = at(o, 0);
  const current = e[o + V.last]!;
  for (let k = 0; k < RECENT; k++) out[k] = e[s + RING + ((current - RECENT + k) % RECENT)]!;
  out[RECENT] = blockExcess(e, s, 0, excessOf, binomial);
}
