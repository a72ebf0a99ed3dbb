// Resource gauges as evidence: a pod's CPU, memory or restart count that shifts at the onset
// supports blame on its service (a starved caller, a leak, a crash loop). Names follow the
// Kubernetes, container and process semantic conventions or plain names like them; the unit does
// not matter, as a shift is judged against the pod's own baseline.
import type { GaugeRow } from './queries.js';

export type ResourceKind = 'cpu' | 'memory' | 'restarts';

/** What a metric name measures, or null: utilisation and usage of CPU and memory, restart counts. */
export function resourceKind(name: string): ResourceKind | null {
  const n = name.toLowerCase();
  if (/restart/.test(n)) return 'restarts';
  // CPU time counters need a rate, which a gauge of them is not; limits and requests are configuration.
  if (/cpu/.test(n) && !/(limit|request|time|seconds_total)/.test(n)) return 'cpu';
  if (/mem/.test(n) && !/(limit|request|available|free)/.test(n)) return 'memory';
  return null;
}

export interface GaugeShift {
  service: string;
  pod: string;
  kind: ResourceKind;
  metric: string;
  before: number;
  after: number;
  /** Standard scores of the rise against the pod's baseline minutes. */
  z: number;
}

/**
 * Rises of each pod's resource gauges from the minutes before `onset` (at most an hour) to the
 * minutes since: CPU and memory by at least half again and 4 standard deviations of the baseline
 * (a floor of 2% of its level, for a flat series); any rise of a restart count.
 */
export function gaugeShifts(rows: readonly GaugeRow[], onset: number, to: number): GaugeShift[] {
  const series = new Map<string, { service: string; pod: string; metric: string; kind: ResourceKind; before: number[]; after: number[] }>();
  for (const r of rows) {
    const kind = resourceKind(r.metric_name);
    if (!kind || r.minute >= to || r.minute < onset - 3_600_000_000 || !Number.isFinite(r.value)) continue;
    const key = `${r.service_name}\u0000${r.pod}\u0000${r.metric_name}`;
    const s = series.get(key) ?? series.set(key, { service: r.service_name, pod: r.pod, metric: r.metric_name, kind, before: [], after: [] }).get(key)!;
    (r.minute >= onset ? s.after : s.before).push(r.value);
  }
  const out: GaugeShift[] = [];
  for (const s of series.values()) {
    if (s.before.length < 5 || !s.after.length) continue;
    const mb = s.before.reduce((a, x) => a + x, 0) / s.before.length;
    const ma = s.after.reduce((a, x) => a + x, 0) / s.after.length;
    if (s.kind === 'restarts') {
      if (Math.max(...s.after) > Math.max(...s.before)) out.push({ service: s.service, pod: s.pod, kind: s.kind, metric: s.metric, before: Math.max(...s.before), after: Math.max(...s.after), z: 10 });
      continue;
    }
    const sd = Math.sqrt(s.before.reduce((a, x) => a + (x - mb) ** 2, 0) / (s.before.length - 1));
    const z = (ma - mb) / Math.max(sd, 0.02 * Math.abs(mb), 1e-9);
    if (ma >= 1.5 * mb && z >= 4) out.push({ service: s.service, pod: s.pod, kind: s.kind, metric: s.metric, before: mb, after: ma, z });
  }
  return out.sort((a, b) => b.z - a.z || a.service.localeCompare(b.service) || a.pod.localeCompare(b.pod));
}
