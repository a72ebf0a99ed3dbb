// Asks the service about one recorded fault through the public API, in the three ways an agent
// would, and turns each answer into a ranking of services.
import type { RecordedFault } from './recording.js';

export const CALL_STYLES = ['from_injection', 'last_15m', 'ten_services'] as const;
export type CallStyle = (typeof CALL_STYLES)[number];

/** How long after the injection an agent asks (the window's end in every style); EVAL_AFTER_S varies it while developing. */
export const AFTER_US = Number(process.env['EVAL_AFTER_S'] ?? 180) * 1e6;
/** The length of the last_15m style's window; EVAL_LAST_MIN varies it while developing (stress on the tuned day). */
const LAST_US = Number(process.env['EVAL_LAST_MIN'] ?? 15) * 60e6;

export interface Answer {
  /** Services of the findings, in the answer's order (repeats kept: AS@3 is "one of the first three findings"). */
  ranked: string[];
  /** The first findings as `kind service score: summary`, for EVAL_VERBOSE. */
  detail: string[];
  error: string | null;
  ms: number;
}

interface Finding {
  kind?: string;
  service?: string | null;
  score?: number;
  summary?: string;
}
const detailOf = (fs: Finding[]) => fs.slice(0, 5).map((f) => `${f.kind} ${f.service} ${f.score}: ${(f.summary ?? '').slice(0, 160)}`);
interface Body {
  results?: Record<string, { findings?: Finding[] }>;
  errors?: Record<string, string>;
}

/** The window of a style, in the store's clock. */
export function windowOf(style: CallStyle, fault: RecordedFault, shiftUs: number): { fromUs: number; toUs: number } {
  const inj = fault.injectUs + shiftUs;
  return style === 'last_15m' ? { fromUs: inj + AFTER_US - LAST_US, toUs: inj + AFTER_US } : { fromUs: inj, toUs: inj + AFTER_US };
}

async function post(api: string, body: unknown): Promise<{ status: number; body: Body | null; text: string; ms: number }> {
  const t0 = performance.now();
  const r = await fetch(`${api}/v1/diagnose`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  const ms = performance.now() - t0;
  try {
    return { status: r.status, body: r.status === 200 ? (JSON.parse(text) as Body) : null, text, ms };
  } catch {
    return { status: r.status, body: null, text, ms };
  }
}

/** One style's answer. `busiest`: the services of the ten-services call. */
export async function ask(api: string, style: CallStyle, entry: string, fault: RecordedFault, shiftUs: number, busiest: string[]): Promise<Answer> {
  const w = windowOf(style, fault, shiftUs);
  const services = style === 'ten_services' ? busiest.slice(0, 10) : [entry];
  const r = await post(api, { services, from_ts: Math.round(w.fromUs), to_ts: Math.round(w.toUs) });
  if (!r.body) return { ranked: [], detail: [], error: `HTTP ${r.status}: ${r.text.slice(0, 200)}`, ms: r.ms };
  if (style !== 'ten_services') {
    const block = r.body.results?.[entry];
    if (!block) return { ranked: [], detail: [], error: r.body.errors?.[entry] ?? 'no block for the entry', ms: r.ms };
    const fs = block.findings ?? [];
    return { ranked: fs.map((f) => f.service ?? ''), detail: detailOf(fs), error: null, ms: r.ms };
  }
  // Ten blocks in one answer: every finding of every block, by score, as an agent merging them would.
  const all = Object.values(r.body.results ?? {}).flatMap((b) => b.findings ?? []);
  all.sort((a, b) => (b.score ?? 0) - (a.score ?? 0));
  const errors = Object.keys(r.body.errors ?? {});
  return { ranked: all.map((f) => f.service ?? ''), detail: detailOf(all), error: all.length === 0 && errors.length ? `errors for ${errors.join(', ')}` : null, ms: r.ms };
}

/** 1-based rank of the truth among the first findings (null: not among them). */
export function rankOf(ranked: string[], truth: string): number | null {
  const i = ranked.indexOf(truth);
  return i < 0 ? null : i + 1;
}
