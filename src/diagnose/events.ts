// Events of a diagnosis, from the resource columns every span carries: deploys (a service.version or
// container image not seen at the start of the look-back), restarts (new service.instance.id),
// pod-count changes between the baseline and the window; and first appearances of an error type or
// a log pattern. Pure functions of the rows.
import { isoFromUs, BUCKET_US } from '../core/time.js';
import type { DeploymentRow } from './reads/index.js';

export interface DiagnosisEvent {
  event_type: 'deploy' | 'restart' | 'pod_count_change' | 'new_error_type' | 'new_log_pattern';
  description: string;
  detected_at: string;
  detected_at_us: number;
}

export interface DeployEvent {
  service: string;
  version: string | null;
  image: string | null;
  at_us: number;
  previous: string | null;
}

export interface ServiceIdentity {
  deployment: string | null;
  namespace: string | null;
  pods_window: number;
  pods_before: number;
  has_instance_id: boolean;
  first_seen_us: number | null;
  last_seen_us: number | null;
}

/** Deploys of every service: a version or image first seen after the look-back began (a margin of a bucket). */
export function findDeploys(rows: readonly DeploymentRow[], lookFrom: number): DeployEvent[] {
  const firstSeen = new Map<string, { service: string; version: string | null; image: string | null; first: number }>();
  for (const r of rows) {
    const { service_name: service, service_version: version, container_image: image, first_us: first } = r;
    if (version === null && image === null) continue;
    const key = `${service}\u0000${version}\u0000${image}`;
    const cur = firstSeen.get(key);
    if (!cur || first < cur.first) firstSeen.set(key, { service, version, image, first });
  }
  const byService = new Map<string, { version: string | null; image: string | null; first: number }[]>();
  for (const v of firstSeen.values()) byService.set(v.service, [...(byService.get(v.service) ?? []), v]);
  const out: DeployEvent[] = [];
  for (const [service, versions] of byService) {
    versions.sort((a, b) => a.first - b.first);
    for (let i = 1; i < versions.length; i++) {
      const v = versions[i]!;
      if (v.first < lookFrom + BUCKET_US) continue;
      const prev = versions[i - 1]!;
      out.push({ service, version: v.version, image: v.image, at_us: v.first, previous: prev.version ?? prev.image });
    }
  }
  return out.sort((a, b) => a.at_us - b.at_us);
}

/**
 * Instances of `service` that started while it was already running: first seen after the look-back
 * began, and at least a bucket after another instance of the service was (one replacing another, a
 * restart, a scale-up). Every instance is new when the store's history begins, and none of them
 * restarted then.
 */
export function startedInstances(rows: readonly DeploymentRow[], service: string, lookFrom: number): { id: string; at: number }[] {
  const mine = rows.filter((r) => r.service_name === service);
  const serviceFirst = mine.reduce((m, r) => Math.min(m, r.first_us), Infinity);
  const first = new Map<string, number>();
  for (const r of mine) {
    const id = r.service_instance_id ?? r.k8s_pod_name;
    if (id !== null) first.set(id, Math.min(first.get(id) ?? Infinity, r.first_us));
  }
  return [...first]
    .filter(([, at]) => at >= lookFrom + BUCKET_US && at >= serviceFirst + BUCKET_US)
    .map(([id, at]) => ({ id, at }))
    .sort((a, b) => a.at - b.at || a.id.localeCompare(b.id));
}

/** Instances of `service` started in [lo, hi]: restarts or a rollout. */
export function newInstances(rows: readonly DeploymentRow[], service: string, lo: number, hi: number, lookFrom: number): number {
  return startedInstances(rows, service, lookFrom).filter((s) => s.at >= lo && s.at <= hi).length;
}

/** Identity of one service (deployment, namespace, pods, instance ids) from its rows. */
export function serviceIdentity(rows: readonly DeploymentRow[], service: string, from: number): ServiceIdentity {
  const mine = rows.filter((r) => r.service_name === service);
  const podsW = new Set<string>();
  const podsB = new Set<string>();
  let first: number | null = null;
  let last: number | null = null;
  const count = new Map<string, number>();
  const countNs = new Map<string, number>();
  for (const r of mine) {
    const pod = r.k8s_pod_name ?? r.service_instance_id;
    if (pod !== null) {
      if (r.last_us >= from) podsW.add(pod);
      if (r.first_us < from) podsB.add(pod);
    }
    first = first === null ? r.first_us : Math.min(first, r.first_us);
    last = last === null ? r.last_us : Math.max(last, r.last_us);
    const dep = r.k8s_deployment;
    if (dep) count.set(dep, (count.get(dep) ?? 0) + r.n);
    const ns = r.k8s_namespace ?? r.service_namespace;
    if (ns) countNs.set(ns, (countNs.get(ns) ?? 0) + r.n);
  }
  const top = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? null;
  return {
    deployment: top(count),
    namespace: top(countNs),
    pods_window: podsW.size,
    pods_before: podsB.size,
    has_instance_id: mine.some((r) => r.service_instance_id !== null),
    first_seen_us: first,
    last_seen_us: last,
  };
}

const ev = (event_type: DiagnosisEvent['event_type'], description: string, at: number): DiagnosisEvent => ({
  event_type,
  description,
  detected_at: isoFromUs(at),
  detected_at_us: at,
});

export interface EventInputs {
  service: string;
  from: number;
  lookFrom: number;
  deploys: readonly DeployEvent[];
  deployments: readonly DeploymentRow[];
  identity: ServiceIdentity;
  newErrorTypes: ReadonlyMap<string, number>;
  firstErrorAt: ReadonlyMap<string, number>;
  newPatterns: readonly { template_id: number; pattern: string; first_us: number }[];
}

/** The block's `events`, oldest first. */
export function serviceEvents(inp: EventInputs): DiagnosisEvent[] {
  const out: DiagnosisEvent[] = [];
  for (const d of inp.deploys) {
    if (d.service !== inp.service) continue;
    out.push(ev('deploy', `${d.service} deployed ${d.version ?? d.image}${d.previous ? ` (was ${d.previous})` : ''}`, d.at_us));
  }
  // New instances, one event per 5-minute cluster (a rollout starts several at once).
  const starts = startedInstances(inp.deployments, inp.service, inp.lookFrom);
  const seen = new Set<string>();
  let cluster: { id: string; at: number }[] = [];
  const flush = () => {
    if (!cluster.length) return;
    const ids = cluster.map((c) => c.id);
    out.push(ev('restart', `${cluster.length} new instance${cluster.length > 1 ? 's' : ''} of ${inp.service}: ${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', …' : ''}`, cluster[0]!.at));
    cluster = [];
  };
  for (const s of starts) {
    if (seen.has(s.id)) continue;
    seen.add(s.id);
    if (cluster.length && s.at - cluster[0]!.at > BUCKET_US) flush();
    cluster.push(s);
  }
  flush();
  const id = inp.identity;
  if (id.pods_before > 0 && id.pods_window !== id.pods_before) {
    out.push(ev('pod_count_change', `${inp.service} ran on ${id.pods_before} pods before the window and ${id.pods_window} in it`, inp.from));
  }
  for (const [type, count] of inp.newErrorTypes) {
    out.push(ev('new_error_type', `${inp.service}: error type ${type} first seen (${count} spans in the window)`, inp.firstErrorAt.get(type) ?? inp.from));
  }
  for (const p of inp.newPatterns) out.push(ev('new_log_pattern', `${inp.service}: new log pattern #${p.template_id} "${p.pattern.slice(0, 100)}"`, p.first_us));
  return out.sort((a, b) => a.detected_at_us - b.detected_at_us || a.event_type.localeCompare(b.event_type)).slice(0, MAX_EVENTS);
}

export const MAX_EVENTS = 30;
