// The seasonal path's first reading, the WASM build: the twin of readPoints in
// src/detect/bocpd/timed.ts and of what it calls in profile.ts, envelope.ts and record.ts (read
// those for the method). For each point of each timestamped series it brings the series' context to
// the point's bucket, writes the residual BOCPD reads, learns from the point and takes it into the
// week's record: the same steps in the same order as the TypeScript twin, on the same context
// layout (test/detect/layout.test.ts checks the mirrored constants), so either engine resumes the
// other's context. It differs only in how it computes (bench/detect.ts measures the effect): one
// loop per observation model, the envelope's six scales unrolled with constant offsets, days and
// slots by integer division, one ln shared by the lognormal model's excess and noise, the profile's
// offsets read once a point.
//
// ln and exp are _fastmath.ts's, within a few ulp of the twin's Math functions (ln(1 + v) for log1p:
// the shape's absolute error is what counts): answers agree within float rounding, and a context
// is only ever moved by one engine's reading (batch.ts), so pieces and whole runs agree exactly.
//
// Boundary: every argument is the address of a Float64Array region the caller wrote into this
// module's memory; nothing is allocated here.

import { exp, ln } from './_fastmath';

// --- layout mirror: timed.ts T, profile.ts F, envelope.ts V, record.ts W (checked by test/detect/layout.test.ts) ---
const T_N: i32 = 1;
const T_LEVEL: i32 = 2;
const T_AUX: i32 = 3;
const T_RECENT: i32 = 8;
const T_PROFILE: i32 = 62;
const T_ENVELOPE: i32 = 143;
const T_RECORD: i32 = 242;
const T_ZERO: i32 = 262;
const T_SPREAD: i32 = 263;
const T_SIZE: i32 = 275;

const F_DAYS: i32 = 0;
const F_DAY: i32 = 1;
const F_N: i32 = 2;
const F_LEVEL: i32 = 3;
const F_SPREAD: i32 = 4;
const F_MISS: i32 = 5;
const F_SLOT: i32 = 6;
const F_SLOTN: i32 = 7;
const F_DAYN: i32 = 8;
const F_DAYSUM: i32 = 9;
const F_RINGN: i32 = 10;
const F_LEARNT: i32 = 11;
const F_CLOSEDDAY: i32 = 12;
const F_POINTS: i32 = 13;
const F_SHAPE: i32 = 19;
const F_WEEKLY: i32 = 67;
const F_RING: i32 = 74;

const V_LAST: i32 = 0;
const V_REPORTED: i32 = 1;
const V_SIZE: i32 = 99;

const W_DAY: i32 = 0;
const W_TOP: i32 = 1;
const W_BOTTOM: i32 = 2;
const W_WEEKTOP: i32 = 3;
const W_WEEKBOTTOM: i32 = 4;
const W_DAYS: i32 = 5;
const W_TOPS: i32 = 6;
const W_BOTTOMS: i32 = 13;
const W_SIZE: i32 = 20;

// --- timed.ts, profile.ts, envelope.ts, record.ts constants (same values; see there for why) ---
const MODEL_BINOMIAL: i32 = 2;
const MODEL_POISSON: i32 = 3;
const MODEL_LOGNORMAL: i32 = 1;
const RECENT_LEVELS: i32 = 16;
const ZERO_CHANCE: f64 = 0.001;
const NEAR_POINTS: f64 = 12;
const NOISE_POINTS: f64 = 288;
const CLIP: f64 = 4;
const BUCKETS_PER_DAY: f64 = 288;
const SLOT_BUCKETS: i32 = 6;
const SLOTS: i32 = 48;
const K: f64 = 7;
const LEVEL_POINTS: f64 = 288;
const DAILY_AFTER_DAYS: f64 = 2;
const WEEKLY_AFTER_DAYS: f64 = 14;
const DAY_COVERAGE: f64 = 0.5;
const COVERS: f64 = 12;
const SCALES: i32 = 6;
const RECENT: i32 = 12;
const DAYS: i32 = 7;
const QUIET_SCALE: i32 = 3;
const QUIET_SPAN: f64 = 24;
const SPREAD_DAYS: i32 = 2;
const E_SUM: i32 = 0;
const E_WEIGHT: i32 = 1;
const E_COUNT: i32 = 2;
const E_BASE: i32 = 3;
const E_AUX: i32 = 4;
const E_DAY: i32 = 5;
const E_RING: i32 = E_DAY + DAYS;
const RECORD_DAYS: i32 = 7;
const RECORD_MIN_DAYS: f64 = 3;
/** record.ts RECORD_RATIO, e^LOG_MARGIN as JavaScript's Math.exp gives it (the layout test compares). */
const RECORD_RATIO: f64 = 1.2214027581601699;
const LINEAR_MARGIN: f64 = 0.1;

const SCRATCH: usize = memory.data(8 * 64); // medians' sorted copies

@inline function ld(base: usize, i: i32): f64 {
  return load<f64>(base + (<usize>i << 3));
}
@inline function sto(base: usize, i: i32, v: f64): void {
  store<f64>(base + (<usize>i << 3), v);
}
@inline function isNum(x: f64): bool {
  return x == x;
}
@inline function clip(x: f64, lim: f64): f64 {
  return x > lim ? lim : x < -lim ? -lim : x;
}
/** x % m for an integral x of at most 2^31 (JavaScript's %: the sign of x); f64 % is a slow software fmod here. */
@inline function imod(x: f64, m: i32): i32 {
  return <i32>x % m;
}
/** floor(x / m) for an integral x of at most 2^31, in integer arithmetic (an f64 division and floor cost more). */
@inline function floorDiv(x: f64, m: i32): f64 {
  const i = <i32>x;
  const q = i / m;
  return <f64>(i % m < 0 ? q - 1 : q);
}
@inline function dayOf(bucket: f64): f64 {
  return floorDiv(bucket, <i32>BUCKETS_PER_DAY);
}
@inline function ringSize(j: i32): i32 {
  return (RECENT + (1 << j) - 1) >> j;
}
/** Offset of scale j in the envelope (envelope.ts scaleAt). */
@inline function scaleAt(j: i32): i32 {
  return j == 0 ? 2 : j == 1 ? 26 : j == 2 ? 44 : j == 3 ? 59 : j == 4 ? 73 : j == 5 ? 86 : V_SIZE;
}

// --- the model's noise (timed.ts timedModel). `kind` is a constant wherever these are inlined
// (seasonalReading has one loop per model), so each loop has its model's arithmetic only. ---
let k0: f64 = 0;
let n0: f64 = 0;
/** timed.ts zeroFloor(k0), set with k0 (NativeMath: computed once a call, as the twin does). */
let zeroFloor: f64 = Infinity;

@inline function logUnits(kind: i32): bool {
  return kind == MODEL_BINOMIAL || kind == MODEL_POISSON || kind == MODEL_LOGNORMAL;
}
@inline function observed(kind: i32, x: f64, n: f64): bool {
  if (kind == MODEL_BINOMIAL) return n > 0 && n < Infinity && x >= 0;
  if (kind == MODEL_POISSON || kind == MODEL_LOGNORMAL) return x >= 0 && x < Infinity;
  return x - x == 0;
}
@inline function excess(kind: i32, mean: f64, l: f64, aux: f64): f64 {
  if (kind == MODEL_BINOMIAL) return (mean - l) / Math.sqrt((Math.max(l, 0.5 / (aux + 1)) * (1 + aux / n0)) / (aux + 1));
  if (kind == MODEL_POISSON) return (mean - l) / Math.sqrt(l * (1 + l / k0) + 1);
  if (kind == MODEL_LOGNORMAL) return ln((1 + mean) / (1 + l)) / Math.max(aux, 1e-3);
  return (mean - l) / Math.max(aux, 1e-9);
}
@inline function auxOf(kind: i32, r: f64, calls: f64, l: f64): f64 {
  if (kind == MODEL_BINOMIAL) return calls;
  if (kind == MODEL_POISSON) return 0;
  if (kind == MODEL_LOGNORMAL) return Math.abs(ln((1 + r) / (1 + l)));
  return Math.abs(r - l);
}

// --- profile.ts ---
@inline function dailyActive(p: usize): bool {
  return ld(p, F_DAYS) >= DAILY_AFTER_DAYS;
}
@inline function weeklyActive(p: usize): bool {
  return ld(p, F_DAYS) >= WEEKLY_AFTER_DAYS;
}
/** profile.ts ringAt: knots of a ring of n at `at`, read linearly at `pos` (at least -1). */
@inline function ringAt(p: usize, at: i32, n: i32, pos: f64): f64 {
  const fl = Math.floor(pos);
  const i0 = <i32>fl;
  const a = ld(p, at + (i0 + n) % n);
  return a + (pos - fl) * (ld(p, at + (i0 + 1) % n) - a);
}
@inline function dailyOffset(p: usize, bucket: f64): f64 {
  return ringAt(p, F_SHAPE, SLOTS, <f64>(<i32>bucket % <i32>BUCKETS_PER_DAY) / <f64>SLOT_BUCKETS - <f64>(SLOT_BUCKETS - 1) / <f64>(2 * SLOT_BUCKETS));
}
@inline function weeklyOffset(p: usize, bucket: f64): f64 {
  return weeklyActive(p) ? ringAt(p, F_WEEKLY, 7, bucket / <f64>BUCKETS_PER_DAY - 0.5) : 0;
}
/** The median of n values at src, sorted into SCRATCH. */
function median(src: usize, n: i32): f64 {
  for (let i: i32 = 0; i < n; i++) {
    const v = ld(src, i);
    let j = i;
    for (; j > 0 && ld(SCRATCH, j - 1) > v; j--) sto(SCRATCH, j, ld(SCRATCH, j - 1));
    sto(SCRATCH, j, v);
  }
  const m = n >> 1;
  return n % 2 ? ld(SCRATCH, m) : (ld(SCRATCH, m - 1) + ld(SCRATCH, m)) / 2;
}
function closeSlot(p: usize): void {
  const n = ld(p, F_SLOTN);
  if (!(n > 0)) return;
  const slot = ld(p, F_SLOT);
  const days = ld(p, F_DAYS);
  const k = F_SHAPE + imod(slot, SLOTS);
  const week = weeklyOffset(p, slot * <f64>SLOT_BUCKETS + <f64>(SLOT_BUCKETS - 1) / 2); // at the slot's centre
  const miss = median(p + (<usize>F_POINTS << 3), <i32>Math.min(n, <f64>SLOT_BUCKETS)) - ld(p, F_LEVEL) - week - ld(p, k);
  const step = clip(miss, CLIP * (days >= DAILY_AFTER_DAYS ? ld(p, F_MISS) : ld(p, F_SPREAD)));
  sto(p, k, ld(p, k) + step / Math.min(days + 1, K));
  sto(p, F_MISS, ld(p, F_MISS) + (Math.abs(step) - ld(p, F_MISS)) / Math.min(Math.ceil(ld(p, F_N) / <f64>SLOT_BUCKETS), <f64>SLOTS));
}
const LEVELS: usize = memory.data(8 * 8);
function closeDay(p: usize): void {
  const day = ld(p, F_DAY);
  if (day <= ld(p, F_CLOSEDDAY)) return;
  sto(p, F_CLOSEDDAY, day);
  const covered = ld(p, F_DAYN) >= DAY_COVERAGE * BUCKETS_PER_DAY;
  const r = F_RING + imod(day, 7);
  sto(p, r, covered ? ld(p, F_DAYSUM) / ld(p, F_DAYN) : NaN);
  sto(p, F_DAYN, 0);
  sto(p, F_DAYSUM, 0);
  if (!covered) return;
  const days = ld(p, F_DAYS) + 1;
  sto(p, F_DAYS, days);
  sto(p, F_RINGN, Math.min(7, ld(p, F_RINGN) + 1));
  const m = median(p + (<usize>F_SHAPE << 3), SLOTS);
  for (let i: i32 = 0; i < SLOTS; i++) sto(p, F_SHAPE + i, ld(p, F_SHAPE + i) - m);
  sto(p, F_LEVEL, ld(p, F_LEVEL) + m);
  if (ld(p, F_RINGN) < 7) return;
  let nl: i32 = 0;
  for (let d: i32 = 0; d < 7; d++) if (isNum(ld(p, F_RING + d))) sto(LEVELS, nl++, ld(p, F_RING + d));
  const w = F_WEEKLY + imod(day, 7);
  sto(p, w, ld(p, w) + (ld(p, r) - median(LEVELS, nl) - ld(p, w)) / Math.min(Math.floor(days / 7), K));
}
@inline function advanceProfile(p: usize, bucket: f64): void {
  const slot = floorDiv(bucket, SLOT_BUCKETS);
  if (slot != ld(p, F_SLOT)) {
    if (isNum(ld(p, F_SLOT))) closeSlot(p);
    sto(p, F_SLOT, slot);
    sto(p, F_SLOTN, 0);
  }
  const day = dayOf(bucket);
  if (!isNum(ld(p, F_DAY))) sto(p, F_DAY, day);
  while (ld(p, F_DAY) < day) {
    closeDay(p);
    sto(p, F_DAY, ld(p, F_DAY) + 1);
  }
}
/** `daily` and `week`: the profile's offsets at `bucket` (0 until it is in use), as takePoint read them. */
@inline function learnPoint(p: usize, bucket: f64, gv: f64, daily: f64, week: f64): void {
  if (bucket <= ld(p, F_LEARNT)) return;
  const since = bucket - ld(p, F_LEARNT);
  const weight = since < COVERS ? since : since < Infinity ? COVERS : 1;
  sto(p, F_LEARNT, bucket);
  const n = ld(p, F_N) + 1;
  sto(p, F_N, n);
  const level = n == 1 ? gv - daily - week : ld(p, F_LEVEL);
  const spread = ld(p, F_SPREAD);
  const d = clip(gv - daily - week - level, n > <f64>SLOT_BUCKETS ? CLIP * spread : Infinity);
  const w = 1 / Math.min(n, LEVEL_POINTS);
  sto(p, F_LEVEL, level + d * w);
  sto(p, F_SPREAD, spread + (Math.abs(d) - spread) * w);
  const slotN = ld(p, F_SLOTN);
  if (slotN < <f64>SLOT_BUCKETS) sto(p, F_POINTS + <i32>slotN, gv);
  sto(p, F_SLOTN, slotN + 1);
  sto(p, F_DAYN, ld(p, F_DAYN) + weight);
  sto(p, F_DAYSUM, ld(p, F_DAYSUM) + (level + week + d) * weight);
}

// --- envelope.ts ---
@inline function advanceEnvelope(kind: i32, e: usize, bucket: f64, sp: usize): void {
  const last = ld(e, V_LAST);
  sto(e, V_LAST, bucket);
  if (!isNum(last) || bucket <= last) return;
  const today = dayOf(bucket);
  for (let d = Math.max(dayOf(last) + 1, today - <f64>DAYS + 1); d <= today; d++) {
    for (let j: i32 = 0; j < SCALES; j++) sto(e, scaleAt(j) + E_DAY + imod(d, DAYS), -Infinity);
  }
  // one call per scale with j a constant, so that its ring size and offset are constants
  endBlocks(kind, e, 0, <i32>last, <i32>bucket, today, sp);
  endBlocks(kind, e, 1, <i32>last, <i32>bucket, today, sp);
  endBlocks(kind, e, 2, <i32>last, <i32>bucket, today, sp);
  endBlocks(kind, e, 3, <i32>last, <i32>bucket, today, sp);
  endBlocks(kind, e, 4, <i32>last, <i32>bucket, today, sp);
  endBlocks(kind, e, 5, <i32>last, <i32>bucket, today, sp);
}
/** Scale j's blocks from the one holding `last` to the one before `bucket`'s end (see advanceEnvelope in envelope.ts). */
@inline function endBlocks(kind: i32, e: usize, j: i32, last: i32, bucket: i32, today: f64, sp: usize): void {
  const from = last >> j;
  const to = bucket >> j;
  if (from == to) return;
  const s = scaleAt(j);
  const r = ringSize(j);
  const covered = ld(e, s + E_COUNT) >= Math.max(1, <f64>(1 << j) / 2) && ld(e, s + E_WEIGHT) > 0;
  const aux = kind == MODEL_BINOMIAL ? ld(e, s + E_WEIGHT) / ld(e, s + E_COUNT) : ld(e, s + E_AUX);
  const ex = covered ? excess(kind, ld(e, s + E_SUM) / ld(e, s + E_WEIGHT), ld(e, s + E_BASE), aux) : -Infinity;
  if ((kind == MODEL_LOGNORMAL || kind == MODEL_POISSON) && ex > -Infinity && !quiet(e, j, from)) noteSpread(sp, j, ex); // timed.ts keepsSpread: latency, cost and counts read it
  sto(e, s + E_SUM, 0);
  sto(e, s + E_WEIGHT, 0);
  sto(e, s + E_COUNT, 0);
  const end = min(to, from + r + 1);
  for (let b = from; b < end; b++) {
    const q = s + E_RING + (b % r);
    const old = dayOf(<f64>((b - r) << j));
    const k = s + E_DAY + imod(old, DAYS);
    if (old > today - <f64>DAYS && ld(e, q) > ld(e, k) && !quiet(e, j, b - r)) sto(e, k, ld(e, q));
    sto(e, q, b == from ? ex : -Infinity);
  }
}
/** envelope.ts noteSpread: the mean |excess| of scale j's blocks over about SPREAD_DAYS days, at sp. */
@inline function noteSpread(sp: usize, j: i32, ex: f64): void {
  const n = ld(sp, SCALES + j) + 1;
  sto(sp, SCALES + j, n);
  const w = 1 / Math.min(n, <f64>((SPREAD_DAYS * <i32>BUCKETS_PER_DAY) >> j));
  sto(sp, j, ld(sp, j) + (Math.abs(ex) - ld(sp, j)) * w);
}
/** Whether block b of scale j is one of a reported worsening's first hours (envelope.ts quiet). */
@inline function quiet(e: usize, j: i32, b: i32): bool {
  if (j < QUIET_SCALE) return false;
  const from = ld(e, V_REPORTED);
  return <f64>(b << j) < from + QUIET_SPAN && <f64>((b + 1) << j) > from;
}
@inline function absorbAt(e: usize, j: i32, sum: f64, weight: f64, level: f64, aux: f64): void {
  const s = scaleAt(j);
  const count = ld(e, s + E_COUNT);
  if (count == 0) {
    sto(e, s + E_BASE, level);
    sto(e, s + E_AUX, aux);
  }
  sto(e, s + E_SUM, ld(e, s + E_SUM) + sum);
  sto(e, s + E_WEIGHT, ld(e, s + E_WEIGHT) + weight);
  sto(e, s + E_COUNT, count + 1);
}
@inline function absorbPoint(e: usize, sum: f64, weight: f64, level: f64, aux: f64): void {
  absorbAt(e, 0, sum, weight, level, aux);
  absorbAt(e, 1, sum, weight, level, aux);
  absorbAt(e, 2, sum, weight, level, aux);
  absorbAt(e, 3, sum, weight, level, aux);
  absorbAt(e, 4, sum, weight, level, aux);
  absorbAt(e, 5, sum, weight, level, aux);
}

// --- record.ts ---
function newRecord(w: usize): void {
  for (let i: i32 = 0; i < W_SIZE; i++) sto(w, i, NaN);
  sto(w, W_TOP, -Infinity);
  sto(w, W_WEEKTOP, -Infinity);
  sto(w, W_BOTTOM, Infinity);
  sto(w, W_WEEKBOTTOM, Infinity);
  sto(w, W_DAYS, 0);
}
function summarise(w: usize): void {
  let days: f64 = 0;
  let top = -Infinity;
  let bottom = Infinity;
  for (let d: i32 = 0; d < RECORD_DAYS; d++) {
    const t = ld(w, W_TOPS + d);
    if (!isNum(t)) continue;
    days++;
    top = Math.max(top, t);
    bottom = Math.min(bottom, ld(w, W_BOTTOMS + d));
  }
  sto(w, W_WEEKTOP, top);
  sto(w, W_WEEKBOTTOM, bottom);
  sto(w, W_DAYS, days);
}
function closeDays(w: usize, day: f64): void {
  const current = ld(w, W_DAY);
  if (day >= current + <f64>RECORD_DAYS) newRecord(w);
  else if (isNum(current)) {
    const seen = ld(w, W_TOP) > -Infinity;
    for (let d = current; d < day; d++) {
      const first = d == current && seen;
      sto(w, W_TOPS + imod(d, RECORD_DAYS), first ? ld(w, W_TOP) : NaN);
      sto(w, W_BOTTOMS + imod(d, RECORD_DAYS), first ? ld(w, W_BOTTOM) : NaN);
    }
    summarise(w);
  }
  sto(w, W_DAY, day);
  sto(w, W_TOP, -Infinity);
  sto(w, W_BOTTOM, Infinity);
}
@inline function recordValue(kind: i32, x: f64, calls: f64): f64 {
  if (kind != MODEL_BINOMIAL) return x;
  const errors = Math.min(x, calls);
  return (100 * Math.max(0, errors - Math.sqrt(errors))) / calls;
}
/** An observed point's value `g` at `bucket` into the record at w; whether it beats the week's record by the margin. */
@inline function recordPoint(kind: i32, w: usize, bucket: f64, g: f64): bool {
  const day = dayOf(bucket);
  if (day != ld(w, W_DAY)) closeDays(w, day);
  const top = Math.max(ld(w, W_WEEKTOP), ld(w, W_TOP));
  const bottom = Math.min(ld(w, W_WEEKBOTTOM), ld(w, W_BOTTOM));
  sto(w, W_TOP, Math.max(ld(w, W_TOP), g));
  sto(w, W_BOTTOM, Math.min(ld(w, W_BOTTOM), g));
  return ld(w, W_DAYS) >= RECORD_MIN_DAYS && g > (logUnits(kind) ? (1 + top) * RECORD_RATIO - 1 : top + LINEAR_MARGIN * (top - bottom));
}

// --- timed.ts ---
@inline function enterBucket(kind: i32, c: usize, bucket: f64): void {
  advanceProfile(c + (<usize>T_PROFILE << 3), bucket);
  advanceEnvelope(kind, c + (<usize>T_ENVELOPE << 3), bucket, c + (<usize>T_SPREAD << 3));
  sto(c, T_RECENT + imod(bucket, RECENT_LEVELS), ld(c, T_N) > 0 ? ld(c, T_LEVEL) : NaN);
}
@inline function takePoint(kind: i32, c: usize, bucket: f64, x: f64, calls: f64): f64 {
  if (!observed(kind, x, calls)) return x;
  const binomial = kind == MODEL_BINOMIAL;
  const p = c + (<usize>T_PROFILE << 3);
  // the profile's offsets, read once for the residual and for learning (the profile does not move between)
  const active = dailyActive(p);
  const daily = active ? dailyOffset(p, bucket) : 0;
  const week = active ? weeklyOffset(p, bucket) : 0;
  const off = active ? daily + week : 0;
  const scale = logUnits(kind) ? exp(-off) : 1;
  if (kind == MODEL_POISSON) {
    // a lone zero where the settled level expects many: a missing bucket, not a count
    const lone = x == 0 && ld(c, T_ZERO) != 1 && ld(c, T_N) > NEAR_POINTS && ld(c, T_LEVEL) > zeroFloor * scale;
    sto(c, T_ZERO, lone ? 1 : 0);
    if (lone) return NaN;
  } // (the other models never set the flag: it stays 0, as the twin writes it)
  const r = logUnits(kind) ? x * scale : x - off;
  const sum = binomial ? Math.min(r, calls) : r;
  const weight = binomial ? calls : 1;
  const v = sum / weight;
  const n = ld(c, T_N) + 1;
  sto(c, T_N, n);
  if (n == 1) {
    sto(c, T_LEVEL, v);
    sto(c, T_AUX, auxOf(kind, r, calls, v));
  }
  const level = ld(c, T_LEVEL);
  const aux = ld(c, T_AUX);
  const settled = n > NEAR_POINTS;
  if (settled) absorbPoint(c + (<usize>T_ENVELOPE << 3), sum, weight, level, aux);
  // lognormal: the excess and the noise's aux share one ln (v = r for this model)
  const lr = kind == MODEL_LOGNORMAL ? ln((1 + v) / (1 + level)) : 0;
  const ex = kind == MODEL_LOGNORMAL ? lr / Math.max(aux, 1e-3) : excess(kind, v, level, aux);
  const step = settled && Math.abs(ex) > CLIP ? (v - level) * (CLIP / Math.abs(ex)) : v - level;
  sto(c, T_LEVEL, level + step / Math.min(n, NEAR_POINTS));
  const cap = settled && !binomial ? CLIP * aux : Infinity;
  sto(c, T_AUX, aux + (Math.min(kind == MODEL_LOGNORMAL ? Math.abs(lr) : auxOf(kind, r, calls, level), cap) - aux) / Math.min(n, NOISE_POINTS));
  const shaped = binomial ? (100 * Math.min(x, calls)) / calls : x;
  learnPoint(p, bucket, logUnits(kind) ? ln(1 + shaped) : shaped, daily, week);
  return r;
}

/**
 * See readPoints in src/detect/bocpd/timed.ts, over many series: series i's context is at
 * ctxs + i · T_SIZE, its points are xs[offsets[i] .. offsets[i + 1]) (calls in ns for the binomial
 * model), the first of them at bucket buckets[i]; each point's residual is written to out, and the
 * points that beat the week's record to records: their count, then their indices into xs.
 */
export function seasonalReading(
  model: i32,
  modelK0: f64,
  modelN0: f64,
  ctxs: usize,
  xs: usize,
  ns: usize,
  out: usize,
  records: usize,
  offsets: usize,
  buckets: usize,
  nSeries: i32,
): void {
  k0 = modelK0;
  n0 = modelN0;
  zeroFloor = modelK0 * (Math.exp(-Math.log(ZERO_CHANCE) / modelK0) - 1);
  if (model == MODEL_BINOMIAL) readAll(MODEL_BINOMIAL, ctxs, xs, ns, out, records, offsets, buckets, nSeries);
  else if (model == MODEL_POISSON) readAll(MODEL_POISSON, ctxs, xs, ns, out, records, offsets, buckets, nSeries);
  else if (model == MODEL_LOGNORMAL) readAll(MODEL_LOGNORMAL, ctxs, xs, ns, out, records, offsets, buckets, nSeries);
  else readAll(-1, ctxs, xs, ns, out, records, offsets, buckets, nSeries);
}

@inline function readAll(kind: i32, ctxs: usize, xs: usize, ns: usize, out: usize, records: usize, offsets: usize, buckets: usize, nSeries: i32): void {
  let beaten: i32 = 0;
  for (let i: i32 = 0; i < nSeries; i++) {
    const c = ctxs + (<usize>(i * T_SIZE) << 3);
    const w = c + (<usize>T_RECORD << 3);
    const from = <i32>ld(offsets, i);
    const to = <i32>ld(offsets, i + 1);
    const b0 = ld(buckets, i);
    for (let k = from; k < to; k++) {
      const bucket = b0 + <f64>(k - from);
      const x = ld(xs, k);
      const calls = kind == MODEL_BINOMIAL ? ld(ns, k) : 1;
      enterBucket(kind, c, bucket);
      sto(out, k, takePoint(kind, c, bucket, x, calls));
      if (observed(kind, x, calls) && recordPoint(kind, w, bucket, recordValue(kind, x, calls))) sto(records, ++beaten, <f64>k);
    }
  }
  sto(records, 0, <f64>beaten);
}

/** Offsets of the envelope's scales (envelope.ts scaleAt), for the layout test. */
export function seasonalScaleAt(j: i32): i32 {
  return scaleAt(j);
}
