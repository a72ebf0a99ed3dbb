// What the call tree says, prepared once for every service of a diagnosis: its components, each
// one's onset and clean baseline, and the diagnosed service's own change. Read from trace structure
// alone (spans need ids, service, pod, start and end; kinds, status and peer attributes only help).
// Pure functions of the fine-binned rows (STATEMENTS.callStructure, logLevels, resourceGauges); the
// evidence modules (evidence/*.ts) read what this prepares.
//
// Every span's time beyond its children is a component: a span whose children are all in one other
// service is a call, and its extra time is that edge's wire and queue time; any other span's extra
// time is its service's own work. Each component finds its own onset in fine bins placed by absolute
// time (onset.ts): its baseline is the most recent stable stretch before it, so an earlier incident
// and the bucket grid do not matter, and a short history is still a baseline. An agent that names a
// reference stretch (`baseline_from_ts`/`baseline_to_ts`) replaces that choice: the reference is the
// baseline, the window the rest.
import { segmentSeries, compareSegments, type Bin, type Segment } from './onset.js';
import { FINE_BIN_US } from '../core/time.js';
import { tSurprise } from './stats.js';
import type { CallSequenceRow, CallTreeRow, GaugeRow, LogLevelRow } from './reads/index.js';
import { getOrMake } from './evidence/candidate.js';

/** An onset up to this long before the window's start still counts as the window's. */
const ONSET_SLACK_US = 60_000_000;

/** The sums of a group of spans (a row of the call tree, or several added up). */
export type Agg = Pick<CallTreeRow, 'n' | 'k' | 'sx' | 'sxx' | 'slx' | 'sllx' | 'sl' | 'sll' | 'sd' | 'kt'>;

export const emptyAgg = (): Agg => ({ n: 0, k: 0, sx: 0, sxx: 0, slx: 0, sllx: 0, sl: 0, sll: 0, sd: 0, kt: 0 });
export function addAgg(a: Agg, r: Agg): void {
  a.n += r.n;
  a.k += r.k;
  a.sx += r.sx;
  a.sxx += r.sxx;
  a.slx += r.slx;
  a.sllx += r.sllx;
  a.sl += r.sl;
  a.sll += r.sll;
  a.sd += r.sd;
  a.kt += r.kt;
}
/** The value of `key`, made and stored first when absent. */
const addTo = (m: Map<number, Agg>, bin: number, r: Agg) => addAgg(getOrMake(m, bin, emptyAgg), r);

/** One place where time is spent: a service's own work, or the wire of calls from one service to another. */
export interface Component {
  kind: 'self' | 'wire';
  service: string;
  callee: string | null;
  bins: Map<number, Agg>;
  /** Per `callerPod\0calleePod` (wire; own work is read per service, not per pod). */
  pods: Map<string, Map<number, Agg>>;
}

/** The periods a change is judged on: bins of the baseline and bins since the onset. */
export interface Split {
  onset: number;
  before: number[];
  after: number[];
  /** The onset was found in the data (not the window's start). */
  found: boolean;
}

export const binsOf = (m: ReadonlyMap<number, Agg>, value: 'x' | 'd'): Bin[] =>
  [...m]
    .sort((a, b) => a[0] - b[0])
    .map(([t, a]) => ({ t, n: a.n, errors: a.k, sumLog: value === 'x' ? a.slx : a.sl, sumLog2: value === 'x' ? a.sllx : a.sll }));

/**
 * Where a series' current regime began (in the window, or at its start) and the most recent stable
 * stretch before it, with earlier stretches at the same level added (never one across a change).
 */
export function splitSeries(bins: readonly Bin[], from: number, to: number): Split | null {
  const observed = bins.filter((b) => b.n > 0 && b.t < to);
  if (!observed.length) return null;
  const coarse = coarsen(observed);
  const segs = segmentSeries(coarse);
  // The first worsening since the window began that has not ended (a fault on one pod of several
  // leaves its series uneven, so later boundaries are the same episode; an episode that returned to
  // its baseline is an earlier incident in a long window, not the current one). When every one
  // ended, none is the current regime: the window is judged as a whole.
  const tails = recoveredTails(segs, binWidth(coarse));
  const ended = (i: number) => tails.some((t) => t.index > i && !compareSegments(segs[i - 1]!, t.pooled).worse);
  const onsetIdx = segs.findIndex((s, i) => i > 0 && s.from >= from - ONSET_SLACK_US && s.from < to && compareSegments(segs[i - 1]!, s).worse && !ended(i));
  const onset = onsetIdx > 0 ? segs[onsetIdx]!.from : from;
  // The baseline: the segment holding the last bin before the onset, and the earlier ones like it.
  const last = onsetIdx > 0 ? onsetIdx - 1 : segs.findLastIndex((s) => s.from < onset);
  if (last < 0) return { onset, before: [], after: observed.filter((b) => b.t >= onset).map((b) => b.t), found: onsetIdx > 0 };
  const ref = segs[last]!;
  let first = last;
  while (first > 0 && !compareSegments(segs[first - 1]!, ref).changed) first--;
  const lo = segs[first]!.from;
  return {
    onset,
    before: observed.filter((b) => b.t >= lo && b.t < onset).map((b) => b.t),
    after: observed.filter((b) => b.t >= onset).map((b) => b.t),
    found: onsetIdx > 0,
  };
}

/**
 * A stretch at least this long back at (or below) the level before a worsening ends its episode; a
 * shorter one is the episode's own unevenness. Set a priori (six fine bins; a third of the window an
 * agent asks about right after a fault), then checked on nezha-ob 2022-08-22 with 25- and 30-minute
 * windows, which hold two or three earlier faults (eval:recorded with EVAL_LAST_MIN).
 */
const RECOVERED_US = 60_000_000;

/**
 * Every stretch from a segment to the series' end that lasts long enough to be a recovery, pooled
 * (calls, errors, mean log): a worsening has ended when one that starts after it is back at (or
 * below) the level before it. Pooled, so a fault on one pod of several, whose series alternates,
 * has not ended at its first clean stretch.
 */
function recoveredTails(segs: readonly Segment[], width: number): { index: number; pooled: Segment }[] {
  const out: { index: number; pooled: Segment }[] = [];
  if (!segs.length) return out;
  const end = segs[segs.length - 1]!.to + width;
  let n = 0;
  let errors = 0;
  let sumLog = 0;
  for (let j = segs.length - 1; j > 0; j--) {
    const s = segs[j]!;
    n += s.n;
    errors += s.errors;
    sumLog += s.meanLog * s.n;
    if (end - s.from >= RECOVERED_US) out.push({ index: j, pooled: { ...s, to: end - width, n, errors, meanLog: n ? sumLog / n : 0, errorRate: n ? errors / n : 0 } });
  }
  return out;
}

/** The width of a series' bins: the smallest step between two observed ones (gaps only make steps longer). */
function binWidth(bins: readonly Bin[]): number {
  let w = Infinity;
  for (let i = 1; i < bins.length; i++) w = Math.min(w, bins[i]!.t - bins[i - 1]!.t);
  return Number.isFinite(w) ? w : FINE_BIN_US;
}

/** Bins with this many observations or more are segmented as they are; sparser series in wider bins. */
const MIN_PER_BIN = 8;
/** At most this many fine bins in one (a minute). */
const MAX_MERGE = 6;

/**
 * A sparse series (a quiet service's calls, a few log records) in wider bins on the same absolute
 * grid, so each holds enough observations for its level to mean something.
 */
export function coarsen(bins: readonly Bin[]): Bin[] {
  const counts = bins.map((b) => b.n).sort((a, b) => a - b);
  const median = counts[counts.length >> 1] ?? 0;
  const g = Math.min(MAX_MERGE, Math.max(1, Math.ceil(MIN_PER_BIN / Math.max(1, median))));
  if (g === 1) return [...bins];
  const width = g * FINE_BIN_US;
  const out = new Map<number, Bin>();
  for (const b of bins) {
    const t = Math.floor(b.t / width) * width;
    const cur = out.get(t);
    if (!cur) out.set(t, { ...b, t });
    else {
      cur.n += b.n;
      cur.errors += b.errors;
      cur.sumLog += b.sumLog;
      cur.sumLog2 += b.sumLog2;
    }
  }
  return [...out.values()].sort((a, b) => a.t - b.t);
}

export function sumOver(m: ReadonlyMap<number, Agg>, ts: readonly number[]): Agg {
  const a = emptyAgg();
  for (const t of ts) {
    const x = m.get(t);
    if (x) addAgg(a, x);
  }
  return a;
}

/**
 * Spread floors of a time per call in log units, for series too short or too steady to show their
 * own: the lower deciles of clean components' bin-to-bin wander and of their calls' spread around
 * their bin's mean on nezha-ob's tuning day, 2022-08-22 (bench/recorded/calibrate.ts).
 */
const WANDER_FLOOR = 0.05;
const CALL_SPREAD_FLOOR = 0.25;

export interface LevelRise {
  /** -log10 p of the rise against the series' own variation (levelRise). */
  surprise: number;
  /** Mean time per call before and after, µs. */
  mb: number;
  ma: number;
  before: Agg;
  after: Agg;
}

/**
 * How surprising a rise of the typical time per call (mean log) is from a split's baseline bins to
 * its bins since the onset, against the series' own variation: a bin's mean varies by its calls'
 * spread over their count (sampling) plus what the baseline's bins vary beyond that (the series'
 * wander: load, pauses, neighbours). Welch's t over bins with that variance, Student's tail: a busy
 * series gains nothing from its volume once its wander dominates, and three clean calls against
 * twenty two hundred times slower still say a lot.
 */
export function levelRise(bins: ReadonlyMap<number, Agg>, split: Split, value: 'x' | 'd' = 'x'): LevelRise | null {
  const side = (ts: readonly number[]) => ts.map((t) => bins.get(t)).filter((a): a is Agg => !!a && a.n > 0);
  const B = side(split.before);
  const A = side(split.after);
  if (!B.length || !A.length) return null;
  const before = emptyAgg();
  const after = emptyAgg();
  for (const x of B) addAgg(before, x);
  for (const x of A) addAgg(after, x);
  const sl = (a: Agg) => (value === 'x' ? a.slx : a.sl);
  const sll = (a: Agg) => (value === 'x' ? a.sllx : a.sll);
  // The calls' spread around their bin's mean, pooled over the baseline (the window's when it has too few).
  const pooled = (xs: readonly Agg[]) => {
    let ss = 0;
    let df = 0;
    for (const a of xs) if (a.n >= 2) {
      ss += Math.max(0, sll(a) - sl(a) ** 2 / a.n);
      df += a.n - 1;
    }
    return df >= 2 ? ss / df : NaN;
  };
  const within = Math.max(CALL_SPREAD_FLOOR ** 2, Number.isFinite(pooled(B)) ? pooled(B) : Number.isFinite(pooled(A)) ? pooled(A) : 0);
  // Wander: the baseline bins' means vary beyond their sampling noise.
  let tau = WANDER_FLOOR ** 2;
  if (B.length >= 3) {
    const means = B.map((a) => sl(a) / a.n);
    const mu = means.reduce((s, x) => s + x, 0) / means.length;
    const spread = means.reduce((s, x) => s + (x - mu) ** 2, 0) / (means.length - 1);
    const sampling = B.reduce((s, a) => s + within / a.n, 0) / B.length;
    tau = Math.max(tau, spread - sampling);
  }
  const vb = tau / B.length + within / before.n;
  const va = tau / A.length + within / after.n;
  const t = (sl(after) / after.n - sl(before) / before.n) / Math.sqrt(vb + va);
  const df = (vb + va) ** 2 / (vb ** 2 / Math.max(1, B.length - 1) + va ** 2 / Math.max(1, A.length - 1));
  const lin = (a: Agg) => (value === 'x' ? a.sx : a.sd) / a.n;
  return { surprise: tSurprise(t, df), mb: lin(before), ma: lin(after), before, after };
}

/** The call tree's components and every service's requests per bin, read once for every service of a diagnosis. */
export interface PreparedStructure {
  from: number;
  to: number;
  /** The reference the request named, if any: every split's baseline. */
  reference: { from: number; to: number } | null;
  comps: Map<string, Component>;
  /** Entry spans (requests received) per service and bin. */
  entries: Map<string, Map<number, Agg>>;
  /** Log level counts per service and bin. */
  logs: Map<string, Map<number, LogLevelRow>>;
  /** How many traces each one in the call tree stands for, at a time (its counts are of those; log counts are of all). */
  sampleAt(t: number): number;
  gauges: readonly GaugeRow[];
  /** Each series' split, found once (it does not depend on the service diagnosed). */
  splits: Map<unknown, Split | null>;
  /** Per caller: its requests' bins and steps (the answer each call followed, START for none; the last answer then END). */
  sequences: Map<string, { bin: number; answers: string[]; steps: [string, string][] }[]>;
}

export function prepareStructure(
  rows: readonly CallTreeRow[],
  logs: readonly LogLevelRow[],
  gauges: readonly GaugeRow[],
  from: number,
  to: number,
  sampleAt: (t: number) => number = () => 1,
  sequences: readonly CallSequenceRow[] = [],
  reference: { from: number; to: number } | null = null,
): PreparedStructure {
  const comps = new Map<string, Component>();
  const entries = new Map<string, Map<number, Agg>>();
  for (const r of rows) {
    if (r.entry) addTo(getOrMake(entries, r.service, () => new Map()), r.bin, r);
    const wire = r.callee !== null && r.callee !== r.service;
    const key = wire ? `wire\u0000${r.service}\u0000${r.callee}` : `self\u0000${r.service}`;
    let c = comps.get(key);
    if (!c) comps.set(key, (c = { kind: wire ? 'wire' : 'self', service: r.service, callee: wire ? r.callee : null, bins: new Map(), pods: new Map() }));
    addTo(c.bins, r.bin, r);
    const pod = wire ? `${r.pod}\u0000${r.callee_pod ?? ''}` : r.pod;
    addTo(getOrMake(c.pods, pod, () => new Map()), r.bin, r);
  }
  const byService = new Map<string, Map<number, LogLevelRow>>();
  for (const r of logs) getOrMake(byService, r.service_name, () => new Map()).set(r.bin, r);
  const bySeq = new Map<string, { bin: number; answers: string[]; steps: [string, string][] }[]>();
  for (const r of sequences) getOrMake(bySeq, r.caller, () => []).push({ bin: r.bin, answers: r.seq, steps: stepsOf(r) });
  return { from, to, reference, comps, entries, logs: byService, sampleAt, gauges, splits: new Map(), sequences: bySeq };
}

/** The split of a series with the named reference as its baseline: the window is the rest. */
function referenceSplit(bins: readonly Bin[], ref: { from: number; to: number }, from: number, to: number): Split | null {
  const observed = bins.filter((b) => b.n > 0 && b.t < to);
  if (!observed.length) return null;
  return { onset: from, before: observed.filter((b) => b.t >= ref.from && b.t < ref.to).map((b) => b.t), after: observed.filter((b) => b.t >= from).map((b) => b.t), found: false };
}

/** The split of any series of the prepared range, found once per key: the named reference, or the onset and clean stretch splitSeries finds. */
export function splitOf(p: PreparedStructure, key: unknown, bins: () => readonly Bin[]): Split | null {
  if (!p.splits.has(key)) {
    const b = bins();
    p.splits.set(key, p.reference ? referenceSplit(b, p.reference, p.from, p.to) : splitSeries(b, p.from, p.to));
  }
  return p.splits.get(key)!;
}

/** A component's split, when its time may have worsened at all (the cheap test spares segmenting the rest). */
export function componentSplit(p: PreparedStructure, c: Component): Split | null {
  if (!p.reference && !p.splits.has(c) && !mayHaveWorsened(c, p.from)) p.splits.set(c, null);
  return splitOf(p, c, () => binsOf(c.bins, 'x'));
}

/**
 * Whether a component's time since a minute before the window is at least a tenth above its time
 * before (by mean or by typical value). A component seen only in the window (its history was not
 * recorded, or began there) may have worsened inside it: the segmentation says.
 */
function mayHaveWorsened(c: Component, from: number): boolean {
  const b = emptyAgg();
  const a = emptyAgg();
  for (const [t, x] of c.bins) addAgg(t >= from - ONSET_SLACK_US ? a : b, x);
  if (a.n === 0) return false;
  if (b.n === 0) return true;
  return a.sx / a.n >= 1.1 * (b.sx / b.n) || a.slx / a.n - b.slx / b.n >= Math.log(1.1);
}

/** The diagnosed service's requests: mean duration before and after its onset (µs), the onset and the baseline it was judged on. */
export interface RootChange {
  service: string;
  before: number;
  after: number;
  /** How surprising the rise of its requests' duration is (levelRise; 0 when it fell). */
  surprise: number;
  onset: number;
  found: boolean;
  requests: number;
  baselineFrom: number;
  baselineTo: number;
  /** Its split, and the one counts are judged on (from the window's start unless the onset was found in it). */
  split: Split;
  countSplit: Split;
  bins: ReadonlyMap<number, Agg>;
}

/** Requests (or calls) over the bins `ts` of `bins`, in all traces: each counted one stands for sampleAt(t). */
export function countAll(p: Pick<PreparedStructure, 'sampleAt'>, bins: ReadonlyMap<number, Agg>, ts: readonly number[]): number {
  let n = 0;
  for (const t of ts) n += (bins.get(t)?.n ?? 0) * p.sampleAt(t);
  return n;
}

/** The diagnosed service's change, or null when it has too few requests on either side of its onset. */
export function rootChange(p: PreparedStructure, root: string): RootChange | null {
  const bins = p.entries.get(root) ?? new Map<number, Agg>();
  const split = splitOf(p, `root\u0000${root}`, () => binsOf(bins, 'd'));
  if (!split || !split.before.length) return null;
  const rise = levelRise(bins, split, 'd');
  if (!rise || rise.before.n < 3 || rise.after.n < 3) return null;
  return {
    service: root,
    before: rise.before.sd / rise.before.n,
    after: rise.after.sd / rise.after.n,
    surprise: rise.surprise,
    onset: split.onset,
    found: split.found,
    requests: rise.after.n,
    baselineFrom: split.before[0]!,
    baselineTo: split.before[split.before.length - 1]! + FINE_BIN_US,
    split,
    countSplit: split.found ? split : { ...split, onset: p.from },
    bins,
  };
}

/**
 * The fine bins of a log split's two sides, with every bin of the root's requests in them: the
 * baseline from its first bin to the onset, the rest from the onset to the window's end.
 */
export function exposure(rootBins: ReadonlyMap<number, Agg>, split: Split, to: number): [number[], number[]] {
  const lo = split.before[0] ?? split.onset;
  const before = new Set(split.before);
  const after = new Set(split.after);
  for (const t of rootBins.keys()) {
    if (t >= lo && t < split.onset) before.add(t);
    else if (t >= split.onset && t < to) after.add(t);
  }
  const sorted = (x: Set<number>) => [...x].sort((a, b) => a - b);
  return [sorted(before), sorted(after)];
}

/** The start and the end of a request's calls, as steps of its sequence. */
export const START = '\u0000start';
export const END = '\u0000end';

/**
 * A request's steps: each call after the answer that came last before it was issued (START when
 * none had: the first call, and every call of a fan-out issued at once), then END after the last
 * answer when the caller never had two calls outstanding. A call issued after an answer is the
 * caller's decision on what it had, the latest answer the likeliest trigger (a fallback in a
 * fan-out follows the answer it replaces); stopping after a fan-out is not a decision on the
 * answer that happened to come last, the slowest one: a callee that got slower would look like one
 * after whose answers the caller stopped (a network delay read as a wrong answer).
 */
export function stepsOf(r: Pick<CallSequenceRow, 'seq' | 'issued' | 'answered'>): [string, string][] {
  const out: [string, string][] = [];
  let last = -1;
  let overlapped = false;
  for (let j = 0; j < r.seq.length; j++) {
    // Calls are in the order issued: those before j were answered by its issue, or j overlaps them.
    let prev = -1;
    for (let i = 0; i < j; i++) {
      if (r.answered[i]! > r.issued[j]!) overlapped = true;
      else if (prev < 0 || r.answered[i]! > r.answered[prev]!) prev = i;
    }
    out.push([prev < 0 ? START : r.seq[prev]!, r.seq[j]!]);
    if (last < 0 || r.answered[j]! > r.answered[last]!) last = j;
  }
  if (last >= 0 && !overlapped) out.push([r.seq[last]!, END]);
  return out;
}
