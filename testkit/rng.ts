// A small seeded PRNG (mulberry32) for benchmarks and tests, and the draws they make from it: the
// same seed gives the same data, so a failure or a figure reproduces.
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal draw (Box–Muller). */
export function gauss(r: () => number): number {
  return Math.sqrt(-2 * Math.log(r() + 1e-300)) * Math.cos(2 * Math.PI * r());
}

/** A Poisson draw (its normal approximation above a mean of 50). */
export function poisson(r: () => number, mean: number): number {
  if (mean > 50) return Math.max(0, Math.round(mean + Math.sqrt(mean) * gauss(r)));
  const l = Math.exp(-mean);
  let k = 0;
  let p = 1;
  for (;;) {
    p *= r();
    if (p <= l) return k;
    k++;
  }
}

/** A binomial draw (its normal approximation above 200 trials). */
export function binomial(r: () => number, n: number, p: number): number {
  if (n > 200) return Math.max(0, Math.min(n, Math.round(n * p + Math.sqrt(n * p * (1 - p)) * gauss(r))));
  let k = 0;
  for (let i = 0; i < n; i++) if (r() < p) k++;
  return k;
}
