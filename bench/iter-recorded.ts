// npm run iter:recorded — a fast loop over recorded-style cases while working on the diagnosis:
// each case is generated and loaded once into a kept data directory (ITER_DIR, default
// /tmp/tds-iter), then every run only restarts a server on it and diagnoses. The default window is
// pinned to the clock the case was loaded at. ITER_SHAPES, ITER_PER_SHAPE (default 2), ITER_SEED
// (default 1000) pick the cases, or ITER_CASES (shape-seed,…); ITER_SERVICES sizes the topologies as
// EVAL_SERVICES does (e.g. 36-44); ITER_RELOAD=1 loads them again.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serverEnv, startChildServer } from '../testkit/server.js';
import { RECORDED_SHAPES, diagnose, generateRecorded, planRecorded, recordedCaseList, scoreCase, sendScenario, waitForDetection, type RecordedShape } from '../testkit/scenario/index.js';

const env = process.env;
const root = env['ITER_DIR'] ?? '/tmp/tds-iter';
const shapes = (env['ITER_SHAPES'] ? env['ITER_SHAPES'].split(',') : RECORDED_SHAPES) as RecordedShape[];
// ITER_CASES=shape-seed,… names cases directly (as eval:diagnose numbers them).
const services = env['ITER_SERVICES'] ? (env['ITER_SERVICES'].split('-').map(Number) as [number, number]) : undefined;
const specs = (
  env['ITER_CASES']
    ? env['ITER_CASES'].split(',').map((c) => ({ shape: c.slice(0, c.lastIndexOf('-')) as RecordedShape, seed: Number(c.slice(c.lastIndexOf('-') + 1)) }))
    : recordedCaseList({ baseSeed: Number(env['ITER_SEED'] ?? 1000), perShape: Number(env['ITER_PER_SHAPE'] ?? 2), shapes })
).map((spec) => (services ? { ...spec, services } : spec));
const verbose = env['ITER_VERBOSE'] === '1';

interface Saved {
  nowUs: number;
}

let hits = 0;
let hits3 = 0;
const rows: string[] = [];
for (const spec of specs) {
  const dir = join(root, `${spec.shape}-${spec.seed}${services ? `-s${services.join('-')}` : ''}`);
  const meta = join(dir, 'case.json');
  if (env['ITER_RELOAD'] === '1' || !existsSync(meta)) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const nowUs = Date.now() * 1000;
    const plan = planRecorded(spec, nowUs);
    const loader = await startChildServer({ SVC_DETECT_INTERVAL_S: '3600', SVC_DETECT_GRACE_S: '0' }, dir);
    await sendScenario(loader, generateRecorded(plan));
    await loader.stop();
    const det = await startChildServer({ SVC_DETECT_INTERVAL_S: '2', SVC_DETECT_GRACE_S: '0' }, dir);
    await waitForDetection(det, plan.endUs);
    await det.stop();
    writeFileSync(meta, JSON.stringify({ nowUs } satisfies Saved));
  }
  const { nowUs } = JSON.parse(readFileSync(meta, 'utf8')) as Saved;
  const plan = planRecorded(spec, nowUs);
  const e = plan.expectation;
  // SVC_* of this process reach the diagnosing server (e.g. SVC_DIAGNOSE_SCAN_SPANS to try the window sample on every case).
  const srv = await startChildServer({ SVC_DETECT_INTERVAL_S: '3600', SVC_DETECT_GRACE_S: '3600', ...serverEnv() }, dir);
  try {
    const window = e.window ?? { fromUs: nowUs - 15 * 60e6, toUs: nowUs };
    const a = await diagnose(srv, e.entry, window);
    const s = scoreCase(e, a);
    hits += Number(s.top1Service);
    hits3 += Number(s.top3Service);
    const top = (a.findings ?? []).slice(0, verbose ? 6 : 3).map((f) => `${f.service}/${f.signal} ${f.kind} ${(f.score ?? 0).toFixed(2)}`);
    rows.push(`${s.top1Service ? 'HIT ' : s.top3Service ? 'top3' : 'miss'} ${spec.shape}-${spec.seed} want ${e.service ?? '-'} [${e.detail.slice(0, 110)}] ${Math.round(a.ms)}ms\n     ${a.error ?? top.join(' | ')}`);
    if (verbose && a.findings) for (const f of a.findings.slice(0, 6)) rows.push(`       ${f.summary.slice(0, 220)}`);
    console.log(rows.slice(-1 - (verbose ? Math.min(6, a.findings?.length ?? 0) : 0)).join('\n'));
  } finally {
    await srv.stop();
  }
}
console.log(`top-1 ${hits}/${specs.length}, top-3 ${hits3}/${specs.length}`);
