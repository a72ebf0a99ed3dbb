// Plain TypeScript twin of assembly/bocpd.ts: the same algorithm over the same flat layouts
// (layout.ts) and the same state, so the two are tested against each other (test/detect) and a state
// saved by one resumes on the other. This is the readable version: it computes every predictive
// directly in the log domain. The WASM build is the fast one (bench/detect.ts): it carries ln Γ
// terms from one point to the next (binomial), tabulates the Student-t Γ ratio, and scales masses
// in the linear domain — same answers within float rounding.
//
// Bayesian online changepoint detection (Adams & MacKay 2007): for every point the posterior over
// the current run length r (points since the last change) is updated with a constant hazard h:
//   P(r_t = r+1) ∝ P(r_{t-1} = r) · p(x_t | run r) · (1 − h)
//   P(r_t = 0)   ∝ p(x_t | prior) · h
// Each run keeps conjugate sufficient statistics, so p(x_t | run) is a closed form (Student-t,
// Beta–Binomial or negative binomial). Runs whose mass falls under eps are pruned; above maxRuns the
// lightest is merged into its older neighbour, so the cost per point is bounded. The trend model
// starts two runs at every point, a level and a line, each with half the prior mass of a change.
//
// Reporting rule (online, stable): a change is reported at the start s* of the heaviest run that
// began after the last reported change, once the runs that began within `spread` points of s* (and
// after the last reported change) hold more than `threshold` of the mass and s* has been followed by
// at least `minLag` points (optionally also once the runs older than the last reported change hold
// less than `dead` of the mass; off by default). Summing the mass of every run since the last change
// instead reports spurious changes in any long regime: under a constant hazard that mass tends to 1.
// A reported change is never revised, and the state carries everything needed to continue, so
// feeding a series in pieces gives exactly the answer of feeding it whole.
import { E, EVENT_W, MODEL, P, R, S } from './layout.js';

const HALF_LOG_2PI = 0.9189385332046728;
const LOG_PI = 1.1447298858494002;

/**
 * ln Γ(x) for x > 0: Stirling's series with six terms for x ≥ 7 (next term < 7e-14); below 7,
 * ln Γ(x) = ln Γ(x + 7) − ln(x (x+1) … (x+6)), the product taken as a shallow tree.
 */
export function lgamma(x: number): number {
  let shift = 0;
  if (x < 7) {
    const p = x * (x + 1) * ((x + 2) * (x + 3)) * ((x + 4) * (x + 5) * (x + 6));
    shift = Math.log(p);
    x += 7;
  }
  const r = 1 / x;
  const r2 = r * r;
  const series =
    r * (0.08333333333333333 - r2 * (0.002777777777777778 - r2 * (0.0007936507936507937 - r2 * (0.0005952380952380952 - r2 * (0.0008417508417508417 - r2 * 0.0019175269175269176)))));
  return (x - 0.5) * Math.log(x) - x + HALF_LOG_2PI + series - shift;
}

/** log of the Student-t density of residual d with 2·alpha degrees of freedom and ν·s² = nus2. */
function tLogPdf(alpha: number, nus2: number, d: number): number {
  return lgamma(alpha + 0.5) - lgamma(alpha) - 0.5 * (Math.log(nus2) + LOG_PI) - (alpha + 0.5) * Math.log1p((d * d) / nus2);
}

/** log p(y | run) for the Normal–Gamma model; n == 0 gives the prior predictive. */
function ngLogPred(p: Float64Array, mu0: number, n: number, mean: number, m2: number, y: number): number {
  const kappa0 = p[P.kappa0]!;
  const kappa = kappa0 + n;
  const mu = (kappa0 * mu0 + n * mean) / kappa;
  const alpha = p[P.alpha0]! + 0.5 * n;
  const dm = mean - mu0;
  const beta = p[P.beta0]! + 0.5 * m2 + (kappa0 * n * dm * dm) / (2 * kappa);
  return tLogPdf(alpha, (2 * beta * (kappa + 1)) / kappa, y - mu);
}

/**
 * Trend run of n points (Normal–Gamma linear regression of y on (1, u), u = points since the run's
 * start): returns log p(y | run) at u, then absorbs y by the recursive least-squares form of the
 * conjugate update. A level run has V01 = V11 = 0, which the update keeps, so its slope stays 0.
 */
function trendStep(p: Float64Array, st: Float64Array, o: number, n: number, u: number, y: number): number {
  const v00 = st[o + R.c1]!;
  const v01 = st[o + R.c2]!;
  const v11 = st[o + R.c3]!;
  const g0 = v00 + v01 * u; // V·f, f = (1, u)
  const g1 = v01 + v11 * u;
  const s = 1 + g0 + g1 * u; // 1 + fᵀ·V·f
  const e = y - (st[o + R.s1]! + st[o + R.s2]! * u);
  const beta = st[o + R.s3]!;
  const lp = tLogPdf(p[P.alpha0]! + 0.5 * n, 2 * beta * s, e);
  st[o + R.s1] = st[o + R.s1]! + (g0 * e) / s;
  st[o + R.s2] = st[o + R.s2]! + (g1 * e) / s;
  st[o + R.s3] = beta + (0.5 * e * e) / s;
  st[o + R.c1] = v00 - (g0 * g0) / s;
  st[o + R.c2] = v01 - (g0 * g1) / s;
  st[o + R.c3] = v11 - (g1 * g1) / s;
  return lp;
}

/** A new trend run at the prior (level mu0; a line's slope gets the level's weak prior), absorbing y. */
function trendStart(p: Float64Array, st: Float64Array, o: number, mu0: number, line: boolean, y: number): void {
  st[o + R.s1] = mu0;
  st[o + R.s2] = 0;
  st[o + R.s3] = p[P.beta0]!;
  st[o + R.c1] = 1 / p[P.kappa0]!;
  st[o + R.c2] = 0;
  st[o + R.c3] = line ? 1 / p[P.kappa0]! : 0;
  trendStep(p, st, o, 0, 0, y);
}

/**
 * The model part of the run just opened at slot o (mass, start and raw sums set) for the point
 * (k, nn) or y. The trend model opens two: a level, and beside it the same run with its slope free.
 * Returns the number of runs opened.
 */
function startRun(p: Float64Array, st: Float64Array, o: number, kind: number, mu0: number, k: number, nn: number, y: number): number {
  if (kind === MODEL.binomial) {
    st[o + R.s1] = k;
    st[o + R.s2] = nn - k;
    st[o + R.s3] = 0;
    bbCache(p, st, o);
  } else if (kind === MODEL.poisson) {
    st[o + R.s1] = k;
    st[o + R.s2] = 1;
    st[o + R.s3] = 1 / (1 + mu0 / p[P.k0]!); // the weight the prior predictive used
    gpCache(p, mu0, st, o);
  } else if (kind === MODEL.trend) {
    for (let j = 0; j < R.width; j++) st[o + R.width + j] = st[o + j]!;
    trendStart(p, st, o, mu0, false, y);
    trendStart(p, st, o + R.width, mu0, true, y);
    return 2;
  } else {
    st[o + R.s1] = 1;
    st[o + R.s2] = y;
    st[o + R.s3] = 0;
  }
  return 1;
}

/** Carries ln Γ(a), ln Γ(b), ln Γ(a + b) of a binomial run's posterior (used by the WASM build). */
function bbCache(p: Float64Array, st: Float64Array, o: number): void {
  const a = p[P.a0]! + st[o + R.s1]!;
  const b = p[P.b0]! + st[o + R.s2]!;
  st[o + R.c1] = lgamma(a);
  st[o + R.c2] = lgamma(b);
  st[o + R.c3] = lgamma(a + b);
}

/** log p(k | run) for the Beta–Binomial model (binomial coefficient omitted: equal for all runs). */
function bbLogPred(a: number, b: number, k: number, n: number): number {
  return lgamma(a + k) + lgamma(b + n - k) - lgamma(a + b + n) - lgamma(a) - lgamma(b) + lgamma(a + b);
}

/** n is 1, 2, 4, 8, ...: the points after which a Gamma–Poisson run refreshes its weight w. */
function isPow2(n: number): boolean {
  return n < 1073741824 && (n & (n - 1)) === 0;
}

/** Carries ln Γ(alpha), ln(beta / w), ln w of a Gamma–Poisson run (used by the WASM build). */
function gpCache(p: Float64Array, mu0: number, st: Float64Array, o: number): void {
  const w = st[o + R.s3]!;
  st[o + R.c1] = lgamma(p[P.ga0]! + w * st[o + R.s1]!);
  st[o + R.c2] = Math.log(p[P.ga0]! / mu0 / w + st[o + R.s2]!);
  st[o + R.c3] = Math.log(w);
}

/**
 * log p(k | run) for the Gamma–Poisson model. Overdispersion: the Poisson likelihood of a run is
 * tempered by w = 1 / (1 + mean / k0), i.e. counts weigh as k·w (a bucket of mean m carries the
 * evidence of about k0 Poisson counts when m >> k0). A run's w comes from its posterior mean, refreshed
 * when it has seen 1, 2, 4, 8, ... points (a new run starts with the prior's), so between refreshes its
 * posterior updates incrementally (the WASM build carries its ln Γ terms). (Fixing w at a run's first
 * count instead made runs started on a low count over-confident: spurious changes between equal
 * means on the synthetic tests.) The rate posterior is Gamma(alpha, beta) in raw units; the
 * tempered count k·w is negative binomial with shape alpha and rate beta / w; log w is the Jacobian
 * back to k.
 */
function gpLogPred(alpha: number, beta: number, k: number, w: number): number {
  const kw = k * w;
  const bw = beta / w;
  return lgamma(alpha + kw) - lgamma(alpha) - lgamma(kw + 1) + alpha * Math.log(bw / (bw + 1)) - kw * Math.log(bw + 1) + Math.log(w);
}

/**
 * Feeds points [from, to) of one series into its state (at `so` in `st`), writing reported changes
 * as events at `ev[eo..]`. Returns the number of events written. Missing points (NaN, or calls <= 0
 * for the binomial model) advance the index but are no observation. Long on purpose: it mirrors
 * assembly/bocpd.ts line by line, so the two can be read side by side.
 */
export function runSeries(
  p: Float64Array,
  xs: Float64Array,
  ns: Float64Array,
  from: number,
  to: number,
  st: Float64Array,
  so: number,
  ev: Float64Array,
  eo: number,
  seriesIndex: number,
): number {
  const kind = p[P.kind]! | 0;
  const logH = p[P.logH]!;
  const log1mH = p[P.log1mH]!;
  const threshold = p[P.threshold]!;
  const minLag = p[P.minLag]!;
  const maxRuns = p[P.maxRuns]! | 0;
  const eps = p[P.eps]!;
  const spread = p[P.spread]!;
  const dead = p[P.dead]!;
  const anchor = kind === MODEL.poisson ? p[P.anchor]! : 0;
  let t = st[so + S.t]!;
  let nRuns = st[so + S.nRuns]! | 0;
  let cLast = st[so + S.cLast]!;
  let mu0 = st[so + S.mu0]!;
  let segSum = st[so + S.segSum]!;
  let segW = st[so + S.segW]!;
  const base = so + S.header;
  let written = 0;
  let lastEvent = -1; // slot of the last event written in this call, whose "after" is still open

  for (let i = from; i < to; i++, t++) {
    const x = xs[i]!;
    // --- observation in model units; raw contribution to segment means ---
    let y = 0;
    let k = 0;
    let nn = 0;
    let rawX = x;
    let rawW = 1;
    if (kind === MODEL.binomial) {
      const calls = ns[i]!;
      if (!(calls > 0 && calls < Infinity) || !(x >= 0)) continue;
      const kk = x > calls ? calls : x;
      const w = 1 / (1 + calls / p[P.n0]!);
      k = kk * w;
      nn = calls * w;
      rawX = kk;
      rawW = calls;
    } else if (kind === MODEL.poisson) {
      if (!(x >= 0 && x < Infinity)) continue;
      k = x;
    } else if (kind === MODEL.lognormal) {
      if (!(x >= 0 && x < Infinity)) continue;
      y = Math.log1p(x);
    } else {
      if (!(x - x === 0)) continue; // NaN or ±Infinity: missing
      y = (x - p[P.loc]!) / p[P.scale]!;
    }
    if (nRuns === 0) {
      // prior location from the first observation: NG mean; Gamma–Poisson prior mean (>= 1)
      mu0 = kind === MODEL.poisson ? Math.max(k, 1) : y;
      cLast = t;
    }

    // --- prior predictive (the hypothesis "a change at t") ---
    let lp0: number;
    if (kind === MODEL.binomial) lp0 = bbLogPred(p[P.a0]!, p[P.b0]!, k, nn);
    else if (kind === MODEL.poisson) lp0 = gpLogPred(p[P.ga0]!, p[P.ga0]! / mu0, k, 1 / (1 + mu0 / p[P.k0]!));
    else lp0 = ngLogPred(p, mu0, 0, 0, 0, y);

    // --- growth: every run absorbs x_t ---
    let maxLM = -Infinity;
    for (let r = 0; r < nRuns; r++) {
      const o = base + r * R.width;
      let lp: number;
      if (kind === MODEL.binomial) {
        lp = bbLogPred(p[P.a0]! + st[o + R.s1]!, p[P.b0]! + st[o + R.s2]!, k, nn);
        st[o + R.s1] = st[o + R.s1]! + k;
        st[o + R.s2] = st[o + R.s2]! + nn - k;
        bbCache(p, st, o);
      } else if (kind === MODEL.poisson) {
        const sum = st[o + R.s1]!;
        const cnt = st[o + R.s2]!;
        const gb = p[P.ga0]! / mu0;
        let w = st[o + R.s3]!;
        if (isPow2(cnt)) {
          w = 1 / (1 + (p[P.ga0]! + sum) / (gb + cnt) / p[P.k0]!);
          st[o + R.s3] = w;
        }
        lp = gpLogPred(p[P.ga0]! + w * sum, gb + w * cnt, k, w);
        st[o + R.s1] = sum + k;
        st[o + R.s2] = cnt + 1;
        gpCache(p, mu0, st, o);
      } else if (kind === MODEL.trend) {
        lp = trendStep(p, st, o, st[o + R.rawW]!, t - st[o + R.start]!, y);
      } else {
        const n = st[o + R.s1]!;
        const mean = st[o + R.s2]!;
        lp = ngLogPred(p, mu0, n, mean, st[o + R.s3]!, y);
        const n1 = n + 1;
        const d = y - mean;
        const mean1 = mean + d / n1;
        st[o + R.s1] = n1;
        st[o + R.s2] = mean1;
        st[o + R.s3] = st[o + R.s3]! + d * (y - mean1);
      }
      const lm = Math.log(st[o + R.mass]!) + lp + log1mH;
      st[o + R.mass] = lm; // log until normalised below
      st[o + R.rawSum] = st[o + R.rawSum]! + rawX;
      st[o + R.rawW] = st[o + R.rawW]! + rawW;
      if (lm > maxLM) maxLM = lm;
    }
    // --- the new run (start = t), appended last; the trend model starts two, sharing its prior mass ---
    {
      const lm = (nRuns === 0 ? 0 : lp0 + logH) - (kind === MODEL.trend ? Math.LN2 : 0);
      const o = base + nRuns * R.width;
      st[o + R.mass] = lm;
      st[o + R.start] = t;
      st[o + R.rawSum] = rawX;
      st[o + R.rawW] = rawW;
      if (lm > maxLM) maxLM = lm;
      nRuns += startRun(p, st, o, kind, mu0, k, nn, y);
    }
    segSum += rawX;
    segW += rawW;

    // --- normalise, prune by mass, cap the number of runs ---
    let z = 0;
    for (let r = 0; r < nRuns; r++) z += Math.exp(st[base + r * R.width + R.mass]! - maxLM);
    const logZ = maxLM + Math.log(z);
    let kept = 0;
    for (let r = 0; r < nRuns; r++) {
      const o = base + r * R.width;
      const m = Math.exp(st[o + R.mass]! - logZ);
      if (!(m >= eps)) continue;
      const d = base + kept * R.width;
      if (d !== o) for (let j = 1; j < R.width; j++) st[d + j] = st[o + j]!;
      st[d + R.mass] = m;
      kept++;
    }
    nRuns = kept;
    // (the trend model starts two runs per point, so it keeps maxRuns - 1 between points: the state
    // holds maxRuns + 1; this form of the bound runs faster in V8 than a conditional in the test)
    const births = kind === MODEL.trend ? 2 : 1;
    while (nRuns > maxRuns + 1 - births) {
      // merge the lightest run into its older neighbour (its mass moves there, so the mass of a
      // region of start times is kept; dropping it instead inflates every other run's share)
      let minR = 0;
      let minLM = Infinity;
      for (let r = 0; r < nRuns; r++) {
        const m = st[base + r * R.width + R.mass]!;
        if (m < minLM) {
          minLM = m;
          minR = r;
        }
      }
      const into = minR > 0 ? minR - 1 : 1;
      st[base + into * R.width + R.mass] = st[base + into * R.width + R.mass]! + minLM;
      for (let r = minR; r < nRuns - 1; r++) {
        const d = base + r * R.width;
        for (let j = 0; j < R.width; j++) st[d + j] = st[d + R.width + j]!;
      }
      nRuns--;
    }

    // --- report a change once the mass near one start after the last reported one is convincing ---
    let bestLM = -Infinity;
    let bestR = -1;
    for (let r = 0; r < nRuns; r++) {
      const o = base + r * R.width;
      if (st[o + R.start]! <= cLast) continue;
      const m = st[o + R.mass]!;
      if (m > bestLM) {
        bestLM = m;
        bestR = r;
      }
    }
    let candMass = 0;
    let oldMass = 0;
    if (bestR >= 0) {
      const sBest = st[base + bestR * R.width + R.start]!;
      for (let r = 0; r < nRuns; r++) {
        const o = base + r * R.width;
        const s0 = st[o + R.start]!;
        if (s0 <= cLast) oldMass += st[o + R.mass]!;
        else if (s0 >= sBest - spread && s0 <= sBest + spread) candMass += st[o + R.mass]!;
      }
    }
    let reported = false;
    if (bestR >= 0 && (candMass > threshold || oldMass < dead)) {
      const o = base + bestR * R.width;
      const s = st[o + R.start]!;
      if (t - s >= minLag) {
        reported = true;
        const aSum = st[o + R.rawSum]!;
        const aW = st[o + R.rawW]!;
        const before = meanOf(kind, segSum - aSum, segW - aW);
        if (lastEvent >= 0) ev[lastEvent + E.after] = before;
        const e = eo + written * EVENT_W;
        ev[e + E.series] = seriesIndex;
        ev[e + E.index] = s;
        ev[e + E.before] = before;
        ev[e + E.after] = meanOf(kind, aSum, aW);
        ev[e + E.at] = t;
        ev[e + E.sum] = aSum;
        ev[e + E.weight] = aW;
        lastEvent = e;
        written++;
        cLast = s;
        segSum = aSum;
        segW = aW;
      }
    }
    // --- the count model's prior mean follows the regime once it has `anchor` points ---
    if (anchor > 0 && (reported ? segW >= anchor : segW === anchor)) {
      mu0 = Math.max(segSum / segW, 1);
      for (let r = 0; r < nRuns; r++) gpCache(p, mu0, st, base + r * R.width);
    }
  }
  if (lastEvent >= 0) ev[lastEvent + E.after] = meanOf(kind, segSum, segW);
  st[so + S.t] = t;
  st[so + S.nRuns] = nRuns;
  st[so + S.cLast] = cLast;
  st[so + S.mu0] = mu0;
  st[so + S.segSum] = segSum;
  st[so + S.segW] = segW;
  return written;
}

function meanOf(kind: number, sum: number, w: number): number {
  if (!(w > 0)) return NaN;
  return kind === MODEL.binomial ? (100 * sum) / w : sum / w;
}

/**
 * Batch over many series: series i is points [offsets[i], offsets[i+1]) of xs/ns and state
 * [i * stateSize, (i+1) * stateSize) of states. Events go to ev (capacity evCap events). A series
 * is processed only if the remaining capacity covers its worst case; info[0] = events written,
 * info[1] = index of the first series not processed (== nSeries when all were).
 */
export function runBatch(
  p: Float64Array,
  xs: Float64Array,
  ns: Float64Array,
  offsets: Float64Array,
  nSeries: number,
  states: Float64Array,
  stateSize: number,
  ev: Float64Array,
  evCap: number,
  firstSeries: number,
  info: Float64Array,
): void {
  let written = 0;
  let i = firstSeries;
  for (; i < nSeries; i++) {
    const from = offsets[i]!;
    const to = offsets[i + 1]!;
    const worst = to - from; // at most one event per point fed
    if (written + worst > evCap) break;
    written += runSeries(p, xs, ns, from, to, states, i * stateSize, ev, written * EVENT_W, i);
  }
  info[0] = written;
  info[1] = i;
}
