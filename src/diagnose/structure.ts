// What the call tree says: where the diagnosed service's extra time, error logs and changed paths
// come from, read from trace structure alone (spans need ids, service, pod, start and end; kinds,
// status and peer attributes only help). Pure functions of the fine-binned rows (STATEMENTS.callTree,
// logLevels and resourceGauges).
//
// Every span's time beyond its children is a component: a span whose children are all in one other
// service is a call, and its extra time is that edge's wire and queue time; any other span's extra
// time is its service's own work. Each component finds its own onset in fine bins placed by absolute
// time (onset.ts): its baseline is the most recent stable stretch before it, so an earlier incident
// and the bucket grid do not matter, and a short history is still a baseline. A component's change
// counts by how much of the diagnosed service's change it explains per request (the symptom's
// share), weighed by how sure it is: by its mean, per pod, and for the wire by its count of slow
// calls (a packet loss delays a few calls in ten, which a mean hides).
//
// Blame by the common node: extra wire time on calls from several callers to one callee is the
// callee's (a slow network or queue in front of it, whatever its own spans say); on calls from one
// caller to several callees it is the caller's (starved of CPU, paused, out of connections); on a
// single edge, the pod it concentrates on decides. Calls per request that rise on an edge (retries)
// point at the callee, calls that stop or start anew point at the caller; what a caller does more
// often after a callee's answers (ask again, turn elsewhere, stop) points at that callee; error and
// warning logs per request that rise point at their service, less what its callees' bursts explain;
// resource gauges that shift at the onset corroborate.
import { compareSegments, segmentSeries, type Bin } from './onset.js';
import { amountWeight, baselineRate, binomialSurprise, poissonSurprise, surpriseWeight } from './stats.js';
import { FINE_BIN_US } from '../core/time.js';
import type { CallSequenceRow, CallTreeRow, GaugeRow, LogLevelRow, LogLinkRow } from './queries.js';
import { gaugeShifts } from './gauges.js';

/** An onset up to this long before the window's start still counts as the window's. */
const ONSET_SLACK_US = 60_000_000;

/** The sums of a group of spans (a row of the call tree, or several added up). */
type Agg = Pick<CallTreeRow, 'n' | 'k' | 'sx' | 'sxx' | 'slx' | 'sllx' | 'sl' | 'sll' | 'sd' | 'kt'>;

const emptyAgg = (): Agg => ({ n: 0, k: 0, sx: 0, sxx: 0, slx: 0, sllx: 0, sl: 0, sll: 0, sd: 0, kt: 0 });
function addAgg(a: Agg, r: Agg): void {
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
const getOrMake = <K, V>(m: Map<K, V>, key: K, make: () => V): V => m.get(key) ?? m.set(key, make()).get(key)!;
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

const binsOf = (m: ReadonlyMap<number, Agg>, value: 'x' | 'd'): Bin[] =>
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
  const segs = segmentSeries(coarsen(observed));
  // The first worsening since the window began (a fault on one pod of several leaves its series
  // uneven, so later boundaries are the same episode).
  const onsetIdx = segs.findIndex((s, i) => i > 0 && s.from >= from - ONSET_SLACK_US && s.from < to && compareSegments(segs[i - 1]!, s).worse);
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

function sumOver(m: ReadonlyMap<number, Agg>, ts: readonly number[]): Agg {
  const a = emptyAgg();
  for (const t of ts) {
    const x = m.get(t);
    if (x) addAgg(a, x);
  }
  return a;
}

/** Surprise (-log10 p, one-sided) of a standard normal score. */
export function zSurprise(z: number): number {
  if (!(z > 0)) return 0;
  if (z < 1) return 0.2 * z;
  return Math.min(300, (z * z) / 2 / Math.LN10 + Math.log10(z * Math.sqrt(2 * Math.PI)));
}

/**
 * Welch's score of a mean that rose, from sums (x: exclusive time). `floored`: the after side's
 * variance is taken as at least the before side's, for a side of a few calls whose values may
 * happen to lie close together.
 */
function welch(b: Agg, a: Agg, floored = false): { z: number; mb: number; ma: number } {
  const mb = b.sx / b.n;
  const ma = a.sx / a.n;
  const vb = Math.max(0, b.sxx / b.n - mb * mb);
  const va = Math.max(floored ? vb : 0, a.sxx / a.n - ma * ma);
  const se = Math.sqrt(vb / b.n + va / a.n) + 1e-9;
  return { z: (ma - mb) / se, mb, ma };
}

export interface Evidence {
  service: string;
  /** What it rests on. */
  what: 'own_latency' | 'wire_latency' | 'caller_wait' | 'error_logs' | 'warning_logs' | 'calls_rise' | 'path_after' | 'calls_new' | 'calls_drop' | 'went_silent' | 'saturation' | 'restarts';
  /** The other end of an edge (wire time, calls); the gauge and pod of a resource shift. */
  peer: string | null;
  /** Per call or per request, before and after (µs for time; records or calls per request otherwise). */
  before: number;
  after: number;
  /** How sure, -log10 p. */
  surprise: number;
  /** Share of the diagnosed service's change per request it explains (latency), or a strength in [0, 1]. */
  weight: number;
  onset: number;
  /** Logs: the share of the window's records (of those whose trace left spans) on the diagnosed service's traces. */
  onTraces?: number;
}

/** Evidence that is a share of the diagnosed service's extra time (own work, or waiting on a call). */
export const explainsTime = (e: Evidence) => e.what === 'own_latency' || e.what === 'wire_latency' || e.what === 'caller_wait';

export interface StructureResult {
  /** The diagnosed service's requests: mean duration before and after its onset (µs), and the onset. */
  root: { before: number; after: number; onset: number; found: boolean; requests: number; baselineFrom: number; baselineTo: number } | null;
  /** Evidence by service, strongest first; `score` in [0, 1], `latency` the part of it that explains extra time. */
  services: { service: string; score: number; latency: number; evidence: Evidence[] }[];
}

/** The call tree's components and every service's requests per bin, read once for every service of a diagnosis. */
export interface PreparedStructure {
  from: number;
  to: number;
  comps: Map<string, Component>;
  /** Entry spans (requests received) per service and bin. */
  entries: Map<string, Map<number, Agg>>;
  /** Log level counts per service and bin. */
  logs: Map<string, Map<number, LogLevelRow>>;
  /** The call tree holds one trace in this many (its counts are of those; log counts are of all). */
  traceSample: number;
  gauges: readonly GaugeRow[];
  /** Each component's split, and each service's log splits, found once (they do not depend on the service diagnosed). */
  splits: Map<Component, Split | null>;
  logSplits: Map<string, Split | null>;
  /** Per caller: its requests' bins and steps (the answer each call followed, START for none; the last answer then END). */
  sequences: Map<string, { bin: number; answers: string[]; steps: [string, string][] }[]>;
  /** Per service and level or new template (linkKey): the window's records whose trace left spans, all and by a service on their trace. */
  logLinks: Map<string, { all: number; on: Map<string, number> }>;
}

export function prepareStructure(
  rows: readonly CallTreeRow[],
  logs: readonly LogLevelRow[],
  gauges: readonly GaugeRow[],
  from: number,
  to: number,
  traceSample = 1,
  sequences: readonly CallSequenceRow[] = [],
  links: readonly LogLinkRow[] = [],
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
  const logLinks = new Map<string, { all: number; on: Map<string, number> }>();
  for (const r of links) {
    const l = getOrMake(logLinks, linkKey(r.service, r.level === 'template' ? r.template! : r.level), () => ({ all: 0, on: new Map<string, number>() }));
    if (r.on === null) l.all += r.records;
    else l.on.set(r.on, (l.on.get(r.on) ?? 0) + r.records);
  }
  return { from, to, comps, entries, logs: byService, traceSample, gauges, splits: new Map(), logSplits: new Map(), sequences: bySeq, logLinks };
}

function componentSplit(p: PreparedStructure, c: Component): Split | null {
  if (!p.splits.has(c)) p.splits.set(c, mayHaveWorsened(c, p.from) ? splitSeries(binsOf(c.bins, 'x'), p.from, p.to) : null);
  return p.splits.get(c)!;
}

/**
 * Whether a component's time since a minute before the window is at least a tenth above its time
 * before (by mean or by typical value): the cheap test that spares segmenting the rest.
 */
function mayHaveWorsened(c: Component, from: number): boolean {
  const b = emptyAgg();
  const a = emptyAgg();
  for (const [t, x] of c.bins) addAgg(t >= from - ONSET_SLACK_US ? a : b, x);
  if (b.n === 0 || a.n === 0) return false;
  return a.sx / a.n >= 1.1 * (b.sx / b.n) || a.slx / a.n - b.slx / b.n >= Math.log(1.1);
}

interface Change {
  comp: Component;
  split: Split;
  /** How sure the rise is (log10 units): of the component's calls, or of one pod's (podSurprise). */
  surprise: number;
  mb: number;
  ma: number;
  /** µs per diagnosed request, after minus before. */
  perRequest: number;
}

/** A component's change since its onset: per call (Welch) and per request of the diagnosed service. */
function componentChange(p: PreparedStructure, c: Component, rootBins: ReadonlyMap<number, Agg>): Change | null {
  const split = componentSplit(p, c);
  if (!split || !split.before.length || !split.after.length) return null;
  const b = sumOver(c.bins, split.before);
  const a = sumOver(c.bins, split.after);
  if (b.n < 5 || a.n < 5) return null;
  const rb = sumOver(rootBins, split.before).n;
  const ra = sumOver(rootBins, split.after).n;
  if (rb <= 0 || ra <= 0) return null;
  const { z, mb, ma } = welch(b, a);
  const tail = c.kind === 'wire' ? Math.max(tailSurprise(b, a), windowTailSurprise(c, split, p.from)) : 0;
  return { comp: c, split, surprise: Math.max(zSurprise(z), tail, podSurprise(c, split)), mb, ma, perRequest: a.sx / ra - b.sx / rb };
}

/**
 * A component's sums before and after its split per pod key part (0: caller's pod, 1: callee's pod),
 * for pods with 3 calls or more before and `minAfter` after. Calls that reached no callee pod (no
 * answer, or no pod names) are left out: a few time-outs of seconds are no pod's, and where they
 * fell among the caller's pods is chance.
 */
function podSides(c: Component, split: Split, part: 0 | 1, minAfter = 3): Map<string, { b: Agg; a: Agg }> {
  const out = new Map<string, { b: Agg; a: Agg }>();
  for (const [key, bins] of c.pods) {
    if (key.endsWith('\u0000')) continue;
    const cur = getOrMake(out, key.split('\u0000')[part] ?? '', () => ({ b: emptyAgg(), a: emptyAgg() }));
    addAgg(cur.b, sumOver(bins, split.before));
    addAgg(cur.a, sumOver(bins, split.after));
  }
  for (const [pod, { b, a }] of out) if (b.n < 3 || a.n < minAfter) out.delete(pod);
  return out;
}

/**
 * How sure it is that more calls are slow (SLOW_CALL_US or more) than before: a binomial count
 * against the baseline's share. Packet loss makes a few calls in ten wait for a retransmission; the
 * mean of such a mix moves little against its own variance (Welch's z ~3 for 10% of calls 250 ms
 * slower), while the count of slow calls goes from about none to tens.
 */
function tailSurprise(b: Agg, a: Agg): number {
  return binomialSurprise(a.kt, a.n, baselineRate(b.kt, b.n));
}

/**
 * The slow calls' count judged from the window's start, when the component's onset was placed later:
 * a few slow calls in many are too sparse for the segmentation to place (it put a packet loss's onset
 * 90 s into the window, and the two slow calls before it into the baseline). Less log10 2 for the
 * second test.
 */
function windowTailSurprise(c: Component, split: Split, from: number): number {
  if (split.onset <= from) return 0;
  const b = emptyAgg();
  const a = emptyAgg();
  for (const [t, x] of c.bins) addAgg(t >= from ? a : b, x);
  return tailSurprise(b, a) - Math.log10(2);
}

/**
 * How sure the rise is on the pod where it is surest, less log10 of the pods tested (Bonferroni). A
 * fault on one pod of several (a slow network in front of it) leaves the others' calls as they were,
 * and their mix dilutes the component's own test: in a recorded-style case, calls to the slow pod of
 * three rose 0.9 → 309 ms (z 14) while the edge as a whole scored z 3.7.
 */
function podSurprise(c: Component, split: Split): number {
  if (c.kind !== 'wire') return 0;
  const sides = [...podSides(c, split, 0).values(), ...podSides(c, split, 1).values()];
  if (sides.length < 3) return 0; // one pod a side: the component's own test
  return Math.max(0, ...sides.map(({ b, a }) => Math.max(zSurprise(welch(b, a, true).z), tailSurprise(b, a)))) - Math.log10(sides.length);
}

/**
 * How much the change sits on one pod of a key part (0: caller's pod, 1: callee's pod): the largest
 * rise of a pod's mean over the next largest (Infinity when no other pod rose; 0 with fewer than two
 * pods). A pod with a single call since the onset counts: in a quiet window the pods that stayed
 * fast may see one or two calls each, and leaving them out left only the other side to judge.
 */
function concentration(ch: Change, part: 0 | 1): number {
  const deltas = [...podSides(ch.comp, ch.split, part, 1).values()].map(({ b, a }) => a.sx / a.n - b.sx / b.n).sort((x, y) => y - x);
  if (deltas.length < 2 || !(deltas[0]! > 0)) return 0;
  return deltas[1]! > 0 ? deltas[0]! / deltas[1]! : Infinity;
}

const SURE = 3;
const significant = (ch: Change) => ch.surprise >= SURE && ch.ma >= 1.25 * ch.mb && ch.perRequest > 0;

/**
 * Latency evidence: each significant component change as a share of the diagnosed service's extra
 * time per request, the wire's share blamed by the common node.
 */
function latencyEvidence(changes: readonly Change[], rootDelta: number, silent: ReadonlySet<string>): Evidence[] {
  const worse = changes.filter(significant);
  const total = Math.max(rootDelta, worse.reduce((s, c) => s + c.perRequest, 0), 1);
  const wires = worse.filter((c) => c.comp.kind === 'wire');
  const callersOf = new Map<string, Set<string>>();
  const calleesOf = new Map<string, Set<string>>();
  for (const w of wires) {
    getOrMake(callersOf, w.comp.callee!, () => new Set()).add(w.comp.service);
    getOrMake(calleesOf, w.comp.service, () => new Set()).add(w.comp.callee!);
  }
  const selfWorse = new Set(worse.filter((c) => c.comp.kind === 'self').map((c) => c.comp.service));
  const out: Evidence[] = [];
  for (const ch of worse) {
    const share = Math.min(1, ch.perRequest / total);
    const base = { before: ch.mb, after: ch.ma, surprise: ch.surprise, weight: share, onset: ch.split.onset };
    if (ch.comp.kind === 'self') {
      out.push({ ...base, service: ch.comp.service, what: 'own_latency', peer: null });
      continue;
    }
    const caller = ch.comp.service;
    const callee = ch.comp.callee!;
    let blameCallee: boolean;
    // A callee that went silent: the waits on calls to it are its own doing.
    if (silent.has(callee) || (callersOf.get(callee)?.size ?? 0) >= 2) blameCallee = true;
    else if ((calleesOf.get(caller)?.size ?? 0) >= 2) blameCallee = false;
    else {
      // On one pod (its rise at least 3 times any other's): the side where it sits more clearly.
      const [onCallee, onCaller] = [concentration(ch, 1), concentration(ch, 0)];
      blameCallee = onCallee >= 3 || onCaller >= 3 ? onCallee >= onCaller : !selfWorse.has(caller);
    }
    out.push(blameCallee ? { ...base, service: callee, what: 'wire_latency', peer: caller } : { ...base, service: caller, what: 'caller_wait', peer: callee });
  }
  return out;
}

/**
 * Calls per request of the diagnosed service on each edge, judged on the root's split: retries rise,
 * skipped calls drop. An edge's change counts beyond its caller's own: a retried service's calls
 * further down rise with it, and are its retries' echo, not news.
 */
function callEvidence(comps: ReadonlyMap<string, Component>, entries: ReadonlyMap<string, ReadonlyMap<number, Agg>>, rootBins: ReadonlyMap<number, Agg>, root: string, split: Split): Evidence[] {
  const rb = sumOver(rootBins, split.before).n;
  const ra = sumOver(rootBins, split.after).n;
  if (rb < 5 || ra < 5) return [];
  const edges = [...comps.values()]
    .filter((c) => c.kind === 'wire')
    .map((c) => ({ c, nb: sumOver(c.bins, split.before).n, na: sumOver(c.bins, split.after).n }));
  // Calls into each service per request, before and after: the caller's own change.
  const inbound = new Map<string, { nb: number; na: number }>();
  for (const e of edges) {
    const cur = getOrMake(inbound, e.c.callee!, () => ({ nb: 0, na: 0 }));
    cur.nb += e.nb;
    cur.na += e.na;
  }
  // Expected after: the edge's calls per call into its caller, before, times the calls into it after.
  const expectedOf = (c: Component, nb: number) => {
    const into = c.service === root ? { nb: rb, na: ra } : inbound.get(c.service);
    return into && into.nb >= 5 && into.na >= 5 ? (nb / into.nb) * into.na : null;
  };
  // A callee that serves a tenth of the calls its callers' traffic predicts, or fewer, went silent:
  // down or unreachable, not left by its callers. Served: its own entry spans; expected: from the
  // requests its callers served (so the callees of a silent service are not silent too). Without
  // span kinds or peer names its callers' unanswered calls may not be told from their own work; its
  // silence still names it.
  const served = (service: string, ts: readonly number[]) => (service === root ? (ts === split.before ? rb : ra) : sumOver(entries.get(service) ?? new Map(), ts).n);
  const silent = new Map<string, { expected: number; callers: string[] }>();
  for (const { c, nb } of edges) {
    const [sb, sa] = [served(c.service, split.before), served(c.service, split.after)];
    if (sb < 5 || sa < 5) continue;
    const cur = getOrMake(silent, c.callee!, () => ({ expected: 0, callers: [] }));
    cur.expected += (nb / sb) * sa;
    cur.callers.push(c.service);
  }
  for (const [callee, x] of silent) if (x.expected < 10 || served(callee, split.after) > 0.1 * x.expected) silent.delete(callee);
  const out: Evidence[] = [];
  for (const [callee, x] of silent) {
    const na = served(callee, split.after);
    const surprise = poissonSurprise(x.expected, Math.max(na, 0.5));
    if (surprise < SURE) continue;
    out.push({ service: callee, what: 'went_silent', peer: x.callers.join(', '), before: x.expected / ra, after: na / ra, surprise, weight: 0.9 * Math.min(1, (surprise - 2) / 7), onset: split.onset });
  }
  for (const { c, nb, na } of edges) {
    const expected = expectedOf(c, nb);
    if (expected === null || silent.has(c.callee!)) continue;
    const rise = na > expected;
    const surprise = rise ? poissonSurprise(na, Math.max(expected, 0.5)) : poissonSurprise(expected, Math.max(na, 0.5));
    const ratio = (na + 0.5) / (expected + 0.5);
    const effect = Math.min(1, Math.abs(Math.log2(ratio)) / 0.5);
    if (surprise < SURE || Math.abs(na - expected) < 5 || effect < 0.3) continue;
    // Counts are few in a short window: the weight grows from a surprise of 2 (p = 0.01) on.
    // A rise on an edge the caller already used is retries, the callee's doing; an edge that was
    // (nearly) unused is a new path (a fallback), taken where the change happens: the caller.
    const retries = rise && nb >= 3;
    const weight = (retries ? 0.9 : 0.45) * Math.min(1, Math.max(0, (surprise - 2) / 7)) * effect;
    out.push({
      service: retries ? c.callee! : c.service,
      what: retries ? 'calls_rise' : rise ? 'calls_new' : 'calls_drop',
      peer: retries ? c.service : c.callee,
      before: nb / rb,
      after: na / ra,
      surprise,
      weight,
      onset: split.onset,
    });
  }
  return out;
}

/**
 * The fine bins of a log split's two sides, with every bin of the root's requests in them: the
 * baseline from its first bin to the onset, the rest from the onset to the window's end.
 */
function exposure(rootBins: ReadonlyMap<number, Agg>, split: Split, to: number): [number[], number[]] {
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
const START = '\u0000start';
const END = '\u0000end';

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

/**
 * What callers do after an answer, judged on the root's split: per caller, each step from an answer
 * to the next call issued after it (stepsOf: the same callee again, another one, or no further
 * call), counted per answer of that callee, against the rate before. A step that became more
 * frequent is evidence for the callee whose answer came just before it: a caller that got an answer
 * it could not use asks again, turns to a fallback, or gives up, so a wrong return value shows in
 * its callers' paths while its own spans stay flat. Counted per step, three requests are news on an
 * edge whose requests never did so before, where a count of all calls (callEvidence) drowns in the
 * traffic's own variation (13 calls where 6.7 were expected: p = 0.02). A change from the request's
 * start is its caller's own (callEvidence says so). Calls to a callee that went silent are skipped.
 */
function pathEvidence(p: PreparedStructure, split: Split, silent: ReadonlySet<string>): Evidence[] {
  // The baseline is all that was read before the onset, not only the root's stable stretch: a step's
  // rate is per answer of its callee, whatever the traffic did, and a quiet callee answers a few
  // times in the three minutes a root's stretch may last. An earlier incident in it can only make
  // a new step less surprising.
  const out: Evidence[] = [];
  // Calls to a service that stopped answering leave no span of it: the steps around them changed
  // because the answer never came, which its silence already says. Their callers are skipped.
  const callersOfSilent = new Set<string>();
  for (const c of p.comps.values()) if (c.kind === 'wire' && silent.has(c.callee!)) callersOfSilent.add(c.service);
  for (const [caller, reqs] of p.sequences) {
    if (callersOfSilent.has(caller)) continue;
    // Per side: the answers of each callee x, and the steps x→y that followed them.
    const sides = [new Map<string, number>(), new Map<string, number>()] as const;
    for (const { bin, answers, steps } of reqs) {
      const m = bin >= split.onset && bin < p.to ? sides[1] : bin < split.onset ? sides[0] : null;
      if (!m) continue;
      for (const x of answers) m.set(x, (m.get(x) ?? 0) + 1);
      for (const [x, y] of steps) {
        const key = `${x}\u0000${y}`;
        m.set(key, (m.get(key) ?? 0) + 1);
      }
    }
    const [before, after] = sides;
    // Per answer x, the step after it that rose most surely.
    const best = new Map<string, Evidence>();
    const tested: { x: string; y: string; na: number; nb: number; fromA: number; fromB: number }[] = [];
    for (const [key, na] of after) {
      const i = key.indexOf('\u0000', 1);
      if (i < 0) continue;
      const x = key.slice(0, i);
      const y = key.slice(i + 1);
      if (x === START) continue;
      const fromB = before.get(x) ?? 0;
      const fromA = after.get(x) ?? 0;
      if (fromB < 5 || fromA < 3) continue;
      tested.push({ x, y, na, nb: before.get(key) ?? 0, fromA, fromB });
    }
    // Less log10 of the steps tested (Bonferroni): a caller that fans out to ten callees in any order
    // has a hundred kinds of step, and one of them rises by chance (p ~ 5e-4 in a fault-free window).
    const multiple = Math.log10(Math.max(1, tested.length));
    for (const { x, y, na, nb, fromA, fromB } of tested) {
      // Half a step of prior: a clean baseline bounds the step's rate by how often x was answered.
      const expected = ((nb + 0.5) / (fromB + 1)) * fromA;
      const surprise = poissonSurprise(na, expected) - multiple;
      const rise = na / fromA - nb / fromB;
      if (surprise < SURE || na < 3 || rise <= 0) continue;
      // A third of x's answers followed by the new step is a full effect; the weight grows from a
      // surprise of 2 on, as for the other counts of calls.
      const weight = 0.9 * Math.min(1, Math.max(0, (surprise - 2) / 7)) * Math.min(1, rise / 0.3);
      // The peer names the caller first (the lead reads its calls to x), then what it did next.
      const next = y === x ? 'asked it again' : y === END ? 'made no further call' : `turned to ${y}`;
      const e: Evidence = { service: x, what: 'path_after', peer: `${caller}: ${next}`, before: nb / fromB, after: na / fromA, surprise, weight, onset: split.onset };
      if ((best.get(x)?.weight ?? -1) < weight) best.set(x, e);
    }
    out.push(...best.values());
  }
  return out;
}

/**
 * Records and requests of a baseline with its worst fifth of minutes left out: a short burst the
 * segmentation could not tell from noise (a few records a minute) must not raise the bar a new
 * one is judged against.
 */
function trimmedBaseline(bins: readonly number[], records: (ts: readonly number[]) => number, requests: (ts: readonly number[]) => number): { k: number; requests: number } {
  const byMinute = new Map<number, number[]>();
  for (const t of bins) {
    const m = Math.floor(t / 60_000_000);
    getOrMake(byMinute, m, () => []).push(t);
  }
  const minutes = [...byMinute.values()].map((ts) => ({ k: records(ts), r: requests(ts) }));
  minutes.sort((a, b) => a.k / Math.max(1, a.r) - b.k / Math.max(1, b.r));
  const keep = minutes.length >= 5 ? minutes.slice(0, minutes.length - Math.floor(minutes.length / 5)) : minutes;
  return { k: keep.reduce((s, m) => s + m.k, 0), requests: keep.reduce((s, m) => s + m.r, 0) };
}

/** One service's count of one log level since its onset against its baseline, before it is weighed. */
interface LogCount {
  service: string;
  level: 'error' | 'warning';
  split: Split;
  kb: number;
  rb: number;
  ka: number;
  ra: number;
  expected: number;
  after: number[];
}

/** What log records are linked to traces by: a level, or the id of a template new since the baseline began. */
export type LogLinkKey = 'error' | 'warning' | number;
const linkKey = (service: string, k: LogLinkKey) => (typeof k === 'number' ? `${service}\u0000template\u0000${k}` : `${service}\u0000${k}`);

/**
 * Of a service's records in the window of the given levels or templates whose trace left spans, the
 * share on `root`'s traces; undefined below three such records (no trace ids, or traces never sent:
 * not known).
 */
export function onRootTraces(p: PreparedStructure, service: string, keys: readonly LogLinkKey[], root: string): number | undefined {
  let all = 0;
  let on = 0;
  for (const k of keys) {
    const l = p.logLinks.get(linkKey(service, k));
    all += l?.all ?? 0;
    on += l?.on.get(root) ?? 0;
  }
  return all >= 3 ? Math.min(1, on / all) : undefined;
}

/** How much log evidence counts by where it happened: fully on the diagnosed service's traces, 0.4 on none of them, fully when not known. */
export const traceWeight = (onTraces: number | undefined) => (onTraces === undefined ? 1 : 0.4 + 0.6 * onTraces);

/**
 * Error and warning logs per request of the diagnosed service, per service, each judged on its own
 * split; less the error records its callees' bursts explain. Records tied to traces weigh by how
 * many are on the diagnosed service's traces: a burst on a job's or another entry's traces is
 * news, but not about this service's requests (down to 0.4 of the weight when none is).
 */
function logEvidence(p: PreparedStructure, rootBins: ReadonlyMap<number, Agg>, root: string): Evidence[] {
  const counts: LogCount[] = [];
  for (const [service, bins] of p.logs) {
    for (const level of ['error', 'warning'] as const) {
      const count = (r: LogLevelRow) => (level === 'error' ? r.k : r.w);
      // The error level as a rate of the service's records: its onset and stable baseline.
      const key = `${service}\u0000${level}`;
      if (!p.logSplits.has(key)) {
        const series: Bin[] = [...bins.values()].sort((a, b) => a.bin - b.bin).map((r) => ({ t: r.bin, n: r.n, errors: count(r), sumLog: 0, sumLog2: 0 }));
        // Segmented only when the level's share of records since the window began is up by a tenth or more.
        const share = (side: Bin[]) => side.reduce((x, r) => x + r.errors, 0) / Math.max(1, side.reduce((x, r) => x + r.n, 0));
        const after = series.filter((r) => r.t >= p.from - ONSET_SLACK_US);
        const rose = after.some((r) => r.errors > 0) && share(after) >= 1.1 * share(series.filter((r) => r.t < p.from - ONSET_SLACK_US));
        p.logSplits.set(key, rose ? splitSeries(series, p.from, p.to) : null);
      }
      const split = p.logSplits.get(key)!;
      if (!split || !split.before.length) continue;
      const sum = (ts: readonly number[]) => ts.reduce((s, t) => s + (bins.get(t) ? count(bins.get(t)!) : 0), 0);
      // The requests exposed are the root's over the whole stretch, not only in the bins where the
      // service happened to log: a quiet service logs in a bin of ten, and counting the requests of
      // those bins alone made its clean baseline look a tenth as long as it was.
      const [before, after] = exposure(rootBins, split, p.to);
      const { k: kb, requests: rb } = trimmedBaseline(before, sum, (ts) => sumOver(rootBins, ts).n);
      const ra = sumOver(rootBins, after).n;
      if (rb < 5 || ra < 5) continue;
      // Half a record of prior: a baseline without one still bounds the rate by how long it was,
      // so four errors in 40 requests after none in 400 are news, after none in 10 they are not.
      counts.push({ service, level, split, kb, rb, ka: sum(after), ra, expected: ((kb + 0.5) / rb) * ra, after });
    }
  }
  // A caller logs an error of its own for a call that failed: its error records echo its callees'.
  // What its callees' error bursts account for (their records beyond expected, added up over the
  // services it calls) is theirs, as the causal walk subtracts what a service inherits; the rest is
  // its own. So the exception's service, not every caller above it, is named by the logs.
  const errorExcess = new Map(counts.filter((c) => c.level === 'error').map((c) => [c.service, Math.max(0, c.ka - c.expected)]));
  const callees = new Map<string, Set<string>>();
  for (const c of p.comps.values()) if (c.kind === 'wire') getOrMake(callees, c.service, () => new Set()).add(c.callee!);
  // Less log10 of the counts tested (Bonferroni): the largest of many services' fluctuations is
  // surprising by itself (a noisy service's steady errors, against a baseline whose worst minutes
  // are trimmed, reached p ~ 1e-3 in fault-free windows).
  const multiple = Math.log10(Math.max(1, counts.length));
  const out: Evidence[] = [];
  for (const c of counts) {
    const { service, level, kb, rb, ra, expected, after } = c;
    const inherited = [...(callees.get(service) ?? [])].reduce((s, d) => s + (errorExcess.get(d) ?? 0), 0);
    const ka = Math.max(0, c.ka - inherited);
    const surprise = poissonSurprise(ka, expected) - multiple;
    const excess = ka - expected;
    const effect = Math.min(1, Math.log2((ka + 1) / (expected + 1)) / 2);
    // Three records at least; how sure and how many beyond the expected count weigh the rest.
    if (surprise < SURE || ka < 3 || excess <= 0 || effect <= 0) continue;
    // The amount is judged against the service's own volume: 4 error records of a service that
    // served 13 requests since the onset (a third of its few calls threw) weigh as 16 of a busy
    // one's. Its requests, not its records: a stack trace shipped a line a record multiplies the
    // records, not the work done. A service without spans is judged by its records.
    const bins = p.logs.get(service)!;
    const served = sumOver(p.entries.get(service) ?? new Map(), after).n * p.traceSample;
    const volume = served > 0 ? served : after.reduce((s, t) => s + (bins.get(t)?.n ?? 0), 0);
    const half = Math.min(8, Math.max(2, volume / 4));
    const onTraces = onRootTraces(p, service, [level], root);
    const weight = (level === 'error' ? 0.85 : 0.25) * surpriseWeight(surprise) * amountWeight(excess, half) * (0.5 + 0.5 * effect) * traceWeight(onTraces);
    // Records per request: the requests counted are of the sampled traces.
    const perRequest = (k: number, r: number) => k / (r * p.traceSample);
    out.push({ service, what: level === 'error' ? 'error_logs' : 'warning_logs', peer: null, before: perRequest(kb, rb), after: perRequest(ka, ra), surprise, weight, onset: c.split.onset, ...(onTraces === undefined ? {} : { onTraces }) });
  }
  return out;
}

/** A pod's CPU or memory that rose at the onset, or restarts: corroboration for its service. */
function resourceEvidence(gauges: readonly GaugeRow[], onset: number, to: number): Evidence[] {
  const seen = new Set<string>();
  const out: Evidence[] = [];
  for (const g of gaugeShifts(gauges, onset, to)) {
    const key = `${g.service}\u0000${g.kind}`;
    if (seen.has(key)) continue; // the strongest pod of each service and kind
    seen.add(key);
    const restarts = g.kind === 'restarts';
    out.push({
      service: g.service,
      what: restarts ? 'restarts' : 'saturation',
      peer: `${g.metric} of ${g.pod || g.service}`,
      before: g.before,
      after: g.after,
      surprise: zSurprise(g.z),
      weight: restarts ? 0.5 : 0.45 * Math.min(1, (g.z - 3) / 6),
      onset,
    });
  }
  return out;
}

/** Everything the call tree, the log levels and the gauges say about `root`'s change, by service. */
export function structureFor(p: PreparedStructure, root: string): StructureResult {
  const { from, to } = p;
  const rootBins = p.entries.get(root) ?? new Map<number, Agg>();
  const rootSplit = splitSeries(binsOf(rootBins, 'd'), from, to);
  if (!rootSplit || !rootSplit.before.length) return { root: null, services: [] };
  const rb = sumOver(rootBins, rootSplit.before);
  const ra = sumOver(rootBins, rootSplit.after);
  if (rb.n < 5 || ra.n < 5) return { root: null, services: [] };
  const root_ = {
    before: rb.sd / rb.n,
    after: ra.sd / ra.n,
    onset: rootSplit.onset,
    found: rootSplit.found,
    requests: ra.n,
    baselineFrom: rootSplit.before[0]!,
    baselineTo: rootSplit.before[rootSplit.before.length - 1]! + FINE_BIN_US,
  };
  const changes = [...p.comps.values()].map((c) => componentChange(p, c, rootBins)).filter((c): c is Change => c !== null);
  // The root's split for counts: a window that starts at the onset is judged from its start.
  const countSplit = rootSplit.found ? rootSplit : { ...rootSplit, onset: from };
  const calls = callEvidence(p.comps, p.entries, rootBins, root, countSplit);
  const silent = new Set(calls.filter((e) => e.what === 'went_silent').map((e) => e.service));
  // Retries seen both as more calls on the edge and as a step repeated after its answers are one
  // piece of evidence: the surer one.
  for (const r of pathEvidence(p, countSplit, silent)) {
    const i = r.peer!.endsWith(': asked it again') ? calls.findIndex((e) => e.what === 'calls_rise' && e.service === r.service && e.peer === r.peer!.split(': ')[0]) : -1;
    if (i < 0) calls.push(r);
    else if (calls[i]!.weight < r.weight) calls[i] = r;
  }
  const evidence = [
    ...latencyEvidence(changes, root_.after - root_.before, silent),
    ...calls,
    ...logEvidence(p, rootBins, root),
    ...resourceEvidence(p.gauges, countSplit.onset, to),
  ];
  const by = new Map<string, Evidence[]>();
  for (const e of evidence) getOrMake(by, e.service, () => []).push(e);
  const services = [...by].map(([service, ev]) => {
    ev.sort((x, y) => y.weight - x.weight || x.what.localeCompare(y.what));
    // Latency shares add up (own work and the wire blamed on it); other kinds of evidence corroborate.
    const latency = Math.min(1, ev.filter(explainsTime).reduce((s, e) => s + e.weight * surpriseWeight(e.surprise), 0));
    const others = ev.filter((e) => !explainsTime(e)).map((e) => e.weight);
    const score = 1 - [latency, ...others].reduce((prod, w) => prod * (1 - Math.min(0.99, w)), 1);
    return { service, score, latency, evidence: ev };
  });
  services.sort((x, y) => y.score - x.score || x.service.localeCompare(y.service));
  return { root: root_, services };
}

/** The analysis of one service from the rows (prepareStructure, then structureFor). */
export function analyseStructure(callTree: readonly CallTreeRow[], logs: readonly LogLevelRow[], gauges: readonly GaugeRow[], root: string, from: number, to: number): StructureResult {
  return structureFor(prepareStructure(callTree, logs, gauges, from, to), root);
}

