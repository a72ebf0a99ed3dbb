import { describe, expect, it } from 'vitest';
import { binomialSurprise, errorShift, exceedanceShift, poissonSurprise, weightedMedian, lnGamma } from '../../src/diagnose/stats.js';
import { strength } from '../../src/diagnose/findings.js';

/** -log10 P(X ≥ k), X ~ Binomial(n, p), summed term by term in log space. */
function exactBinomial(k: number, n: number, p: number): number {
  const terms: number[] = [];
  for (let i = k; i <= n; i++) terms.push(lnGamma(n + 1) - lnGamma(i + 1) - lnGamma(n - i + 1) + i * Math.log(p) + (n - i) * Math.log1p(-p));
  const m = Math.max(...terms);
  return -(m + Math.log(terms.reduce((s, t) => s + Math.exp(t - m), 0))) / Math.LN10;
}

function exactPoisson(k: number, lambda: number): number {
  let below = 0;
  let term = Math.exp(-lambda);
  for (let i = 0; i < k; i++) {
    below += term;
    term *= lambda / (i + 1);
  }
  return -Math.log10(1 - below);
}

describe('tail probabilities', () => {
  it('binomial surprise equals the summed tail', () => {
    for (const [k, n, p] of [
      [3, 4, 0.01],
      [12, 100, 0.05],
      [40, 1000, 0.02],
      [900, 30000, 0.01],
      [1, 1, 0.5],
    ] as const) {
      expect(binomialSurprise(k, n, p)).toBeCloseTo(exactBinomial(k, n, p), 6);
    }
  });

  it('is zero at or below the expected count and grows with the count', () => {
    expect(binomialSurprise(5, 100, 0.05)).toBe(0);
    expect(binomialSurprise(0, 10, 0.1)).toBe(0);
    expect(binomialSurprise(10, 100, 0.05)).toBeLessThan(binomialSurprise(11, 100, 0.05));
  });

  it('poisson surprise equals the summed tail', () => {
    for (const [k, l] of [
      [5, 1],
      [30, 12],
      [200, 150],
      [3, 0.2],
    ] as const) {
      expect(poissonSurprise(k, l)).toBeCloseTo(exactPoisson(k, l), 5);
    }
    expect(poissonSurprise(10, 10)).toBe(0);
  });
});

describe('volume-aware evidence', () => {
  it('3 errors in 4 calls is weaker evidence than 3% of 30,000 against a 1% baseline', () => {
    const few = errorShift(3, 4, 100, 10_000);
    const many = errorShift(900, 30_000, 100, 10_000);
    expect(few.after).toBe(75);
    expect(many.after).toBe(3);
    const s = (x: ReturnType<typeof errorShift>) => strength(x.surprise, x.excess, 10, (x.after - x.before) / 5);
    expect(s(many)).toBeGreaterThan(s(few));
    expect(many.excess).toBeGreaterThan(500);
    expect(few.excess).toBeLessThan(3);
  });

  it('a clean baseline of a few calls does not make the first error overwhelming', () => {
    expect(errorShift(1, 50, 0, 20).surprise).toBeLessThan(3);
    expect(errorShift(20, 50, 0, 2000).surprise).toBeGreaterThan(20);
  });

  it('latency: about 5% above the baseline p95 is no news, a third is', () => {
    expect(exceedanceShift(52, 1000).surprise).toBeLessThan(1);
    expect(exceedanceShift(330, 1000).surprise).toBeGreaterThan(50);
    expect(exceedanceShift(3, 4).fraction).toBe(0.75);
  });

  it('weighted median', () => {
    expect(weightedMedian([10, 20, 30], [1, 1, 1])).toBe(20);
    expect(weightedMedian([10, 20, 30], [1, 1, 10])).toBe(30);
    expect(weightedMedian([5, NaN], [1, 1])).toBe(5);
    expect(weightedMedian([], [])).toBeNaN();
  });
});
