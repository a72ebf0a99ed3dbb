// A look inside one diagnosis while working on the reasoning: every candidate every evidence module
// found (below the ranking's line too), the diagnosed service's change and its world. Opens a copy
// of a kept store directly (no server), as the service would read it.
//   node dist/bench/recorded/explain.js [from_injection|last_15m]  — the faults EVAL_FAULTS names in
//     the stores eval:recorded kept (EVAL_SPLITS, EVAL_RECORDED_CACHE as there);
//   EXPLAIN_DIR=<data dir> EXPLAIN_SERVICE=… EXPLAIN_FROM=… EXPLAIN_TO=… (µs) — any kept store.
// EXPLAIN_COMP=caller>callee,service,root:service prints those components' bins and splits;
// EXPLAIN_TOP (default 15) how many candidates.
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { CORPORA_DIR } from '../../src/core/paths.js';
import { openStore } from '../../src/store/db.js';
import { openReadPool, readServiceSpans } from '../../src/store/readers.js';
import { explain } from '../../src/diagnose/index.js';
import { rankServices } from '../../src/diagnose/rank.js';
import { binsOf, coarsen, componentSplit, levelRise, splitSeries } from '../../src/diagnose/calltree.js';
import { segmentSeries } from '../../src/diagnose/onset.js';
import { readNezha } from './nezha.js';
import { windowOf, type CallStyle } from './ask.js';
import type { Loaded } from './replay.js';

const env = process.env;

async function explainOne(kept: string, service: string, w: { fromUs: number; toUs: number }, title: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tds-explain-'));
  cpSync(join(kept, 'lake.duckdb'), join(dir, 'lake.duckdb'));
  const store = await openStore(dir, 'default', { threads: 2 });
  const reads = await openReadPool(store, { size: 4 });
  try {
    const services = await readServiceSpans(store.writer);
    const out = await explain({ reads, timeoutMs: 60_000, scanSpans: 2_000_000, services: () => services }, { services: [service], from: Math.round(w.fromUs), to: Math.round(w.toUs) });
    const e = out[service]!;
    const ch = e.inputs.change;
    const rel = (t: number) => ((t - w.fromUs) / 1e6).toFixed(0);
    console.log(`\n== ${title}`);
    console.log(ch ? `root: ${Math.round(ch.before)} → ${Math.round(ch.after)} µs, surprise ${ch.surprise.toFixed(1)}, onset ${rel(ch.onset)} s (found ${ch.found}), baseline ${((ch.baselineTo - ch.baselineFrom) / 1e6).toFixed(0)} s, counts since ${rel(ch.countSplit.onset)} s` : 'root: no change');
    console.log(`scope: ${e.scope.sort().join(' ')}; silent: ${[...e.inputs.silent].join(' ') || '-'}`);
    for (const want of (env['EXPLAIN_COMP'] ?? '').split(',').filter(Boolean)) {
      const [a, b] = want.split('>');
      if (a!.startsWith('root:')) {
        const sp = splitSeries(binsOf(e.inputs.tree.entries.get(a!.slice(5)) ?? new Map(), 'd'), w.fromUs, w.toUs);
        console.log(`  ${want}: ${sp ? `onset ${rel(sp.onset)} s found=${sp.found} before ${sp.before.length} after ${sp.after.length}` : 'no split'}`);
        const segs = segmentSeries(coarsen(binsOf(e.inputs.tree.entries.get(a!.slice(5)) ?? new Map(), 'd').filter((b) => b.n > 0 && b.t < w.toUs)));
        console.log(`    segments: ${segs.map((s) => `${rel(s.from)}..${rel(s.to)} ${Math.round(Math.exp(s.meanLog) / 1000)}ms`).join(' | ')}`);
        continue;
      }
      const c = e.inputs.tree.comps.get(b ? `wire\u0000${a}\u0000${b}` : `self\u0000${a}`);
      if (!c) {
        console.log(`  ${want}: no such component`);
        continue;
      }
      const split = componentSplit(e.inputs.tree, c);
      console.log(`  ${want}: bins ${[...c.bins].sort((x, y) => x[0] - y[0]).map(([t, v]) => `${rel(t)}:${v.n}/${Math.round(v.sx / v.n / 1000)}ms`).join(' ')}`);
      const rise = split ? levelRise(c.bins, split) : null;
      console.log(split ? `    split onset ${rel(split.onset)} s found=${split.found} before ${split.before.length} bins after ${split.after.length}; rise ${rise ? `${rise.surprise.toFixed(1)} ${Math.round(rise.mb)} → ${Math.round(rise.ma)} µs (n ${rise.before.n}/${rise.after.n})` : '-'}` : '    no split');
    }
    for (const r of rankServices(e.candidates, new Set(e.scope)).slice(0, 6)) console.log(`  ${r.service.padEnd(24)} S=${r.surprise.toFixed(1)}`);
    for (const c of [...e.candidates].sort((a, b) => b.surprise - a.surprise).slice(0, Number(env['EXPLAIN_TOP'] ?? 15)))
      console.log(`    ${c.surprise.toFixed(1).padStart(6)} ${c.evidence.padEnd(10)} ${c.service.padEnd(22)} ${c.context ? '(context) ' : ''}${c.summary.slice(0, 150)}`);
  } finally {
    await reads.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (env['EXPLAIN_DIR']) {
  await explainOne(env['EXPLAIN_DIR'], env['EXPLAIN_SERVICE'] ?? 'frontend', { fromUs: Number(env['EXPLAIN_FROM']), toUs: Number(env['EXPLAIN_TO']) }, env['EXPLAIN_DIR']);
} else {
  const style = (process.argv[2] ?? 'from_injection') as CallStyle;
  const recording = readNezha(env['EVAL_RECORDED_DIR'] ?? join(CORPORA_DIR, 'rca', 'nezha-ob'));
  const wanted = new Set((env['EVAL_FAULTS'] ?? '').split(',').filter(Boolean));
  const cache = env['EVAL_RECORDED_CACHE'] ?? '/tmp/tds-recorded';
  for (const split of recording.splits) {
    const kept = join(cache, `${split.name}-all`);
    for (const fault of split.faults.filter((f) => wanted.has(f.id))) {
      const loaded = JSON.parse(readFileSync(join(kept, 'replay.json'), 'utf8')) as Loaded;
      await explainOne(kept, env['EVAL_RECORDED_ENTRY'] ?? 'frontend', windowOf(style, fault, loaded.shiftUs), `${fault.id} ${fault.type} truth=${fault.service} (${style})`);
    }
  }
}
