// Log events per request, in both directions. An exception inside a request handler often leaves
// no error behind: no ERROR record, no span status, no latency change; a log event that normally
// comes with every request stops appearing, because the code after the throw no longer runs (and
// sometimes a new event appears as another vanishes, so the ERROR count stays flat). Each event
// (template, merges resolved) of each service is counted per request of the diagnosed service on
// its split, against its baseline rate and its own bin-to-bin variation (quasi-Poisson): one that
// vanished (enough expected to notice the absence) or appeared. Where events pair up
// (started/completed), the pair breaking is one of them vanishing. Without the diagnosed service's
// requests, per unit of time.
import { countAll, type Agg, type Split } from '../calltree.js';
import { dispersion, quasiPoissonSurprise } from '../stats.js';
import { LEADS } from '../leads.js';
import { FINE_BIN_US } from '../../core/time.js';
import { SIGNIFICANT, round, type Candidate } from './candidate.js';
import type { EvidenceInputs } from './inputs.js';

/** An event expected fewer times than this since the onset cannot be noticed missing. */
const MIN_EXPECTED_MISSING = 5;
/** A change of rate per request smaller than this factor (either way) is no practical change. */
const PRACTICAL_FACTOR = 2;

/** The split counts are judged on: the diagnosed service's, or the window against what came before it. */
function splitFor(x: EvidenceInputs): Split {
  if (x.change) return x.change.countSplit;
  const p = x.tree;
  const before: number[] = [];
  const after: number[] = [];
  const lo = p.reference?.from ?? Math.min(...x.templateBins.map((r) => r.bins[0] ?? p.from), p.from);
  const hi = p.reference?.to ?? p.from;
  for (let t = Math.floor(lo / FINE_BIN_US) * FINE_BIN_US; t < p.to; t += FINE_BIN_US) {
    if (t >= p.from) after.push(t);
    else if (t < hi) before.push(t);
  }
  return { onset: p.from, before, after, found: false };
}

export function logEventEvidence(x: EvidenceInputs): Candidate[] {
  if (!x.templateBins.length) return [];
  const split = splitFor(x);
  if (!split.before.length || !split.after.length) return [];
  const rootBins: ReadonlyMap<number, Agg> | null = x.change?.bins ?? null;
  const exposed = (ts: readonly number[]) => (rootBins ? countAll(x.tree, rootBins, ts) : ts.length);
  const rb = exposed(split.before);
  const ra = exposed(split.after);
  if (rb < 5 || ra < 5) return [];
  const before = new Set(split.before);
  const after = new Set(split.after);
  const tested: { service: string; template: number; kb: number; ka: number; expected: number; phi: number }[] = [];
  for (const r of x.templateBins) {
    let kb = 0;
    let ka = 0;
    const perBin = new Map<number, number>();
    r.bins.forEach((t, i) => {
      if (before.has(t)) {
        kb += r.n[i]!;
        perBin.set(t, r.n[i]!);
      } else if (after.has(t)) ka += r.n[i]!;
    });
    if (kb + ka < 3) continue;
    const rate = (kb + 0.5) / rb;
    const expected = rate * ra;
    const phi = dispersion(split.before.map((t) => perBin.get(t) ?? 0), split.before.map((t) => rate * exposed([t])));
    tested.push({ service: r.service_name, template: r.template_id, kb, ka, expected, phi });
  }
  // A service whose records stopped altogether did not lose one event: its logs stopped arriving
  // (a shipping gap), or it stopped altogether, which its spans say. An event vanished only where
  // the service's other events, enough of them to notice, kept at least half their expected count.
  const still = new Map<string, { expected: number; seen: number }>();
  for (const t of tested) {
    const v = still.get(t.service) ?? { expected: 0, seen: 0 };
    v.expected += t.expected;
    v.seen += t.ka;
    still.set(t.service, v);
  }
  const keepsLogging = (t: (typeof tested)[number]) => {
    const v = still.get(t.service)!;
    const others = v.expected - t.expected;
    return others >= MIN_EXPECTED_MISSING && v.seen - t.ka >= 0.5 * others;
  };
  // Less log10 of the events tested (Bonferroni), in each direction.
  const multiple = Math.log10(Math.max(1, tested.length)) + Math.log10(2);
  const unit = rootBins ? 'per request' : 'per 10 s';
  // An event whose records are mostly errors counts as error logs.
  const errorEvents = new Set(x.windowLogs.filter((r) => r.template_id !== null && r.k > r.n / 2).map((r) => `${r.service_name}\u0000${r.template_id}`));
  const out: Candidate[] = [];
  for (const t of tested) {
    const { rise, fall } = quasiPoissonSurprise(t.ka, t.expected, t.phi);
    const vanished = t.ka < t.expected;
    const surprise = (vanished ? fall : rise) - multiple;
    if (surprise < SIGNIFICANT) continue;
    if (vanished ? t.expected < MIN_EXPECTED_MISSING || t.ka * PRACTICAL_FACTOR > t.expected || !keepsLogging(t) : t.ka < PRACTICAL_FACTOR * t.expected || t.ka < 3) continue;
    const tpl = x.templates.get(t.template);
    const pattern = tpl ? `"${tpl.pattern.slice(0, 120)}"` : `template ${t.template}`;
    const b = t.kb / rb;
    const a = t.ka / ra;
    const isNew = !vanished && tpl !== undefined && tpl.first_us >= x.bounds.newSince;
    out.push({
      service: t.service,
      evidence: 'log_events',
      what: vanished ? 'event_vanished' : 'event_appeared',
      kind: vanished ? 'log_event_vanished' : isNew ? 'new_log_pattern' : 'log_event_surge',
      signal: errorEvents.has(`${t.service}\u0000${t.template}`) ? 'error_log_rate' : 'log_volume',
      operation: null,
      before: round(b, 4),
      after: round(a, 4),
      surprise,
      onset: split.onset,
      summary: vanished
        ? `${t.service}: log event ${pattern} stopped appearing: ${round(b, 3)} → ${round(a, 3)} ${unit} (${t.ka} where ${round(t.expected, 1)} were expected; the code after it no longer runs?)`
        : `${t.service}: ${isNew ? 'new ' : ''}log event ${pattern} ${round(b, 3)} → ${round(a, 3)} ${unit} (${t.ka} where ${round(t.expected, 1)} were expected)`,
      drill_down_sql: LEADS.templateLogs({ from: Math.min(x.bounds.from, split.before[0] ?? x.bounds.from), to: x.bounds.to }, t.service, t.template),
    });
  }
  return out;
}
