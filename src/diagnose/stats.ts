// Volume-aware tests behind every "is this worse?" of a diagnosis, as pure functions. Each answers
// with a surprise, -log10 of a one-sided tail probability, so evidence from different tests adds up
// on one scale: 3 errors in 4 calls against a 1% baseline is improbable but tiny, 900 in 30,000 is
// both; the surprise says how unlikely, the excess (how many more than expected) says how much.

/** ln Γ(x) (Lanczos, g = 7, n = 9), accurate to ~1e-15 for x > 0. */
export function lnGamma(x: number): number {
  const g = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lnGamma(1 - x);
  x -= 1;
  let a = g[0]!;
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += g[i]! / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the regularized incomplete beta (Numerical Recipes' betacf, modified Lentz). */
function betacf(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a - 1 + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + 1 + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-14) break;
  }
  return h;
}

/** ln I_x(a, b), the log of the regularized incomplete beta function. */
export function lnBetaInc(a: number, b: number, x: number): number {
  if (x <= 0) return -Infinity;
  if (x >= 1) return 0;
  const lnFront = lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return lnFront + Math.log(betacf(a, b, x)) - Math.log(a);
  // I_x(a,b) = 1 - I_{1-x}(b,a)
  const other = Math.exp(lnFront + Math.log(betacf(b, a, 1 - x)) - Math.log(b));
  return Math.log1p(-Math.min(other, 1));
}

const LN10 = Math.LN10;

/** Surprise of at least `k` successes in `n` trials at rate `p`: -log10 P(X ≥ k). 0 when k ≤ n·p. */
export function binomialSurprise(k: number, n: number, p: number): number {
  if (n <= 0 || k <= 0 || k <= n * p) return 0;
  if (p <= 0) return 300;
  if (p >= 1) return 0;
  // P(X ≥ k) = I_p(k, n - k + 1)
  return Math.min(300, -lnBetaInc(k, n - k + 1, p) / LN10);
}

/** ln P(a, x), the regularized lower incomplete gamma (series below a+1, continued fraction above). */
function lnGammaP(a: number, x: number): number {
  if (x <= 0) return -Infinity;
  const lnPre = a * Math.log(x) - x - lnGamma(a);
  if (x < a + 1) {
    let sum = 1 / a;
    let del = sum;
    for (let n = 1; n < 1000; n++) {
      del *= x / (a + n);
      sum += del;
      if (Math.abs(del) < Math.abs(sum) * 1e-15) break;
    }
    return lnPre + Math.log(sum);
  }
  // Q via continued fraction, P = 1 - Q
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 1000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return Math.log1p(-Math.min(1, Math.exp(lnPre + Math.log(h))));
}

/** Surprise of at least `k` events when `lambda` are expected (Poisson): -log10 P(X ≥ k). */
export function poissonSurprise(k: number, lambda: number): number {
  if (k <= 0 || k <= lambda) return 0;
  if (lambda <= 0) return 300;
  // P(X ≥ k) = P(k, λ), the regularized lower incomplete gamma.
  return Math.min(300, -lnGammaP(k, lambda) / LN10);
}

/**
 * The baseline rate a window is compared with: errors over calls with a weak prior (half an error
 * in a hundred calls), so a baseline of 0 in 20 calls does not make the first error infinitely
 * surprising, and a long clean baseline still does.
 */
export function baselineRate(k: number, n: number): number {
  return (k + 0.5) / (n + 50);
}

export interface RateShift {
  /** -log10 P(window errors ≥ observed | baseline rate). */
  surprise: number;
  /** Errors beyond what the baseline rate predicts. */
  excess: number;
  before: number;
  after: number;
}

/** Error rate (percent) of a window against its baseline, volume-aware. */
export function errorShift(k: number, n: number, baseK: number, baseN: number): RateShift {
  const p0 = baselineRate(baseK, baseN);
  return {
    surprise: binomialSurprise(k, n, p0),
    excess: Math.max(0, k - n * p0),
    before: baseN > 0 ? (100 * baseK) / baseN : 0,
    after: n > 0 ? (100 * k) / n : 0,
  };
}

/**
 * Latency as a quantile shift: how many window calls exceed the baseline's p95. Unchanged, about 5%
 * do (a binomial count); a regression puts far more above it. Volume-aware like the error test, and
 * needs only the baseline's p95, not its raw durations.
 */
export function exceedanceShift(above: number, n: number): { surprise: number; excess: number; fraction: number } {
  return { surprise: binomialSurprise(above, n, 0.05), excess: Math.max(0, above - 0.05 * n), fraction: n > 0 ? above / n : 0 };
}

/** The weighted median of values (weights ≥ 0); NaN when there is no weight. */
export function weightedMedian(values: readonly number[], weights: readonly number[]): number {
  const idx = values.map((_v, i) => i).filter((i) => weights[i]! > 0 && Number.isFinite(values[i]!));
  if (!idx.length) return NaN;
  idx.sort((a, b) => values[a]! - values[b]!);
  const total = idx.reduce((s, i) => s + weights[i]!, 0);
  let acc = 0;
  for (const i of idx) {
    acc += weights[i]!;
    if (acc >= total / 2) return values[i]!;
  }
  return values[idx[idx.length - 1]!]!;
}

/** Maps a surprise to [0, 1]: below 3 (p > 0.001) nothing, 12 and more all. */
export function surpriseWeight(s: number): number {
  return Math.max(0, Math.min(1, (s - 3) / 9));
}

/** Maps an amount (excess errors, calls above p95, …) to [0, 1] with `half` giving 0.5. */
export function amountWeight(x: number, half: number): number {
  return x <= 0 ? 0 : x / (x + half);
}

/** The median of `xs` (0 for none). */
export function median(xs: readonly number[]): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Surprise of a Student's t score with `df` degrees of freedom, one-sided: -log10 P(T ≥ t). */
export function tSurprise(t: number, df: number): number {
  if (!(t > 0)) return 0;
  const v = Math.max(1, df);
  // P(T ≥ t) = I_{v/(v+t²)}(v/2, 1/2) / 2
  return Math.min(300, -(lnBetaInc(v / 2, 0.5, v / (v + t * t)) - Math.LN2) / LN10);
}

/**
 * Fisher's combination of independent tests given as surprises (-log10 p): the surprise of the
 * product of their p-values under χ² with 2k degrees of freedom. Corroboration adds up; a weak
 * test beside a strong one costs little.
 */
export function fisherSurprise(surprises: readonly number[]): number {
  const s = surprises.filter((x) => x > 0);
  if (!s.length) return 0;
  if (s.length === 1) return s[0]!;
  const half = LN10 * s.reduce((a, x) => a + x, 0); // X/2 where X = -2 Σ ln p
  // P(χ²_2k > X) = e^{-X/2} Σ_{j<k} (X/2)^j / j!, in logs.
  let term = 0;
  let lnSum = 0;
  for (let j = 1; j < s.length; j++) {
    term += Math.log(half) - Math.log(j);
    lnSum = lnSum + Math.log1p(Math.exp(term - lnSum));
  }
  return Math.min(300, (half - lnSum) / LN10);
}

/**
 * Overdispersion of counts against their expectations, at least 1: how much more a count varies
 * from bin to bin in clean history than Poisson noise says. Robust: the median of the bins'
 * squared Pearson residuals over the median of χ² with one degree of freedom (0.455), so a few
 * bins of an earlier incident left in a baseline do not make every later count look ordinary.
 * Bins expecting less than one event say little and are skipped.
 */
export function dispersion(counts: readonly number[], expected: readonly number[]): number {
  const r: number[] = [];
  for (let i = 0; i < counts.length; i++) {
    const e = expected[i]!;
    if (e >= 1) r.push((counts[i]! - e) ** 2 / e);
  }
  return r.length >= 3 ? Math.max(1, median(r) / 0.455) : 1;
}

/**
 * Surprise of a count `ka` over exposure `ea` against a count `kb` over exposure `eb`, either way,
 * with overdispersion `phi`: given both counts' total, `ka` is binomial with the exposures' share
 * (the conditional test of two Poisson rates). Unlike a count against an expectation, a baseline of
 * a few events cannot make a window's count look certain: its own uncertainty is in the test.
 */
export function rateRatioSurprise(ka: number, ea: number, kb: number, eb: number, phi: number): { rise: number; fall: number } {
  const f = Math.max(1, phi);
  const n = (ka + kb) / f;
  const p = ea / (ea + eb);
  if (!(n > 0) || !(p > 0 && p < 1)) return { rise: 0, fall: 0 };
  return { rise: binomialSurprise(ka / f, n, p), fall: binomialSurprise(kb / f, n, 1 - p) };
}

/**
 * Surprise of a count against its expectation with overdispersion `phi` (quasi-Poisson), either
 * way. The expectation should carry its own prior (a rate of zero would make any count infinitely
 * surprising); a fall to zero is judged as half an event.
 */
export function quasiPoissonSurprise(k: number, lambda: number, phi: number): { rise: number; fall: number } {
  const f = Math.max(1, phi);
  return { rise: poissonSurprise(k / f, lambda / f), fall: poissonSurprise(lambda / f, Math.max(k, 0.5) / f) };
}
