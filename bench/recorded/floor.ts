// The baseline ranker: the floor the diagnosis must beat. Four one-signal rankings, each a robust
// score of the window against the stretch before it, read through POST /v1/query as any agent could,
// fused by rank. Deliberately simple; nothing in it is tuned to a recording:
// - wait: how long callers wait on calls into a service (their span around the call), median of
//   the log duration against the reference's median and spread;
// - errors: ERROR records (logs) and error spans, Poisson against the reference's rate;
// - gauges: a pod's CPU and memory gauges, against the reference's median and spread;
// - vanished: a log event (template) whose rate fell, Poisson against the reference's rate.
// A service enters a signal's ranking when its score passes 3 (a robust z or its Poisson analogue);
// the fused score is Σ 1/(1 + rank) over signals, ties by the largest score.

/** Robust-score threshold for a signal to rank a service: three spreads, the usual outlier line. */
const SIGNIFICANT = 3;
/** The reference: this long before the window (what a simple ranker takes as "before"). */
export const FLOOR_REFERENCE_US = 30 * 60e6;

const lit = (us: number) => `TIMESTAMP '${new Date(Math.floor(us / 1000)).toISOString().replace('T', ' ').replace('Z', '')}${String(Math.floor(us) % 1000).padStart(3, '0')}'`;

type Query = (sql: string) => Promise<Record<string, unknown>[]>;

export function queryVia(api: string): Query {
  return async (sql) => {
    const r = await fetch(`${api}/v1/query`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: sql });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`query ${r.status}: ${text.slice(0, 300)}\n${sql}`);
    return JSON.parse(text) as Record<string, unknown>[];
  };
}

const num = (v: unknown): number => (v === null || v === undefined ? NaN : Number(v));

interface Window {
  fromUs: number;
  toUs: number;
}

/** side: 'w' (window) or 'r' (reference). */
const side = (w: Window, col = 'timestamp') => `CASE WHEN ${col} >= ${lit(w.fromUs)} THEN 'w' ELSE 'r' END`;
const range = (w: Window, col = 'timestamp') => `${col} >= ${lit(w.fromUs - FLOOR_REFERENCE_US)} AND ${col} < ${lit(w.toUs)}`;

async function waitScores(q: Query, w: Window): Promise<Map<string, number>> {
  const rows = await q(
    `SELECT c.service_name AS service, ${side(w, 'p.timestamp')} AS side, count(*) AS n, median(ln(p.duration_us + 1)) AS med, ` +
      `quantile_cont(ln(p.duration_us + 1), 0.75) - quantile_cont(ln(p.duration_us + 1), 0.25) AS iqr ` +
      `FROM svc_spans c JOIN svc_spans p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id ` +
      `WHERE ${range(w, 'c.timestamp')} AND ${range(w, 'p.timestamp')} AND p.service_name <> c.service_name GROUP BY ALL`,
  );
  return robust(rows);
}

/** Per service: (window median − reference median) / (reference IQR / 1.349), with a floor on the spread. */
function robust(rows: Record<string, unknown>[]): Map<string, number> {
  const by = new Map<string, { w?: Record<string, unknown>; r?: Record<string, unknown> }>();
  for (const r of rows) {
    const k = String(r['service']);
    const e = by.get(k) ?? {};
    e[r['side'] === 'w' ? 'w' : 'r'] = r;
    by.set(k, e);
  }
  const out = new Map<string, number>();
  for (const [s, e] of by) {
    if (!e.w || !e.r || num(e.r['n']) < 3) continue;
    const spread = Math.max(num(e.r['iqr']) / 1.349, 0.05 * Math.abs(num(e.r['med'])), 1e-6);
    const z = (num(e.w['med']) - num(e.r['med'])) / spread;
    if (Number.isFinite(z)) out.set(s, Math.max(out.get(s) ?? -Infinity, z));
  }
  return out;
}

/** Poisson surprise of a count against an expectation, as a z-like score (positive: more than expected). */
const poissonZ = (k: number, lambda: number) => (k - lambda) / Math.sqrt(lambda + 1);

async function errorScores(q: Query, w: Window): Promise<Map<string, number>> {
  const rows = await q(
    `SELECT service_name AS service, ${side(w)} AS side, count(*) FILTER (WHERE is_error) AS k FROM svc_logs WHERE ${range(w)} GROUP BY ALL ` +
      `UNION ALL SELECT service_name AS service, ${side(w)} AS side, count(*) FILTER (WHERE is_error) AS k FROM svc_spans WHERE ${range(w)} GROUP BY ALL`,
  );
  const ratio = (w.toUs - w.fromUs) / FLOOR_REFERENCE_US;
  const by = new Map<string, { w: number; r: number }>();
  for (const r of rows) {
    const e = by.get(String(r['service'])) ?? { w: 0, r: 0 };
    e[r['side'] === 'w' ? 'w' : 'r'] += num(r['k']);
    by.set(String(r['service']), e);
  }
  return new Map([...by].map(([s, e]) => [s, poissonZ(e.w, e.r * ratio)]));
}

async function gaugeScores(q: Query, w: Window): Promise<Map<string, number>> {
  const rows = await q(
    `SELECT service_name || '|' || metric_name || '|' || coalesce(k8s_pod_name, '') AS service, ${side(w)} AS side, count(*) AS n, median(value) AS med, ` +
      `quantile_cont(value, 0.75) - quantile_cont(value, 0.25) AS iqr FROM svc_metrics_gauge ` +
      `WHERE ${range(w)} AND (lower(metric_name) LIKE '%cpu%' OR lower(metric_name) LIKE '%mem%') AND lower(metric_name) NOT LIKE '%node%' GROUP BY ALL`,
  );
  const perSeries = robust(rows);
  const out = new Map<string, number>();
  for (const [k, z] of perSeries) {
    const s = k.split('|')[0]!;
    out.set(s, Math.max(out.get(s) ?? -Infinity, z));
  }
  return out;
}

async function vanishedScores(q: Query, w: Window): Promise<Map<string, number>> {
  const rows = await q(
    `SELECT service_name AS service, template_id AS t, count(*) FILTER (WHERE timestamp >= ${lit(w.fromUs)}) AS kw, ` +
      `count(*) FILTER (WHERE timestamp < ${lit(w.fromUs)}) AS kr FROM svc_logs WHERE ${range(w)} AND template_id IS NOT NULL GROUP BY ALL`,
  );
  const ratio = (w.toUs - w.fromUs) / FLOOR_REFERENCE_US;
  const out = new Map<string, number>();
  for (const r of rows) {
    const lambda = num(r['kr']) * ratio;
    if (lambda < 5) continue;
    const z = -poissonZ(num(r['kw']), lambda);
    const s = String(r['service']);
    out.set(s, Math.max(out.get(s) ?? -Infinity, z));
  }
  return out;
}

export const FLOOR_SIGNALS = { wait: waitScores, errors: errorScores, gauges: gaugeScores, vanished: vanishedScores } as const;

/** Services ranked by the fused score (most suspect first), and each signal's own ranking. */
export async function floorRank(q: Query, w: Window): Promise<{ ranked: string[]; bySignal: Record<string, string[]> }> {
  const fused = new Map<string, { score: number; best: number }>();
  const bySignal: Record<string, string[]> = {};
  for (const [name, scores] of Object.entries(FLOOR_SIGNALS)) {
    const list = [...(await scores(q, w))].filter(([, z]) => z > SIGNIFICANT).sort((a, b) => b[1] - a[1]);
    bySignal[name] = list.map(([s]) => s);
    list.forEach(([s, z], i) => {
      const e = fused.get(s) ?? { score: 0, best: 0 };
      e.score += 1 / (1 + i + 1);
      e.best = Math.max(e.best, z);
      fused.set(s, e);
    });
  }
  const ranked = [...fused].sort((a, b) => b[1].score - a[1].score || b[1].best - a[1].best).map(([s]) => s);
  return { ranked, bySignal };
}
