// Flat layouts shared by the TypeScript reference (reference.ts) and the AssemblyScript module
// (assembly/bocpd.ts), which mirrors them: test/detect/layout.test.ts fails when the two differ.

/** Observation models. The numeric values cross the WASM boundary. */
export const MODEL = {
  /** Normal–Gamma (Student-t predictive) on (x - loc) / scale, each regime a level. */
  normal: 0,
  /** Normal–Gamma on ln(1 + x): latency p95, profile cost (positive, multiplicative noise). */
  lognormal: 1,
  /** Beta–Binomial on (errors, calls) per bucket: error rate. */
  binomial: 2,
  /** Gamma–Poisson (negative binomial predictive) on counts: log volume, error log count. */
  poisson: 3,
  /**
   * Normal–Gamma linear regression (Student-t predictive) on (x - loc) / scale: each regime is a level
   * or a line, both hypotheses started at every point (generic series, which often trend).
   */
  trend: 4,
} as const;
export type ModelName = keyof typeof MODEL;

/** Parameter vector (Float64Array) offsets. */
export const P = {
  kind: 0,
  logH: 1, // log hazard (constant hazard 1/lambda)
  log1mH: 2, // log(1 - hazard)
  threshold: 3, // posterior mass of "a change since the last reported one" needed to report it
  minLag: 4, // points of the new regime seen (after its first) before it is reported
  maxRuns: 5, // live run-length hypotheses kept per series (bounds cost per point)
  eps: 6, // runs whose posterior mass falls below eps are pruned
  loc: 7, // normal: location subtracted before scaling
  scale: 8, // normal: divisor
  kappa0: 9, // Normal–Gamma prior: pseudo-count of the mean (mean itself = first observation)
  alpha0: 10,
  beta0: 11,
  a0: 12, // Beta prior on the error rate
  b0: 13,
  n0: 14, // binomial: calls per bucket saturate at n0 effective calls (overdispersion)
  ga0: 15, // Gamma prior shape of the count rate (mean: first count, >= 1)
  dead: 16, // ...or once the runs older than the last reported change hold less than this mass
  k0: 17, // poisson: overdispersion; a run's counts are tempered by 1 / (1 + its mean / k0)
  spread: 18, // runs starting within this many points of the best one count together
  anchor: 19, // poisson: the prior mean follows a regime once it has this many points (0: fixed at the first point)
  size: 20,
} as const;

/** State header offsets; runs follow, RUN_W slots each. */
export const S = {
  t: 0, // points consumed so far (absolute index of the next point)
  nRuns: 1,
  cLast: 2, // first index of the current reported regime (-1 before the first observation)
  mu0: 3, // Normal–Gamma prior mean, fixed at the first observation
  segSum: 4, // raw sums of the current reported regime (for segment means)
  segW: 5,
  model: 6, // MODEL value + 1 of the configuration that made the state (checked on resume; engines ignore it)
  timed: 7, // 1 when the seasonal path's context (timed.ts) follows the detector's part (engines ignore it)
  header: 8,
} as const;

/** Run slot offsets. */
export const R = {
  mass: 0, // posterior probability of this run length (normalised, >= eps)
  start: 1,
  s1: 2, // normal: n; binomial: sum effective errors; poisson: sum counts; trend: level at start
  s2: 3, // normal: mean; binomial: sum effective successes; poisson: number of points; trend: slope
  s3: 4, // normal: M2 (sum of squared deviations); poisson: tempering weight w; trend: beta
  rawSum: 5, // raw units since start: errors, or sum of values
  rawW: 6, // calls, or number of observed points (trend: its n)
  // binomial: ln Γ(a), ln Γ(b), ln Γ(a + b) of the run's posterior, carried so the next point needs
  // three ln Γ instead of six; poisson: ln Γ(alpha), ln(beta / w), ln w; trend: V00, V01, V11 (the
  // posterior covariance of (level, slope) over the noise variance; V11 = 0 in a level regime)
  c1: 7,
  c2: 8,
  c3: 9,
  width: 10,
} as const;

/**
 * Event record written by the batch functions, one per reported change: the series, the first point
 * of the new regime, the regime means before and after (raw units; `after` up to the next change or
 * the last point of the call), the point whose arrival reported it, and the new regime's raw sum and
 * weight at that point.
 */
export const E = { series: 0, index: 1, before: 2, after: 3, at: 4, sum: 5, weight: 6, width: 7 } as const;
export const EVENT_W = E.width;

export function stateSize(maxRuns: number): number {
  return S.header + (maxRuns + 1) * R.width;
}
