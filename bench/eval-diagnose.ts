// npm run eval:diagnose — does POST /v1/diagnose name the injected cause?
//
// For each case (testkit/scenario): a fresh server, two hours of a seeded microservice system sent
// through OTLP/HTTP and the profile endpoint with one fault injected 10-45 minutes before now (or
// none), the detection pass run over the backfill as a live server would have, then one diagnosis of
// the entry service with the default window (the last 15 minutes). A case is a top-1 hit when the
// first finding's `service` and `signal` match the fault, top-3 when one of the first three does; a
// fault-free case passes when no finding is above `low`.
//
// Then the recorded-style cases (testkit/scenario/recorded.ts, issue 27): spans with no kind,
// status or attributes, levels only in log text, per-pod gauges, noise and gaps, in the shapes the
// issue lists, each diagnosed over the fault's first 3 minutes (default_window: the default window).
// They are scored the same way (an empty signal list: any non-null signal on the service) and by the
// service alone, the held-out rule; a per-shape table closes the run.
//
// Environment: EVAL_SEED (first seed, default 1), EVAL_PER_KIND (seeds per faulty kind, default 4),
// EVAL_CONTROLS (fault-free cases, default 3), EVAL_KINDS (comma-separated kinds), EVAL_CASES (run at
// most this many), EVAL_MAX_SPANS (each case's span budget, default 130,000 for generated cases and
// 40,000 for recorded ones: lower is less traffic), EVAL_OUT (write the per-case results as JSON to
// this file). Recorded cases: EVAL_SHAPES (comma-separated shapes, default all; `none` for none),
// EVAL_PER_SHAPE (cases per shape, default 10), EVAL_RECORDED_SEED (first seed, default 1000),
// EVAL_SERVICES (services in a recorded case's topology, fewest-most, default 8-11 and 36-44 for the Java shapes; e.g. 36-44).
// EVAL_PER_KIND=0 EVAL_CONTROLS=0 runs the recorded cases alone, EVAL_SHAPES=none the generated alone.
import { writeFileSync } from 'node:fs';
import {
  FAULT_KINDS,
  RECORDED_SHAPES,
  caseList,
  diagnose,
  generateRecorded,
  planRecorded,
  recordedCaseList,
  scoreCase,
  sendScenario,
  withLoadedServer,
  withScenarioServer,
  type CaseScore,
  type CaseSpec,
  type DiagnoseAnswer,
  type FaultKind,
  type RecordedShape,
  type RecordedSpec,
} from '../testkit/scenario/index.js';

/** What a row needs of either suite's expectation. */
interface Expect {
  seed: number;
  kind: string;
  topology: string;
  entry: string;
  service: string | null;
  signals: string[];
  detail: string;
  window?: { fromUs: number; toUs: number } | null;
}

interface Row {
  n: number;
  suite: 'generated' | 'recorded';
  expectation: Expect;
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
const maxSpans = env['EVAL_MAX_SPANS'] ? Number(env['EVAL_MAX_SPANS']) : undefined;
const services = env['EVAL_SERVICES'] ? (env['EVAL_SERVICES'].split('-').map(Number) as [number, number]) : undefined;
if (services && !(services.length === 2 && services[0]! >= 3 && services[1]! >= services[0]! && services[1]! <= 47)) throw new Error(`EVAL_SERVICES: fewest-most between 3 and 47, e.g. 36-44 (got ${env['EVAL_SERVICES']})`);
const shapes =
  env['EVAL_SHAPES'] === 'none'
    ? []
    : env['EVAL_SHAPES']
      ? (env['EVAL_SHAPES'].split(',').map((k) => k.trim()) as RecordedShape[]).filter((k) => {
          if (!RECORDED_SHAPES.includes(k)) throw new Error(`EVAL_SHAPES: unknown shape ${k} (known: ${RECORDED_SHAPES.join(', ')})`);
          return true;
        })
      : RECORDED_SHAPES;
type Case = { suite: 'generated'; spec: CaseSpec } | { suite: 'recorded'; spec: RecordedSpec };
const cases: Case[] = [
  ...caseList({
    baseSeed: Number(env['EVAL_SEED'] ?? 1),
    perKind: Number(env['EVAL_PER_KIND'] ?? 4),
    controls: Number(env['EVAL_CONTROLS'] ?? 3),
    ...(kinds ? { kinds } : {}),
  }).map((spec): Case => ({ suite: 'generated', spec: maxSpans ? { ...spec, maxSpans } : spec })),
  ...(shapes.length ? recordedCaseList({ baseSeed: Number(env['EVAL_RECORDED_SEED'] ?? 1000), perShape: Number(env['EVAL_PER_SHAPE'] ?? 10), shapes }) : []).map(
    (spec): Case => ({ suite: 'recorded', spec: { ...spec, ...(maxSpans ? { maxSpans } : {}), ...(services ? { services } : {}) } }),
  ),
].slice(0, env['EVAL_CASES'] ? Number(env['EVAL_CASES']) : undefined);

/** One case on a fresh server: its expectation, the diagnosis of its entry service, the spans sent. */
async function runCase(c: Case): Promise<{ expectation: Expect; answer: DiagnoseAnswer; spans: number }> {
  if (c.suite === 'generated')
    return withScenarioServer(c.spec, async (srv, run) => ({ expectation: run.expectation, answer: await diagnose(srv, run.expectation.entry), spans: run.sent.spans }));
  const plan = planRecorded(c.spec, Date.now() * 1000);
  return withLoadedServer(
    async (srv) => ({ plan, sent: await sendScenario(srv, generateRecorded(plan)) }),
    (run) => run.plan.endUs,
    async (srv, run) => ({ expectation: run.plan.expectation, answer: await diagnose(srv, run.plan.expectation.entry, run.plan.expectation.window), spans: run.sent.spans }),
  );
}

/** The expectation of a case that could not run, for its row. */
async function plannedExpectation(c: Case): Promise<Expect> {
  if (c.suite === 'recorded') return planRecorded(c.spec, Date.now() * 1000).expectation;
  const { planScenario } = await import('../testkit/scenario/faults.js');
  return planScenario(c.spec, Date.now() * 1000).expectation;
}

const pct = (x: number) => (x * 100).toFixed(0) + '%';
const pad = (s: string, n: number) => (s.length >= n ? s.slice(0, n) : s + ' '.repeat(n - s.length));
const fmtFinding = (f: { service?: string | null; signal?: string | null; kind: string; score?: number; severity: string }) =>
  `${f.service ?? '?'}/${f.signal ?? '?'} ${f.kind} ${f.severity} ${(f.score ?? 0).toFixed(2)}`;

const SEVERITY_ORDER = ['none', 'info', 'low', 'medium', 'high', 'critical'];

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
}

async function main(): Promise<void> {
  const seeds = (suite: Case['suite']) => cases.filter((c) => c.suite === suite).map((c) => c.spec.seed);
  console.log(
    `eval:diagnose — ${cases.length} cases (generated seeds ${seeds('generated')[0] ?? '-'}..${seeds('generated').at(-1) ?? '-'}, recorded seeds ${seeds('recorded')[0] ?? '-'}..); window: generated the last 15 minutes, recorded the fault's first 3 minutes (default_window: the last 15); hit = service and signal of the injected fault`,
  );
  console.log(`${pad('#', 3)} ${pad('seed', 4)} ${pad('kind', 17)} ${pad('expected', 34)} hit  ${pad('ms', 6)} got (top 3: service/signal kind severity score)`);
  const rows: Row[] = [];
  const started = performance.now();
  for (const [i, c] of cases.entries()) {
    const t0 = performance.now();
    let row: Row;
    try {
      const { expectation, answer, spans } = await runCase(c);
      row = { n: i + 1, suite: c.suite, expectation, answer, score: scoreCase(expectation, answer), spans, caseMs: 0 };
    } catch (e) {
      // A case that cannot run is a failed case, not the end of the evaluation.
      const answer: DiagnoseAnswer = { status: 0, ms: 0, findings: null, error: (e as Error).message };
      row = { n: i + 1, suite: c.suite, expectation: await plannedExpectation(c), answer, score: { top1: false, top3: false, top1Service: false, top3Service: false, maxSeverity: 'none', pass: false }, spans: 0, caseMs: 0 };
    }
    row.caseMs = performance.now() - t0;
    rows.push(row);
    const e = row.expectation;
    const expected = e.service === null ? `(none) max ≤ low` : `${e.service}/${e.signals.join('|') || 'any'}`;
    const hit = e.service === null ? (row.score.pass ? 'ok ' : 'NO ') : row.score.top1 ? '1  ' : row.score.top3 ? '3  ' : row.score.top1Service ? 's1 ' : row.score.top3Service ? 's3 ' : '-  ';
    const got = row.answer.findings === null ? `ERROR ${row.answer.error}` : row.answer.findings.slice(0, 3).map(fmtFinding).join(' | ') || '(no findings)';
    console.log(`${pad(String(row.n), 3)} ${pad(String(e.seed), 4)} ${pad(e.kind, 17)} ${pad(expected, 34)} ${hit}  ${pad(row.answer.ms.toFixed(0), 6)} ${got}`);
    console.log(`      ${e.detail}; ${e.topology}; ${row.spans} spans; case ${(row.caseMs / 1000).toFixed(1)} s`);
  }
  const total = (performance.now() - started) / 1000;

  const generated = rows.filter((r) => r.suite === 'generated');
  const faulty = generated.filter((r) => r.expectation.service !== null);
  const controls = generated.filter((r) => r.expectation.service === null);
  const share = (rs: Row[], f: (r: Row) => boolean) => (rs.length ? rs.filter(f).length / rs.length : NaN);
  console.log('');
  if (faulty.length) console.log(`generated faulty cases: ${faulty.length}; top-1 ${pct(share(faulty, (r) => r.score.top1))} (${faulty.filter((r) => r.score.top1).length}), top-3 ${pct(share(faulty, (r) => r.score.top3))} (${faulty.filter((r) => r.score.top3).length})   [target: top-1 ≥ 90%, top-3 = 100%]`);
  if (controls.length) {
    const worst = controls.map((r) => r.score.maxSeverity).sort((a, b) => SEVERITY_ORDER.indexOf(b) - SEVERITY_ORDER.indexOf(a))[0];
    console.log(`fault-free cases: ${controls.length}; passed ${controls.filter((r) => r.score.pass).length}; max severity ${worst}   [target: ≤ low]`);
  }
  if (generated.length) console.log('per kind:');
  for (const k of FAULT_KINDS) {
    const rs = generated.filter((r) => r.expectation.kind === k);
    if (!rs.length) continue;
    if (k === 'none') console.log(`  ${pad(k, 17)} pass ${rs.filter((r) => r.score.pass).length}/${rs.length}`);
    else console.log(`  ${pad(k, 17)} top-1 ${rs.filter((r) => r.score.top1).length}/${rs.length}  top-3 ${rs.filter((r) => r.score.top3).length}/${rs.length}`);
  }
  const recorded = rows.filter((r) => r.suite === 'recorded');
  if (recorded.length) {
    console.log('recorded shapes (service+signal / service only; fault-free: highest severity)   [target: top-1 ≥ 90% in every shape; fault-free nothing high or critical]:');
    console.log(`  ${pad('shape', 17)} ${pad('cases', 5)} ${pad('top-1', 6)} ${pad('top-3', 6)} ${pad('svc top-1', 9)} ${pad('svc top-3', 9)} note`);
    for (const k of RECORDED_SHAPES) {
      const rs = recorded.filter((r) => r.expectation.kind === k);
      if (!rs.length) continue;
      const n = (f: (r: Row) => boolean) => `${rs.filter(f).length}/${rs.length}`;
      if (k === 'fault_free') {
        const sev = rs.map((r) => r.score.maxSeverity).sort((a, b) => SEVERITY_ORDER.indexOf(b) - SEVERITY_ORDER.indexOf(a));
        console.log(`  ${pad(k, 17)} ${pad(String(rs.length), 5)} highest severity ${sev[0]}; with nothing above medium ${n((r) => SEVERITY_ORDER.indexOf(r.score.maxSeverity) <= SEVERITY_ORDER.indexOf('medium'))}; per case: ${sev.join(' ')}`);
        continue;
      }
      let note = '';
      if (k === 'grid_shift') {
        // Pairs on one data seed, the onset 150 s apart in the grid: does the first finding stay?
        const bySeed = new Map<number, Row[]>();
        for (const r of rs) bySeed.set(r.expectation.seed - (r.expectation.seed % 2), [...(bySeed.get(r.expectation.seed - (r.expectation.seed % 2)) ?? []), r]);
        const pairs = [...bySeed.values()].filter((p) => p.length === 2);
        const first = (r: Row) => (r.answer.findings?.[0] ? `${r.answer.findings[0].service}/${r.answer.findings[0].signal}` : '-');
        note = `pairs 150 s apart with the same first finding: ${pairs.filter(([a, b]) => first(a!) === first(b!)).length}/${pairs.length}`;
      }
      console.log(`  ${pad(k, 17)} ${pad(String(rs.length), 5)} ${pad(n((r) => r.score.top1), 6)} ${pad(n((r) => r.score.top3), 6)} ${pad(n((r) => r.score.top1Service), 9)} ${pad(n((r) => r.score.top3Service), 9)} ${note}`);
    }
    const rf = recorded.filter((r) => r.expectation.service !== null);
    console.log(`  ${pad('all faulty', 17)} ${pad(String(rf.length), 5)} ${pad(String(rf.filter((r) => r.score.top1).length), 6)} ${pad(String(rf.filter((r) => r.score.top3).length), 6)} ${pad(String(rf.filter((r) => r.score.top1Service).length), 9)} ${pad(String(rf.filter((r) => r.score.top3Service).length), 9)}`);
  }
  const ms = rows.filter((r) => r.answer.status === 200).map((r) => r.answer.ms);
  console.log(`diagnose latency (one call per case, entry service): p50 ${quantile(ms, 0.5).toFixed(0)} ms, p95 ${quantile(ms, 0.95).toFixed(0)} ms, max ${Math.max(...ms, 0).toFixed(0)} ms`);
  const failed = rows.filter((r) => r.answer.findings === null);
  if (failed.length) console.log(`cases with no answer: ${failed.length} (first: ${failed[0]!.answer.error})`);
  console.log(`total ${total.toFixed(0)} s for ${rows.length} cases`);
  if (env['EVAL_OUT']) writeFileSync(env['EVAL_OUT'], JSON.stringify(rows, null, 1));
}

await main();
