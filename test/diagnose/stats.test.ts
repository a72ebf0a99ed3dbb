import { describe, expect, it } from 'vitest';
import { binomialSurprise, dispersion, errorShift, exceedanceShift, fisherSurprise, lnGamma, poissonSurprise, quasiPoissonSurprise, rateRatioSurprise, tSurprise, weightedMedian } from '../../src/diagnose/stats.js';
import { rng } from '../../testkit/rng.js';

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
    expect(many.surprise).toBeGreaterThan(few.surprise);
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

describe('the tests behind the one scale', () => {
  it("Student's tail: grows with t, shrinks with fewer degrees of freedom, and matches the normal's for many", () => {
    expect(tSurprise(0, 10)).toBe(0);
    expect(tSurprise(-2, 10)).toBe(0);
    expect(tSurprise(3, 1000)).toBeCloseTo(-Math.log10(0.00135), 1); // the normal's one-sided tail at 3
    expect(tSurprise(3, 2)).toBeLessThan(tSurprise(3, 20));
    expect(tSurprise(5, 20)).toBeGreaterThan(tSurprise(3, 20));
    // t = 12.71 is the two-sided 5% point of one degree of freedom: one side holds 2.5%.
    expect(tSurprise(12.706, 1)).toBeCloseTo(-Math.log10(0.025), 2);
  });

  it("Fisher's combination: one test stays itself, two agreeing tests are surer than either, a test of nothing adds nothing", () => {
    expect(fisherSurprise([4])).toBe(4);
    expect(fisherSurprise([])).toBe(0);
    expect(fisherSurprise([4, 4])).toBeGreaterThan(4);
    expect(fisherSurprise([4, 4])).toBeLessThan(8);
    expect(fisherSurprise([4, 0])).toBe(4);
    // Two p = 0.01: X = -2 ln(1e-4) = 18.42 on 4 degrees of freedom, P = e^{-9.21}(1 + 9.21) = 1.02e-3.
    expect(fisherSurprise([2, 2])).toBeCloseTo(-Math.log10(0.001021), 2);
  });

  it('dispersion: 1 for Poisson counts, more for bursty ones, unmoved by a few outlying bins', () => {
    const r = rng(5);
    const poissonCounts = Array.from({ length: 200 }, () => {
      let k = 0;
      for (let p = r(); p > Math.exp(-20); p *= r()) k++;
      return k;
    });
    expect(dispersion(poissonCounts, poissonCounts.map(() => 20))).toBeLessThan(1.5);
    const bursty = poissonCounts.map((k, i) => (i % 2 ? k * 2 : Math.round(k / 4)));
    expect(dispersion(bursty, bursty.map(() => 20))).toBeGreaterThan(5);
    const spiked = poissonCounts.map((k, i) => (i < 10 ? k + 200 : k));
    expect(dispersion(spiked, spiked.map(() => 20))).toBeLessThan(1.5);
    expect(dispersion([1, 2], [1, 1])).toBe(1); // too few bins to tell
  });

  it('quasi-Poisson: overdispersion makes the same count less surprising, either way', () => {
    const plain = quasiPoissonSurprise(40, 20, 1);
    const wide = quasiPoissonSurprise(40, 20, 4);
    expect(plain.rise).toBeGreaterThan(wide.rise);
    expect(plain.fall).toBe(0);
    expect(quasiPoissonSurprise(0, 20, 1).fall).toBeGreaterThan(quasiPoissonSurprise(0, 20, 4).fall);
  });

  it('rate ratio: a baseline of a few events cannot make a window count certain, a long one can', () => {
    // The same rates (1 per request before, 3 after, 100 requests after): from 2 requests before, then 2000.
    const short = rateRatioSurprise(300, 100, 2, 2, 1);
    const long = rateRatioSurprise(300, 100, 2000, 2000, 1);
    expect(short.rise).toBeLessThan(3);
    expect(long.rise).toBeGreaterThan(50);
    // With a long baseline it is the count against a known rate.
    expect(rateRatioSurprise(40, 20, 100_000, 100_000, 1).rise).toBeCloseTo(poissonSurprise(40, 20), 0);
    // Either way, and equal rates are no news.
    expect(rateRatioSurprise(2, 100, 200, 100, 1).fall).toBeGreaterThan(20);
    expect(rateRatioSurprise(2, 100, 200, 100, 1).rise).toBe(0);
    expect(rateRatioSurprise(100, 100, 100, 100, 1).rise).toBeLessThan(0.5);
    expect(rateRatioSurprise(300, 100, 2000, 2000, 4).rise).toBeLessThan(long.rise);
  });
});
