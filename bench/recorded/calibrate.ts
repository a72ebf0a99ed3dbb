// Where the call tree's spread floors come from (calltree.ts WANDER_FLOOR, CALL_SPREAD_FLOOR): the
// bin-to-bin wander of clean components' time per call, and their calls' spread around their bin's
// mean, measured on the baselines of one split of a recording kept by eval:recorded (default the
// tuning day, 2022-08-22 of nezha-ob). Prints the deciles of both, in log units.
//   node dist/bench/recorded/calibrate.js [split]
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { CORPORA_DIR } from '../../src/core/paths.js';
import { openStore } from '../../src/store/db.js';
import { openReadPool, readServiceSpans } from '../../src/store/readers.js';
import { explain } from '../../src/diagnose/index.js';
import { componentSplit } from '../../src/diagnose/calltree.js';
import { readNezha } from './nezha.js';
import { windowOf } from './ask.js';
import type { Loaded } from './replay.js';

const splitName = process.argv[2] ?? '2022-08-22';
const recording = readNezha(process.env['EVAL_RECORDED_DIR'] ?? join(CORPORA_DIR, 'rca', 'nezha-ob'));
const split = recording.splits.find((s) => s.name === splitName)!;
const kept = join(process.env['EVAL_RECORDED_CACHE'] ?? '/tmp/tds-recorded', `${split.name}-all`);
const loaded = JSON.parse(readFileSync(join(kept, 'replay.json'), 'utf8')) as Loaded;
const dir = mkdtempSync(join(tmpdir(), 'tds-calibrate-'));
cpSync(join(kept, 'lake.duckdb'), join(dir, 'lake.duckdb'));
const store = await openStore(dir, 'default', { threads: 2 });
const reads = await openReadPool(store, { size: 4 });
const wander: number[] = [];
const spread: number[] = [];
try {
  const services = await readServiceSpans(store.writer);
  for (const fault of split.faults) {
    const w = windowOf('from_injection', fault, loaded.shiftUs);
    const out = await explain({ reads, timeoutMs: 60_000, scanSpans: 2_000_000, services: () => services }, { services: ['frontend'], from: Math.round(w.fromUs), to: Math.round(w.toUs) });
    const tree = out['frontend']!.inputs.tree;
    for (const c of tree.comps.values()) {
      const s = componentSplit(tree, c) ?? null;
      const before = (s?.before ?? []).map((t) => c.bins.get(t)!).filter((a) => a && a.n >= 2);
      if (before.length < 6) continue;
      const means = before.map((a) => a.slx / a.n);
      const within = before.reduce((x, a) => x + Math.max(0, a.sllx - a.slx ** 2 / a.n), 0) / before.reduce((x, a) => x + a.n - 1, 0);
      const mu = means.reduce((x, m) => x + m, 0) / means.length;
      const between = means.reduce((x, m) => x + (m - mu) ** 2, 0) / (means.length - 1) - before.reduce((x, a) => x + within / a.n, 0) / before.length;
      spread.push(Math.sqrt(within));
      if (between > 0) wander.push(Math.sqrt(between));
    }
  }
} finally {
  await reads.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
const deciles = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return [0.1, 0.25, 0.5, 0.75, 0.9].map((q) => s[Math.floor(q * (s.length - 1))]!.toFixed(3)).join(' ');
};
console.log(`${split.name}: ${spread.length} clean baselines of components (6+ bins of 2+ calls)`);
console.log(`wander between bins (log units), deciles 10/25/50/75/90: ${deciles(wander)} (${wander.length} with any)`);
console.log(`calls' spread within a bin (log units), deciles 10/25/50/75/90: ${deciles(spread)}`);
