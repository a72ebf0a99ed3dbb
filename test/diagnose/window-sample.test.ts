// Where a diagnosis reads its window's statistics from (queries.ts windowSample): the whole window
// when it holds few spans; evenly spread slices of it when it holds more than it may scan.
import { describe, expect, it } from 'vitest';
import { windowSample } from '../../src/diagnose/reads/index.js';
import { FINE_BIN_US, MINUTE_US } from '../../src/core/time.js';

const T0 = 1_790_000_000_000_000 - (1_790_000_000_000_000 % (300 * 1e6)) + 37_123_456;
const read = (s: [number, number][]) => s.reduce((t, [lo, hi]) => t + hi - lo, 0);

describe('the window sample', () => {
  it('is the whole window when it holds no more spans than the diagnosis may scan', () => {
    const b = { from: T0, to: T0 + 15 * MINUTE_US };
    expect(windowSample(b, 2_000_000, 2_000_000)).toEqual({ slices: [[b.from, b.to]], scale: 1 });
    expect(windowSample(b, 0, 2_000_000).scale).toBe(1);
  });

  it('reads evenly spread slices of a busy window, about as many spans as allowed, and scales by what it skipped', () => {
    const b = { from: T0, to: T0 + 15 * MINUTE_US };
    const s = windowSample(b, 18_000_000, 2_000_000);
    expect(s.slices.length).toBeGreaterThanOrEqual(15);
    expect(s.slices.length).toBeLessThanOrEqual(16);
    for (const [lo, hi] of s.slices) {
      expect(lo).toBeGreaterThanOrEqual(b.from);
      expect(hi).toBeLessThanOrEqual(b.to);
      expect(hi).toBeGreaterThan(lo);
    }
    // Ordered and apart: no span is read twice, and every minute of the window has its slices.
    for (let i = 1; i < s.slices.length; i++) expect(s.slices[i]![0]).toBeGreaterThan(s.slices[i - 1]![1]);
    for (let m = b.from; m < b.to; m += MINUTE_US) expect(s.slices.some(([lo]) => lo >= m && lo < m + MINUTE_US)).toBe(true);
    const spansRead = (18_000_000 * read(s.slices)) / (b.to - b.from);
    expect(spansRead).toBeGreaterThan(1_600_000);
    expect(spansRead).toBeLessThan(2_400_000);
    expect(s.scale).toBeCloseTo((b.to - b.from) / read(s.slices), 9);
  });

  it('slices on the absolute time grid: the same instants are read wherever the window falls', () => {
    const a = windowSample({ from: T0, to: T0 + 15 * MINUTE_US }, 9_000_000, 1_000_000);
    const shifted = windowSample({ from: T0 + 150e6, to: T0 + 150e6 + 15 * MINUTE_US }, 9_000_000, 1_000_000);
    const inBoth = (s: [number, number][]) => s.filter(([lo, hi]) => lo >= T0 + 150e6 && hi <= T0 + 15 * MINUTE_US);
    expect(inBoth(shifted.slices)).toEqual(inBoth(a.slices));
    for (const [lo] of a.slices.slice(1)) expect(lo % FINE_BIN_US).toBe(0);
  });

  it('keeps a slice long enough for whole requests, and never more slices than a long window allows', () => {
    const tiny = windowSample({ from: T0, to: T0 + 15 * MINUTE_US }, 1e10, 2_000_000);
    for (const [lo, hi] of tiny.slices) expect(hi - lo).toBeGreaterThanOrEqual(250_000);
    const day = windowSample({ from: T0, to: T0 + 24 * 60 * MINUTE_US }, 1e9, 2_000_000);
    expect(day.slices.length).toBeLessThanOrEqual(16);
    // A busy second that falls between two slices' starts is read whole, not as nothing.
    const aligned = T0 - (T0 % FINE_BIN_US);
    expect(windowSample({ from: aligned + 5_000_000, to: aligned + 6_000_000 }, 1e9, 2_000_000)).toEqual({ slices: [[aligned + 5_000_000, aligned + 6_000_000]], scale: 1 });
  });
});
