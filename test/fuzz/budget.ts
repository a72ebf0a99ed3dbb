// The budget of every fuzz property: a fixed seed and a small run count in CI; FUZZ_RUNS (runs per
// property) and FUZZ_SEED raise and vary them for a long run (`npm run fuzz`). The seed is printed so
// that a failure can be replayed: FUZZ_SEED=<seed> FUZZ_RUNS=<n> npx vitest run test/fuzz/<file>.
import fc from 'fast-check';
import { expect } from 'vitest';

/** The CI seed (the hardening issue's number): the same inputs on every run, so CI cannot flake. */
const CI_SEED = 29;

const runsEnv = process.env['FUZZ_RUNS'];
const seedEnv = process.env['FUZZ_SEED'];

export const LONG_RUN = runsEnv !== undefined && runsEnv !== '';
export const SEED = seedEnv ? Number(seedEnv) : CI_SEED;
if (!Number.isSafeInteger(SEED)) throw new Error(`FUZZ_SEED must be an integer, got ${seedEnv}`);
const RUNS = LONG_RUN ? Number(runsEnv) : 0;
if (LONG_RUN && !(Number.isSafeInteger(RUNS) && RUNS > 0)) throw new Error(`FUZZ_RUNS must be a positive integer, got ${runsEnv}`);

console.log(`fuzz: seed ${SEED}, ${LONG_RUN ? `${RUNS} runs per property` : 'CI budget'} (replay: FUZZ_SEED=${SEED} FUZZ_RUNS=<n>)`);

/**
 * fast-check parameters for a property worth `ciRuns` runs in CI. A long run gives every property
 * FUZZ_RUNS runs, scaled by `longShare` for the properties that cost a server round trip or a query.
 */
export function budget(ciRuns: number, longShare = 1): fc.Parameters<unknown> {
  const numRuns = LONG_RUN ? Math.max(ciRuns, Math.round(RUNS * longShare)) : ciRuns;
  return { seed: SEED, numRuns };
}

/** The vitest time limit for a property's test: generous in CI, none in a long run. */
export function testTimeout(ciMs = 60_000): number {
  return LONG_RUN ? 24 * 3600_000 : ciMs;
}

/**
 * A call that does not return within this long on one input counts as a hang. It is a hang detector,
 * not a performance assertion: every input here is at most a few hundred kilobytes and takes well
 * under 100 ms; only runaway work (a loop that does not advance, exponential backtracking) gets near.
 */
export const HANG_MS = 10_000;

/** Runs `fn` and fails the property when it ran into HANG_MS. */
export function noHang<T>(what: string, fn: () => T): T {
  const t0 = performance.now();
  const out = fn();
  const ms = performance.now() - t0;
  expect(ms, `${what} ran ${Math.round(ms)} ms on one input (a hang)`).toBeLessThan(HANG_MS);
  return out;
}
