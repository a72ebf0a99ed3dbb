// The week's record (record.ts): a point above every point of the past seven days by the margin is a
// worsening at that point, whatever BOCPD makes of a lone burst; a burst no higher than the week's
// highest is not, nor one before three days of history, nor one inside a worsening reported just before.
import { describe, expect, it } from 'vitest';
import { BocpdDetector, worsening } from '../../src/detect/bocpd/index.js';
import { W, newRecord, recordPoint } from '../../src/detect/bocpd/record.js';
import { gauss, rng } from '../../testkit/rng.js';

const DAY = 288;
const START = Date.parse('2024-05-06T00:00Z') * 1000;

/** Latency (µs) with a daily cycle (20,000 at midnight, 40,000 at noon) and 5% noise, times `factor(i)`. */
function cycle(days: number, seed: number, factor: (i: number) => number): Float64Array {
  const r = rng(seed);
  const v = new Float64Array(days * DAY);
  for (let i = 0; i < v.length; i++) v[i] = 20_000 * (1.5 - 0.5 * Math.cos((2 * Math.PI * (i % DAY)) / DAY)) * Math.exp(0.05 * gauss(r)) * factor(i);
  return v;
}

/** The cycle with a nightly job that triples one bucket at 02:30; bursts: [index, factor] on one bucket each. */
function latency(days: number, bursts: Array<[number, number]>, seed = 3): Float64Array {
  const v = cycle(days, seed, (i) => (i % DAY === 30 ? 3 : 1));
  for (const [i, f] of bursts) v[i] = v[i]! * f;
  return v;
}

const rows = (values: Float64Array, engine: 'wasm' | 'ts' = 'wasm') => worsening(new BocpdDetector('latency_p95', { engine }).run({ values, start: START }).changes);

describe('the week\'s record', () => {
  it('a lone burst above the nightly job\'s is a worsening at its own bucket, in raw units', () => {
    // at noon on day 5, to 100,000 µs: ×2.5 the level, less of a rise than the job's ×3 every night,
    // but above the job's 60,000
    const at = 5 * DAY + 144;
    const burst = 100_000 / latency(6, [])[at]!;
    for (const engine of ['wasm', 'ts'] as const) {
      const found = rows(latency(6, [[at, burst]]), engine).filter((c) => c.index >= 3 * DAY);
      expect(found.map((c) => [c.index, c.at])).toEqual([[at, at]]);
      expect(found[0]!.after).toBeCloseTo(100_000, -2);
      expect(found[0]!.before).toBeGreaterThan(35_000);
      expect(found[0]!.before).toBeLessThan(45_000);
    }
  });

  it('a burst at noon 10% above the highest before is none', () => {
    const v = latency(6, []);
    const peak = Math.max(...v.subarray(0, 4 * DAY));
    const noon = 4 * DAY + 144;
    const quiet = latency(6, [[noon, (peak * 1.1) / v[noon]!]]);
    expect(rows(quiet).filter((c) => c.index >= 3 * DAY)).toEqual([]);
  });

  it('a second record within two hours of the first is part of it', () => {
    const base = latency(6, []);
    const at = 5 * DAY + 144;
    const v = latency(6, [
      [at, 100_000 / base[at]!],
      [at + 6, 150_000 / base[at + 6]!],
    ]);
    expect(rows(v).filter((c) => c.index >= 3 * DAY).map((c) => c.index)).toEqual([at]);
  });
});

describe('a record BOCPD then finds too', () => {
  it('is one row', () => {
    // a daily cycle with 5% noise; from 08:20 on day 5, ×1.1 for 90 minutes, then ×1.8 for 3 hours:
    // the step is a week's record, and BOCPD then proposes a change from the same bucket
    for (const seed of [1, 2, 3]) {
      const at = 5 * DAY + 100;
      const v = cycle(6, seed, (i) => (i >= at + 18 && i < at + 54 ? 1.8 : i >= at && i < at + 54 ? 1.1 : 1));
      const found = rows(v).filter((c) => c.index >= 5 * DAY);
      expect(found.map((c) => [c.index, c.at])).toEqual([[at + 18, at + 18]]);
    }
  });
});

describe('the week\'s record of an error share', () => {
  // 2 calls a bucket, errors 1% of calls: in a week some buckets have 1 error of 2 (50%)
  const sparse = (seed: number) => {
    const r = rng(seed);
    const calls = new Float64Array(6 * DAY).fill(2);
    const values = calls.map(() => (r() < 0.01 ? 1 : 0) + (r() < 0.01 ? 1 : 0));
    return { values, calls };
  };

  it('one error on a bucket\'s only call is no record', () => {
    for (const seed of [1, 2, 3]) {
      const s = sparse(seed);
      const at = 5 * DAY + 100;
      s.calls[at] = 1;
      s.values[at] = 1; // 100%, above every bucket of the week
      const rows = worsening(new BocpdDetector('error_rate').run({ ...s, start: START }).changes);
      expect(rows.filter((c) => c.index === at)).toEqual([]);
    }
  });

  it('30 errors of 100 calls, where a bucket had at most 1 of 2, is one', () => {
    const s = sparse(1);
    const at = 5 * DAY + 100;
    s.calls[at] = 100;
    s.values[at] = 30;
    const rows = worsening(new BocpdDetector('error_rate').run({ ...s, start: START }).changes);
    expect(rows.filter((c) => c.index === at).map((c) => c.at)).toEqual([at]);
  });
});

describe('recordPoint', () => {
  const c = new Float64Array(W.size);
  const day = (d: number, h = 0) => d * DAY + h * 12;

  it('needs three past days, keeps seven, and forgets a week-old day', () => {
    newRecord(c, 0);
    for (let d = 0; d < 3; d++) expect(recordPoint(c, 0, 'log', day(d), d === 0 ? 100 : 10)).toBe(false);
    // day 3: three days in, the highest (day 0's 100) stands
    expect(recordPoint(c, 0, 'log', day(3), 110)).toBe(false); // 10% above: under the margin
    expect(recordPoint(c, 0, 'log', day(3, 1), 140)).toBe(true); // 27% above the day's 110
    // eight days on, day 0's to day 3's highest have left the week: 20 is a record over days 4-10's 10
    for (let d = 4; d < 11; d++) recordPoint(c, 0, 'log', day(d), 10);
    expect(recordPoint(c, 0, 'log', day(11), 20)).toBe(true);
  });

  it('two days are not enough', () => {
    newRecord(c, 0);
    recordPoint(c, 0, 'log', day(0), 10);
    recordPoint(c, 0, 'log', day(1), 10);
    expect(recordPoint(c, 0, 'log', day(2), 1000)).toBe(false);
    expect(recordPoint(c, 0, 'log', day(3), 2000)).toBe(true);
  });

  it('a gap of more than a week starts over', () => {
    newRecord(c, 0);
    for (let d = 0; d < 4; d++) recordPoint(c, 0, 'log', day(d), 10);
    expect(recordPoint(c, 0, 'log', day(20), 1000)).toBe(false);
    expect(c[W.top]).toBe(1000);
  });

  it('generic values: the margin is a share of the week\'s range', () => {
    newRecord(c, 0);
    for (let d = 0; d < 3; d++) {
      recordPoint(c, 0, 'linear', day(d), -50);
      recordPoint(c, 0, 'linear', day(d, 1), 50);
    }
    expect(recordPoint(c, 0, 'linear', day(3), 55)).toBe(false); // 5 above a range of 100
    expect(recordPoint(c, 0, 'linear', day(3, 1), 66)).toBe(true); // over 55 + 10.5
  });
});
