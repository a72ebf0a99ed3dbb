// Findings: what is wrong, who is to blame, ranked by a score in [0, 1]. Pure functions of the model.
//
// Cause, not symptom. Errors and latency travel up the call graph: a failing leaf makes its callers'
// client calls fail, then their own requests, up to the entry service an agent asks about. For every
// service downstream of the diagnosed one the walk weighs what the service shows (its own requests'
// errors or latency beyond the baseline, or — when it no longer answers — what its callers see of
// their calls to it) against what it inherits (the same beyond-baseline errors or latency on its own
// calls further down). What is left is its own share; the deepest service whose own change explains
// the symptom keeps the whole score, and every upstream symptom is kept in the list, scored by its
// small own share, so the agent sees the path. Other signals — anomaly rows, deploys, new error types,
// error logs, profiles, model finish reasons — add findings and corroborate.
import { downstream, type Model, type OpStat } from './model.js';
import { SPAN_KIND } from '../pipeline/operation.js';
import { amountWeight, errorShift, poissonSurprise, surpriseWeight } from './stats.js';
import { errorOnset, seriesKey } from './baseline.js';
import type { AnomalyRow, Bucket, DeploymentRow, FinishHistogram, GenAiBeforeRow, GenAiRow, ProfileRow, TemplateRow, WindowLogRow } from './queries.js';
import { isoFromUs, BUCKET_US } from '../core/time.js';
import { LEADS } from './leads.js';
import { newInstances, type DeployEvent } from './events.js';
import { groupShifts, incidentId } from '../detect/incidents.js';
import { explainsTime, traceWeight, type Evidence, type LogLinkKey, type StructureResult } from './structure.js';

import type { FindingKind, Incident, Severity } from './block-schema.js';
export type { Incident, Severity };

export { FINDING_KINDS, type FindingKind } from './block-schema.js';

export interface Finding {
  kind: FindingKind;
  severity: Severity;
  summary: string;
  /** The service at fault (may be another than the one diagnosed). */
  service: string;
  operation: string | null;
  signal: string;
  before: number | null;
  after: number | null;
  score: number;
  drill_down_sql?: string;
  incident?: Incident;
}

/** Findings kept per block (the rest are counted in `findings_total`). */
export const MAX_FINDINGS = 20;

/** Severity bands of a score; the README defines each. */
export function severityOf(score: number): Severity {
  if (score >= 0.85) return 'critical';
  if (score >= 0.65) return 'high';
  if (score >= 0.45) return 'medium';
  if (score >= 0.25) return 'low';
  return 'info';
}

const SIGNIFICANT = 3; // surprise: p < 0.001
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const clamp01 = (x: number) => Math.max(0, Math.min(1, x));
const ms = (us: number) => (us >= 10_000 ? `${Math.round(us / 1000)} ms` : `${round(us / 1000, 1)} ms`);

/** A finding's strength from its evidence: how improbable, how much, how large a change. */
export function strength(surprise: number, amount: number, amountHalf: number, effect: number): number {
  return 0.3 + 0.7 * surpriseWeight(surprise) * amountWeight(amount, amountHalf) * (0.4 + 0.6 * clamp01(effect));
}

const errSig = (o: OpStat) => o.err.surprise >= SIGNIFICANT && o.err.excess >= 1;
const latSig = (o: OpStat) => o.lat !== null && o.lat.surprise >= SIGNIFICANT && o.lat.fraction >= 0.1;
const latDelta = (o: OpStat) => (latSig(o) ? Math.max(0, o.p95 - o.base.p95) : 0);

interface Blame {
  /** The service blamed (an external peer is blamed on the service calling it). */
  service: string;
  /** Node of the call graph (a service, or an external peer's name). */
  node: string;
  external: boolean;
  /** The operation whose numbers are the evidence. */
  op: OpStat;
  /** Own change (errors beyond baseline, or µs of p95) and its share of what the node shows. */
  own: number;
  share: number;
  depth: number;
  viaCallers: boolean;
}

/** Per node of the diagnosed service's subgraph: what it shows, what it inherits, its own share. */
function attribute(m: Model, root: string, signal: 'error_rate' | 'latency_p95'): Blame[] {
  const nodes = downstream(m, root);
  const depthOf = new Map(nodes.map((n) => [n.service, n.depth]));
  const inSub = (s: string) => depthOf.has(s);
  const size = (o: OpStat) => (signal === 'error_rate' ? (errSig(o) ? o.err.excess : 0) : latDelta(o));
  const combine = (xs: number[]) => (signal === 'error_rate' ? xs.reduce((s, x) => s + x, 0) : Math.max(0, ...xs));
  const out: Blame[] = [];
  for (const { service: node, depth } of nodes) {
    const ops = m.byService.get(node) ?? [];
    // The service's requests: its server and consumer spans when it has them (an internal span
    // under a failing request fails too, and would count the same errors twice), else the rest.
    const requests = ops.filter((o) => o.kind === SPAN_KIND.SERVER || o.kind === SPAN_KIND.CONSUMER);
    const entry = requests.length ? requests : ops.filter((o) => !o.client);
    const calls = ops.filter((o) => o.client && o.callee !== null && o.callee !== node);
    const seenBy = [...(m.callers.get(node) ?? [])].filter(inSub).flatMap((c) => (m.byService.get(c) ?? []).filter((o) => o.client && o.callee === node));
    const shows = combine(entry.map(size));
    const seen = combine(seenBy.map(size));
    const inherited = combine(calls.map(size));
    const total = Math.max(shows, seen);
    if (total <= 0) continue;
    const own = Math.max(0, total - inherited);
    // Callers see much more than the service shows of itself: it stopped answering, or the network.
    const viaCallers = seen > 1.5 * shows;
    const pool = viaCallers ? seenBy : entry;
    const op = pool.reduce((best, o) => (size(o) > size(best) ? o : best), pool[0]!);
    const external = !m.known.has(node);
    out.push({ service: external ? op.service : node, node, external, op, own, share: own / total, depth, viaCallers });
  }
  return out;
}

export interface FindingInputs {
  model: Model;
  root: string;
  deploys: readonly DeployEvent[];
  /** Versions, instances and pods per service (SQL.deployments rows). */
  deployments: readonly DeploymentRow[];
  /** Window error types not seen before the window: service → error_type → count. */
  newErrorTypes: Map<string, Map<string, number>>;
  windowLogs: readonly WindowLogRow[];
  templates: ReadonlyMap<number, TemplateRow>;
  profiles: readonly ProfileRow[];
  /** Model calls in the window (SQL.genAiWindow) and before it, per finish reasons (SQL.genAiBefore). */
  genAi: readonly GenAiRow[];
  genAiBefore: readonly GenAiBeforeRow[];
  anomalies: readonly AnomalyRow[];
  coverage: { spans: boolean; logs: boolean; metrics: boolean; profiles: boolean };
  /** When each service first reported (µs): a service newer than the baseline has nothing "new" to show. */
  firstSeen(service: string): number | undefined;
  /** What the call tree and log levels say (structure.ts). */
  structure: StructureResult;
  /** Of a service's records in the window of these levels or new templates, the share on the diagnosed service's traces (structure.ts onRootTraces). */
  onTraces(service: string, keys: readonly LogLinkKey[]): number | undefined;
}

export function buildFindings(inp: FindingInputs): { findings: Finding[]; total: number } {
  const sub = new Set(downstream(inp.model, inp.root).map((n) => n.service));
  const blames = { error_rate: attribute(inp.model, inp.root, 'error_rate'), latency_p95: attribute(inp.model, inp.root, 'latency_p95') };
  const out: Finding[] = [
    ...callGraphFindings(inp, blames),
    ...newErrorTypeFindings(inp, sub, blames.error_rate),
    ...logBurstFindings(inp, sub),
    ...newPatternFindings(inp, sub),
    ...hotSpots(inp, sub),
    ...genAiFindings(inp, sub),
  ];

  // Leads in proportion to the symptom: once the call tree says where the diagnosed service's change
  // comes from, a latency finding weighs by its service's part in it, however sure its own test is.
  // How much the call tree's word counts grows with its strongest evidence (none below 0.1, all from
  // 0.3): at low traffic the evidence is weaker but still says where the time went.
  const st = inp.structure;
  const top = st.services[0]?.score ?? 0;
  const trust = clamp01((top - 0.1) / 0.2);
  if (trust > 0) {
    const part = new Map(st.services.map((x) => [x.service, x.latency / top]));
    for (const f of out) if (f.signal === 'latency_p95') f.score *= 1 - 0.65 * trust * (1 - (part.get(f.service) ?? 0));
  }
  out.push(...structureFindings(inp));

  // A hot spot explains the same service's latency: it goes first.
  for (const f of out) {
    if (f.kind !== 'resource_hot_spot' || f.score < 0.45) continue;
    for (const g of out) if (g.service === f.service && g.signal === 'latency_p95' && g.score >= f.score) f.score = Math.min(1, g.score + 0.02);
  }

  out.push(...incidentFindings(inp, sub, out));
  out.push(...coverageFindings(inp));

  for (const f of out) {
    f.score = round(clamp01(f.score), 3);
    f.severity = severityOf(f.score);
  }
  out.sort((x, y) => y.score - x.score || x.kind.localeCompare(y.kind) || x.service.localeCompare(y.service) || (x.operation ?? '').localeCompare(y.operation ?? ''));
  return { findings: out.slice(0, MAX_FINDINGS), total: out.length };
}

/** Something is new against what the service did before; for a service that began reporting since the baseline began, everything is. */
const established = (inp: FindingInputs, service: string) => (inp.firstSeen(service) ?? -Infinity) < inp.model.bounds.newSince;

/** Errors and latency, attributed along the call graph: one finding per blamed node and signal. */
function callGraphFindings(inp: FindingInputs, blamesOf: Record<'error_rate' | 'latency_p95', Blame[]>): Finding[] {
  const { model: m, root } = inp;
  const b = m.bounds;
  const out: Finding[] = [];
  const deployOf = (service: string, onset: number) =>
    inp.deploys.find((d) => d.service === service && d.at_us >= onset - 3 * BUCKET_US && d.at_us <= b.to) ?? null;
  const anomalyFor = (service: string, operation: string, signal: string) =>
    inp.anomalies.some((r) => r.service_name === service && r.operation === operation && r.signal === signal);

  // Which evidence each blamed node's error and latency findings rest on: its own spans, or only its callers'.
  const seen = new Map<string, { finding: Finding; viaCallers: boolean }>();
  for (const signal of ['error_rate', 'latency_p95'] as const) {
    for (const bl of blamesOf[signal]) {
      const o = bl.op;
      const isErr = signal === 'error_rate';
      const raw = isErr
        ? strength(o.err.surprise, bl.own, 10, (o.err.after - o.err.before) / 5)
        : strength(o.lat!.surprise, o.lat!.excess, 20, Math.log2(Math.max(1, o.p95 / Math.max(1, o.base.p95))));
      const onset = isErr ? (o.base.onset_us ?? o.first_error_us ?? b.from) : (o.base.onset_us ?? b.from);
      const deploy = bl.external ? null : deployOf(bl.service, onset);
      let score = raw * Math.max(bl.share, 0.15);
      if (anomalyFor(o.service, o.operation, signal)) score += 0.03;
      if (isErr && (inp.newErrorTypes.get(bl.service)?.size ?? 0) > 0) score += 0.03;
      if (deploy && bl.share >= 0.5) score += 0.08;
      // Instances that started around the onset without a deploy: crashes or restarts.
      const restarted = deploy || bl.external ? 0 : newInstances(inp.deployments, bl.service, onset - 2 * BUCKET_US, b.to, b.lookFrom);
      if (restarted && bl.share >= 0.5) score += 0.04;
      const isRoot = bl.node === root;
      const kind = deploy && bl.share >= 0.5 ? 'deploy_regression' : isRoot ? (isErr ? 'error_spike' : 'latency_regression') : 'dependency_failure';
      const before = isErr ? round(o.err.before) : round(o.base.p95, 0);
      const after = isErr ? round(o.err.after) : round(o.p95, 0);
      const what = isErr ? `error rate ${before}% → ${after}% (${o.k} errors in ${o.n} calls)` : `p95 ${ms(before)} → ${ms(after)} (${o.above} of ${o.n} calls above the baseline p95)`;
      const where = bl.external
        ? `${bl.node}, called by ${o.service} as ${o.operation}`
        : bl.viaCallers
          ? `${bl.service}, as its callers see it (${o.service}: ${o.operation})${(m.byService.get(bl.service) ?? []).length ? '' : '; it sent no spans in the window'}`
          : `${bl.service} ${o.operation}`;
      const role = bl.share >= 0.5 ? (isRoot ? 'its own' : 'the likely cause') : `a symptom: ${Math.round((1 - bl.share) * 100)}% of it comes from services it calls`;
      out.push({
        kind,
        severity: 'info',
        summary: `${where}: ${what}; ${role}${deploy ? `; began with deploy of ${deploy.version ?? deploy.image}` : ''}${restarted ? `; ${restarted} instance${restarted > 1 ? 's' : ''} (re)started since` : ''}`,
        service: bl.service,
        operation: o.operation,
        signal,
        before,
        after,
        score: clamp01(score),
        drill_down_sql: isErr ? LEADS.errorSpans(b, o.service, o.operation) : LEADS.slowSpans(b, o.service, o.operation),
      });
      seen.set(`${signal}\u0000${bl.node}`, { finding: out[out.length - 1]!, viaCallers: bl.viaCallers });
    }
  }
  // Errors and latency of one node often move together. When its own spans are slow, the callers'
  // errors are their time-outs: latency is the cause. When only its callers see it (it stopped
  // answering), the failed calls are: errors first, their wait for a time-out second.
  for (const [key, err] of seen) {
    if (!key.startsWith('error_rate\u0000')) continue;
    const lat = seen.get('latency_p95' + key.slice('error_rate'.length));
    if (!lat || err.finding.score < 0.45 || lat.finding.score < 0.45) continue;
    if (lat.viaCallers) err.finding.score = Math.max(err.finding.score, lat.finding.score + 0.01);
    else if (err.viaCallers) lat.finding.score = Math.max(lat.finding.score, err.finding.score + 0.01);
  }
  return out;
}

/** Where log records happened, for a summary: nothing when not known. */
const tracedText = (onTraces: number | undefined) => (onTraces === undefined ? '' : `, ${Math.round(onTraces * 100)}% of them on the diagnosed service's traces`);

const EVIDENCE_TEXT: Record<Evidence['what'], (e: Evidence) => string> = {
  own_latency: (e) => `its own work per call ${ms(e.before)} → ${ms(e.after)}`,
  wire_latency: (e) => `calls to it from ${e.peer} wait ${ms(e.before)} → ${ms(e.after)} beyond its own spans (network or queue in front of it)`,
  caller_wait: (e) => `its calls to ${e.peer} wait ${ms(e.before)} → ${ms(e.after)} beyond the callee's own spans (the caller is starved: CPU, pauses, connection pool)`,
  error_logs: (e) => `error logs per request ${round(e.before, 3)} → ${round(e.after, 3)}${tracedText(e.onTraces)}`,
  warning_logs: (e) => `warning logs per request ${round(e.before, 3)} → ${round(e.after, 3)}${tracedText(e.onTraces)}`,
  calls_rise: (e) => `calls to it from ${e.peer} per request ${round(e.before, 2)} → ${round(e.after, 2)} (retries)`,
  path_after: (e) => `after its answers ${(e.peer ?? '').replace(': ', ' ')} on ${round(e.before * 100, 0)}% → ${round(e.after * 100, 0)}% of them (its answers look wrong or unusable to the caller)`,
  calls_new: (e) => `it began calling ${e.peer}: ${round(e.before, 2)} → ${round(e.after, 2)} per request (a new path)`,
  calls_drop: (e) => `its calls to ${e.peer} per request ${round(e.before, 2)} → ${round(e.after, 2)} (a path it stopped taking)`,
  went_silent: (e) => `it stopped answering: calls into it per request ${round(e.before, 2)} expected from the traffic of ${e.peer} → ${round(e.after, 2)} (down or unreachable)`,
  saturation: (e) => `${e.peer} ${round(e.before, 3)} → ${round(e.after, 3)}`,
  restarts: (e) => `${e.peer} ${round(e.before, 0)} → ${round(e.after, 0)} (restarted)`,
};

type Win = { from: number; to: number };
// Calls into the blamed service (its peer is the caller) or out of it (its peer is the callee).
const callsIn = (w: Win, service: string, e: Evidence) => LEADS.callWaits(w, e.peer!, service);
const callsOut = (w: Win, service: string, e: Evidence) => LEADS.callWaits(w, service, e.peer!);
const EVIDENCE_LEAD: Record<Evidence['what'], (w: Win, service: string, e: Evidence) => string> = {
  own_latency: (w, service) => LEADS.ownTime(w, service),
  wire_latency: callsIn,
  calls_rise: callsIn,
  path_after: (w, service, e) => LEADS.callWaits(w, e.peer!.split(': ')[0]!, service),
  caller_wait: callsOut,
  calls_new: callsOut,
  calls_drop: callsOut,
  went_silent: (w, service, e) => LEADS.callWaits(w, e.peer!.split(', ')[0]!, service),
  error_logs: (w, service) => LEADS.errorLogs(w, service),
  warning_logs: (w, service) => LEADS.errorLogs(w, service),
  saturation: (w, service) => LEADS.resourceGauges(w, service),
  restarts: (w, service) => LEADS.resourceGauges(w, service),
};

/**
 * One finding per service the call tree and log levels point at: what its change explains of the
 * diagnosed service's change, since the onset found in the data.
 */
function structureFindings(inp: FindingInputs): Finding[] {
  const { root, services } = inp.structure;
  if (!root) return [];
  const b = inp.model.bounds;
  const out: Finding[] = [];
  for (const s of services.slice(0, 6)) {
    // Every service with significant evidence is listed, weighed by its score: in a thin window a
    // few error records are the whole evidence (3 where 0.06 were expected, p < 1e-4, weighs 0.08),
    // and the causal walk lists its significant findings from 0.3 up as well.
    if (!(s.score > 0)) continue;
    const e = s.evidence[0]!;
    const w = { from: Math.min(b.from, e.onset), to: b.to };
    const latency = explainsTime(e);
    const logs = e.what === 'error_logs' || e.what === 'warning_logs';
    const resource = e.what === 'saturation' || e.what === 'restarts';
    // A caller that waits on every callee, with its CPU up: saturation.
    const starved = e.what === 'caller_wait' || (resource && s.evidence.some((x) => x.what === 'caller_wait' || x.what === 'own_latency'));
    const kind =
      starved || resource
        ? 'saturation'
        : latency || e.what === 'went_silent'
          ? s.service === inp.root && e.what === 'own_latency'
            ? 'latency_regression'
            : 'dependency_failure'
          : logs
            ? 'log_error_burst'
            : 'call_pattern_change';
    const more = s.evidence.slice(1, 3).map((x) => EVIDENCE_TEXT[x.what](x));
    const share = latency && root.after > root.before ? `; ${Math.round(Math.min(1, e.weight) * 100)}% of ${inp.root}'s extra ${ms(root.after - root.before)} per request` : '';
    out.push({
      kind,
      severity: 'info',
      summary: `${s.service}: ${EVIDENCE_TEXT[e.what](e)}${share}, since ${isoFromUs(e.onset)}${more.length ? `; also ${more.join('; ')}` : ''}`,
      service: s.service,
      operation: null,
      signal: latency ? 'latency_p95' : logs ? 'error_log_rate' : resource ? 'resource_saturation' : 'trace_shape',
      before: round(e.before, 3),
      after: round(e.after, 3),
      score: 0.3 + 0.65 * s.score,
      drill_down_sql: EVIDENCE_LEAD[e.what](w, s.service, e),
    });
  }
  return out;
}

/**
 * New error types in the subgraph, one finding per service, weighed by that service's own share of
 * its errors: a 502 its callee's failure makes it answer is new too, but it is a symptom.
 */
function newErrorTypeFindings(inp: FindingInputs, sub: ReadonlySet<string>, errorBlames: readonly Blame[]): Finding[] {
  const b = inp.model.bounds;
  const out: Finding[] = [];
  const errorShare = new Map<string, number>();
  for (const bl of errorBlames) if (!bl.external) errorShare.set(bl.service, Math.max(errorShare.get(bl.service) ?? 0, bl.share));
  for (const [service, types] of inp.newErrorTypes) {
    if (!sub.has(service) || !established(inp, service)) continue;
    const named = [...types].filter(([type, count]) => type !== 'unclassified' && count >= 3).sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]));
    if (!named.length) continue;
    const [type, count] = named[0]!;
    out.push({
      kind: 'new_error_type',
      severity: 'info',
      summary: `${service}: error type${named.length > 1 ? 's' : ''} ${named.slice(0, 3).map(([t, c]) => `${t} (${c} spans)`).join(', ')} new since the baseline`,
      service,
      operation: null,
      signal: 'error_rate',
      before: 0,
      after: count,
      // Without a significant rise in the service's errors, a new type is a rare one showing up: weak news.
      score: (0.25 + 0.35 * amountWeight(count, 20)) * Math.max(errorShare.get(service) ?? 0.6, 0.3),
      drill_down_sql: LEADS.errorType(b, service, type),
    });
  }
  return out;
}

/** Error logs per service: the share of error records against the baseline's, cut at its onset. */
function logBurstFindings(inp: FindingInputs, sub: ReadonlySet<string>): Finding[] {
  const m = inp.model;
  const b = m.bounds;
  const windowBuckets = (b.to - b.from) / BUCKET_US;
  const out: Finding[] = [];
  const logsBy = new Map<string, { n: number; k: number }>();
  for (const r of inp.windowLogs) {
    const cur = logsBy.get(r.service_name) ?? { n: 0, k: 0 };
    cur.n += r.n;
    cur.k += r.k;
    logsBy.set(r.service_name, cur);
  }
  for (const service of sub) {
    const w = logsBy.get(service);
    if (!w || w.k === 0) continue;
    const buckets: Bucket[] = m.series.get('error_log_rate')?.get(seriesKey(service, service)) ?? [];
    const j = errorOnset(buckets, w.k, w.n);
    const base = buckets.slice(0, j).slice(-m.baseBuckets);
    const baseN = base.reduce((s, x) => s + x.n, 0);
    const baseK = base.reduce((s, x) => s + x.k, 0);
    const shift = errorShift(w.k, w.n, baseK, baseN);
    // Per 5 minutes, against the baseline's error records per bucket: a burst is more errors, not only a larger share.
    const perBucketBefore = base.length ? baseK / base.length : 0;
    const perBucketAfter = w.k / Math.max(1, windowBuckets);
    const volume = poissonSurprise(w.k, Math.max(perBucketBefore, 0.5) * windowBuckets);
    if (shift.surprise < SIGNIFICANT || volume < SIGNIFICANT || perBucketAfter < 2 * perBucketBefore) continue;
    out.push({
      kind: 'log_error_burst',
      severity: 'info',
      summary: `${service}: ${w.k} error logs in the window, ${round(perBucketAfter, 1)} per 5 minutes against ${round(perBucketBefore, 1)} before`,
      service,
      operation: null,
      signal: 'error_log_rate',
      before: round(perBucketBefore),
      after: round(perBucketAfter),
      score: strength(Math.min(shift.surprise, volume), shift.excess, 20, Math.log2(perBucketAfter / Math.max(perBucketBefore, 0.5)) / 2),
      drill_down_sql: LEADS.errorLogs(b, service),
    });
  }
  return out;
}

/** Log patterns that first appeared in the window. */
function newPatternFindings(inp: FindingInputs, sub: ReadonlySet<string>): Finding[] {
  const b = inp.model.bounds;
  const out: Finding[] = [];
  for (const r of inp.windowLogs) {
    const { service_name: service, n, k } = r;
    const t = r.template_id === null ? undefined : inp.templates.get(r.template_id);
    if (!sub.has(service) || !t || t.first_us < b.newSince || !established(inp, service)) continue;
    if (n < 5) continue;
    const isError = k > n / 2;
    // Its records (and those of templates merged into it) on the diagnosed service's traces, or elsewhere.
    const onTraces = inp.onTraces(service, [t.template_id, ...(r.merged_ids ?? [])]);
    out.push({
      kind: 'new_log_pattern',
      severity: 'info',
      summary: `${service}: new ${isError ? 'error ' : ''}log pattern "${t.pattern.slice(0, 120)}" (${n} records${tracedText(onTraces)})`,
      service,
      operation: null,
      signal: isError ? 'error_log_rate' : 'log_volume',
      before: 0,
      after: n,
      score: ((isError ? 0.3 : 0.2) + 0.3 * amountWeight(n, 50)) * traceWeight(onTraces),
      drill_down_sql: LEADS.templateLogs(b, service, t.template_id),
    });
  }
  return out;
}

/** Time-valued profile cost per second, window against before it, per service and leaf function. */
function hotSpots(inp: FindingInputs, sub: ReadonlySet<string>): Finding[] {
  const b = inp.model.bounds;
  const per = new Map<string, { w: Map<string, { v: number; s: number; type: string }>; base: Map<string, number>; wTotal: number; bTotal: number; bFirst: number; wSamples: number; bSamples: number }>();
  for (const r of inp.profiles) {
    if (r.unit !== 'nanoseconds') continue;
    const service = r.service_name;
    if (!sub.has(service)) continue;
    let p = per.get(service);
    if (!p) per.set(service, (p = { w: new Map(), base: new Map(), wTotal: 0, bTotal: 0, bFirst: Infinity, wSamples: 0, bSamples: 0 }));
    const { function: fn, value: v, samples: s } = r;
    if (r.in_window) {
      const cur = p.w.get(fn) ?? { v: 0, s: 0, type: r.profile_type };
      cur.v += v;
      cur.s += s;
      p.w.set(fn, cur);
      p.wTotal += v;
      p.wSamples += s;
    } else {
      p.base.set(fn, (p.base.get(fn) ?? 0) + v);
      p.bTotal += v;
      p.bSamples += s;
      p.bFirst = Math.min(p.bFirst, r.first_us);
    }
  }
  const out: Finding[] = [];
  for (const [service, p] of per) {
    if (p.bTotal <= 0 || p.wTotal <= 0 || !Number.isFinite(p.bFirst)) continue;
    const wSec = (b.to - b.from) / 1e6;
    const bSec = Math.max(60, (b.from - p.bFirst) / 1e6);
    const rateW = p.wTotal / wSec;
    const rateB = p.bTotal / bSec;
    // The function whose cost per second grew the most.
    let best: { fn: string; grow: number; type: string; wRate: number; bRate: number } | null = null;
    for (const [fn, x] of p.w) {
      const wr = x.v / wSec;
      const br = (p.base.get(fn) ?? 0) / bSec;
      if (!best || wr - br > best.grow) best = { fn, grow: wr - br, type: x.type, wRate: wr, bRate: br };
    }
    if (!best || best.grow <= 0) continue;
    // Samples are the counts behind the values: Poisson on the function's samples at its old share.
    const share = best.bRate > 0 ? best.bRate / rateB : 0.5 / Math.max(1, p.bSamples);
    const expected = share * (p.bSamples / bSec) * wSec;
    const fnSamples = p.w.get(best.fn)!.s;
    const surprise = poissonSurprise(fnSamples, Math.max(expected, 0.5));
    const totalRatio = rateW / rateB;
    if (surprise < SIGNIFICANT || totalRatio < 1.2) continue;
    out.push({
      kind: 'resource_hot_spot',
      severity: 'info',
      summary: `${service}: profiled cost ${round(totalRatio, 2)}x the baseline; ${best.fn} went from ${round(best.bRate / 1e6, 1)} to ${round(best.wRate / 1e6, 1)} ms per second (${best.type})`,
      service,
      operation: best.fn,
      signal: 'profile_cost',
      before: round(rateB * 300, 0),
      after: round(rateW * 300, 0),
      // How much: the share of the window's profiled samples the function's growth accounts for, so a
      // quiet service's hot spot (few samples, the same shift) weighs what a busy one's does.
      score: strength(surprise, (fnSamples - expected) / Math.max(1, p.wSamples), 0.1, Math.log2(totalRatio)),
      drill_down_sql: LEADS.profileFunction(inp.model.bounds, service, best.fn),
    });
  }
  return out;
}

const BAD_FINISH = (reason: string) => reason !== 'stop' && reason !== 'end_turn' && reason !== 'tool_calls' && reason !== 'tool_use' && reason !== 'STOP';

/** Finish reasons of a row's histogram ([{key: JSON array of reasons, value: calls}]) as reason → calls. */
export function finishCounts(hist: FinishHistogram): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of hist) {
    let reasons: unknown;
    try {
      reasons = JSON.parse(e.key);
    } catch {
      reasons = [e.key];
    }
    for (const r of Array.isArray(reasons) ? reasons : [reasons]) out.set(String(r), (out.get(String(r)) ?? 0) + e.value);
  }
  return out;
}

/** Calls whose finish reasons include an abnormal one (cut off by length, filtered, …). */
function badFinishes(hist: FinishHistogram): number {
  let n = 0;
  for (const e of hist) if ([...finishCounts([e]).keys()].some(BAD_FINISH)) n += e.value;
  return n;
}

function genAiFindings(inp: FindingInputs, sub: ReadonlySet<string>): Finding[] {
  const by = new Map<string, { service: string; model: string; w: { n: number; k: number; bad: number }; base: { n: number; k: number; bad: number } }>();
  const add = (r: GenAiRow | GenAiBeforeRow, inWindow: boolean, bad: number) => {
    const service = r.service_name;
    if (!sub.has(service)) return;
    const key = `${service}\u0000${r.model}`;
    let e = by.get(key);
    if (!e) by.set(key, (e = { service, model: r.model, w: { n: 0, k: 0, bad: 0 }, base: { n: 0, k: 0, bad: 0 } }));
    const side = inWindow ? e.w : e.base;
    side.n += r.n;
    side.k += r.k;
    side.bad += bad;
  };
  for (const r of inp.genAi) add(r, true, badFinishes(r.finish));
  for (const r of inp.genAiBefore) add(r, false, badFinishes([{ key: r.finish, value: r.n }]));
  const out: Finding[] = [];
  for (const e of by.values()) {
    const fin = errorShift(e.w.bad, e.w.n, e.base.bad, e.base.n);
    const err = errorShift(e.w.k, e.w.n, e.base.k, e.base.n);
    const useFinish = fin.surprise >= err.surprise;
    const s = useFinish ? fin : err;
    if (s.surprise < SIGNIFICANT) continue;
    out.push({
      kind: 'gen_ai_degradation',
      severity: 'info',
      summary: `${e.service}: model ${e.model} ${useFinish ? `ended ${round(fin.after)}% of calls without a normal finish (length, filter) against ${round(fin.before)}%` : `failed ${round(err.after)}% of calls against ${round(err.before)}%`}`,
      service: e.service,
      operation: e.model,
      signal: useFinish ? 'gen_ai_finish_reasons' : 'error_rate',
      before: round(s.before),
      after: round(s.after),
      score: strength(s.surprise, s.excess, 10, (s.after - s.before) / 10),
      drill_down_sql: LEADS.genAiCalls(inp.model.bounds, e.service, e.model),
    });
  }
  return out;
}

/**
 * Correlated anomaly rows of the subgraph, one finding per incident (the spec's incident object), grouped
 * as GET /v1/anomalies groups them; a shift that correlates with no other is an incident of one.
 */
function incidentFindings(inp: FindingInputs, sub: ReadonlySet<string>, others: readonly Finding[]): Finding[] {
  const b = inp.model.bounds;
  const rows = inp.anomalies.filter((r) => sub.has(r.service_name) && r.ts_shift_us >= b.from - 12 * BUCKET_US);
  const magnitude = (r: AnomalyRow) => (r.after - r.before) / (r.after + r.before || 1);
  return groupShifts(rows).map((group): Finding => {
    const g = [...group].sort((x, y) => x.ts_shift_us - y.ts_shift_us || x.signal.localeCompare(y.signal));
    const service = g[0]!.service_name;
    const start = g[0]!.ts_shift_us;
    const top = g.reduce((x, y) => (magnitude(y) > magnitude(x) ? y : x));
    const deploy = inp.deploys.find((d) => d.service === service && Math.abs(Math.floor(d.at_us / BUCKET_US) - Math.floor(start / BUCKET_US)) <= 1) ?? null;
    const related = others.filter((f) => f.service === service).reduce((s, f) => Math.max(s, f.score), 0);
    return {
      kind: 'incident',
      severity: 'info',
      summary: `${service}: ${g.length} worsening shift${g.length > 1 ? 's' : ''} from ${isoFromUs(start)} (${[...new Set(g.map((r) => r.signal))].join(', ')})${deploy ? `, with a deploy of ${deploy.version ?? deploy.image}` : ''}`,
      service,
      operation: top.operation,
      signal: top.signal,
      before: round(top.before),
      after: round(top.after),
      // Below the finding that explains the same service: the incident is its corroboration. One
      // that began well before the window is context, not the cause of what the window shows.
      score: (related > 0 ? related * 0.97 : 0.3 + 0.2 * clamp01(magnitude(top))) * (start < b.from - 2 * BUCKET_US ? 0.5 : 1),
      incident: {
        incident_id: incidentId(g),
        started_at: start,
        started_at_iso: isoFromUs(start),
        shifts: g.slice(0, 10).map((r) => ({
          signal: r.signal,
          entity: r.operation,
          before: round(r.before),
          after: round(r.after),
          ts_shift: r.ts_shift_us,
          ts_shift_iso: isoFromUs(r.ts_shift_us),
          summary: `${r.signal} of ${r.operation}: ${round(r.before)} → ${round(r.after)}`,
          drill_down_sql: r.drill_down_sql || LEADS.shift(b, service),
        })),
        deploy: deploy ? { service: deploy.service, version: deploy.version, image: deploy.image, detected_at: isoFromUs(deploy.at_us), detected_at_us: deploy.at_us } : null,
      },
    };
  });
}

function coverageFindings(inp: FindingInputs): Finding[] {
  const c = inp.coverage;
  const missing = (['spans', 'logs', 'metrics', 'profiles'] as const).filter((s) => !c[s]);
  if (!missing.length) return [];
  return [
    {
      kind: 'coverage_gap',
      severity: 'info',
      summary: `${inp.root}: no ${missing.join(', ')} in the window; ${missing.includes('spans') ? 'errors, latency and the call graph cannot be judged' : 'the diagnosis rests on the other signals'}`,
      service: inp.root,
      operation: null,
      signal: missing[0]!,
      before: null,
      after: null,
      score: missing.includes('spans') ? 0.3 : 0.05 * missing.length,
      drill_down_sql: LEADS.coverage(inp.model.bounds, inp.root),
    },
  ];
}

