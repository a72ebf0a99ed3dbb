// Resource gauges: a pod's CPU or memory that rose at the onset, or a restart count that rose.
// Names follow the Kubernetes, container and process semantic conventions or plain names like them;
// the unit does not matter, as a rise is judged against the pod's own minutes before the onset (at
// most an hour, or the named reference): their median and spread, which an earlier fault's minutes
// among them move little, at least a fiftieth of the level for a flat series.
import type { GaugeRow } from '../reads/index.js';
import { median, tSurprise } from '../stats.js';
import { LEADS } from '../leads.js';
import { SIGNIFICANT, getOrMake, round, type Candidate } from './candidate.js';
import type { EvidenceInputs } from './inputs.js';

export type ResourceKind = 'cpu' | 'memory' | 'restarts';

/** What a metric name measures, or null: utilisation and usage of CPU and memory, restart counts. */
export function resourceKind(name: string): ResourceKind | null {
  const n = name.toLowerCase();
  if (/restart/.test(n)) return 'restarts';
  // CPU time counters need a rate, which a gauge of them is not; limits and requests are configuration; a node's figures are not a pod's.
  if (/cpu/.test(n) && !/(limit|request|time|seconds_total|node)/.test(n)) return 'cpu';
  if (/mem/.test(n) && !/(limit|request|available|free|node)/.test(n)) return 'memory';
  return null;
}

/** A practical rise of CPU or memory: half again the baseline's level. */
const PRACTICAL_FACTOR = 1.5;
/** The least spread a flat series is given, as a share of its level. */
const SPREAD_FLOOR = 0.02;
const LOOK_BACK_US = 3_600_000_000;

export interface GaugeShift {
  service: string;
  pod: string;
  kind: ResourceKind;
  metric: string;
  before: number;
  after: number;
  /** -log10 p of the rise, before the correction for the series tested. */
  surprise: number;
}

/** Each pod gauge's rise from its minutes before `onset` (or in `reference`) to those since. */
export function gaugeShifts(rows: readonly GaugeRow[], onset: number, to: number, reference: { from: number; to: number } | null = null): { shifts: GaugeShift[]; tested: number } {
  const series = new Map<string, { service: string; pod: string; metric: string; kind: ResourceKind; before: number[]; after: number[] }>();
  const inBefore = (t: number) => (reference ? t >= reference.from && t < reference.to : t < onset && t >= onset - LOOK_BACK_US);
  for (const r of rows) {
    const kind = resourceKind(r.metric_name);
    if (!kind || r.minute >= to || !Number.isFinite(r.value)) continue;
    const side = r.minute >= onset ? 'after' : inBefore(r.minute) ? 'before' : null;
    if (!side) continue;
    const s = getOrMake(series, `${r.service_name}\u0000${r.pod}\u0000${r.metric_name}`, () => ({ service: r.service_name, pod: r.pod, metric: r.metric_name, kind, before: [] as number[], after: [] as number[] }));
    s[side].push(r.value);
  }
  const shifts: GaugeShift[] = [];
  let tested = 0;
  for (const s of series.values()) {
    if (s.before.length < 5 || !s.after.length) continue;
    tested++;
    if (s.kind === 'restarts') {
      const [b, a] = [Math.max(...s.before), Math.max(...s.after)];
      if (a <= b) continue;
      // How likely a restart this soon was, at the rate the look-back shows (half a restart of prior).
      const rate = (Math.max(0, b - Math.min(...s.before)) + 0.5) / s.before.length;
      shifts.push({ service: s.service, pod: s.pod, kind: s.kind, metric: s.metric, before: b, after: a, surprise: -Math.log10(1 - Math.exp(-rate * s.after.length)) });
      continue;
    }
    const mb = median(s.before);
    const ma = s.after.reduce((x, v) => x + v, 0) / s.after.length;
    if (!(ma >= PRACTICAL_FACTOR * mb) || ma <= 0) continue;
    const mad = median(s.before.map((v) => Math.abs(v - mb))) * 1.4826;
    const sd = Math.max(mad, SPREAD_FLOOR * Math.abs(mb), 1e-9);
    const t = (ma - mb) / (sd * Math.sqrt(1 / s.before.length + 1 / s.after.length));
    shifts.push({ service: s.service, pod: s.pod, kind: s.kind, metric: s.metric, before: mb, after: ma, surprise: tSurprise(t, s.before.length - 1) });
  }
  shifts.sort((a, b) => b.surprise - a.surprise || a.service.localeCompare(b.service) || a.pod.localeCompare(b.pod));
  return { shifts, tested };
}

/** The strongest pod gauge rise of each service, since the diagnosed service's onset (the window's start without one). */
export function gaugeEvidence(x: EvidenceInputs): Candidate[] {
  const onset = x.change?.countSplit.onset ?? x.bounds.from;
  const { shifts, tested } = gaugeShifts(x.tree.gauges, onset, x.bounds.to, x.tree.reference);
  const multiple = Math.log10(Math.max(1, tested));
  const seen = new Set<string>();
  const out: Candidate[] = [];
  for (const g of shifts) {
    const surprise = g.surprise - multiple;
    if (surprise < SIGNIFICANT || seen.has(g.service)) continue;
    seen.add(g.service);
    const restarts = g.kind === 'restarts';
    out.push({
      service: g.service,
      evidence: 'gauges',
      what: restarts ? 'restarts' : 'saturation',
      peer: `${g.metric} of ${g.pod || g.service}`,
      kind: 'saturation',
      signal: 'resource_saturation',
      operation: null,
      before: round(g.before, 3),
      after: round(g.after, 3),
      surprise,
      onset,
      summary: `${g.service}: ${g.metric} of ${g.pod || g.service} ${round(g.before, 3)} → ${round(g.after, 3)}${restarts ? ' (restarted)' : ''}, since ${new Date(onset / 1000).toISOString()}`,
      drill_down_sql: LEADS.resourceGauges({ from: Math.min(x.bounds.from, onset), to: x.bounds.to }, g.service),
    });
  }
  return out;
}
