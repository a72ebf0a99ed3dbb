// Model calls (gen_ai spans): a model whose calls fail, or end without a normal finish (cut off by
// length, filtered), more often than before the window: binomial against the rate before.
import { errorShift } from '../stats.js';
import { LEADS } from '../leads.js';
import type { FinishHistogram, GenAiBeforeRow, GenAiRow } from '../reads/index.js';
import { SIGNIFICANT, round, type Candidate } from './candidate.js';
import type { EvidenceInputs } from './inputs.js';

const NORMAL_FINISH = new Set(['stop', 'end_turn', 'tool_calls', 'tool_use', 'STOP']);

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

/** Calls whose finish reasons include an abnormal one. */
function badFinishes(hist: FinishHistogram): number {
  let n = 0;
  for (const e of hist) if ([...finishCounts([e]).keys()].some((r) => !NORMAL_FINISH.has(r))) n += e.value;
  return n;
}

export function genAiEvidence(x: EvidenceInputs): Candidate[] {
  const by = new Map<string, { service: string; model: string; w: { n: number; k: number; bad: number }; base: { n: number; k: number; bad: number } }>();
  const add = (r: GenAiRow | GenAiBeforeRow, inWindow: boolean, bad: number) => {
    const key = `${r.service_name}\u0000${r.model}`;
    let e = by.get(key);
    if (!e) by.set(key, (e = { service: r.service_name, model: r.model, w: { n: 0, k: 0, bad: 0 }, base: { n: 0, k: 0, bad: 0 } }));
    const side = inWindow ? e.w : e.base;
    side.n += r.n;
    side.k += r.k;
    side.bad += bad;
  };
  for (const r of x.genAi) add(r, true, badFinishes(r.finish));
  for (const r of x.genAiBefore) add(r, false, badFinishes([{ key: r.finish, value: r.n }]));
  const out: Candidate[] = [];
  for (const e of by.values()) {
    const fin = errorShift(e.w.bad, e.w.n, e.base.bad, e.base.n);
    const err = errorShift(e.w.k, e.w.n, e.base.k, e.base.n);
    const useFinish = fin.surprise >= err.surprise;
    const s = useFinish ? fin : err;
    if (s.surprise < SIGNIFICANT) continue;
    out.push({
      service: e.service,
      evidence: 'gen_ai',
      what: 'gen_ai',
      kind: 'gen_ai_degradation',
      signal: useFinish ? 'gen_ai_finish_reasons' : 'error_rate',
      operation: e.model,
      before: round(s.before),
      after: round(s.after),
      surprise: s.surprise,
      onset: x.bounds.from,
      summary: `${e.service}: model ${e.model} ${useFinish ? `ended ${round(fin.after)}% of calls without a normal finish (length, filter) against ${round(fin.before)}%` : `failed ${round(err.after)}% of calls against ${round(err.before)}%`}`,
      drill_down_sql: LEADS.genAiCalls(x.bounds, e.service, e.model),
    });
  }
  return out;
}
