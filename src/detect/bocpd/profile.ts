// The seasonal profile of one timestamped series: what each time of day (and, after two weeks, each
// day of the week) adds to the series' level, learnt online from the points as they arrive and kept
// in 70 numbers of the detector's state.
//
// It works in shape units g(v): ln(1 + v) for the multiplicative signals (latency, cost, counts,
// error %), v itself for the additive generic model, and reads a value as
//   g(v) = level + daily(time of day) + weekly(day of week) + noise.
// `level` is a clipped running mean of the deseasonalised g over about a day (slow, so the daily
// cycle stays in the shape). The daily shape has one knot per 30-minute slot, read linearly between
// slot centres. When a slot ends, its knot moves towards (slot median − level − weekly) by
// 1 / min(days seen + 1, 7), the move clipped to 4 times the knots' usual miss once two days are in
// (before that, 4 times the values' spread around the level): an incident moves the shape by a
// seventh of a few usual misses, a real change of shape is learnt within a week, and a level jump in
// the first days is not learnt as the day's shape. At midnight the shape is re-centred (its median
// goes into the level) and the day's mean deseasonalised level enters a ring of seven; from two
// weeks on, each weekday's offset from the ring's median is learnt the same way (and read between
// day centres, as the knots are between slot centres).
import { BUCKETS_PER_DAY } from '../../core/time.js';

// Not tuned on data: the memory, clipping and coverage below follow from what one incident may move
// (a seventh of a few usual misses) and the two days and two weeks; only what bounds a move
// in the first two days was checked on data (closeSlot).

/** Buckets per knot of the daily shape (30 minutes): fine enough for a traffic curve, 48 numbers. */
export const SLOT_BUCKETS = 6;
const SLOTS = BUCKETS_PER_DAY / SLOT_BUCKETS;
/** Days of memory of the shape and the weekday offsets: their update weight is 1 / min(days, K). */
const K = 7;
/** Points of the level's running mean (a day): slow enough to leave the daily cycle to the shape. */
const LEVEL_POINTS = BUCKETS_PER_DAY;
/** Updates are clipped to this many mean absolute deviations. */
const CLIP = 4;
/** Closed days with data before the daily shape, then the weekday offsets, are used. */
export const DAILY_AFTER_DAYS = 2;
export const WEEKLY_AFTER_DAYS = 14;
/** A day counts when its points stand for at least this share of its buckets (see COVERS). */
const DAY_COVERAGE = 0.5;
/**
 * A point stands for the buckets since the point before it, up to this many (an hour; the series'
 * first point for its own): a series sampled every 10, 30 or 60 minutes has days that count, and a
 * day's mean weighs time, not points. Counting points instead, such a series never had a day with
 * half its buckets and never used its cycle (generated seeds 1-10 kept one bucket in 2, 3, 6 or 12:
 * latency 22, 14, 14, 11 of 40 shifts found, against 38, 31, 28, 20 now, false rows 0.04 a day or
 * fewer; dense series: the same shifts, one false row fewer on seeds 401-440, one more shift held
 * out). Not tuned: the slowest cadence the daily shape should still learn.
 */
const COVERS = 12;

/** Offsets in the profile's part of the state. */
export const F = {
  days: 0, // closed days with enough data
  day: 1, // the day being accumulated (bucket / 288); NaN before the first point
  n: 2, // points seen
  level: 3, // deseasonalised level (g units)
  spread: 4, // mean absolute deviation of g around the profile (g units)
  miss: 5, // mean absolute move the knots were asked for (g units)
  slot: 6, // the slot being accumulated (absolute slot index); NaN before the first point
  slotN: 7, // its points so far
  dayN: 8, // buckets today's points stand for (COVERS)
  daySum: 9, // today's sum of g less the daily shape (deviations clipped), each point weighed by its buckets
  ringN: 10, // days in the ring of day levels (up to 7)
  learnt: 11, // last bucket learnt from: a series fed again from an earlier bucket is not learnt twice
  closedDay: 12, // last day closed
  points: 13, // SLOT_BUCKETS: the slot's points (g units)
  shape: 13 + SLOT_BUCKETS, // SLOTS knots
  weekly: 13 + SLOT_BUCKETS + SLOTS, // 7 weekday offsets (by day index mod 7)
  ring: 20 + SLOT_BUCKETS + SLOTS, // 7 day levels (by day index mod 7); NaN for a day with too little data
  size: 27 + SLOT_BUCKETS + SLOTS,
} as const;

export type ShapeUnits = 'log' | 'linear';

export const shapeUnits = (units: ShapeUnits, v: number): number => (units === 'log' ? Math.log1p(v) : v);

export function newProfile(p: Float64Array, o: number): void {
  p.fill(0, o, o + F.size);
  p[o + F.day] = NaN;
  p[o + F.slot] = NaN;
  p[o + F.learnt] = -Infinity;
  p[o + F.closedDay] = -Infinity;
  p.fill(NaN, o + F.ring, o + F.ring + 7);
}

/** Drops the slot and day in progress, for a series fed again from an earlier bucket (what was learnt stays). */
export function rewindProfile(p: Float64Array, o: number): void {
  p[o + F.day] = NaN;
  p[o + F.slot] = NaN;
  p[o + F.slotN] = p[o + F.dayN] = p[o + F.daySum] = 0;
}

/** Days of memory of a slot's noise. */


/** Whether the daily shape (and whether the weekday offsets) are in use. */
export const dailyActive = (p: Float64Array, o: number): boolean => p[o + F.days]! >= DAILY_AFTER_DAYS;
const weeklyActive = (p: Float64Array, o: number): boolean => p[o + F.days]! >= WEEKLY_AFTER_DAYS;

const dayOf = (bucket: number): number => Math.floor(bucket / BUCKETS_PER_DAY);

/**
 * Knots of a ring of `n` at `at`, one at each centre, read linearly at `pos` (in centres from the
 * first; at least -1): the daily shape between slot centres, the weekday offsets between noons.
 */
function ringAt(p: Float64Array, at: number, n: number, pos: number): number {
  const i0 = Math.floor(pos);
  const a = p[at + ((i0 + n) % n)]!;
  return a + (pos - i0) * (p[at + ((i0 + 1) % n)]! - a);
}

const dailyOffset = (p: Float64Array, o: number, bucket: number): number =>
  ringAt(p, o + F.shape, SLOTS, (bucket % BUCKETS_PER_DAY) / SLOT_BUCKETS - (SLOT_BUCKETS - 1) / (2 * SLOT_BUCKETS));

/**
 * The weekday offset (g units; 0 before it is in use) at a bucket (fractional within a slot), read
 * linearly between day centres (noon), as the daily shape is read between slot centres: a weekday's
 * effect comes and goes through the hours around midnight, as traffic's does, instead of stepping at
 * 00:00 UTC, where the residual then jumped for every series whose week turns smoothly or at another
 * time zone's midnight.
 */
export const weeklyOffset = (p: Float64Array, o: number, bucket: number): number => (weeklyActive(p, o) ? ringAt(p, o + F.weekly, 7, bucket / BUCKETS_PER_DAY - 0.5) : 0);

/** The profile's offset (g units) at an absolute bucket; 0 until the daily shape is in use. */
export function offsetAt(p: Float64Array, o: number, bucket: number): number {
  return dailyActive(p, o) ? dailyOffset(p, o, bucket) + weeklyOffset(p, o, bucket) : 0;
}

/** The highest offset of the daily shape (its peak). */
export function peakOffset(p: Float64Array, o: number): number {
  let m = -Infinity;
  for (let i = 0; i < SLOTS; i++) m = Math.max(m, p[o + F.shape + i]!);
  return m;
}

const clip = (x: number, lim: number): number => (x > lim ? lim : x < -lim ? -lim : x);

const scratch = new Float64Array(SLOT_BUCKETS);

/** The median of the n (<= SLOT_BUCKETS) values at p[o ..], without allocating (runs for every slot of every series). */
function slotMedian(p: Float64Array, o: number, n: number): number {
  for (let i = 0; i < n; i++) {
    const v = p[o + i]!;
    let j = i;
    for (; j > 0 && scratch[j - 1]! > v; j--) scratch[j] = scratch[j - 1]!;
    scratch[j] = v;
  }
  const m = n >> 1;
  return n % 2 ? scratch[m]! : (scratch[m - 1]! + scratch[m]!) / 2;
}

function median(xs: number[]): number {
  xs.sort((a, b) => a - b);
  const m = xs.length >> 1;
  return xs.length % 2 ? xs[m]! : (xs[m - 1]! + xs[m]!) / 2;
}

function closeSlot(p: Float64Array, o: number): void {
  const n = p[o + F.slotN]!;
  if (!(n > 0)) return;
  const slot = p[o + F.slot]!;
  const days = p[o + F.days]!;
  const k = o + F.shape + (slot % SLOTS);
  const week = weeklyOffset(p, o, slot * SLOT_BUCKETS + (SLOT_BUCKETS - 1) / 2); // at the slot's centre
  const miss = slotMedian(p, o + F.points, Math.min(n, SLOT_BUCKETS)) - p[o + F.level]! - week - p[k]!;
  // before two days the knots' usual miss is unknown: the values' own spread bounds a move instead
  // (calibration: NAB ec2_cpu_ac20cd learnt a day-long fall from 40% to 3% CPU as its daily shape
  // and wrote a false row most days after; NAB calibration 0.10 → 0.07 false a day, generated unchanged)
  const step = clip(miss, CLIP * (days >= DAILY_AFTER_DAYS ? p[o + F.miss]! : p[o + F.spread]!));
  p[k] = p[k]! + step / Math.min(days + 1, K);
  p[o + F.miss] = p[o + F.miss]! + (Math.abs(step) - p[o + F.miss]!) / Math.min(Math.ceil(p[o + F.n]! / SLOT_BUCKETS), SLOTS);
}

/** Midnight: re-centres the shape, records the day's level, learns the weekday offsets. */
function closeDay(p: Float64Array, o: number): void {
  const day = p[o + F.day]!;
  if (day <= p[o + F.closedDay]!) return;
  p[o + F.closedDay] = day;
  const covered = p[o + F.dayN]! >= DAY_COVERAGE * BUCKETS_PER_DAY;
  const r = o + F.ring + (day % 7);
  p[r] = covered ? p[o + F.daySum]! / p[o + F.dayN]! : NaN;
  p[o + F.dayN] = 0;
  p[o + F.daySum] = 0;
  if (!covered) return;
  const days = ++p[o + F.days];
  p[o + F.ringN] = Math.min(7, p[o + F.ringN]! + 1);
  const knots: number[] = [];
  for (let i = 0; i < SLOTS; i++) knots.push(p[o + F.shape + i]!);
  const m = median(knots);
  for (let i = 0; i < SLOTS; i++) p[o + F.shape + i] = p[o + F.shape + i]! - m;
  p[o + F.level] = p[o + F.level]! + m;
  if (p[o + F.ringN]! < 7) return;
  const levels: number[] = [];
  for (let d = 0; d < 7; d++) if (p[o + F.ring + d]! === p[o + F.ring + d]) levels.push(p[o + F.ring + d]!);
  const w = o + F.weekly + (day % 7);
  p[w] = p[w]! + (p[r]! - median(levels) - p[w]!) / Math.min(Math.floor(days / 7), K);
}

/** Brings the profile to `bucket`, closing the slots and days passed, before a point there is read. */
export function advanceProfile(p: Float64Array, o: number, bucket: number): void {
  const slot = Math.floor(bucket / SLOT_BUCKETS);
  if (slot !== p[o + F.slot]) {
    if (p[o + F.slot]! === p[o + F.slot]) closeSlot(p, o);
    p[o + F.slot] = slot;
    p[o + F.slotN] = 0;
  }
  const day = dayOf(bucket);
  if (p[o + F.day]! !== p[o + F.day]) p[o + F.day] = day;
  while (p[o + F.day]! < day) {
    closeDay(p, o);
    p[o + F.day] = p[o + F.day]! + 1;
  }
}

/** Takes in one observed point, `gv` in shape units, at the bucket the profile was advanced to. */
export function learnPoint(p: Float64Array, o: number, bucket: number, gv: number): void {
  if (bucket <= p[o + F.learnt]!) return;
  const since = bucket - p[o + F.learnt]!;
  const weight = since < COVERS ? since : since < Infinity ? COVERS : 1;
  p[o + F.learnt] = bucket;
  const active = dailyActive(p, o);
  const daily = active ? dailyOffset(p, o, bucket) : 0;
  const week = active ? weeklyOffset(p, o, bucket) : 0;
  const n = ++p[o + F.n];
  const level = n === 1 ? gv - daily - week : p[o + F.level]!;
  const spread = p[o + F.spread]!;
  const d = clip(gv - daily - week - level, n > SLOT_BUCKETS ? CLIP * spread : Infinity);
  const w = 1 / Math.min(n, LEVEL_POINTS);
  p[o + F.level] = level + d * w;
  p[o + F.spread] = spread + (Math.abs(d) - spread) * w;
  if (p[o + F.slotN]! < SLOT_BUCKETS) p[o + F.points + p[o + F.slotN]!] = gv;
  p[o + F.slotN] = p[o + F.slotN]! + 1;
  p[o + F.dayN] = p[o + F.dayN]! + weight;
  p[o + F.daySum] = p[o + F.daySum]! + (level + week + d) * weight;
}
