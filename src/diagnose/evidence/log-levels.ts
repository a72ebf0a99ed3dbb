// Error and warning records per request of the diagnosed service, per service, each judged on its
// own split of its level's share of records; against the baseline's rate with its worst fifth of
// minutes left out (a short burst the segmentation could not tell from noise must not raise the
// bar), and against its own bin-to-bin variation (quasi-Poisson). A caller logs an error of its
// own for a call that failed: what its callees' error bursts account for is theirs, so the service
// that threw is named, not every caller above it. Without the diagnosed service's requests (no
// spans in the window) records are counted per unit of time instead.
import { countAll, exposure, splitOf, type Agg } from '../calltree.js';
import type { Bin } from '../onset.js';
import { baselineRate, binomialSurprise, dispersion, quasiPoissonSurprise } from '../stats.js';
import { errorOnset, inReference, seriesKey } from '../baseline.js';
import { LEADS } from '../leads.js';
import type { Bucket, LogLevelRow } from '../reads/index.js';
import { BUCKET_US, FINE_BIN_US } from '../../core/time.js';
import { SIGNIFICANT, getOrMake, round, type Candidate } from './candidate.js';
import type { EvidenceInputs } from './inputs.js';

/** An onset up to this long before the window's start still counts as the window's. */
const ONSET_SLACK_US = 60_000_000;

/**
 * Records and requests of a baseline with its worst fifth of minutes left out: a short burst the
 * segmentation could not tell from noise (a few records a minute) must not raise the bar a new one
 * is judged against.
 */
function trimmedBaseline(bins: readonly number[], records: (ts: readonly number[]) => number, requests: (ts: readonly number[]) => number): { k: number; requests: number } {
  const byMinute = new Map<number, number[]>();
  for (const t of bins) getOrMake(byMinute, Math.floor(t / 60_000_000), () => []).push(t);
  const minutes = [...byMinute.values()].map((ts) => ({ k: records(ts), r: requests(ts) }));
  minutes.sort((a, b) => a.k / Math.max(1, a.r) - b.k / Math.max(1, b.r));
  const keep = minutes.length >= 5 ? minutes.slice(0, minutes.length - Math.floor(minutes.length / 5)) : minutes;
  return { k: keep.reduce((s, m) => s + m.k, 0), requests: keep.reduce((s, m) => s + m.r, 0) };
}

interface LogCount {
  service: string;
  level: 'error' | 'warning';
  onset: number;
  kb: number;
  rb: number;
  ka: number;
  ra: number;
  expected: number;
  phi: number;
}

export function logLevelEvidence(x: EvidenceInputs): Candidate[] {
  const p = x.tree;
  // Exposure per bin: the diagnosed service's requests, or time (one per fine bin) without them.
  const rootBins: ReadonlyMap<number, Agg> | null = x.change?.bins ?? null;
  const counts: LogCount[] = [];
  for (const [service, bins] of p.logs) {
    for (const level of ['error', 'warning'] as const) {
      const count = (r: LogLevelRow) => (level === 'error' ? r.k : r.w);
      const series: Bin[] = [...bins.values()].sort((a, b) => a.bin - b.bin).map((r) => ({ t: r.bin, n: r.n, errors: count(r), sumLog: 0, sumLog2: 0 }));
      // Split only when the level's share of records since the window began is up by a tenth or more.
      const share = (side: Bin[]) => side.reduce((s, r) => s + r.errors, 0) / Math.max(1, side.reduce((s, r) => s + r.n, 0));
      const after0 = series.filter((r) => r.t >= p.from - ONSET_SLACK_US);
      const rose = after0.some((r) => r.errors > 0) && share(after0) >= 1.1 * share(series.filter((r) => r.t < p.from - ONSET_SLACK_US));
      if (!rose) continue;
      const split = splitOf(p, `logs\u0000${service}\u0000${level}`, () => series);
      if (!split || !split.before.length) continue;
      const sum = (ts: readonly number[]) => ts.reduce((s, t) => s + (bins.get(t) ? count(bins.get(t)!) : 0), 0);
      const exposed = (ts: readonly number[]) => (rootBins ? countAll(p, rootBins, ts) : ts.length);
      // The requests exposed are the root's over the whole stretch, not only in the bins where the
      // service happened to log: a quiet service logs in a bin of ten.
      const [before, after] = rootBins ? exposure(rootBins, split, p.to) : timeBins(split.before, split.onset, p.to);
      const { k: kb, requests: rb } = trimmedBaseline(before, sum, exposed);
      const ra = exposed(after);
      if (rb < 5 || ra < 5) continue;
      const rate = (kb + 0.5) / rb; // half a record of prior: a clean baseline still bounds the rate
      const phi = dispersion(before.map((t) => sum([t])), before.map((t) => rate * exposed([t])));
      counts.push({ service, level, onset: split.onset, kb, rb, ka: sum(after), ra, expected: rate * ra, phi });
    }
  }
  // A caller's echo of its callees' exceptions: their records beyond expected, added up over the
  // services it calls, are theirs.
  const errorExcess = new Map(counts.filter((c) => c.level === 'error').map((c) => [c.service, Math.max(0, c.ka - c.expected)]));
  const callees = new Map<string, Set<string>>();
  for (const c of p.comps.values()) if (c.kind === 'wire') getOrMake(callees, c.service, () => new Set()).add(c.callee!);
  // Less log10 of the counts tested (Bonferroni): the largest of many services' fluctuations is surprising by itself.
  const multiple = Math.log10(Math.max(1, counts.length));
  const out: Candidate[] = [];
  for (const c of counts) {
    const inherited = c.level === 'error' ? [...(callees.get(c.service) ?? [])].reduce((s, d) => s + (errorExcess.get(d) ?? 0), 0) : 0;
    const ka = Math.max(0, c.ka - inherited);
    const surprise = quasiPoissonSurprise(ka, c.expected, c.phi).rise - multiple;
    if (surprise < SIGNIFICANT || ka < 3 || ka <= c.expected) continue;
    const unit = rootBins ? 'per request' : 'per 10 s';
    const b = c.kb / c.rb;
    const a = ka / c.ra;
    out.push({
      service: c.service,
      evidence: 'log_levels',
      what: c.level === 'error' ? 'error_logs' : 'warning_logs',
      kind: 'log_error_burst',
      signal: 'error_log_rate',
      operation: null,
      before: round(b, 3),
      after: round(a, 3),
      surprise,
      onset: c.onset,
      summary: `${c.service}: ${c.level} logs ${unit} ${round(b, 3)} → ${round(a, 3)} (${Math.round(ka)} records since ${new Date(c.onset / 1000).toISOString()})`,
      drill_down_sql: LEADS.errorLogs({ from: Math.min(x.bounds.from, c.onset), to: x.bounds.to }, c.service),
    });
  }
  return out;
}

/** Without requests to count by: every fine bin of the baseline and of the rest, observed or not. */
function timeBins(before: readonly number[], onset: number, to: number): [number[], number[]] {
  const lo = before[0] ?? onset;
  const b: number[] = [];
  const a: number[] = [];
  for (let t = lo; t < to; t += FINE_BIN_US) (t < onset ? b : a).push(t);
  return [b, a];
}

/**
 * Error records per service from the 5-minute series (error_log_rate), against the baseline the
 * series keeps, cut where the current regime began (baseline.ts errorOnset): a burst that began
 * before the window (an agent asking 40 minutes into it) has no clean fine bins in the call tree's
 * range, but its series does. Both their share of the records (binomial, widened by the baseline
 * buckets' own dispersion) and their count per bucket (Poisson) must rise; the lesser counts.
 */
export function errorLogSeriesEvidence(x: EvidenceInputs): Candidate[] {
  const m = x.model;
  const b = x.bounds;
  const windowBuckets = (b.to - b.from) / BUCKET_US;
  const logsBy = new Map<string, { n: number; k: number }>();
  for (const r of x.windowLogs) {
    const cur = getOrMake(logsBy, r.service_name, () => ({ n: 0, k: 0 }));
    cur.n += r.n;
    cur.k += r.k;
  }
  // A caller logs an error for a call that failed: its calls' failures beyond their baseline rate are its callees'.
  const failedCalls = new Map<string, number>();
  for (const o of m.ops) {
    if (!o.client || o.callee === null || o.callee === o.service) continue;
    failedCalls.set(o.service, (failedCalls.get(o.service) ?? 0) + Math.max(0, o.k - o.n * baselineRate(o.base.k, o.base.n)));
  }
  const out: Candidate[] = [];
  for (const [service, all] of logsBy) {
    const w = { n: all.n, k: Math.max(0, Math.round(all.k - (failedCalls.get(service) ?? 0))) };
    if (w.k === 0) continue;
    const buckets: Bucket[] = m.series.get('error_log_rate')?.get(seriesKey(service, service)) ?? [];
    const base = b.reference ? inReference(buckets, b.reference) : buckets.slice(0, errorOnset(buckets, w.k, w.n)).slice(-m.baseBuckets);
    if (!base.length) continue;
    const baseN = base.reduce((s, v) => s + v.n, 0);
    const baseK = base.reduce((s, v) => s + v.k, 0);
    const rate = baselineRate(baseK, baseN);
    const phi = dispersion(base.map((v) => v.k), base.map((v) => v.n * rate));
    const share = binomialSurprise(w.k / phi, w.n / phi, rate);
    const perBucketBefore = baseK / base.length;
    const perBucketAfter = w.k / Math.max(1, windowBuckets);
    const volume = quasiPoissonSurprise(w.k, Math.max(perBucketBefore, 0.5) * windowBuckets, phi).rise;
    const surprise = Math.min(share, volume);
    if (surprise < SIGNIFICANT || perBucketAfter < 2 * perBucketBefore) continue;
    out.push({
      service,
      evidence: 'log_levels',
      what: 'error_log_series',
      kind: 'log_error_burst',
      signal: 'error_log_rate',
      operation: null,
      before: round(perBucketBefore),
      after: round(perBucketAfter),
      surprise,
      onset: b.from,
      summary: `${service}: ${all.k} error logs in the window${w.k < all.k ? ` (${w.k} beyond its calls that failed)` : ''}, ${round(perBucketAfter, 1)} per 5 minutes against ${round(perBucketBefore, 1)} before`,
      drill_down_sql: LEADS.errorLogs(b, service),
    });
  }
  return out;
}
