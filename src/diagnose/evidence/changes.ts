// What changed in a service around the onset: a deploy (new version or image), instances that
// (re)started without one, error types it never had before. None of them is a fault by itself: a
// deploy lands near some onset by chance as often as deploys happen. Each is corroboration, with
// the surprise of its timing against the service's own rate of such changes in the look-back (half
// a change of prior), and counts only beside a service's significant evidence (rank.ts).
import { BUCKET_US } from '../../core/time.js';
import { newInstances } from '../events.js';
import { poissonSurprise } from '../stats.js';
import { LEADS } from '../leads.js';
import { type Candidate } from './candidate.js';
import { established, type EvidenceInputs } from './inputs.js';

/** How far before the onset a change still counts as its cause (deploys roll out; the first errors lag). */
const LEAD_US = 3 * BUCKET_US;

/** -log10 of the chance that one of `count` changes in `span` µs falls in an interval `width` µs long. */
const timingSurprise = (count: number, span: number, width: number) => -Math.log10(1 - Math.exp(-((count + 0.5) / Math.max(span, width)) * width));

export function changeEvidence(x: EvidenceInputs): Candidate[] {
  const b = x.bounds;
  const onset = x.change?.countSplit.onset ?? b.from;
  const lo = onset - LEAD_US;
  const span = lo - b.lookFrom;
  const out: Candidate[] = [];
  const services = new Set([...x.deploys.map((d) => d.service), ...x.newErrorTypes.keys(), ...x.deployments.map((d) => d.service_name)]);
  for (const service of services) {
    const deploys = x.deploys.filter((d) => d.service === service);
    const deploy = deploys.find((d) => d.at_us >= lo && d.at_us <= b.to);
    if (deploy) {
      const earlier = deploys.filter((d) => d.at_us < lo).length;
      out.push({
        service,
        evidence: 'changes',
        what: 'deploy',
        kind: 'deploy_regression',
        signal: 'deploy',
        operation: null,
        before: null,
        after: null,
        surprise: timingSurprise(earlier, span, b.to - lo),
        onset: deploy.at_us,
        summary: `${service}: deploy of ${deploy.version ?? deploy.image}${deploy.previous ? ` (was ${deploy.previous})` : ''} at ${new Date(deploy.at_us / 1000).toISOString()}`,
        drill_down_sql: LEADS.allSpans({ from: Math.max(lo, deploy.at_us - BUCKET_US), to: b.to }, service),
      });
    } else {
      const restarted = newInstances(x.deployments, service, lo, b.to, b.lookFrom);
      if (restarted > 0) {
        const earlier = newInstances(x.deployments, service, b.lookFrom, lo, b.lookFrom);
        out.push({
          service,
          evidence: 'changes',
          what: 'restart',
          kind: 'saturation',
          signal: 'restarts',
          operation: null,
          before: earlier,
          after: restarted,
          surprise: timingSurprise(earlier, span, b.to - lo),
          onset,
          summary: `${service}: ${restarted} instance${restarted > 1 ? 's' : ''} (re)started since ${new Date(lo / 1000).toISOString()} without a deploy`,
          drill_down_sql: LEADS.allSpans({ from: lo, to: b.to }, service),
        });
      }
    }
    const types = x.newErrorTypes.get(service);
    if (types && established(x, service)) {
      const named = [...types].filter(([t, c]) => t !== 'unclassified' && c >= 3).sort((p, q) => q[1] - p[1] || p[0].localeCompare(q[0]));
      if (named.length) {
        const [type, count] = named[0]!;
        out.push({
          service,
          evidence: 'changes',
          what: 'new_error_type',
          corroborates: ['errors'],
          kind: 'new_error_type',
          signal: 'error_rate',
          operation: null,
          before: 0,
          after: count,
          // Half an occurrence of a type never seen in the look-back was to be expected in the window.
          surprise: poissonSurprise(count, 0.5),
          onset,
          summary: `${service}: error type${named.length > 1 ? 's' : ''} ${named.slice(0, 3).map(([t, c]) => `${t} (${c} spans)`).join(', ')} new since the baseline`,
          drill_down_sql: LEADS.errorType(b, service, type),
        });
      }
    }
  }
  return out;
}

