// npm run bench:logs — lines per second of the WASM log template miner against the TypeScript
// reference, in the same run, over the Loghub-2k corpora (../shared/corpora/loghub), plus the
// pathological lines. Each dataset is one service; bodies go in batches of BATCH lines, as the ingest
// worker sends them. Two figures per engine:
//   miner   LogMiner.mineBatch end to end (UTF-8 encoding, engine, per-template bookkeeping)
//   engine  the engine alone on bodies already encoded (what WASM replaces)
// Usage: node dist/bench/logs.js [--seconds 5] [--batch 1000]   (seconds per figure and engine)
import { LogMiner } from '../src/pipeline/logminer/miner.js';
import { ReferenceCore } from '../src/pipeline/logminer/reference.js';
import { WasmCore } from '../src/pipeline/logminer/wasm-core.js';
import type { MinerCore } from '../src/pipeline/logminer/core.js';
import { loadAllLoghub, loghubAvailable, LOGHUB_DIR } from '../testkit/log-parsing-eval.js';

const args = process.argv.slice(2);
const SECONDS = args.includes('--seconds') ? Number(args[args.indexOf('--seconds') + 1]) : 5;
const BATCH = args.includes('--batch') ? Number(args[args.indexOf('--batch') + 1]) : 1000;

interface Work {
  service: string;
  batches: string[][];
  encoded: { bytes: Uint8Array; offsets: Int32Array; n: number }[];
}

function encodeBatch(bodies: string[]): { bytes: Uint8Array; offsets: Int32Array; n: number } {
  const enc = new TextEncoder();
  const parts = bodies.map((b) => enc.encode(b));
  const bytes = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  const offsets = new Int32Array(bodies.length + 1);
  let pos = 0;
  parts.forEach((p, i) => {
    offsets[i] = pos;
    bytes.set(p, pos);
    pos += p.length;
  });
  offsets[bodies.length] = pos;
  return { bytes, offsets, n: bodies.length };
}

/**
 * Lines per CPU-second of fn over about `seconds` of CPU time. CPU time (process.cpuUsage, user +
 * system) rather than wall time: on a shared machine a descheduled process loses wall time, not CPU.
 */
function timeOnce(fn: () => number, seconds: number): number {
  let lines = 0;
  const c0 = process.cpuUsage();
  let cpu = 0;
  while (cpu < seconds * 1e6) {
    lines += fn();
    const c = process.cpuUsage(c0);
    cpu = c.user + c.system;
  }
  return lines / (cpu / 1e6);
}

/**
 * Runs the two engines in alternating rounds (ROUNDS each, SECONDS / ROUNDS per round, after a warm-up)
 * and keeps each one's best round: on a shared machine, other processes only ever slow a round down,
 * so the best round is the least disturbed estimate, and alternating exposes both to the same load.
 */
const ROUNDS = 5;
function race(a: () => number, b: () => number): [number, number] {
  a();
  b();
  let bestA = 0;
  let bestB = 0;
  for (let r = 0; r < ROUNDS; r++) {
    bestA = Math.max(bestA, timeOnce(a, SECONDS / ROUNDS));
    bestB = Math.max(bestB, timeOnce(b, SECONDS / ROUNDS));
  }
  return [bestA, bestB];
}

function minerRun(impl: 'wasm' | 'reference', work: Work[]): () => number {
  const cfg = { maxTemplatesPerService: 2000 };
  const miner = new LogMiner(impl === 'wasm' ? new WasmCore(cfg) : new ReferenceCore(cfg));
  return () => {
    let n = 0;
    for (const w of work) for (const b of w.batches) n += miner.mineBatch(w.service, b).templateIds.length;
    return n;
  };
}

function engineRun(impl: 'wasm' | 'reference', work: Work[]): () => number {
  const cfg = { maxTemplatesPerService: 2000 };
  const core: MinerCore = impl === 'wasm' ? new WasmCore(cfg) : new ReferenceCore(cfg);
  return () => {
    let n = 0;
    work.forEach((w, svc) => {
      for (const e of w.encoded) {
        const input = core.prepare(e.bytes.length, e.n);
        input.bytes.set(e.bytes);
        input.offsets.set(e.offsets);
        core.mine(svc, e.n);
        n += e.n;
      }
    });
    return n;
  };
}

function fmt(x: number): string {
  return Math.round(x).toLocaleString('en-US').padStart(11);
}

function main(): void {
  if (!loghubAvailable()) {
    console.log(`bench:logs skipped: ${LOGHUB_DIR} is absent (the shared corpora are not beside this checkout)`);
    return;
  }
  const work: Work[] = loadAllLoghub().map((ds) => {
    const batches: string[][] = [];
    for (let i = 0; i < ds.contents.length; i += BATCH) batches.push(ds.contents.slice(i, i + BATCH));
    return { service: ds.name, batches, encoded: batches.map(encodeBatch) };
  });
  const total = work.reduce((a, w) => a + w.batches.reduce((b, x) => b + x.length, 0), 0);
  console.log(`log template miner, ${work.length} Loghub-2k datasets (${total} lines), batches of ${BATCH}, best of ${ROUNDS} alternating rounds over ${SECONDS}s per engine, node ${process.version}`);
  const rows: [string, number, number][] = [
    ['engine', ...race(engineRun('wasm', work), engineRun('reference', work))],
    ['miner', ...race(minerRun('wasm', work), minerRun('reference', work))],
  ];
  console.log('          wasm lines/CPU-s  reference lines/CPU-s  ratio');
  for (const [name, w, r] of rows) console.log(`${name.padEnd(10)} ${fmt(w)}        ${fmt(r)}       ${(w / r).toFixed(2)}x`);
  console.log(`per line (miner, wasm): ${(1e6 / rows[1]![1]).toFixed(2)} µs; target: wasm >= 3x reference`);

  // worst case for the tree: every line a new template in one leaf (leaf bound, evictions, new rows)
  let seed = 1;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  const part = (): string => Array.from({ length: 2 + (rnd() % 4) }, () => String.fromCharCode(97 + (rnd() % 26))).join('');
  // Tokens like `ab_cde`: no plain words, so neither the constant-word rule nor the phrase rule
  // applies (40 random plain words after `event` are a phrase variable: one template after five).
  const word = (): string => `${part()}_${part()}`;
  const flood = Array.from({ length: 10 }, () => Array.from({ length: 1000 }, () => 'event ' + Array.from({ length: 40 }, word).join(' ')));
  for (const impl of ['wasm', 'reference'] as const) {
    let best = 0;
    for (let r = 0; r < 3; r++) {
      const cfg = { maxTemplatesPerService: 2000 };
      const miner = new LogMiner(impl === 'wasm' ? new WasmCore(cfg) : new ReferenceCore(cfg));
      const c0 = process.cpuUsage();
      for (const b of flood) miner.mineBatch('flood', b);
      const c = process.cpuUsage(c0);
      best = Math.max(best, 10000 / ((c.user + c.system) / 1e6));
    }
    console.log(`flood of unique 41-token lines (every line a new template), ${impl}: ${fmt(best).trim()} lines/CPU-s`);
  }

  // pathological lines: must not stall
  const patho: string[] = [
    'x'.repeat(1 << 20),
    Array.from({ length: 10000 }, (_, i) => `tok${i}`).join(' '),
    String.fromCharCode(...Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)),
    '{"a":' + '['.repeat(5000) + ']'.repeat(5000) + '}',
  ];
  for (const impl of ['wasm', 'reference'] as const) {
    const cfg = { maxTemplatesPerService: 2000 };
    const miner = new LogMiner(impl === 'wasm' ? new WasmCore(cfg) : new ReferenceCore(cfg));
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 20; i++) miner.mineBatch('patho', patho);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6 / (20 * patho.length); // wall time
    console.log(`pathological lines (1 MB, 10,000 tokens, binary, deep JSON), ${impl}: ${ms.toFixed(3)} ms per line`);
  }
}

main();
