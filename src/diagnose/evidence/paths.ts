// What callers do with a service, per request of the diagnosed one: calls per request on each edge
// (a rise on an edge already in use is retries, the callee's doing; an edge (nearly) unused before
// is a new path and a drop a path no longer taken, both the caller's), a callee that went silent,
// and what callers do after its answers (ask again, turn to another service, stop): a wrong return
// value leaves its service's spans flat and shows only there. Counts are judged against their own
// count before (a short baseline is no certainty) and their bin-to-bin variation in it
// (quasi-Poisson), so a bursty edge's swings are not news.
import { END, START, sumOver, type Agg, type Component, type PreparedStructure, type Split } from '../calltree.js';
import { dispersion, poissonSurprise, rateRatioSurprise } from '../stats.js';
import { LEADS } from '../leads.js';
import { SIGNIFICANT, getOrMake, round, type Candidate } from './candidate.js';
import type { EvidenceInputs } from './inputs.js';

/** A change of calls per request smaller than this (|log2 ratio|) is no practical change. */
const PRACTICAL_LOG2 = 0.15;
/** Edges in use a caller needs before their shared rise is taken for its own: with two, one retried callee would be half the evidence. */
const MIN_COMMON_EDGES = 3;

interface Edge {
  c: Component;
  nb: number;
  na: number;
}

function edgesOf(p: PreparedStructure, split: Split): Edge[] {
  return [...p.comps.values()].filter((c) => c.kind === 'wire').map((c) => ({ c, nb: sumOver(c.bins, split.before).n, na: sumOver(c.bins, split.after).n }));
}

/** Requests a service served on one side of the split: the root's, or its own entry spans. */
function servedBy(p: PreparedStructure, rootBins: ReadonlyMap<number, Agg>, root: string, service: string, ts: readonly number[]): number {
  return sumOver(service === root ? rootBins : (p.entries.get(service) ?? new Map()), ts).n;
}

/**
 * Per caller with at least MIN_COMMON_EDGES edges in use, the median of their calls per request
 * after over before, where above 1: when a caller calls every callee more per request at once, its
 * requests changed (another mix, its own retries), and no one callee is being retried. The median,
 * so one callee retried among several does not move it.
 */
function commonRise(edges: readonly Edge[], intoOf: (caller: string) => { nb: number; na: number } | undefined): Map<string, number> {
  const ratios = new Map<string, number[]>();
  for (const { c, nb, na } of edges) {
    const into = intoOf(c.service);
    if (!into || into.nb < 5 || into.na < 5 || nb < 3) continue;
    getOrMake(ratios, c.service, () => []).push((na + 0.5) / ((nb * into.na) / into.nb + 0.5));
  }
  const out = new Map<string, number>();
  for (const [caller, rs] of ratios) {
    if (rs.length < MIN_COMMON_EDGES) continue;
    const sorted = rs.sort((a, b) => a - b);
    const mid = sorted.length / 2;
    const median = sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    if (median > 1) out.set(caller, median);
  }
  return out;
}

/**
 * Callees that serve a tenth of the calls their callers' traffic predicts, or fewer: down or
 * unreachable, not left by their callers. Served: their own entry spans; expected: from the
 * requests their callers served (so the callees of a silent service are not silent too).
 */
export function silentCallees(x: Pick<EvidenceInputs, 'tree' | 'change' | 'root'>): Map<string, { expected: number; served: number; callers: string[] }> {
  const out = new Map<string, { expected: number; served: number; callers: string[] }>();
  const ch = x.change;
  if (!ch) return out;
  const split = ch.countSplit;
  for (const { c, nb } of edgesOf(x.tree, split)) {
    const [sb, sa] = [servedBy(x.tree, ch.bins, x.root, c.service, split.before), servedBy(x.tree, ch.bins, x.root, c.service, split.after)];
    if (sb < 5 || sa < 5) continue;
    const cur = getOrMake(out, c.callee!, () => ({ expected: 0, served: 0, callers: [] as string[] }));
    cur.expected += (nb / sb) * sa;
    cur.callers.push(c.service);
  }
  for (const [callee, v] of out) {
    v.served = servedBy(x.tree, ch.bins, x.root, callee, split.after);
    if (v.expected < 10 || v.served > 0.1 * v.expected || poissonSurprise(v.expected, Math.max(v.served, 0.5)) < SIGNIFICANT) out.delete(callee);
  }
  return out;
}

/** Calls per request of the diagnosed service on each edge, and callees that went silent. */
export function callEvidence(x: EvidenceInputs): Candidate[] {
  const ch = x.change;
  if (!ch) return [];
  const p = x.tree;
  const split = ch.countSplit;
  const rb = sumOver(ch.bins, split.before).n;
  const ra = sumOver(ch.bins, split.after).n;
  if (rb < 5 || ra < 5) return [];
  const w = { from: Math.min(x.bounds.from, split.onset), to: x.bounds.to };
  const out: Candidate[] = [];
  for (const [callee, v] of silentCallees(x)) {
    out.push({
      service: callee,
      evidence: 'paths',
      what: 'went_silent',
      peer: v.callers.join(', '),
      kind: 'dependency_failure',
      signal: 'error_rate',
      operation: null,
      before: round(v.expected / ra),
      after: round(v.served / ra),
      surprise: poissonSurprise(v.expected, Math.max(v.served, 0.5)),
      onset: split.onset,
      summary: `${callee}: it stopped answering: calls into it per request ${round(v.expected / ra)} expected from the traffic of ${v.callers.join(', ')} → ${round(v.served / ra)} (down or unreachable)`,
      drill_down_sql: LEADS.callWaits(w, v.callers[0]!, callee),
    });
  }
  const edges = edgesOf(p, split);
  // Calls into each service, before and after: the caller's own change.
  const inbound = new Map<string, { nb: number; na: number }>();
  for (const e of edges) {
    const cur = getOrMake(inbound, e.c.callee!, () => ({ nb: 0, na: 0 }));
    cur.nb += e.nb;
    cur.na += e.na;
  }
  const intoOf = (caller: string) => (caller === x.root ? { nb: rb, na: ra } : inbound.get(caller));
  const common = commonRise(edges, intoOf);
  for (const { c, nb, na } of edges) {
    if (x.silent.has(c.callee!)) continue;
    // Expected after: the edge's calls per call into its caller, before, times the calls into it
    // after, times what every edge of the caller rose by (its request mix, not this callee).
    const into = intoOf(c.service);
    if (!into || into.nb < 5 || into.na < 5) continue;
    const perCall = nb / into.nb;
    const mix = common.get(c.service) ?? 1;
    const expected = perCall * into.na * mix;
    // Its own variation: the edge's calls per bin of the baseline against the caller's traffic then.
    const intoBins = c.service === x.root ? ch.bins : null;
    const phi = intoBins ? dispersion(split.before.map((t) => c.bins.get(t)?.n ?? 0), split.before.map((t) => perCall * (intoBins.get(t)?.n ?? 0))) : 1;
    // Judged against the edge's own count before, not an expectation taken as exact: a baseline of
    // a few calls says little about the rate it stands for.
    const { rise: up, fall: down } = rateRatioSurprise(na, into.na * mix, nb, into.nb, phi);
    const rise = na > expected;
    const surprise = rise ? up : down;
    if (surprise < SIGNIFICANT || Math.abs(na - expected) < 5 || Math.abs(Math.log2((na + 0.5) / (expected + 0.5))) < PRACTICAL_LOG2) continue;
    const retries = rise && nb >= 3;
    const what = retries ? 'calls_rise' : rise ? 'calls_new' : 'calls_drop';
    const service = retries ? c.callee! : c.service;
    const text =
      what === 'calls_rise'
        ? `calls to it from ${c.service} per request ${round(nb / rb)} → ${round(na / ra)} (retries)`
        : what === 'calls_new'
          ? `it began calling ${c.callee}: ${round(nb / rb)} → ${round(na / ra)} per request (a new path)`
          : `its calls to ${c.callee} per request ${round(nb / rb)} → ${round(na / ra)} (a path it stopped taking)`;
    out.push({
      service,
      evidence: 'paths',
      what,
      peer: retries ? c.service : c.callee!,
      kind: 'call_pattern_change',
      signal: 'trace_shape',
      operation: null,
      before: round(nb / rb, 3),
      after: round(na / ra, 3),
      surprise,
      onset: split.onset,
      summary: `${service}: ${text}, since ${new Date(split.onset / 1000).toISOString()}`,
      drill_down_sql: LEADS.callWaits(w, c.service, c.callee!),
    });
  }
  return out;
}

/**
 * What callers do after an answer, judged on the diagnosed service's split: per caller, each step
 * from an answer to the next call issued after it (calltree.ts stepsOf: the same callee again,
 * another one, or no further call), counted per answer of that callee, against the rate before. A
 * step that became more frequent is evidence for the callee whose answer came just before it. The
 * baseline is all that was read before the onset: a step's rate is per answer of its callee, and a
 * quiet callee answers a few times in three minutes; an earlier incident in it can only make a new
 * step less surprising. Less log10 of the steps tested (Bonferroni): a fan-out to ten callees in any
 * order has a hundred kinds of step. Calls to a callee that went silent are skipped.
 */
export function pathEvidence(x: EvidenceInputs): Candidate[] {
  const ch = x.change;
  if (!ch) return [];
  const p = x.tree;
  const split = ch.countSplit;
  const callersOfSilent = new Set<string>();
  for (const c of p.comps.values()) if (c.kind === 'wire' && x.silent.has(c.callee!)) callersOfSilent.add(c.service);
  // A caller whose own requests fail more stops after an answer because it failed: its errors say
  // so (a call to a callee that never answered leaves no span to follow the last answer).
  const failing = new Set(x.model.ops.filter((o) => !o.client && o.err.surprise >= SIGNIFICANT && o.err.after > o.err.before).map((o) => o.service));
  const out: Candidate[] = [];
  for (const [caller, reqs] of p.sequences) {
    if (callersOfSilent.has(caller)) continue;
    const sides = [new Map<string, number>(), new Map<string, number>()] as const;
    for (const { bin, answers, steps } of reqs) {
      const m = bin >= split.onset && bin < p.to ? sides[1] : bin < split.onset ? sides[0] : null;
      if (!m) continue;
      for (const a of answers) m.set(a, (m.get(a) ?? 0) + 1);
      for (const [a, b] of steps) m.set(`${a}\u0000${b}`, (m.get(`${a}\u0000${b}`) ?? 0) + 1);
    }
    const [before, after] = sides;
    const tested: { a: string; b: string; na: number; nb: number; fromA: number; fromB: number }[] = [];
    for (const [key, na] of after) {
      const i = key.indexOf('\u0000', 1);
      if (i < 0) continue;
      const a = key.slice(0, i);
      const b = key.slice(i + 1);
      if (a === START) continue;
      const fromB = before.get(a) ?? 0;
      const fromA = after.get(a) ?? 0;
      if (fromB < 5 || fromA < 3) continue;
      tested.push({ a, b, na, nb: before.get(key) ?? 0, fromA, fromB });
    }
    const multiple = Math.log10(Math.max(1, tested.length));
    const best = new Map<string, Candidate>();
    for (const { a, b, na, nb, fromA, fromB } of tested) {
      // Half a step of prior: a clean baseline bounds the step's rate by how often `a` answered.
      const expected = ((nb + 0.5) / (fromB + 1)) * fromA;
      const surprise = poissonSurprise(na, expected) - multiple;
      if (surprise < SIGNIFICANT || na < 3 || na / fromA <= nb / fromB || (b === END && failing.has(caller))) continue;
      // Asking again or turning elsewhere is a verdict on the answer: the callee's. Stopping right
      // after it is the caller's own end as often: an exception thrown after the call looks the same.
      const stops = b === END;
      const blamed = a;
      const next = b === a ? 'asked it again' : stops ? 'made no further call' : `turned to ${b}`;
      const since = `since ${new Date(split.onset / 1000).toISOString()}`;
      const c: Candidate = {
        service: blamed,
        evidence: 'paths',
        what: 'path_after',
        peer: `${caller}: ${next}`,
        kind: 'call_pattern_change',
        signal: 'trace_shape',
        operation: null,
        before: round(nb / fromB, 3),
        after: round(na / fromA, 3),
        surprise,
        onset: split.onset,
        summary: stops
          ? `${caller}: its requests end right after ${a}'s answer on ${Math.round((nb / fromB) * 100)}% → ${Math.round((na / fromA) * 100)}% of them (it stops there: an exception after the call, or an answer it cannot use), ${since}`
          : `${a}: after its answers ${caller} ${next} on ${Math.round((nb / fromB) * 100)}% → ${Math.round((na / fromA) * 100)}% of them (its answers look wrong or unusable to the caller), ${since}`,
        drill_down_sql: LEADS.callWaits({ from: Math.min(x.bounds.from, split.onset), to: x.bounds.to }, caller, a),
      };
      if ((best.get(blamed)?.surprise ?? -1) < surprise) best.set(blamed, c);
    }
    out.push(...best.values());
  }
  return out;
}
