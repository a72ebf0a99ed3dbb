// Time: where the diagnosed service's requests spend more of it. Each component of the call tree
// (calltree.ts) — a service's own work, or the wire and queue time of the calls from one service to
// another — is judged on its own split (levelRise: against its own bin-to-bin variation), and on
// its slow calls (a packet loss delays a few calls in ten, which a mean hides) and its pods (a fault
// on one pod of several). Wire time is blamed by the common node: extra time on calls from several
// callers to one callee is the callee's (a slow network or queue in front of it, whatever its own
// spans say); on calls from one caller to several callees the caller's (starved of CPU, paused, out
// of connections); on a single edge, the pod it concentrates on decides.
import { addAgg, componentSplit, emptyAgg, levelRise, sumOver, type Agg, type Component, type PreparedStructure, type Split } from '../calltree.js';
import { baselineRate, binomialSurprise } from '../stats.js';
import { LEADS } from '../leads.js';
import { SIGNIFICANT, getOrMake, ms, type Candidate } from './candidate.js';
import type { EvidenceInputs } from './inputs.js';

/** A change smaller than this factor of a component's time per call is no practical change (onset.ts's latency factor). */
const PRACTICAL_FACTOR = 1.25;
/** Changes whose onsets lie within this of each other are one episode: the fault reaches a caller's edges within a minute or two. */
const EPISODE_US = 120_000_000;

interface Change {
  comp: Component;
  split: Split;
  surprise: number;
  mb: number;
  ma: number;
  /** µs per diagnosed request, after minus before. */
  perRequest: number;
}

/** A component's change since its onset: per call, against its own variation, and per request of the diagnosed service. */
function componentChange(p: PreparedStructure, c: Component, rootBins: ReadonlyMap<number, Agg>): Change | null {
  const split = componentSplit(p, c);
  if (!split || !split.before.length || !split.after.length) return null;
  const rise = levelRise(c.bins, split);
  if (!rise || rise.before.n < 3 || rise.after.n < 3) return null;
  // Per request of the diagnosed service where it has requests on both sides (NaN where it has not).
  const rb = sumOver(rootBins, split.before).n;
  const ra = sumOver(rootBins, split.after).n;
  const { before: b, after: a } = rise;
  const tail = c.kind === 'wire' ? Math.max(tailSurprise(b, a), windowTailSurprise(c, split, p.from)) : 0;
  return { comp: c, split, surprise: Math.max(rise.surprise, tail, podSurprise(c, split)), mb: rise.mb, ma: rise.ma, perRequest: rb > 0 && ra > 0 ? a.sx / ra - b.sx / rb : NaN };
}

/**
 * A component's sums before and after its split per pod key part (0: caller's pod, 1: callee's pod),
 * for pods with 3 calls or more before and `minAfter` after. Calls that reached no callee pod (no
 * answer, or no pod names) are left out: a few time-outs of seconds are no pod's, and where they
 * fell among the caller's pods is chance.
 */
function podSides(c: Component, split: Split, part: 0 | 1, minAfter = 3): Map<string, { bins: Map<number, Agg>; b: Agg; a: Agg }> {
  const out = new Map<string, { bins: Map<number, Agg>; b: Agg; a: Agg }>();
  for (const [key, bins] of c.pods) {
    if (key.endsWith('\u0000')) continue;
    const cur = getOrMake(out, key.split('\u0000')[part] ?? '', () => ({ bins: new Map<number, Agg>(), b: emptyAgg(), a: emptyAgg() }));
    for (const [t, x] of bins) addAgg(getOrMake(cur.bins, t, emptyAgg), x);
    addAgg(cur.b, sumOver(bins, split.before));
    addAgg(cur.a, sumOver(bins, split.after));
  }
  for (const [pod, { b, a }] of out) if (b.n < 3 || a.n < minAfter) out.delete(pod);
  return out;
}

/**
 * How sure it is that more calls are slow (SLOW_CALL_US or more) than before: a binomial count
 * against the baseline's share. Packet loss makes a few calls in ten wait for a retransmission; the
 * mean of such a mix moves little against its own variance, while the count of slow calls goes from
 * about none to tens.
 */
function tailSurprise(b: Agg, a: Agg): number {
  return binomialSurprise(a.kt, a.n, baselineRate(b.kt, b.n));
}

/**
 * The slow calls' count judged from the window's start, when the component's onset was placed later:
 * a few slow calls in many are too sparse for the segmentation to place. Less log10 2 for the
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
 * and their mix dilutes the component's own test.
 */
function podSurprise(c: Component, split: Split): number {
  if (c.kind !== 'wire') return 0;
  const sides = [...podSides(c, split, 0).values(), ...podSides(c, split, 1).values()];
  if (sides.length < 3) return 0; // one pod a side: the component's own test
  return Math.max(0, ...sides.map(({ bins, b, a }) => Math.max(levelRise(bins, split)?.surprise ?? 0, tailSurprise(b, a)))) - Math.log10(sides.length);
}

/**
 * How much the change sits on one pod of a key part (0: caller's pod, 1: callee's pod): the largest
 * rise of a pod's mean over the next largest (Infinity when no other pod rose; 0 with fewer than two
 * pods). A pod with a single call since the onset counts.
 */
function concentration(ch: Change, part: 0 | 1): number {
  const deltas = [...podSides(ch.comp, ch.split, part, 1).values()].map(({ b, a }) => a.sx / a.n - b.sx / b.n).sort((x, y) => y - x);
  if (deltas.length < 2 || !(deltas[0]! > 0)) return 0;
  return deltas[1]! > 0 ? deltas[0]! / deltas[1]! : Infinity;
}

/**
 * Every component of the prepared call tree that rose, surely and by a practical factor (and, where
 * the diagnosed service's requests can tell, costs them more time per request).
 */
export function componentChanges(p: PreparedStructure, rootBins: ReadonlyMap<number, Agg>): Change[] {
  const out: Change[] = [];
  for (const c of p.comps.values()) {
    const ch = componentChange(p, c, rootBins);
    if (ch && ch.surprise >= SIGNIFICANT && ch.ma >= PRACTICAL_FACTOR * ch.mb && !(ch.perRequest <= 0)) out.push(ch);
  }
  return out;
}

/**
 * Latency candidates: each component that rose, as its service's own work or as wire time blamed by
 * the common node; when the diagnosed service's requests slowed, only those explaining a share of
 * that. `silent`: callees that stopped answering (the waits on calls to them are theirs).
 */
export function latencyEvidence(x: EvidenceInputs): Candidate[] {
  const change = x.change;
  const worse = componentChanges(x.tree, x.tree.entries.get(x.root) ?? new Map());
  const rootDelta = change ? change.after - change.before : 0;
  const symptom = change !== null && change.surprise >= SIGNIFICANT && rootDelta > 0;
  const total = Math.max(rootDelta, worse.reduce((s, c) => s + (c.perRequest || 0), 0), 1);
  // The common node of the edges that worsened together: changes whose onsets lie apart are
  // separate episodes (an earlier fault's aftermath beside the current one), not one cause.
  const together = (a: Change, b: Change) => Math.abs(a.split.onset - b.split.onset) <= EPISODE_US;
  const wires = worse.filter((c) => c.comp.kind === 'wire');
  const callersOf = (ch: Change) => new Set(wires.filter((w) => w.comp.callee === ch.comp.callee && together(w, ch)).map((w) => w.comp.service));
  const calleesOf = (ch: Change) => new Set(wires.filter((w) => w.comp.service === ch.comp.service && together(w, ch)).map((w) => w.comp.callee!));
  const selfWorse = (ch: Change) => worse.some((c) => c.comp.kind === 'self' && c.comp.service === ch.comp.service && together(c, ch));
  const w = { from: x.bounds.from, to: x.bounds.to };
  const out: Candidate[] = [];
  for (const ch of worse) {
    const share = Math.min(1, ch.perRequest / total);
    const part = symptom && share > 0 ? `; ${Math.round(share * 100)}% of ${x.root}'s extra ${ms(rootDelta)} per request` : '';
    const since = `, since ${new Date(ch.split.onset / 1000).toISOString()}`;
    const base = {
      evidence: ch.comp.kind === 'self' ? ('latency' as const) : ('wire' as const),
      signal: 'latency_p95',
      operation: null,
      before: Math.round(ch.mb),
      after: Math.round(ch.ma),
      surprise: ch.surprise,
      onset: ch.split.onset,
    };
    const lead = { from: Math.min(w.from, ch.split.onset), to: w.to };
    if (ch.comp.kind === 'self') {
      const service = ch.comp.service;
      out.push({
        ...base,
        service,
        what: 'own_latency',
        kind: service === x.root ? 'latency_regression' : 'dependency_failure',
        summary: `${service}: its own work per call ${ms(ch.mb)} → ${ms(ch.ma)}${part}${since}`,
        drill_down_sql: LEADS.ownTime(lead, service),
      });
      continue;
    }
    const caller = ch.comp.service;
    const callee = ch.comp.callee!;
    let blameCallee: boolean;
    if (x.silent.has(callee) || callersOf(ch).size >= 2) blameCallee = true;
    else if (calleesOf(ch).size >= 2) blameCallee = false;
    else {
      // On one pod (its rise at least 3 times any other's): the side where it sits more clearly.
      const [onCallee, onCaller] = [concentration(ch, 1), concentration(ch, 0)];
      blameCallee = onCallee >= 3 || onCaller >= 3 ? onCallee >= onCaller : !selfWorse(ch);
    }
    out.push(
      blameCallee
        ? {
            ...base,
            service: callee,
            what: 'wire_latency',
            peer: caller,
            kind: 'dependency_failure',
            summary: `${callee}: calls to it from ${caller} wait ${ms(ch.mb)} → ${ms(ch.ma)} beyond its own spans (network or queue in front of it)${part}${since}`,
            drill_down_sql: LEADS.callWaits(lead, caller, callee),
          }
        : {
            ...base,
            service: caller,
            what: 'caller_wait',
            peer: callee,
            kind: 'saturation',
            summary: `${caller}: its calls to ${callee} wait ${ms(ch.mb)} → ${ms(ch.ma)} beyond the callee's own spans (the caller is starved: CPU, pauses, connection pool)${part}${since}`,
            drill_down_sql: LEADS.callWaits(lead, caller, callee),
          },
    );
  }
  return out;
}
