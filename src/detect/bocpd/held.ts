// Worsening changes waiting for the envelope's verdict (envelope.ts): BOCPD found them, but their
// regime has not yet risen far enough above the level before it for long enough. At most two wait
// at once, an earlier rise and a further one inside it (a burst on top of an incident must not make
// the incident's own start forgotten); a third replaces the older. Each keeps its regime's raw sum
// and weight since its first point, the level and noise the series had just before it, and the
// envelope's levels as they stood then, so what comes after it never raises its own bar.
import { LEVELS, barFor, levelsBefore, type Excess } from './envelope.js';

const SLOTS = 2;
const START = 0; // first point of the regime (index); NaN for a free slot
const BEFORE = 1; // the old regime's mean, as the engine reports it
const SUM = 2; // raw residual sum and weight since the first point
const WEIGHT = 3;
const BASE = 4; // the series' level (and its noise's aux) just before the first point
const AUX = 5;
const RISEN = 6; // its excess when a newer change began inside its regime (NaN before that)
const AT = 7; // the envelope's levels before the first point
const WIDTH = AT + LEVELS;
/** With no history to judge by, a change waits for this many points after its first: BOCPD's lag without the seasonal path (not tuned). */
const NO_HISTORY_LAG = 4;
/** A change still waiting this many points after its first (twice the largest scale) is dropped: what it found was a drift, not a shift. */
const MAX_WAIT = 64;
/**
 * Before the daily profile is in use a change waits at most this many points (an hour): a slower rise
 * may be the day's own cycle (calibration: the generated series' first two days, where changes that
 * cleared after hours of waiting were the morning's rise).
 */
const UNLEARNT_WAIT = 12;
/**
 * When an older waiting change clears while a newer one waits, the newer one is reported if its
 * excess is at least this many times the older one's when it began (generated series: a marginal
 * rise that clears only with an incident's points is not the incident's start; a burst on top of an
 * incident is not the incident).
 */
const TAKEOVER = 2; // chosen on bench:detect-lag's faults and the generated seeds 1-10
/**
 * A fall that brings the series back within this many noise units of a waiting change's base ends the
 * change, as a fall to or below its old level does: a burst at its start had kept its regime's mean
 * up for hours after the burst ended, until a real shift's points made it clear with the burst's
 * start (calibration: generated seeds 1-10, 152 -> 153 of 160 found, a daily cron burst's; NAB
 * ec2_cpu_* 0.08 -> 0.07 false a day; 0.5 to 2 the same; held out and seeds 401-440 unchanged).
 */
const RETURNED = 1;

export const HELD_SIZE = SLOTS * WIDTH;

export interface Held {
  start: number;
  before: number;
  sum: number;
  weight: number;
}

export function newHeld(c: Float64Array, o: number): void {
  c.fill(NaN, o, o + HELD_SIZE);
}

const slot = (o: number, k: number): number => o + k * WIDTH;
const free = (c: Float64Array, s: number): boolean => !(c[s + START]! === c[s + START]);
const excess = (c: Float64Array, s: number, ex: Excess): number => ex(c[s + SUM]! / c[s + WEIGHT]!, c[s + BASE]!, c[s + AUX]!);

export const anyHeld = (c: Float64Array, o: number): boolean => !free(c, slot(o, 0)) || !free(c, slot(o, 1));

/**
 * A worsening change starts waiting: `ex` the model's excess, `base`/`aux` the series' level (and
 * its noise's aux) just before it,
 * `envelope`/`bucket` the envelope's offset and its first point's bucket.
 */
export function hold(c: Float64Array, o: number, ex: Excess, h: Held, base: number, aux: number, envelope: number, bucket: number): void {
  const a = slot(o, 0);
  const b = slot(o, 1);
  const s = free(c, a) ? a : free(c, b) ? b : c[a + START]! < c[b + START]! ? a : b;
  const other = s === a ? b : a;
  if (!free(c, other)) c[other + RISEN] = excess(c, other, ex);
  c[s + START] = h.start;
  c[s + BEFORE] = h.before;
  c[s + SUM] = h.sum;
  c[s + WEIGHT] = h.weight;
  c[s + BASE] = base;
  c[s + AUX] = aux;
  c[s + RISEN] = NaN;
  levelsBefore(c, envelope, bucket, c, s + AT);
}

/** A point of the regime (raw sum and weight) for every waiting change. */
export function addPoint(c: Float64Array, o: number, sum: number, weight: number): void {
  for (let k = 0; k < SLOTS; k++) {
    const s = slot(o, k);
    if (free(c, s)) continue;
    c[s + SUM] = c[s + SUM]! + sum;
    c[s + WEIGHT] = c[s + WEIGHT]! + weight;
  }
}

/**
 * The series fell back to `level` (the engine's units; `raw` the same in raw units): changes whose old
 * level was as high end, and so do those whose base it is back within RETURNED noise units of.
 */
export function dropEnded(c: Float64Array, o: number, level: number, ex: Excess, raw: number): void {
  for (let k = 0; k < SLOTS; k++) {
    const s = slot(o, k);
    if (!free(c, s) && (c[s + BEFORE]! >= level || ex(raw, c[s + BASE]!, c[s + AUX]!) <= RETURNED)) c[s + START] = NaN;
  }
}

/**
 * The waiting change reported at point `t`, if any: when the regime of one of them, seen up to `t`,
 * now rises above its bar (`margin`: see barFor). When an older one clears while a newer one waits,
 * the older one is reported if its regime was already up when the newer began (an incident with a
 * burst on top), else the newer one's start, from the older one's old level (the older regime rose
 * only with the newer one's points). Every change waiting then stops; so do those waiting longer
 * than MAX_WAIT. `learnt`: whether the series' daily profile is in use (see UNLEARNT_WAIT and barFor);
 * `shrink`: how much less noise a mean over a regime's points has than one bucket (TimedModel.shrink,
 * with what the series showed).
 */
export function cleared(c: Float64Array, o: number, ex: Excess, t: number, margin: number, learnt: boolean, shrink: (level: number, aux: number, points: number) => number): (Held & { base: number; aux: number }) | undefined {
  const maxWait = learnt ? MAX_WAIT : UNLEARNT_WAIT;
  let first: number | undefined;
  let newest: number | undefined;
  for (let k = 0; k < SLOTS; k++) {
    const s = slot(o, k);
    if (free(c, s)) continue;
    const start = c[s + START]!;
    if (t - start >= maxWait) {
      c[s + START] = NaN;
      continue;
    }
    if (newest === undefined || start > c[newest + START]!) newest = s;
    const bar = barFor(c, s + AT, t - start + 1, margin, learnt, shrink(c[s + BASE]!, c[s + AUX]!, t - start + 1));
    const clears = bar === -Infinity ? t - start >= NO_HISTORY_LAG : excess(c, s, ex) > bar;
    if (clears && (first === undefined || start < c[first + START]!)) first = s;
  }
  if (first === undefined) return undefined;
  const pick = newest !== first && !(excess(c, newest!, ex) < TAKEOVER * c[first + RISEN]!) ? newest! : first;
  const out = { start: c[pick + START]!, before: c[first + BEFORE]!, sum: c[pick + SUM]!, weight: c[pick + WEIGHT]!, base: c[pick + BASE]!, aux: c[pick + AUX]! };
  newHeld(c, o);
  return out;
}

