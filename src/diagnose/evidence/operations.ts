// Errors and latency of the operations, attributed along the call graph (span kinds, status and peer
// attributes where the telemetry has them). Errors and latency travel up: a failing leaf makes its
// callers' client calls fail, then their own requests, up to the diagnosed service. For every
// service downstream of it the walk weighs what the service shows (its own requests' errors or p95
// beyond the baseline, or — when it no longer answers — what its callers see of their calls to it)
// against what it inherits (the same on its own calls further down). A service whose own share is
// most of what it shows is a candidate; the others are symptoms, listed for the path.
//
// Each operation is judged against the 5-minute series of its baseline (baseline.ts): errors as a
// binomial whose variance is widened by the baseline buckets' own dispersion, latency by how many
// window calls exceed the baseline's p95 (about 5% if nothing changed) and by how far the window's
// p95 sits from the baseline buckets' p95s in their own spread — the surer of the two only when both
// agree, so a busy operation's small steady drift is not news.
import { downstream, type Model, type OpStat } from '../model.js';
import { SPAN_KIND } from '../../pipeline/operation.js';
import { binomialSurprise, baselineRate, dispersion, tSurprise } from '../stats.js';
import { inReference, seriesKey } from '../baseline.js';
import { LEADS } from '../leads.js';
import { SIGNIFICANT, ms, round, type Candidate } from './candidate.js';
import type { EvidenceInputs } from './inputs.js';

/** A service answers for what it shows when at least this share of it is its own, not inherited. */
const OWN = 0.5;

/** Errors of an operation: binomial against the baseline rate, widened by the baseline buckets' dispersion. */
function errorSurprise(m: Model, o: OpStat): number {
  if (o.k <= 0) return 0;
  const all = m.series.get('error_rate')?.get(seriesKey(o.service, o.operation)) ?? [];
  const buckets = m.bounds.reference ? inReference(all, m.bounds.reference) : all.filter((b) => o.base.onset_us === null || b.t < o.base.onset_us);
  const rate = baselineRate(o.base.k, o.base.n);
  const phi = dispersion(buckets.map((b) => b.k), buckets.map((b) => b.n * rate));
  return binomialSurprise(o.k / phi, o.n / phi, rate);
}

/** Latency of an operation: exceedances of the baseline p95, and the window p95 against the baseline buckets' p95s; the lesser. */
function latencySurprise(m: Model, o: OpStat): number {
  if (!o.lat) return 0;
  const all = (m.series.get('latency_p95')?.get(seriesKey(o.service, o.operation)) ?? []).filter((b) => b.value > 0);
  const buckets = m.bounds.reference ? inReference(all, m.bounds.reference) : all.filter((b) => o.base.onset_us === null || b.t < o.base.onset_us);
  if (buckets.length < 3) return o.lat.surprise;
  const logs = buckets.map((b) => Math.log(b.value));
  const mu = logs.reduce((s, x) => s + x, 0) / logs.length;
  // Bucket p95s of a steady operation still vary by a few percent (baseline.ts's noise floor).
  const sd = Math.max(0.05, Math.sqrt(logs.reduce((s, x) => s + (x - mu) ** 2, 0) / (logs.length - 1)));
  const t = (Math.log(Math.max(o.p95, 1)) - mu) / (sd * Math.sqrt(1 + 1 / logs.length));
  return Math.min(o.lat.surprise, tSurprise(t, logs.length - 1));
}

const errSig = (m: Model, o: OpStat) => o.err.excess >= 1 && errorSurprise(m, o) >= SIGNIFICANT;
const latSig = (m: Model, o: OpStat) => o.lat !== null && o.lat.fraction >= 0.1 && latencySurprise(m, o) >= SIGNIFICANT;

interface Blame {
  service: string;
  node: string;
  external: boolean;
  op: OpStat;
  share: number;
  viaCallers: boolean;
}

/** Per node of the diagnosed service's subgraph: what it shows, what it inherits, its own share. */
function attribute(m: Model, root: string, signal: 'error_rate' | 'latency_p95'): Blame[] {
  const nodes = downstream(m, root);
  const inSub = new Set(nodes.map((n) => n.service));
  const size = (o: OpStat) => (signal === 'error_rate' ? (errSig(m, o) ? o.err.excess : 0) : latSig(m, o) ? Math.max(0, o.p95 - o.base.p95) : 0);
  const combine = (xs: number[]) => (signal === 'error_rate' ? xs.reduce((s, x) => s + x, 0) : Math.max(0, ...xs));
  const out: Blame[] = [];
  for (const { service: node } of nodes) {
    const ops = m.byService.get(node) ?? [];
    // The service's requests: its server and consumer spans when it has them (an internal span
    // under a failing request fails too, and would count the same errors twice), else the rest.
    const requests = ops.filter((o) => o.kind === SPAN_KIND.SERVER || o.kind === SPAN_KIND.CONSUMER);
    const entry = requests.length ? requests : ops.filter((o) => !o.client);
    const calls = ops.filter((o) => o.client && o.callee !== null && o.callee !== node);
    const seenBy = [...(m.callers.get(node) ?? [])].filter((c) => inSub.has(c)).flatMap((c) => (m.byService.get(c) ?? []).filter((o) => o.client && o.callee === node));
    const shows = combine(entry.map(size));
    const seen = combine(seenBy.map(size));
    const inherited = combine(calls.map(size));
    const total = Math.max(shows, seen);
    if (total <= 0) continue;
    // Callers see much more than the service shows of itself: it stopped answering, or the network.
    const viaCallers = seen > 1.5 * shows;
    const pool = viaCallers ? seenBy : entry;
    const op = pool.reduce((best, o) => (size(o) > size(best) ? o : best), pool[0]!);
    const external = !m.known.has(node);
    out.push({ service: external ? op.service : node, node, external, op, share: Math.max(0, total - inherited) / total, viaCallers });
  }
  return out;
}

/** Errors and latency attributed along the call graph: a candidate per node that owns its change, a symptom per one that inherits it. */
export function operationEvidence(x: EvidenceInputs): Candidate[] {
  const m = x.model;
  const b = m.bounds;
  const out: Candidate[] = [];
  const blames = { error_rate: attribute(m, x.root, 'error_rate'), latency_p95: attribute(m, x.root, 'latency_p95') };
  // Errors and latency of one node often move together. When its own spans are slow, its callers'
  // errors are their time-outs: latency explains them. When only its callers see it (it stopped
  // answering), the failed calls explain their wait for a time-out.
  const viaCallers = (signal: 'error_rate' | 'latency_p95', node: string) => blames[signal].find((b) => b.node === node)?.viaCallers;
  const explainsOther = (isErr: boolean, node: string): string[] => {
    const [mine, other] = isErr ? [viaCallers('error_rate', node), viaCallers('latency_p95', node)] : [viaCallers('latency_p95', node), viaCallers('error_rate', node)];
    if (mine === undefined || other === undefined) return [];
    return (isErr ? other === true : other === true && !mine) ? [isErr ? 'op_latency' : 'op_errors'] : [];
  };
  for (const signal of ['error_rate', 'latency_p95'] as const) {
    for (const bl of blames[signal]) {
      const o = bl.op;
      const isErr = signal === 'error_rate';
      const surprise = isErr ? errorSurprise(m, o) : latencySurprise(m, o);
      const own = bl.share >= OWN;
      const isRoot = bl.node === x.root;
      const before = isErr ? round(o.err.before) : round(o.base.p95, 0);
      const after = isErr ? round(o.err.after) : round(o.p95, 0);
      const what = isErr ? `error rate ${before}% → ${after}% (${o.k} errors in ${o.n} calls)` : `p95 ${ms(before)} → ${ms(after)} (${o.above} of ${o.n} calls above the baseline p95)`;
      const where = bl.external
        ? `${bl.node}, called by ${o.service} as ${o.operation}`
        : bl.viaCallers
          ? `${bl.service}, as its callers see it (${o.service}: ${o.operation})${(m.byService.get(bl.service) ?? []).length ? '' : '; it sent no spans in the window'}`
          : `${bl.service} ${o.operation}`;
      const role = own ? (isRoot ? 'its own' : 'the likely cause') : `a symptom: ${Math.round((1 - bl.share) * 100)}% of it comes from services it calls`;
      out.push({
        service: bl.service,
        evidence: isErr ? 'errors' : 'latency',
        what: isErr ? 'op_errors' : 'op_latency',
        kind: isRoot ? (isErr ? 'error_spike' : 'latency_regression') : 'dependency_failure',
        signal,
        operation: o.operation,
        before,
        after,
        surprise,
        onset: isErr ? (o.base.onset_us ?? o.first_error_us ?? b.from) : (o.base.onset_us ?? b.from),
        summary: `${where}: ${what}; ${role}`,
        drill_down_sql: isErr ? LEADS.errorSpans(b, o.service, o.operation) : LEADS.slowSpans(b, o.service, o.operation),
        ...(own ? {} : { context: true }),
        ...(explainsOther(isErr, bl.node).length ? { explains: explainsOther(isErr, bl.node) } : {}),
      });
    }
  }
  return out;
}
