// npm run bench:pprof — pprof decode throughput on the largest corpus profile (by decompressed size):
// WASM decoder (assembly/pprof.ts) vs pprof-format (DataDog) vs the TypeScript reference, same run.
// Each decoder turns uncompressed bytes into its own in-memory form (typed arrays for ours, object
// graph for pprof-format); gunzip is done once up front and not measured. Rounds alternate between
// decoders and the median round is reported, so drift on a busy machine hits all three alike.
// Row building (pprofToRows) is measured separately.
// Usage: node dist/bench/pprof.js [path-to-profile] [--seconds=N]
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Profile } from 'pprof-format';
import { CORPORA_DIR } from '../src/core/paths.js';
import { profileBytes } from '../src/pipeline/decode/profiles/body.js';
import { sampleCount } from '../src/pipeline/decode/profiles/decoded.js';
import { decodePprofReference } from '../src/pipeline/decode/profiles/reference.js';
import { pprofToRows } from '../src/pipeline/decode/profiles/rows.js';
import { decodePprofWasm } from '../src/pipeline/decode/profiles/wasm.js';

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

function largestProfile(): { path: string; bytes: Uint8Array } {
  const dir = join(CORPORA_DIR, 'pprof');
  if (!existsSync(dir)) {
    console.error(`corpus not found at ${dir}; pass a profile path as the first argument`);
    process.exit(2);
  }
  let best: { path: string; bytes: Uint8Array } | null = null;
  for (const path of walk(dir)) {
    try {
      const bytes = profileBytes(readFileSync(path));
      decodePprofWasm(bytes);
      if (!best || bytes.length > best.bytes.length) best = { path, bytes };
    } catch {
      // legacy formats, text dumps, push requests: not candidates
    }
  }
  if (!best) throw new Error('no decodable profile in the corpus');
  return best;
}

const args = process.argv.slice(2);
const secondsArg = args.find((a) => a.startsWith('--seconds='));
const roundSeconds = secondsArg ? Number(secondsArg.slice(10)) / 5 : 0.4;
const fileArg = args.find((a) => !a.startsWith('--'));
const input = fileArg ? { path: fileArg, bytes: profileBytes(readFileSync(fileArg)) } : largestProfile();
const bytes = input.bytes;
const samples = sampleCount(decodePprofReference(bytes));

/** Runs fn repeatedly for about `seconds`; returns ms per call. */
function round(fn: () => unknown, seconds: number): number {
  let n = 0;
  const t0 = process.hrtime.bigint();
  const limit = BigInt(Math.round(seconds * 1e9));
  let el = 0n;
  do {
    fn();
    n++;
    el = process.hrtime.bigint() - t0;
  } while (el < limit);
  return Number(el) / 1e6 / n;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const decoders: [string, () => unknown][] = [
  ['wasm', () => decodePprofWasm(bytes)],
  ['pprof-format', () => Profile.decode(bytes)],
  ['ts-reference', () => decodePprofReference(bytes)],
];

// warm-up (JIT, WASM compile, buffer growth)
for (const [, fn] of decoders) round(fn, 0.3);
const times = new Map<string, number[]>(decoders.map(([n]) => [n, []]));
for (let r = 0; r < 5; r++) for (const [name, fn] of decoders) times.get(name)!.push(round(fn, roundSeconds));

const decoded = decodePprofWasm(bytes);
round(() => pprofToRows(decoded, { service: 'bench' }), 0.3);
const rowsMs = median([0, 1, 2].map(() => round(() => pprofToRows(decoded, { service: 'bench' }), roundSeconds)));
const rowCount = pprofToRows(decoded, { service: 'bench' }).length;

const mb = bytes.length / (1 << 20);
console.log(`profile: ${input.path}`);
console.log(`  ${bytes.length} bytes uncompressed, ${samples} samples, ${decoded.valuesPerSample} values/sample, ${decoded.locId.length} locations, ${decoded.fnId.length} functions`);
console.log(`node ${process.version}; median of 5 alternating rounds of ~${roundSeconds}s each\n`);
console.log('decoder        ms/decode      MB/s     samples/s');
const result: Record<string, { ms: number; mbps: number; samplesPerSec: number }> = {};
for (const [name] of decoders) {
  const ms = median(times.get(name)!);
  result[name] = { ms, mbps: mb / (ms / 1000), samplesPerSec: samples / (ms / 1000) };
  console.log(`${name.padEnd(14)} ${ms.toFixed(3).padStart(9)} ${result[name].mbps.toFixed(1).padStart(9)} ${Math.round(result[name].samplesPerSec).toString().padStart(13)}`);
}
const w = result['wasm']!;
console.log(`\nwasm vs pprof-format: ${(result['pprof-format']!.ms / w.ms).toFixed(2)}x   (target >= 3x)`);
console.log(`wasm vs ts-reference: ${(result['ts-reference']!.ms / w.ms).toFixed(2)}x`);
console.log(`row building (pprofToRows, ${rowCount} rows): ${rowsMs.toFixed(3)} ms, ${Math.round(samples / (rowsMs / 1000))} samples/s`);
