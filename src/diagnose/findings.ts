// The findings of a block, as the spec shapes them: kinds, severities, the incident object; the
// incident findings from the anomaly rows and the coverage finding. What leads is rank.ts's.
import type { AnomalyRow } from './reads/index.js';
import { isoFromUs, BUCKET_US } from '../core/time.js';
import { LEADS } from './leads.js';
import type { DeployEvent } from './events.js';
import type { Bounds } from './reads/index.js';
import { groupShifts, incidentId } from '../detect/incidents.js';
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

/** Severity bands of a score; docs/diagnose.md defines each. */
export function severityOf(score: number): Severity {
  if (score >= 0.85) return 'critical';
  if (score >= 0.65) return 'high';
  if (score >= 0.45) return 'medium';
  if (score >= 0.25) return 'low';
  return 'info';
}

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const clamp01 = (x: number) => Math.max(0, Math.min(1, x));

/**
 * Correlated anomaly rows of the subgraph, one finding per incident (the spec's incident object), grouped
 * as GET /v1/anomalies groups them; a shift that correlates with no other is an incident of one.
 */
export function incidentFindings(b: Bounds, anomalies: readonly AnomalyRow[], deploys: readonly DeployEvent[], scope: ReadonlySet<string>, others: readonly Finding[]): Finding[] {
  const rows = anomalies.filter((r) => scope.has(r.service_name) && r.ts_shift_us >= b.from - 12 * BUCKET_US);
  const magnitude = (r: AnomalyRow) => (r.after - r.before) / (r.after + r.before || 1);
  return groupShifts(rows).map((group): Finding => {
    const g = [...group].sort((x, y) => x.ts_shift_us - y.ts_shift_us || x.signal.localeCompare(y.signal));
    const service = g[0]!.service_name;
    const start = g[0]!.ts_shift_us;
    const top = g.reduce((x, y) => (magnitude(y) > magnitude(x) ? y : x));
    const deploy = deploys.find((d) => d.service === service && Math.abs(Math.floor(d.at_us / BUCKET_US) - Math.floor(start / BUCKET_US)) <= 1) ?? null;
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
      // Below the finding that explains the same service: the incident is its corroboration. Alone,
      // a shift the detector saw stays low until other evidence says why. One that began well
      // before the window is context, not the cause of what the window shows.
      score: (related > 0 ? related * 0.97 : 0.3 + 0.14 * clamp01(magnitude(top))) * (start < b.from - 2 * BUCKET_US ? 0.5 : 1),
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

export function coverageFinding(b: Bounds, root: string, c: { spans: boolean; logs: boolean; metrics: boolean; profiles: boolean }): Finding[] {
  const missing = (['spans', 'logs', 'metrics', 'profiles'] as const).filter((s) => !c[s]);
  if (!missing.length) return [];
  return [
    {
      kind: 'coverage_gap',
      severity: 'info',
      summary: `${root}: no ${missing.join(', ')} in the window; ${missing.includes('spans') ? 'errors, latency and the call graph cannot be judged' : 'the diagnosis rests on the other signals'}`,
      service: root,
      operation: null,
      signal: missing[0]!,
      before: null,
      after: null,
      score: missing.includes('spans') ? 0.3 : 0.05 * missing.length,
      drill_down_sql: LEADS.coverage(b, root),
    },
  ];
}

