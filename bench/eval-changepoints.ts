// npm run eval:changepoints — accuracy of the BOCPD detector on public data, one fixed configuration.
//
// TCPD (../shared/corpora/tcpd): every series, F1 (margin 5) and cover scored exactly as TCPDBench's
// metrics.py (src/detect/bocpd/metrics.ts), next to TCPDBench's published bocpd (default and
// oracle-tuned) and "zero" scores. TCPD values are not service signals: they go through the generic
// signal's model (Normal–Gamma regression, each regime a level or a line, Student-t predictive)
// after standardisation (mean, standard deviation of the series). Multivariate series: each
// dimension is detected on its own and the change points are pooled (a point within 5 of one
// already kept is dropped).
//
// NAB realAWSCloudwatch (../shared/corpora/nab): 5-minute cloud metrics with labelled anomaly windows;
// same model and configuration; per series the windows hit (≥ 1 change point inside) and the false
// positives (change points outside every window).
//
// Environment, for exploration only (the printed header says when the configuration is overridden):
// BOCPD_CONFIG='{"hazard":0.02}' overrides configuration keys, BOCPD_ENGINE=ts runs the TypeScript
// reference (same scores), BOCPD_VERBOSE=1 prints each series' change points.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CORPORA_DIR } from '../src/core/paths.js';
import { BocpdDetector, SIGNAL_CONFIG, standardScaling, type DetectorConfig } from '../src/detect/bocpd/index.js';
import { covering, fMeasure } from '../src/detect/bocpd/metrics.js';

const override = process.env.BOCPD_CONFIG ? (JSON.parse(process.env.BOCPD_CONFIG) as Partial<DetectorConfig>) : undefined;
const engine = process.env.BOCPD_ENGINE === 'ts' ? 'ts' : 'wasm';
const config: DetectorConfig = { ...SIGNAL_CONFIG.generic, ...override };

const mean = (a: number[]): number => a.reduce((s, x) => s + x, 0) / a.length;

function detect(values: number[]): number[] {
  const { loc, scale } = standardScaling(values);
  const det = new BocpdDetector({ ...config, loc, scale }, { engine });
  return det.run({ values }).changes.map((c) => c.index);
}

function pool(lists: number[][], margin: number): number[] {
  const all = lists.flat().sort((a, b) => a - b);
  const kept: number[] = [];
  for (const c of all) if (!kept.some((k) => Math.abs(k - c) <= margin)) kept.push(c);
  return kept;
}

function readCsvTable(path: string): Map<string, Record<string, number>> {
  const lines = readFileSync(path, 'utf8').trim().split('\n');
  const head = lines[0]!.split(',');
  const m = new Map<string, Record<string, number>>();
  for (const l of lines.slice(1)) {
    const cells = l.split(',');
    const row: Record<string, number> = {};
    head.forEach((h, i) => (row[h] = Number(cells[i])));
    m.set(cells[0]!, row);
  }
  return m;
}

const f3 = (x: number): string => (Number.isFinite(x) ? x.toFixed(3) : '  -  ');

function tcpd(): void {
  const dir = join(CORPORA_DIR, 'tcpd');
  if (!existsSync(dir)) {
    console.log(`TCPD: skipped, ${dir} is absent`);
    return;
  }
  const annotations = JSON.parse(readFileSync(join(dir, 'annotations.json'), 'utf8')) as Record<string, Record<string, number[]>>;
  const res = join(dir, 'tcpdbench_results');
  const pub = {
    df1: readCsvTable(join(res, 'default_f1_combined_full.csv')),
    dcov: readCsvTable(join(res, 'default_cover_combined_full.csv')),
    of1: readCsvTable(join(res, 'oracle_f1_combined_full.csv')),
    ocov: readCsvTable(join(res, 'oracle_cover_combined_full.csv')),
  };
  const names = readdirSync(join(dir, 'datasets')).sort();
  console.log(`TCPD — generic signal (${config.model} model) on standardised values ((x - mean) / sd); F1 margin 5, TCPDBench scoring`);
  console.log('series               n  dim  #cp |   F1  cover | bocpd-def F1/cov | bocpd-oracle F1/cov | zero F1/cov (ours, published)');
  const rows: Array<{ f1: number; cov: number; pd: number; pdc: number; po: number; poc: number; zf: number; zc: number; zfp: number; zcp: number }> = [];
  let zeroDiff = 0;
  for (const name of names) {
    const data = JSON.parse(readFileSync(join(dir, 'datasets', name, `${name}.json`), 'utf8')) as { n_obs: number; series: Array<{ raw: Array<number | null> }> };
    const ann = annotations[name];
    if (!ann) continue;
    const n = data.n_obs;
    const dims = data.series.map((s) => s.raw.map((v) => (v === null ? NaN : v)));
    const cps = dims.length === 1 ? detect(dims[0]!) : pool(dims.map(detect), 5);
    const { f1 } = fMeasure(ann, cps, 5);
    const cov = covering(ann, cps, n);
    const zf = fMeasure(ann, [], 5).f1;
    const zc = covering(ann, [], n);
    const g = (t: Map<string, Record<string, number>>, col: string): number => t.get(name)?.[col] ?? NaN;
    const r = { f1, cov, pd: g(pub.df1, 'bocpd'), pdc: g(pub.dcov, 'bocpd'), po: g(pub.of1, 'bocpd'), poc: g(pub.ocov, 'bocpd'), zf, zc, zfp: g(pub.df1, 'zero'), zcp: g(pub.dcov, 'zero') };
    rows.push(r);
    if (Number.isFinite(r.zfp)) zeroDiff = Math.max(zeroDiff, Math.abs(r.zf - r.zfp), Math.abs(r.zc - r.zcp));
    console.log(
      `${name.padEnd(19)} ${String(n).padStart(3)}  ${dims.length}  ${String(cps.length).padStart(4)} | ${f3(f1)}  ${f3(cov)} |   ${f3(r.pd)} / ${f3(r.pdc)}  |     ${f3(r.po)} / ${f3(r.poc)}    | ${f3(zf)}/${f3(zc)}  ${f3(r.zfp)}/${f3(r.zcp)}` +
        (process.env.BOCPD_VERBOSE ? `  cps=${cps.join(',')}` : ''),
    );
  }
  const m = (k: keyof (typeof rows)[number]): number => mean(rows.map((r) => r[k]).filter(Number.isFinite));
  console.log(`MEAN over ${rows.length} series      | ${f3(m('f1'))}  ${f3(m('cov'))} |   ${f3(m('pd'))} / ${f3(m('pdc'))}  |     ${f3(m('po'))} / ${f3(m('poc'))}    | ${f3(m('zf'))}/${f3(m('zc'))}  ${f3(m('zfp'))}/${f3(m('zcp'))}`);
  console.log('published means over all 37 univariate TCPD series: bocpd default 0.662 / 0.594, bocpd oracle 0.886 / 0.783, zero 0.645 / 0.566 (F1 / cover)');
  console.log(`scorer sanity check: our "zero" scores vs TCPDBench's published "zero" column, max |diff| = ${zeroDiff.toExponential(2)} ${zeroDiff < 5e-4 ? '(reproduced to the published 3 decimals)' : '(MISMATCH)'}`);
  console.log(`targets: mean F1 >= 0.80 ${m('f1') >= 0.8 ? 'met' : 'NOT met'}, mean cover >= 0.70 ${m('cov') >= 0.7 ? 'met' : 'NOT met'}`);
}

function nab(label: string, detectFn: (values: number[]) => number[]): void {
  const dir = join(CORPORA_DIR, 'nab');
  if (!existsSync(dir)) {
    console.log(`NAB: skipped, ${dir} is absent`);
    return;
  }
  const windows = JSON.parse(readFileSync(join(dir, 'labels', 'combined_windows.json'), 'utf8')) as Record<string, Array<[string, string]>>;
  const files = readdirSync(join(dir, 'data', 'realAWSCloudwatch')).filter((f) => f.endsWith('.csv')).sort();
  console.log(`\nNAB realAWSCloudwatch — ${label}; a window is hit when a change point falls inside it`);
  console.log('series                                   n   windows  hit  changes  false-pos');
  let W = 0;
  let H = 0;
  let FP = 0;
  const toUs = (s: string): number => Date.parse(s.replace(' ', 'T').replace(/(\.\d{3})\d*$/, '$1') + 'Z');
  for (const f of files) {
    const lines = readFileSync(join(dir, 'data', 'realAWSCloudwatch', f), 'utf8').trim().split('\n').slice(1);
    const ts = lines.map((l) => toUs(l.split(',')[0]!));
    const values = lines.map((l) => Number(l.split(',')[1]));
    const cps = detectFn(values).filter((c) => c > 0);
    const win = (windows[`realAWSCloudwatch/${f}`] ?? []).map(([a, b]) => [toUs(a), toUs(b)] as const);
    const inWin = (c: number): boolean => win.some(([a, b]) => ts[c]! >= a && ts[c]! <= b);
    const hit = win.filter(([a, b]) => cps.some((c) => ts[c]! >= a && ts[c]! <= b)).length;
    const fp = cps.filter((c) => !inWin(c)).length;
    W += win.length;
    H += hit;
    FP += fp;
    console.log(`${f.replace('.csv', '').padEnd(38)} ${String(values.length).padStart(5)}  ${String(win.length).padStart(6)}  ${String(hit).padStart(4)}  ${String(cps.length).padStart(6)}  ${String(fp).padStart(8)}`);
  }
  console.log(`TOTAL ${files.length} series: window hit rate ${H}/${W} = ${f3(H / W)}, false positives ${FP} (${(FP / files.length).toFixed(1)} per series, ~4,000 points each)`);
}

console.log(`bocpd eval — engine ${engine}; configuration${override ? ' (OVERRIDDEN, exploration only)' : ''}: ${JSON.stringify(config)}`);
tcpd();
nab(`generic signal (${config.model} model), the TCPD configuration`, detect);
// The same 5-minute cloud metrics through a service signal's configuration: the latency / profile
// model (Student-t on ln(1 + x), 8 runs), as the scheduled pass would run it on a positive series.
const service = new BocpdDetector({ ...SIGNAL_CONFIG.latency_p95, ...override }, { engine });
nab('service model (latency_p95 configuration: Student-t on ln(1 + x))', (values) => service.run({ values }).changes.map((c) => c.index));
