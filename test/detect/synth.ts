// Seeded synthetic 5-minute series for the detector tests (mulberry32 + Box–Muller).
import { binomial, gauss, poisson, rng } from '../../testkit/rng.js';

export { binomial, gauss, poisson, rng };

/** Error-rate series: calls per bucket around `traffic` (±20%), error probability p (p2 from `at`). */
export function errorSeries(seed: number, n: number, traffic: number, p: number, at = n, p2 = p): { values: Float64Array; calls: Float64Array } {
  const r = rng(seed);
  const values = new Float64Array(n);
  const calls = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const c = poisson(r, traffic * (1 + 0.2 * gauss(r) ** 2));
    calls[i] = c;
    values[i] = binomial(r, c, i >= at ? p2 : p);
  }
  return { values, calls };
}

/** Positive series with multiplicative noise sd `cv` (latency p95 µs, profile cost). */
export function lognormalSeries(seed: number, n: number, level: number, cv: number, at = n, factor = 1): Float64Array {
  const r = rng(seed);
  const v = new Float64Array(n);
  for (let i = 0; i < n; i++) v[i] = level * (i >= at ? factor : 1) * Math.exp(cv * gauss(r));
  return v;
}

/** Counts per bucket with overdispersion (gamma-mixed Poisson, cv ~`cv`). */
export function countSeries(seed: number, n: number, mean: number, cv: number, at = n, factor = 1): Float64Array {
  const r = rng(seed);
  const v = new Float64Array(n);
  for (let i = 0; i < n; i++) v[i] = poisson(r, mean * (i >= at ? factor : 1) * Math.max(0.05, 1 + cv * gauss(r)));
  return v;
}

export function normalSeries(seed: number, n: number, at = n, shift = 0): Float64Array {
  const r = rng(seed);
  const v = new Float64Array(n);
  for (let i = 0; i < n; i++) v[i] = gauss(r) + (i >= at ? shift : 0);
  return v;
}
