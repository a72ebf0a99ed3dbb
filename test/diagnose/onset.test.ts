// The onset of the current regime from fine bins of raw calls: found to a bin or two, with the
// stable stretch before it as the baseline, an earlier incident left out, nothing on noisy stationary
// series, and the same answer wherever the bin grid falls.
import { describe, expect, it } from 'vitest';
import { findOnset, segmentSeries, type Bin } from '../../src/diagnose/onset.js';
import { rng } from '../../testkit/rng.js';

const SEC = 1_000_000;
const T0 = 1_800_000_000 * SEC;

const normal = (r: () => number) => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());

interface Regime {
  /** From this many seconds after T0. */
  fromS: number;
  medianMs: number;
  errorRate: number;
}

/**
 * Calls at `perS` a second for `seconds`, log-normal durations around each regime's median, with a
 * per-20-second load wobble (real series vary more between bins than sampling explains), and
 * optional gaps (seconds with no telemetry).
 */
function calls(seed: number, seconds: number, perS: number, regimes: Regime[], gaps: [number, number][] = []): { t: number; d: number; e: boolean }[] {
  const r = rng(seed);
  const out: { t: number; d: number; e: boolean }[] = [];
  let wobble = 0;
  for (let s = 0; s < seconds; s++) {
    if (s % 20 === 0) wobble = 0.15 * normal(r);
    if (gaps.some(([a, b]) => s >= a && s < b)) continue;
    const g = [...regimes].reverse().find((x) => s >= x.fromS)!;
    for (let i = 0; i < perS; i++) {
      const d = g.medianMs * 1000 * Math.exp(0.4 * normal(r) + wobble);
      out.push({ t: T0 + s * SEC + Math.floor(r() * SEC), d, e: r() < g.errorRate });
    }
  }
  return out;
}

function binsOf(cs: { t: number; d: number; e: boolean }[], widthS: number, offsetS = 0): Bin[] {
  const w = widthS * SEC;
  const o = offsetS * SEC;
  const m = new Map<number, Bin>();
  for (const c of cs) {
    const t = Math.floor((c.t - o) / w) * w + o;
    let b = m.get(t);
    if (!b) m.set(t, (b = { t, n: 0, errors: 0, sumLog: 0, sumLog2: 0 }));
    const l = Math.log(c.d + 1);
    b.n++;
    b.errors += c.e ? 1 : 0;
    b.sumLog += l;
    b.sumLog2 += l * l;
  }
  return [...m.values()].sort((a, b) => a.t - b.t);
}

describe('findOnset', () => {
  it('finds a latency step to within a bin, with the stretch before it as the baseline', () => {
    const cs = calls(1, 3600, 20, [
      { fromS: 0, medianMs: 14, errorRate: 0.005 },
      { fromS: 3000, medianMs: 300, errorRate: 0.005 },
    ]);
    const o = findOnset(binsOf(cs, 10));
    expect(o).not.toBeNull();
    expect(Math.abs(o!.at - (T0 + 3000 * SEC))).toBeLessThanOrEqual(10 * SEC);
    expect(Math.exp(o!.baseline.meanLog) / 1000).toBeGreaterThan(10);
    expect(Math.exp(o!.baseline.meanLog) / 1000).toBeLessThan(20);
    expect(o!.baseline.from).toBe(T0);
  });

  it('leaves an earlier incident out of the baseline', () => {
    // A fault 30 to 20 minutes before the new one, recovered, then a smaller new fault.
    const cs = calls(2, 3600, 10, [
      { fromS: 0, medianMs: 20, errorRate: 0.01 },
      { fromS: 1200, medianMs: 20, errorRate: 0.3 },
      { fromS: 1800, medianMs: 20, errorRate: 0.01 },
      { fromS: 3000, medianMs: 20, errorRate: 0.08 },
    ]);
    const o = findOnset(binsOf(cs, 10))!;
    expect(Math.abs(o.at - (T0 + 3000 * SEC))).toBeLessThanOrEqual(20 * SEC);
    expect(o.baseline.from).toBeGreaterThanOrEqual(T0 + 1780 * SEC);
    expect(o.baseline.errorRate).toBeLessThan(0.02);
    expect(o.current.errorRate).toBeGreaterThan(0.06);
  });

  it('works with two minutes of history before the onset', () => {
    const cs = calls(3, 300, 5, [
      { fromS: 0, medianMs: 10, errorRate: 0 },
      { fromS: 120, medianMs: 303, errorRate: 0 },
    ]);
    const o = findOnset(binsOf(cs, 10))!;
    expect(o).not.toBeNull();
    expect(Math.abs(o.at - (T0 + 120 * SEC))).toBeLessThanOrEqual(10 * SEC);
    expect(o.baseline.n).toBeGreaterThan(400);
  });

  it('finds the onset across an hour-long gap in the history', () => {
    const cs = calls(4, 7200, 5, [
      { fromS: 0, medianMs: 50, errorRate: 0.01 },
      { fromS: 6600, medianMs: 150, errorRate: 0.01 },
    ], [[1800, 5400]]);
    const o = findOnset(binsOf(cs, 10))!;
    expect(Math.abs(o.at - (T0 + 6600 * SEC))).toBeLessThanOrEqual(10 * SEC);
    expect(o.baseline.from).toBe(T0);
  });

  it('reports nothing on noisy stationary series, busy or quiet', () => {
    for (const [seed, perS] of [[5, 100], [6, 2], [7, 20]] as const) {
      const cs = calls(seed, 3600, perS, [{ fromS: 0, medianMs: 40, errorRate: 0.02 }]);
      expect(findOnset(binsOf(cs, 10)), `seed ${seed}`).toBeNull();
    }
  });

  it('ignores a shift too small to matter on a busy service', () => {
    const cs = calls(8, 3600, 100, [
      { fromS: 0, medianMs: 7, errorRate: 0.001 },
      { fromS: 3000, medianMs: 7.7, errorRate: 0.001 },
    ]);
    expect(findOnset(binsOf(cs, 10))).toBeNull();
  });

  it('gives the same onset wherever the bin grid falls', () => {
    const cs = calls(9, 3600, 10, [
      { fromS: 0, medianMs: 16, errorRate: 0.01 },
      { fromS: 2950, medianMs: 1020, errorRate: 0.01 },
    ]);
    const onsets = [0, 3, 150, 299].map((off) => findOnset(binsOf(cs, 10, off))!.at);
    for (const at of onsets) expect(Math.abs(at - (T0 + 2950 * SEC))).toBeLessThanOrEqual(10 * SEC);
  });

  it('keeps a regime that improved as its own segment, and the onset is the last worsening', () => {
    const cs = calls(10, 3600, 10, [
      { fromS: 0, medianMs: 30, errorRate: 0.01 },
      { fromS: 2400, medianMs: 90, errorRate: 0.01 },
      { fromS: 3000, medianMs: 30, errorRate: 0.01 },
    ]);
    const segs = segmentSeries(binsOf(cs, 10));
    expect(segs.length).toBe(3);
    const o = findOnset(binsOf(cs, 10))!;
    expect(Math.abs(o.at - (T0 + 2400 * SEC))).toBeLessThanOrEqual(10 * SEC);
    expect(o.current.to).toBeLessThan(T0 + 3000 * SEC);
  });
});
