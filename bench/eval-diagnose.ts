// npm run eval:diagnose — does POST /v1/diagnose name the injected cause?
//
// For each case (bench/lib/scenario): a fresh server, two hours of a seeded microservice system sent
// through OTLP/HTTP and the profile endpoint with one fault injected 10-45 minutes before now (or
// none), the detection pass run over the backfill as a live server would have, then one diagnosis of
// the entry service with the default window (the last 15 minutes). A case is a top-1 hit when the
// first finding's `service` and `signal` match the fault, top-3 when one of the first three does; a
// fault-free case passes when no finding is above `low`.
//
// Environment: EVAL_SEED (first seed, default 1), EVAL_PER_KIND (seeds per faulty kind, default 4),
// EVAL_CONTROLS (fault-free cases, default 3), EVAL_KINDS (comma-separated kinds), EVAL_CASES (run at
// most this many), EVAL_MAX_SPANS (each case's span budget, default 130,000: lower is less traffic),
// EVAL_OUT (write the per-case results as JSON to this file).
import { writeFileSync } from 'node:fs';
import { FAULT_KINDS, caseList, diagnose, scoreCase, withScenarioServer, type CaseScore, type DiagnoseAnswer, type Expectation, type FaultKind } from './lib/scenario/index.js';

interface Row {
  n: number;
  expectation: Expectation;
  answer: DiagnoseAnswer;
  score: CaseScore;
  spans: number;
  caseMs: number;
}

const env = process.env;
const kinds = env['EVAL_KINDS']
  ? (env['EVAL_KINDS'].split(',').map((k) => k.trim()) as FaultKind[]).filter((k) => {
      if (!FAULT_KINDS.includes(k)) throw new Error(`EVAL_KINDS: unknown kind ${k} (known: ${FAULT_KINDS.join(', ')})`);
      return true;
    })
  : undefined;
const cases = caseList({
  baseSeed: Number(env['EVAL_SEED'] ?? 1),
  perKind: Number(env['EVAL_PER_KIND'] ?? 4),
  controls: Number(env['EVAL_CONTROLS'] ?? 3),
  ...(kinds ? { kinds } : {}),
})
  .slice(0, env['EVAL_CASES'] ? Number(env['EVAL_CASES']) : undefined)
  .map((c) => (env['EVAL_MAX_SPANS'] ? { ...c, maxSpans: Number(env['EVAL_MAX_SPANS']) } : c));

const pct = (x: number) => (x * 100).toFixed(0) + '%';
const pad = (s: string, n: number) => (s.length >= n ? s.slice(0, n) : s + ' '.repeat(n - s.length));
const fmtFinding = (f: { service?: string | null; signal?: string | null; kind: string; score?: number; severity: string }) =>
  `${f.service ?? '?'}/${f.signal ?? '?'} ${f.kind} ${f.severity} ${(f.score ?? 0).toFixed(2)}`;

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
}

async function main(): Promise<void> {
  console.log(`eval:diagnose — ${cases.length} cases (seeds ${cases[0]?.seed}..${cases[cases.length - 1]?.seed}); window: the last 15 minutes; hit = service and signal of the injected fault`);
  console.log(`${pad('#', 3)} ${pad('seed', 4)} ${pad('kind', 17)} ${pad('expected', 34)} hit  ${pad('ms', 6)} got (top 3: service/signal kind severity score)`);
  const rows: Row[] = [];
  const started = performance.now();
  for (const [i, spec] of cases.entries()) {
    const t0 = performance.now();
    let row: Row;
    try {
      row = await withScenarioServer(spec, async (srv, run) => {
        const answer = await diagnose(srv, run.expectation.entry);
        return { n: i + 1, expectation: run.expectation, answer, score: scoreCase(run.expectation, answer), spans: run.sent.spans, caseMs: 0 };
      });
    } catch (e) {
      // A case that cannot run is a failed case, not the end of the evaluation.
      const { planScenario } = await import('./lib/scenario/faults.js');
      const expectation = planScenario(spec, Date.now() * 1000).expectation;
      const answer: DiagnoseAnswer = { status: 0, ms: 0, findings: null, error: (e as Error).message };
      row = { n: i + 1, expectation, answer, score: { top1: false, top3: false, maxSeverity: 'none', pass: false }, spans: 0, caseMs: 0 };
    }
    row.caseMs = performance.now() - t0;
    rows.push(row);
    const e = row.expectation;
    const expected = e.service === null ? `(none) max ≤ low` : `${e.service}/${e.signals.join('|')}`;
    const hit = e.service === null ? (row.score.pass ? 'ok ' : 'NO ') : row.score.top1 ? '1  ' : row.score.top3 ? '3  ' : '-  ';
    const got = row.answer.findings === null ? `ERROR ${row.answer.error}` : row.answer.findings.slice(0, 3).map(fmtFinding).join(' | ') || '(no findings)';
    console.log(`${pad(String(row.n), 3)} ${pad(String(e.seed), 4)} ${pad(e.kind, 17)} ${pad(expected, 34)} ${hit}  ${pad(row.answer.ms.toFixed(0), 6)} ${got}`);
    console.log(`      ${e.detail}; ${e.topology}; ${row.spans} spans; case ${(row.caseMs / 1000).toFixed(1)} s`);
  }
  const total = (performance.now() - started) / 1000;

  const faulty = rows.filter((r) => r.expectation.service !== null);
  const controls = rows.filter((r) => r.expectation.service === null);
  const share = (rs: Row[], f: (r: Row) => boolean) => (rs.length ? rs.filter(f).length / rs.length : NaN);
  console.log('');
  console.log(`faulty cases: ${faulty.length}; top-1 ${pct(share(faulty, (r) => r.score.top1))} (${faulty.filter((r) => r.score.top1).length}), top-3 ${pct(share(faulty, (r) => r.score.top3))} (${faulty.filter((r) => r.score.top3).length})   [target: top-1 ≥ 90%, top-3 = 100%]`);
  if (controls.length) {
    const worst = controls.map((r) => r.score.maxSeverity).sort((a, b) => ['none', 'info', 'low', 'medium', 'high', 'critical'].indexOf(b) - ['none', 'info', 'low', 'medium', 'high', 'critical'].indexOf(a))[0];
    console.log(`fault-free cases: ${controls.length}; passed ${controls.filter((r) => r.score.pass).length}; max severity ${worst}   [target: ≤ low]`);
  }
  console.log('per kind:');
  for (const k of FAULT_KINDS) {
    const rs = rows.filter((r) => r.expectation.kind === k);
    if (!rs.length) continue;
    if (k === 'none') console.log(`  ${pad(k, 17)} pass ${rs.filter((r) => r.score.pass).length}/${rs.length}`);
    else console.log(`  ${pad(k, 17)} top-1 ${rs.filter((r) => r.score.top1).length}/${rs.length}  top-3 ${rs.filter((r) => r.score.top3).length}/${rs.length}`);
  }
  const ms = rows.filter((r) => r.answer.status === 200).map((r) => r.answer.ms);
  console.log(`diagnose latency (one call per case, entry service): p50 ${quantile(ms, 0.5).toFixed(0)} ms, p95 ${quantile(ms, 0.95).toFixed(0)} ms, max ${Math.max(...ms, 0).toFixed(0)} ms`);
  const failed = rows.filter((r) => r.answer.findings === null);
  if (failed.length) console.log(`cases with no answer: ${failed.length} (first: ${failed[0]!.answer.error})`);
  console.log(`total ${total.toFixed(0)} s for ${rows.length} cases`);
  if (env['EVAL_OUT']) writeFileSync(env['EVAL_OUT'], JSON.stringify(rows, null, 1));
}

await main();
