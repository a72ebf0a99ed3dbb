// Profiles: a function whose profiled cost per second rose, in the window against before it. The
// samples are the counts behind the values: Poisson on the function's samples at its old share of
// the service's.
import { poissonSurprise } from '../stats.js';
import { LEADS } from '../leads.js';
import { SIGNIFICANT, round, type Candidate } from './candidate.js';
import type { EvidenceInputs } from './inputs.js';

/** A service's total profiled cost must rise by at least this factor for a hot spot to be news. */
const PRACTICAL_FACTOR = 1.2;

export function profileEvidence(x: EvidenceInputs): Candidate[] {
  const b = x.bounds;
  const per = new Map<string, { w: Map<string, { v: number; s: number; type: string }>; base: Map<string, number>; wTotal: number; bTotal: number; bFirst: number; wSamples: number; bSamples: number }>();
  for (const r of x.profiles) {
    if (r.unit !== 'nanoseconds') continue;
    let p = per.get(r.service_name);
    if (!p) per.set(r.service_name, (p = { w: new Map(), base: new Map(), wTotal: 0, bTotal: 0, bFirst: Infinity, wSamples: 0, bSamples: 0 }));
    if (r.in_window) {
      const cur = p.w.get(r.function) ?? { v: 0, s: 0, type: r.profile_type };
      cur.v += r.value;
      cur.s += r.samples;
      p.w.set(r.function, cur);
      p.wTotal += r.value;
      p.wSamples += r.samples;
    } else {
      p.base.set(r.function, (p.base.get(r.function) ?? 0) + r.value);
      p.bTotal += r.value;
      p.bSamples += r.samples;
      p.bFirst = Math.min(p.bFirst, r.first_us);
    }
  }
  const out: Candidate[] = [];
  for (const [service, p] of per) {
    if (p.bTotal <= 0 || p.wTotal <= 0 || !Number.isFinite(p.bFirst)) continue;
    const wSec = (b.to - b.from) / 1e6;
    const bSec = Math.max(60, (b.from - p.bFirst) / 1e6);
    const rateW = p.wTotal / wSec;
    const rateB = p.bTotal / bSec;
    let best: { fn: string; grow: number; type: string; wRate: number; bRate: number } | null = null;
    for (const [fn, v] of p.w) {
      const wr = v.v / wSec;
      const br = (p.base.get(fn) ?? 0) / bSec;
      if (!best || wr - br > best.grow) best = { fn, grow: wr - br, type: v.type, wRate: wr, bRate: br };
    }
    if (!best || best.grow <= 0) continue;
    const share = best.bRate > 0 ? best.bRate / rateB : 0.5 / Math.max(1, p.bSamples);
    const expected = share * (p.bSamples / bSec) * wSec;
    const surprise = poissonSurprise(p.w.get(best.fn)!.s, Math.max(expected, 0.5));
    const ratio = rateW / rateB;
    if (surprise < SIGNIFICANT || ratio < PRACTICAL_FACTOR) continue;
    out.push({
      service,
      evidence: 'profiles',
      what: 'hot_spot',
      explains: ['own_latency', 'op_latency'],
      kind: 'resource_hot_spot',
      signal: 'profile_cost',
      operation: best.fn,
      before: round(rateB * 300, 0),
      after: round(rateW * 300, 0),
      surprise,
      onset: b.from,
      summary: `${service}: profiled cost ${round(ratio, 2)}x the baseline; ${best.fn} went from ${round(best.bRate / 1e6, 1)} to ${round(best.wRate / 1e6, 1)} ms per second (${best.type})`,
      drill_down_sql: LEADS.profileFunction(b, service, best.fn),
    });
  }
  return out;
}
