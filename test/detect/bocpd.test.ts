// Detector behaviour per observation model: known steps found at the right bucket with raw-unit
// segment means, stationary noise gives nothing, low-traffic bursts and gaps are not shifts.
// Runs on the WASM engine (the default); engines.test.ts pins the TypeScript twin to it.
import { describe, expect, it } from 'vitest';
import { BocpdDetector, detectChanges, standardScaling, worsening, type ChangePoint, type ModelName } from '../../src/detect/bocpd/index.js';
import { countSeries, errorSeries, lognormalSeries, normalSeries } from './synth.js';

const SEEDS = [1, 2, 3, 4, 5];

/** The generic detector as the TCPD evaluation runs it (standardised values), optionally with another model. */
function generic(values: Float64Array, model?: ModelName): ChangePoint[] {
  return detectChanges({ values }, { ...new BocpdDetector('generic').config, ...(model ? { model } : {}), ...standardScaling(values) });
}

function only(changes: ChangePoint[]): ChangePoint {
  expect(changes).toHaveLength(1);
  return changes[0]!;
}

describe('bocpd: steps are found at their first bucket', () => {
  it.each(SEEDS)('error_rate 1%% -> 5%% at bucket 150, ~500 calls per bucket (seed %i)', (seed) => {
    const c = only(detectChanges(errorSeries(seed, 288, 500, 0.01, 150, 0.05), 'error_rate'));
    expect(c.index).toBe(150);
    expect(c.before).toBeGreaterThan(0.7);
    expect(c.before).toBeLessThan(1.3);
    expect(c.after).toBeGreaterThan(4.5);
    expect(c.after).toBeLessThan(5.5);
  });

  it.each(SEEDS)('latency_p95 doubles at bucket 100 (seed %i)', (seed) => {
    const c = only(detectChanges({ values: lognormalSeries(seed, 288, 20_000, 0.1, 100, 2) }, 'latency_p95'));
    expect(c.index).toBe(100);
    expect(c.after / c.before).toBeGreaterThan(1.8);
    expect(c.after / c.before).toBeLessThan(2.2);
  });

  it.each(SEEDS)('profile_cost +60%% at bucket 200 (seed %i)', (seed) => {
    const c = only(detectChanges({ values: lognormalSeries(seed, 288, 3e9, 0.1, 200, 1.6) }, 'profile_cost'));
    expect(c.index).toBe(200);
    expect(c.after).toBeGreaterThan(c.before);
  });

  it.each(SEEDS)('log_volume doubles at bucket 120, overdispersed counts around 500 (seed %i)', (seed) => {
    const c = only(detectChanges({ values: countSeries(seed, 288, 500, 0.1, 120, 2) }, 'log_volume'));
    expect(c.index).toBe(120);
    expect(c.after / c.before).toBeGreaterThan(1.8);
    expect(c.after / c.before).toBeLessThan(2.2);
  });

  it.each(SEEDS)('error_log_rate appears from a zero baseline at bucket 200 (seed %i)', (seed) => {
    const values = countSeries(seed, 288, 20, 0.1).map((v, i) => (i < 200 ? 0 : v));
    const c = only(detectChanges({ values }, 'error_log_rate'));
    expect(c.index).toBe(200);
    expect(c.before).toBe(0);
    expect(c.after).toBeGreaterThan(15);
  });

  it.each(SEEDS)('generic model: a 4 sd shift at point 80 (seed %i)', (seed) => {
    const values = normalSeries(seed, 200, 80, 4);
    expect(only(generic(values)).index).toBe(80);
  });

  it.each(SEEDS)('generic model: a 4 sd step on a linear trend is found at its first point (seed %i)', (seed) => {
    const values = normalSeries(seed, 300).map((v, i) => v + 0.02 * i + (i >= 120 ? 4 : 0));
    expect(only(generic(values)).index).toBe(120);
  });

  it('generic model: a slope reversal is found within 8 points of the turn, where levels alone see nothing', () => {
    // rise 0.1 per point for 100 points, then fall as fast; noise sd 0.3
    const turn = (seed: number): Float64Array => normalSeries(seed, 200).map((v, i) => 0.3 * v + (i < 100 ? 0.1 * i : 10 - 0.1 * (i - 100)));
    const found = SEEDS.filter((seed) => generic(turn(seed)).some((c) => c.index >= 100 && c.index <= 108)).length;
    const foundByLevels = SEEDS.filter((seed) => generic(turn(seed), 'normal').some((c) => c.index >= 100 && c.index <= 108)).length;
    expect(found).toBeGreaterThanOrEqual(4);
    expect(foundByLevels).toBe(0);
  });

  it('a drop and a rise are both reported; worsening() keeps the rise only', () => {
    const values = lognormalSeries(9, 288, 20_000, 0.1, 100, 2).map((v, i) => (i >= 200 ? v / 2 : v));
    const changes = detectChanges({ values }, 'latency_p95');
    expect(changes.map((c) => c.index)).toEqual([100, 200]);
    expect(changes[1]!.before).toBeCloseTo(changes[0]!.after, 6);
    expect(worsening(changes).map((c) => c.index)).toEqual([100]);
  });
});

describe('bocpd: no shift in stationary noise', () => {
  it.each(SEEDS)('error_rate 1%% at 3,000 calls per bucket (seed %i)', (seed) => {
    expect(detectChanges(errorSeries(seed, 288, 3000, 0.01), 'error_rate')).toEqual([]);
  });
  it.each(SEEDS)('error_rate 2%% at ~3 calls per bucket (seed %i)', (seed) => {
    expect(detectChanges(errorSeries(seed, 288, 3, 0.02), 'error_rate')).toEqual([]);
  });
  it.each(SEEDS)('latency_p95 with 30%% bucket-to-bucket noise (seed %i)', (seed) => {
    expect(detectChanges({ values: lognormalSeries(seed, 288, 50_000, 0.3) }, 'latency_p95')).toEqual([]);
  });
  it.each(SEEDS)('profile_cost with 10%% noise (seed %i)', (seed) => {
    expect(detectChanges({ values: lognormalSeries(seed, 288, 1e8, 0.1) }, 'profile_cost')).toEqual([]);
  });
  it.each(SEEDS)('log_volume around 5,000 per bucket, 15%% overdispersion (seed %i)', (seed) => {
    expect(detectChanges({ values: countSeries(seed, 288, 5000, 0.15) }, 'log_volume')).toEqual([]);
  });
  it.each(SEEDS)('error_log_rate around 2 per bucket (seed %i)', (seed) => {
    expect(detectChanges({ values: countSeries(seed, 288, 2, 0.1) }, 'error_log_rate')).toEqual([]);
  });
  it.each(SEEDS)('generic N(0, 1), 500 points (seed %i)', (seed) => {
    expect(generic(normalSeries(seed, 500))).toEqual([]);
  });
  it.each(SEEDS)('generic: a steady linear trend is one regime (seed %i)', (seed) => {
    expect(generic(normalSeries(seed, 200).map((v, i) => 0.3 * v + 0.05 * i))).toEqual([]);
  });
});

describe('bocpd: weak evidence and missing buckets', () => {
  it.each(SEEDS)('a burst of 3 calls with 2 errors in a low-traffic series is not a shift (seed %i)', (seed) => {
    // ~4 calls per bucket at 0.5% errors, then one bucket of 3 calls with 2 errors, then as before
    const s = errorSeries(seed, 288, 4, 0.005);
    const quiet = detectChanges(s, 'error_rate');
    s.calls[150] = 3;
    s.values[150] = 2;
    const withBurst = detectChanges(s, 'error_rate');
    // nothing near the burst, nothing worsening; elsewhere the answer is the burst-free one
    expect(withBurst.filter((c) => c.index >= 140 && c.index <= 160)).toEqual([]);
    expect(worsening(withBurst)).toEqual([]);
    expect(withBurst.map((c) => c.index)).toEqual(quiet.map((c) => c.index));
  });

  it('the same 2-of-3 burst sustained for an hour is a shift', () => {
    const s = errorSeries(1, 288, 4, 0.005);
    for (let i = 150; i < 162; i++) {
      s.calls[i] = 3;
      s.values[i] = 2;
    }
    const c = detectChanges(s, 'error_rate');
    expect(c.map((x) => x.index)).toContain(150);
  });

  it('buckets without calls are no observation, not 0%', () => {
    // 3% errors at 200 calls, every other bucket empty: the mean stays 3% and nothing shifts
    const s = errorSeries(3, 288, 200, 0.03);
    for (let i = 0; i < 288; i += 2) {
      s.calls[i] = 0;
      s.values[i] = 0;
    }
    expect(detectChanges(s, 'error_rate')).toEqual([]);
    // with a real step in the observed buckets, the change lands on the first observed bucket of it
    const t = errorSeries(4, 288, 200, 0.01, 151, 0.06);
    for (let i = 0; i < 288; i += 2) t.calls[i] = 0;
    const c = only(detectChanges(t, 'error_rate'));
    expect(c.index).toBe(151);
    expect(c.before).toBeLessThan(1.5);
    expect(c.after).toBeGreaterThan(5);
  });

  it('NaN points are skipped (latency of a bucket without spans)', () => {
    const v = lognormalSeries(5, 288, 20_000, 0.1, 100, 2);
    for (let i = 0; i < 288; i += 3) v[i] = NaN;
    v[100] = NaN; // the first bucket of the new regime is missing: the change is the next one
    expect(detectChanges({ values: v }, 'latency_p95').map((c) => c.index)).toEqual([101]);
  });

  it('an empty series and an all-missing series give no change and a usable state', () => {
    const d = new BocpdDetector('latency_p95');
    expect(d.run({ values: [] }).changes).toEqual([]);
    const r = d.run({ values: [NaN, NaN, NaN] });
    expect(r.changes).toEqual([]);
    expect(r.state[0]).toBe(3);
  });
});

describe('bocpd: configuration', () => {
  it('rejects bad keys by name', () => {
    const base = new BocpdDetector('generic').config;
    expect(() => new BocpdDetector({ ...base, hazard: 0 })).toThrow(/hazard/);
    expect(() => new BocpdDetector({ ...base, maxRuns: 0 })).toThrow(/maxRuns/);
    expect(() => new BocpdDetector({ ...base, threshold: 1 })).toThrow(/threshold/);
    expect(() => new BocpdDetector({ ...base, scale: 0 })).toThrow(/scale/);
  });
  it('error_rate needs calls', () => {
    expect(() => new BocpdDetector('error_rate').run({ values: [1, 2] })).toThrow(/calls/);
  });
});
