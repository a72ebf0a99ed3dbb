// npm run eval:recorded — the diagnosis on recorded incidents of a real system, through the public
// API only. Each split of the recording (a day) is replayed into a store of its own over OTLP,
// shifted to now, and detection closes its buckets; then every fault is diagnosed on the entry
// service from the injection to 3 minutes after, over the 15 minutes ending there, and for the ten
// busiest services in one call. It prints AS@1/AS@3 of the truth service per split, call style and
// fault type, beside the baseline ranker (floor.ts) and the dataset's published figures, and which
// faults had spans in their window. `--ratchet` runs the fixed part in bench/recorded/ratchet.json
// on a fresh load and fails when AS@1 falls below the figures recorded there.
//
// EVAL_RECORDED_DIR: a recording in the Nezha layout (default: the shared nezha-ob copy).
// EVAL_RECORDED_CACHE: where loaded stores are kept (default /tmp/tds-recorded); EVAL_RELOAD=1 loads again.
// EVAL_SPLITS=2022-08-22,...: only these splits. EVAL_FAULTS=<id>,...: only these faults.
// EVAL_RECORDED_ENTRY: the service diagnosed (default: the one with the most trace roots).
// EVAL_VERBOSE=1: each answer's first findings. EVAL_JSON=path: where the figures go as JSON.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { CORPORA_DIR, PACKAGE_ROOT } from '../src/core/paths.js';
import { readNezha } from './recorded/nezha.js';
import { loadSplit, serveLoaded, spansIn } from './recorded/replay.js';
import { AFTER_US, CALL_STYLES, ask, rankOf, windowOf, type CallStyle } from './recorded/ask.js';
import { floorRank, queryVia } from './recorded/floor.js';
import { serverEnv } from '../testkit/server.js';
import type { RecordedFault } from './recorded/recording.js';

const env = process.env;
const ratchet = process.argv.includes('--ratchet');
const root = env['EVAL_RECORDED_DIR'] ?? join(CORPORA_DIR, 'rca', 'nezha-ob');
if (!existsSync(join(root, 'rca_data'))) {
  const msg = `eval:recorded: no recording at ${root} (set EVAL_RECORDED_DIR)`;
  if (env['CI']) {
    console.error(msg + ' — CI must have the corpora');
    process.exit(1);
  }
  console.log(msg + '; skipped');
  process.exit(0);
}
const verbose = env['EVAL_VERBOSE'] === '1';
/** The stretch before a fault the ratchet replays: the 15-minute window and the half hour before it. */
const HISTORY_US = 45 * 60e6;
const RATCHET_FILE = join(PACKAGE_ROOT, 'bench', 'recorded', 'ratchet.json');
interface RatchetSpec {
  faults: string[];
  /** AS@1 per call style, the figure a change must not go below. */
  as1: Partial<Record<CallStyle, number>>;
}
const ratchetSpec = ratchet ? (JSON.parse(readFileSync(RATCHET_FILE, 'utf8')) as RatchetSpec) : null;

const recording = readNezha(root, 'nezha-ob');
const splitFilter = env['EVAL_SPLITS']?.split(',');
const faultFilter = ratchetSpec ? new Set(ratchetSpec.faults) : env['EVAL_FAULTS'] ? new Set(env['EVAL_FAULTS'].split(',')) : null;
const styles: readonly CallStyle[] = ratchet ? ['from_injection', 'last_15m'] : CALL_STYLES;

interface Row {
  fault: RecordedFault;
  withSpans: boolean;
  diag: Record<string, number | null>;
  floor: Record<string, number | null>;
  errors: Record<string, string>;
  ms: Record<string, number>;
}
const rows: Row[] = [];
const cacheDir = ratchet ? mkdtempSync(join(tmpdir(), 'tds-ratchet-')) : (env['EVAL_RECORDED_CACHE'] ?? '/tmp/tds-recorded');
const t0 = performance.now();

for (const split of recording.splits) {
  if (splitFilter && !splitFilter.includes(split.name)) continue;
  const faults = split.faults.filter((f) => !faultFilter || faultFilter.has(f.id));
  if (!faults.length) continue;
  // The ratchet replays only the stretches around its faults: from the half hour of history a
  // diagnosis reads before a 15-minute window (diagnose/reads/sampling.ts) to the window's end, so
  // each fault is diagnosed as on the whole recording.
  const keep = ratchetSpec ? (s: number, e: number) => faults.some((f) => e >= f.injectUs + AFTER_US - HISTORY_US && s <= f.injectUs + AFTER_US) : undefined;
  const { dir, loaded } = await loadSplit(split, {
    cacheDir,
    variant: ratchetSpec ? 'ratchet' : 'all',
    keep,
    reload: ratchet || env['EVAL_RELOAD'] === '1',
    log: (m) => console.log(m),
  });
  const srv = await serveLoaded(dir, serverEnv());
  try {
    const q = queryVia(srv.api);
    const busiest = (await q(`SELECT service_name AS s, count(*) AS n FROM svc_spans GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10`)).map((r) => String(r['s']));
    // The entry: the service users call, the one with the most trace roots.
    const entry =
      env['EVAL_RECORDED_ENTRY'] ??
      String((await q(`SELECT service_name AS s FROM svc_spans WHERE coalesce(parent_span_id, '') = '' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`))[0]?.['s'] ?? '');
    for (const fault of faults) {
      const row: Row = { fault, withSpans: spansIn(loaded, fault.injectUs, fault.injectUs + AFTER_US) > 0, diag: {}, floor: {}, errors: {}, ms: {} };
      const lines: string[] = [];
      for (const style of styles) {
        const a = await ask(srv.api, style, entry, fault, loaded.shiftUs, busiest);
        row.diag[style] = rankOf(a.ranked, fault.service);
        row.ms[style] = Math.round(a.ms);
        if (a.error) row.errors[style] = a.error;
        if (verbose) lines.push(`    ${style}: ${a.error ?? ''}`, ...a.detail.map((d) => `      ${d}`));
        if (style !== 'ten_services') {
          const fl = await floorRank(q, windowOf(style, fault, loaded.shiftUs));
          row.floor[style] = rankOf(fl.ranked, fault.service);
          if (verbose) lines.push(`    floor ${style}: ${fl.ranked.slice(0, 5).join(' > ')} ${JSON.stringify(fl.bySignal)}`);
        }
      }
      row.floor['ten_services'] = row.floor['from_injection'] ?? null;
      rows.push(row);
      const mark = (r: number | null) => (r === 1 ? 'HIT ' : r !== null && r <= 3 ? `top${r}` : 'miss');
      console.log(
        `${fault.id} ${fault.type.padEnd(14)} ${fault.service.padEnd(22)} ${row.withSpans ? 'spans' : 'none '} ` +
          styles.map((s) => `${s}=${mark(row.diag[s] ?? null)}`).join(' ') +
          ` | floor ${mark(row.floor['from_injection'] ?? null)}/${mark(row.floor['last_15m'] ?? null)} | published ${fault.publishedRank ?? '-'}` +
          (Object.keys(row.errors).length ? ` | ${JSON.stringify(row.errors).slice(0, 160)}` : ''),
      );
      for (const l of lines) console.log(l);
    }
  } finally {
    await srv.stop();
  }
}
if (ratchet) rmSync(cacheDir, { recursive: true, force: true });

// ---- report ----
const at = (r: number | null | undefined, k: number) => r !== null && r !== undefined && r <= k;
const frac = (xs: Row[], f: (r: Row) => boolean) => (xs.length ? xs.filter(f).length / xs.length : NaN);
const fmt = (x: number) => (Number.isNaN(x) ? '  -  ' : x.toFixed(2));

interface Cell {
  n: number;
  diag: { as1: number; as3: number };
  floor: { as1: number; as3: number };
  published: { as1: number; as3: number };
}
const cell = (xs: Row[], style: CallStyle): Cell => ({
  n: xs.length,
  diag: { as1: frac(xs, (r) => at(r.diag[style], 1)), as3: frac(xs, (r) => at(r.diag[style], 3)) },
  floor: { as1: frac(xs, (r) => at(r.floor[style], 1)), as3: frac(xs, (r) => at(r.floor[style], 3)) },
  published: { as1: frac(xs, (r) => at(r.fault.publishedRank, 1)), as3: frac(xs, (r) => at(r.fault.publishedRank, 3)) },
});

const groups: [string, Row[]][] = [];
const splits = [...new Set(rows.map((r) => r.fault.split))];
const types = [...new Set(rows.map((r) => r.fault.type))].sort();
groups.push(['all', rows], ['with spans', rows.filter((r) => r.withSpans)]);
if (splits.length > 1) for (const s of splits) groups.push([`split ${s}`, rows.filter((r) => r.fault.split === s)]);
for (const t of types) groups.push([`type ${t}`, rows.filter((r) => r.fault.type === t)]);

const report: Record<string, Record<string, Cell>> = {};
console.log(`\n${recording.name}: ${rows.length} faults (${rows.filter((r) => r.withSpans).length} with spans in the window), ${((performance.now() - t0) / 1000).toFixed(0)} s`);
console.log(`AS@1 / AS@3 of the truth service — diagnosis | baseline ranker | ${recording.published?.method ?? 'published'}`);
for (const style of styles) {
  console.log(`\n${style}`);
  for (const [name, xs] of groups) {
    if (!xs.length) continue;
    const c = cell(xs, style);
    (report[style] ??= {})[name] = c;
    console.log(`  ${name.padEnd(26)} n=${String(c.n).padStart(2)}  ${fmt(c.diag.as1)} / ${fmt(c.diag.as3)}  |  ${fmt(c.floor.as1)} / ${fmt(c.floor.as3)}  |  ${fmt(c.published.as1)} / ${fmt(c.published.as3)}`);
  }
}
if (recording.published) console.log(`\npublished overall: AS@1 ${recording.published.as1.toFixed(3)}, AS@3 ${recording.published.as3.toFixed(3)} (${recording.published.note})`);

const json = { recording: recording.name, ratchet, faults: rows.map((r) => ({ id: r.fault.id, type: r.fault.type, truth: r.fault.service, with_spans: r.withSpans, diagnosis: r.diag, floor: r.floor, published: r.fault.publishedRank, errors: r.errors, ms: r.ms })), report };
if (env['EVAL_JSON']) writeFileSync(env['EVAL_JSON'], JSON.stringify(json, null, 2) + '\n');

if (ratchetSpec) {
  let failed = false;
  for (const style of styles) {
    const got = report[style]?.['all']?.diag.as1 ?? 0;
    const want = ratchetSpec.as1[style];
    if (want === undefined) continue;
    const gotN = Math.round(got * rows.length);
    const wantN = Math.round(want * rows.length);
    if (gotN < wantN) {
      console.error(`RATCHET: ${style} AS@1 fell to ${gotN}/${rows.length} (recorded ${wantN}/${rows.length} in bench/recorded/ratchet.json)`);
      failed = true;
    } else if (gotN > wantN) console.log(`ratchet: ${style} AS@1 rose to ${gotN}/${rows.length}: raise it in bench/recorded/ratchet.json to ${(gotN / rows.length).toFixed(3)}`);
    else console.log(`ratchet: ${style} AS@1 holds at ${gotN}/${rows.length}`);
  }
  if (failed) process.exit(1);
}
