// One ranking for every kind of evidence. Candidates (evidence/*.ts) carry a surprise on one scale:
// -log10 of how probable their change would be in clean history. Per service, the best candidate of
// each kind is taken (two statistics of one kind say one thing), capped, and the kinds are combined
// by Fisher's method as independent tests (as many of the strongest as make it surer):
// corroboration adds, a weak kind costs nothing, and no kind has a weight. Changes (deploys, restarts, new error types) only
// corroborate a service that has significant evidence of another kind. Services are ranked by the
// combined surprise; a finding's score is a monotone map of it. Only services in the diagnosed
// service's own world count: what its calls reach (in the window and the call tree's range) and what
// shares their pods; another application's trouble in the same store is never a cause.
import { SIGNIFICANT, EVIDENCE_KINDS, type Candidate, type EvidenceKind } from './evidence/candidate.js';
import { fisherSurprise } from './stats.js';
import { MAX_FINDINGS, coverageFinding, incidentFindings, severityOf, type Finding } from './findings.js';
import type { EvidenceInputs } from './evidence/inputs.js';
import { downstream } from './model.js';

/** A surprise beyond this is not more believable: the tests' models are not that exact. */
const CAP = 30;
/**
 * score = S / (S + HALF): a combined surprise of HALF (p = 1e-8) scores 0.5. Noise that passes a
 * module's significance line (S of 3 to 6) stays low; one kind at the cap is high; two are critical.
 */
const HALF = 8;

export const scoreOf = (surprise: number) => surprise / (surprise + HALF);

/** Order of kinds for ties: what explains comes before what it explains (a hot spot before the latency it causes; failed calls before their wait). */
const TIE_ORDER: readonly EvidenceKind[] = ['profiles', 'errors', 'gen_ai', 'latency', 'wire', 'paths', 'log_events', 'log_levels', 'gauges', 'changes'];
const tieRank = (k: EvidenceKind) => TIE_ORDER.indexOf(k) >= 0 ? TIE_ORDER.indexOf(k) : EVIDENCE_KINDS.length;

/**
 * The diagnosed service's world: services its calls reach (the window's call graph and the call
 * tree's components, downstream of it) and services sharing a pod with one of them.
 */
export function scopeOf(x: Pick<EvidenceInputs, 'root' | 'model' | 'tree' | 'deployments'>, callees: ReadonlyMap<string, ReadonlySet<string>> = directCallees(x)): Set<string> {
  const scope = reachable(callees, x.root).add(x.root);
  // Downstream in the model as well (external peers are blamed on their callers, who are in it).
  for (const n of downstream(x.model, x.root)) scope.add(n.service);
  const podsOf = new Map<string, Set<string>>();
  for (const r of x.deployments) if (r.k8s_pod_name) (podsOf.get(r.k8s_pod_name) ?? podsOf.set(r.k8s_pod_name, new Set()).get(r.k8s_pod_name)!).add(r.service_name);
  for (const services of podsOf.values()) if ([...services].some((s) => scope.has(s))) for (const s of services) scope.add(s);
  return scope;
}

/** Who calls whom directly: the window's call graph and the call tree's edges. */
function directCallees(x: Pick<EvidenceInputs, 'model' | 'tree'>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const link = (a: string, b: string) => (out.get(a) ?? out.set(a, new Set()).get(a)!).add(b);
  for (const [a, bs] of x.model.callees) for (const b of bs) link(a, b);
  for (const c of x.tree.comps.values()) if (c.kind === 'wire') link(c.service, c.callee!);
  return out;
}

/**
 * Error records and new events of a caller whose direct callee has significant evidence of its own
 * are the callee's trouble echoed (a caller logs the failed call, the timeout, the answer it could
 * not use): they become context, so the caller does not lead on what its callee did. An event that
 * vanished stays the caller's (its own code stopped running).
 */
export function markEchoes(candidates: readonly Candidate[], callees: ReadonlyMap<string, ReadonlySet<string>>): Candidate[] {
  const troubled = new Set(candidates.filter((c) => !c.context && c.evidence !== 'changes' && c.surprise >= SIGNIFICANT).map((c) => c.service));
  return candidates.map((c) => {
    const echo = c.evidence === 'log_levels' || (c.evidence === 'log_events' && c.what === 'event_appeared');
    const of = echo && !c.context ? [...(callees.get(c.service) ?? [])].filter((d) => d !== c.service && troubled.has(d)) : [];
    return of.length ? { ...c, context: true, summary: `${c.summary}; an echo of ${of.sort().join(', ')}, which it calls` } : c;
  });
}

/**
 * Fisher's combination of the strongest kinds, as many as make it surer: a weak kind beside strong
 * ones would cost the combination a degree of freedom for next to no evidence.
 */
function combined(surprises: readonly number[]): number {
  const sorted = [...surprises].sort((a, b) => b - a);
  let best = 0;
  for (let k = 1; k <= sorted.length; k++) best = Math.max(best, fisherSurprise(sorted.slice(0, k)));
  return best;
}

export interface Ranked {
  service: string;
  /** Combined surprise of its evidence. */
  surprise: number;
  /** Its strongest candidate's surprise, uncapped: what orders services whose combined surprise is the same (at the cap). */
  strongest: number;
  candidates: Candidate[];
}

/** The services `from` reaches through its calls, directly or further down. */
function reachable(callees: ReadonlyMap<string, ReadonlySet<string>>, from: string): Set<string> {
  const seen = new Set<string>();
  const queue = [from];
  while (queue.length) {
    for (const c of callees.get(queue.shift()!) ?? []) {
      if (seen.has(c)) continue;
      seen.add(c);
      queue.push(c);
    }
  }
  return seen;
}

/**
 * Services with evidence, most surprising first, each with its candidates in order. Of two equally
 * surprising services (both at the cap) where one calls the other, the callee goes first: a shift
 * travels up the calls, so the callee's explains its caller's.
 */
export function rankServices(candidates: readonly Candidate[], scope: ReadonlySet<string>, callees: ReadonlyMap<string, ReadonlySet<string>> = new Map()): Ranked[] {
  const by = new Map<string, Candidate[]>();
  for (const c of candidates) if (!c.context && scope.has(c.service)) (by.get(c.service) ?? by.set(c.service, []).get(c.service)!).push(c);
  const out: Ranked[] = [];
  for (const [service, list] of by) {
    const best = new Map<EvidenceKind, number>();
    for (const c of list) best.set(c.evidence, Math.max(best.get(c.evidence) ?? 0, Math.min(CAP, c.surprise)));
    const significant = new Set([...best].filter(([k, s]) => k !== 'changes' && s >= SIGNIFICANT).map(([k]) => k));
    if (!significant.size) continue;
    // Changes corroborate the kinds they speak for, when the service has them.
    const changes = Math.max(0, ...list.filter((c) => c.evidence === 'changes' && (!c.corroborates || c.corroborates.some((k) => significant.has(k)))).map((c) => Math.min(CAP, c.surprise)));
    const kinds = [...[...significant].map((k) => best.get(k)!), ...(changes > 0 ? [changes] : [])];
    const ordered = list
      .filter((c) => (c.evidence === 'changes' ? !c.corroborates || c.corroborates.some((k) => significant.has(k)) : c.surprise >= SIGNIFICANT))
      .sort((a, b) => Math.min(CAP, b.surprise) - Math.min(CAP, a.surprise) || tieRank(a.evidence) - tieRank(b.evidence) || a.summary.localeCompare(b.summary));
    // Corroboration goes after the evidence it corroborates; what explains another goes before it.
    ordered.sort((a, b) => Number(a.evidence === 'changes') - Number(b.evidence === 'changes'));
    for (let i = ordered.length - 1; i > 0; i--) {
      const c = ordered[i]!;
      if (!c.explains?.length) continue;
      const j = ordered.findIndex((d) => c.explains!.includes(d.what));
      if (j >= 0 && j < i) ordered.splice(j, 0, ...ordered.splice(i, 1));
    }
    out.push({ service, surprise: combined(kinds), strongest: Math.max(...ordered.filter((c) => c.evidence !== 'changes').map((c) => c.surprise)), candidates: ordered });
  }
  const reach = new Map(out.map((r) => [r.service, reachable(callees, r.service)]));
  const below = (a: Ranked, b: Ranked) => (reach.get(b.service)!.has(a.service) ? -1 : reach.get(a.service)!.has(b.service) ? 1 : 0);
  return out.sort((a, b) => b.surprise - a.surprise || below(a, b) || b.strongest - a.strongest || a.service.localeCompare(b.service));
}

const toFinding = (c: Candidate, score: number): Finding => ({
  kind: c.kind,
  severity: severityOf(score),
  summary: c.summary,
  service: c.service,
  operation: c.operation,
  signal: c.signal,
  before: c.before,
  after: c.after,
  score: Math.round(score * 1000) / 1000,
  drill_down_sql: c.drill_down_sql,
});

/** The block's findings: ranked services' evidence, symptoms along the path, incidents, the coverage gap. */
export function rankFindings(x: EvidenceInputs, candidates: readonly Candidate[], coverage: { spans: boolean; logs: boolean; metrics: boolean; profiles: boolean }): { findings: Finding[]; total: number; scope: Set<string> } {
  const callees = directCallees(x);
  const scope = scopeOf(x, callees);
  const out: Finding[] = [];
  candidates = markEchoes(candidates, callees);
  const ranked = rankServices(candidates, scope, callees);
  const place = new Map(ranked.map((r, i) => [r.service, i]));
  for (const r of ranked) {
    const lead = scoreOf(r.surprise);
    const deploy = r.candidates.find((c) => c.evidence === 'changes' && c.kind === 'deploy_regression');
    r.candidates.forEach((c, i) => {
      // The lead carries the service's combined evidence; the rest their own, below it.
      const score = i === 0 ? lead : Math.min(lead - 0.001 * i, scoreOf(Math.min(CAP, c.surprise)));
      const f = toFinding(c, score);
      if (i === 0 && deploy && deploy !== c && (c.evidence === 'errors' || c.evidence === 'latency')) {
        f.kind = 'deploy_regression';
        f.summary += `; began with ${deploy.summary.slice(deploy.service.length + 2)}`;
      }
      out.push(f);
    });
  }
  // Context (changes a service inherits along the path; a deploy, restart or new error type of a
  // service with no evidence of its own): listed, never above info.
  const listed = new Set(ranked.flatMap((r) => r.candidates));
  const isContext = (c: Candidate) => (c.context && c.surprise >= SIGNIFICANT) || (c.evidence === 'changes' && c.surprise > 0 && !listed.has(c));
  for (const c of candidates) if (scope.has(c.service) && isContext(c)) out.push(toFinding(c, Math.min(0.24, scoreOf(c.surprise) / 2)));
  out.push(...incidentFindings(x.bounds, x.anomalies, x.deploys, scope, out));
  out.push(...coverageFinding(x.bounds, x.root, coverage));
  for (const f of out) {
    f.score = Math.round(Math.max(0, Math.min(1, f.score)) * 1000) / 1000;
    f.severity = severityOf(f.score);
  }
  const placeOf = (f: Finding) => place.get(f.service) ?? ranked.length;
  out.sort((a, b) => b.score - a.score || placeOf(a) - placeOf(b) || a.kind.localeCompare(b.kind) || a.service.localeCompare(b.service) || (a.operation ?? '').localeCompare(b.operation ?? ''));
  return { findings: out.slice(0, MAX_FINDINGS), total: out.length, scope };
}
