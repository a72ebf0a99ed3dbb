// Fixed detector configurations; nothing here is set by users. The shared reporting settings
// (hazard, threshold, minLag, spread) and the generic model's priors were chosen once on public
// data — TCPD and NAB realAWSCloudwatch, one configuration for all series (bench/eval-changepoints.ts)
// — and the service signals' priors on seeded synthetic 5-minute series (figures below).
import { MODEL, P, type ModelName } from './layout.js';

export interface DetectorConfig {
  model: ModelName;
  /** Constant hazard: prior probability of a change at any point (1 / expected run length). */
  hazard: number;
  /** Posterior mass of "a change since the last reported one" needed to report it, in (0, 1). */
  threshold: number;
  /** A change is also reported once the runs older than the last one hold less than `dead` (0 = off: on TCPD 0.01 costs 0.13 F1). */
  dead: number;
  /** Runs starting within this many points of the heaviest new run pool their mass (>= 0). */
  spread: number;
  /** Points that must follow the first point of a new regime before it is reported (>= 0). */
  minLag: number;
  /** Run-length hypotheses kept per series; bounds the cost per point (trend: maxRuns - 1 between points). */
  maxRuns: number;
  /** Runs whose posterior mass falls below eps are pruned. */
  eps: number;
  /** normal model: values are used as (x - loc) / scale. */
  loc: number;
  scale: number;
  /** Normal–Gamma prior (normal, lognormal, trend); the prior mean is the first observation, a trend's slope has prior 0 and the level's kappa0. */
  kappa0: number;
  alpha0: number;
  beta0: number;
  /** Beta prior of the error rate (binomial model). */
  a0: number;
  b0: number;
  /** binomial: a bucket of n calls counts as n / (1 + n / n0) effective calls (overdispersion). */
  n0: number;
  /** Gamma prior shape of the count rate (poisson model); its mean is the first count (>= 1). */
  ga0: number;
  /** poisson: a run's counts are tempered by 1 / (1 + its mean / k0) (overdispersion). */
  k0: number;
  /**
   * poisson: the Gamma prior's mean, first the first count, follows the current regime once it has
   * this many points (0 = never). A prior far below the series' level (a first bucket at a quiet
   * hour) makes every new regime implausible, so no rise is found.
   */
  anchor: number;
}

/** Shared detection settings; the observation model and its priors differ per signal. */
export const BASE_CONFIG: DetectorConfig = {
  model: 'normal',
  hazard: 1 / 100,
  threshold: 0.9,
  minLag: 4,
  spread: 2,
  dead: 0,
  maxRuns: 32,
  eps: 1e-6,
  loc: 0,
  scale: 1,
  kappa0: 0.1,
  alpha0: 1,
  beta0: 1,
  a0: 0.5,
  b0: 5,
  n0: 500,
  ga0: 1,
  k0: 30,
  anchor: 12, // an hour; chosen on the generated seasonal series of seeds 1-10 (bench/eval-seasonal.ts)
};

/** Signals of the service plus a generic univariate one. */
export type Signal = 'error_rate' | 'latency_p95' | 'log_volume' | 'error_log_rate' | 'profile_cost' | 'generic';

// Service signals: 5-minute series whose regimes last hours. 8 run-length hypotheses carry the
// posterior: on 200 synthetic day-long series per signal, 4 / 6 / 8 / 16 runs gave 38 / 17 / 8 / 3
// spurious extra changes around a real error-rate step; the cost per point grows linearly with it.
const SERVICE = { maxRuns: 8, eps: 1e-4 } as const;

export const SIGNAL_CONFIG: Readonly<Record<Signal, DetectorConfig>> = {
  // n0 = 500: with 30% bucket-to-bucket noise on the rate itself, 5 / 200 stationary series showed a
  // change (n0 = 1000: 30 / 200), while a 2% -> 4% step is found in half the series of 10 to 10^4
  // calls per bucket (n0 = 100: a quarter)
  error_rate: { ...BASE_CONFIG, ...SERVICE, model: 'binomial' },
  // log scale; beta0 / alpha0 = prior variance of ln(p95) between buckets (sd ~0.3): 1 / 300
  // stationary series with 5-35% noise showed a change (beta0 = 0.01: 29 / 300), x1.5 steps found
  latency_p95: { ...BASE_CONFIG, ...SERVICE, model: 'lognormal', beta0: 0.1 },
  profile_cost: { ...BASE_CONFIG, ...SERVICE, model: 'lognormal', beta0: 0.1 },
  log_volume: { ...BASE_CONFIG, ...SERVICE, model: 'poisson' },
  error_log_rate: { ...BASE_CONFIG, ...SERVICE, model: 'poisson' },
  // Arbitrary series (TCPD, NAB): a regime is a level or a line. On TCPD, with the shared settings and
  // priors above unchanged, mean F1 / cover 0.85 / 0.78 against 0.77 / 0.74 with levels only ('normal'),
  // and 26 instead of 25 of NAB's 30 windows with fewer false positives (bench/eval-changepoints.ts)
  generic: { ...BASE_CONFIG, model: 'trend' },
};

export function validateConfig(c: DetectorConfig): void {
  const bad = (key: string, why: string): never => {
    throw new RangeError(`bocpd config: ${key} ${why}`);
  };
  if (!(c.model in MODEL)) bad('model', `must be one of ${Object.keys(MODEL).join(', ')}`);
  if (!(c.hazard > 0 && c.hazard < 1)) bad('hazard', 'must be in (0, 1)');
  if (!(c.threshold > 0 && c.threshold < 1)) bad('threshold', 'must be in (0, 1)');
  if (!(Number.isInteger(c.spread) && c.spread >= 0)) bad('spread', 'must be an integer >= 0');
  if (!(Number.isInteger(c.minLag) && c.minLag >= 0)) bad('minLag', 'must be an integer >= 0');
  if (!(Number.isInteger(c.maxRuns) && c.maxRuns >= 1 && c.maxRuns <= 4096)) bad('maxRuns', 'must be an integer in [1, 4096]');
  if (!(c.dead >= 0 && c.dead < 1)) bad('dead', 'must be in [0, 1)');
  if (!(c.eps >= 0 && c.eps < 1)) bad('eps', 'must be in [0, 1)');
  for (const k of ['scale', 'kappa0', 'alpha0', 'beta0', 'a0', 'b0', 'n0', 'ga0', 'k0'] as const) {
    if (!(c[k] > 0 && Number.isFinite(c[k]))) bad(k, 'must be a finite number > 0');
  }
  if (!Number.isFinite(c.loc)) bad('loc', 'must be finite');
  if (!(Number.isInteger(c.anchor) && c.anchor >= 0)) bad('anchor', 'must be an integer >= 0');
}

/** Packs a configuration into the parameter vector both implementations read. */
export function packParams(c: DetectorConfig): Float64Array {
  validateConfig(c);
  const p = new Float64Array(P.size);
  p[P.kind] = MODEL[c.model];
  p[P.logH] = Math.log(c.hazard);
  p[P.log1mH] = Math.log1p(-c.hazard);
  p[P.threshold] = c.threshold;
  p[P.minLag] = c.minLag;
  p[P.spread] = c.spread;
  p[P.dead] = c.dead;
  p[P.maxRuns] = c.maxRuns;
  p[P.eps] = c.eps;
  p[P.loc] = c.loc;
  p[P.scale] = c.scale;
  p[P.kappa0] = c.kappa0;
  p[P.alpha0] = c.alpha0;
  p[P.beta0] = c.beta0;
  p[P.a0] = c.a0;
  p[P.b0] = c.b0;
  p[P.n0] = c.n0;
  p[P.ga0] = c.ga0;
  p[P.k0] = c.k0;
  p[P.anchor] = c.anchor;
  return p;
}
