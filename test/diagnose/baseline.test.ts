import { describe, expect, it } from 'vitest';
import { errorOnset, levelOnset, opBaseline } from '../../src/diagnose/baseline.js';
import type { Bucket } from '../../src/diagnose/reads/index.js';
import { rng } from '../../testkit/rng.js';

const B = 300_000_000;
const T0 = 1_790_000_000_000_000 - (1_790_000_000_000_000 % B);

function errBuckets(rates: number[], n: number, seed: number): Bucket[] {
  const r = rng(seed);
  return rates.map((p, i) => {
    let k = 0;
    for (let j = 0; j < n; j++) if (r() < p) k++;
    return { t: T0 + i * B, value: (100 * k) / n, n, k };
  });
}

describe('where the current regime began', () => {
  it('finds an error step 8 buckets before the window', () => {
    const buckets = errBuckets([...Array(10).fill(0.01), ...Array(8).fill(0.2)], 400, 1);
    expect(errorOnset(buckets, 240, 1200)).toBe(10);
  });

  it('says "in the window" for a step that starts with the window, and for steady noise', () => {
    expect(errorOnset(errBuckets(Array(18).fill(0.01), 400, 2), 240, 1200)).toBe(18);
    for (let seed = 3; seed < 13; seed++) {
      const steady = errBuckets(Array(18).fill(0.08), 400, seed);
      expect(errorOnset(steady, 96, 1200)).toBe(18);
    }
  });

  it('finds a latency level shift and ignores jitter', () => {
    const r = rng(5);
    const lat = (level: number, i: number): Bucket => ({ t: T0 + i * B, value: level * (0.9 + 0.2 * r()), n: 300, k: 0 });
    const shifted = [...Array.from({ length: 12 }, (_v, i) => lat(20_000, i)), ...Array.from({ length: 6 }, (_v, i) => lat(60_000, 12 + i))];
    expect(levelOnset(shifted, 60_000, 3)).toBe(12);
    const steady = Array.from({ length: 18 }, (_v, i) => lat(20_000, i));
    expect(levelOnset(steady, 21_000, 3)).toBe(18);
  });

  it('the baseline of an operation stops at the onset, and at a recorded change point', () => {
    const err = errBuckets([...Array(10).fill(0.01), ...Array(8).fill(0.3)], 400, 7);
    const base = opBaseline(err, [], { n: 1200, k: 360, p95: 0, windowBuckets: 3 }, undefined, 12);
    expect(base.onset_us).toBe(T0 + 10 * B);
    expect(base.n).toBe(10 * 400);
    expect(base.k / base.n).toBeLessThan(0.03);
    const cut = opBaseline(err, [], { n: 1200, k: 360, p95: 0, windowBuckets: 3 }, T0 + 6 * B, 12);
    expect(cut.onset_us).toBe(T0 + 6 * B);
    expect(cut.n).toBe(6 * 400);
    // At most the last maxBuckets before the onset.
    expect(opBaseline(err, [], { n: 1200, k: 360, p95: 0, windowBuckets: 3 }, undefined, 4).n).toBe(4 * 400);
  });

  it('ends the baseline before a mixed bucket that the detector counted to the old regime', () => {
    // The fault began inside bucket 10: its error rate lies between the two regimes.
    const err = errBuckets([...Array(10).fill(0.01), 0.2, ...Array(7).fill(0.4)], 400, 9);
    const win = { n: 1200, k: 480, p95: 0, windowBuckets: 3 };
    expect(opBaseline(err, [], win, undefined, 12).onset_us).toBe(T0 + 10 * B);
    for (const shift of [10, 11]) expect(opBaseline(err, [], win, T0 + shift * B, 12).onset_us, `recorded at ${shift}`).toBe(T0 + 10 * B);
    // A recorded shift is never moved later, nor earlier than the bucket before it.
    expect(opBaseline(err, [], win, T0 + 12 * B, 12).onset_us).toBe(T0 + 11 * B);
    const r = rng(11);
    const lat = (level: number, i: number): Bucket => ({ t: T0 + i * B, value: level * (0.95 + 0.1 * r()), n: 300, k: 0 });
    const levels = [...Array(10).fill(20_000), 40_000, ...Array(7).fill(60_000)].map((v, i) => lat(v, i));
    const latWin = { n: 900, k: 0, p95: 60_000, windowBuckets: 3 };
    expect(opBaseline([], levels, latWin, undefined, 12).onset_us).toBe(T0 + 10 * B);
    expect(opBaseline([], levels, latWin, T0 + 11 * B, 12).onset_us).toBe(T0 + 10 * B);
  });
});
