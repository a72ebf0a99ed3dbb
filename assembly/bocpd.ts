// Bayesian online changepoint detection (Adams & MacKay 2007), the WASM build: the twin of
// src/detect/bocpd/reference.ts (read that file for the algorithm) over the flat layouts of
// src/detect/bocpd/layout.ts, mirrored below. Same steps, same state; it differs only in how it
// computes: binomial runs carry ln Γ(a), ln Γ(b), ln Γ(a+b) from one point to the next (3 ln Γ per
// point instead of 6) and Gamma–Poisson runs carry ln Γ(alpha), ln(beta/w), ln w, the Student-t Γ ratio comes from a table, and masses are updated in the
// linear domain (no log of a mass). Answers agree with the reference within float rounding.
//
// Boundary: every argument is the address of a Float64Array region the caller wrote into this
// module's memory (one pinned buffer it allocated once and reuses); nothing is allocated here.

// --- layout.ts mirror ---
const MODEL_BINOMIAL: i32 = 2;
const MODEL_POISSON: i32 = 3;
const MODEL_LOGNORMAL: i32 = 1;

const P_KIND: i32 = 0;
const P_LOGH: i32 = 1;
const P_LOG1MH: i32 = 2;
const P_THRESHOLD: i32 = 3;
const P_MINLAG: i32 = 4;
const P_MAXRUNS: i32 = 5;
const P_EPS: i32 = 6;
const P_LOC: i32 = 7;
const P_SCALE: i32 = 8;
const P_KAPPA0: i32 = 9;
const P_ALPHA0: i32 = 10;
const P_BETA0: i32 = 11;
const P_A0: i32 = 12;
const P_B0: i32 = 13;
const P_N0: i32 = 14;
const P_GA0: i32 = 15;
const P_K0: i32 = 17;
const P_SPREAD: i32 = 18;
const P_DEAD: i32 = 16;

const S_T: i32 = 0;
const S_NRUNS: i32 = 1;
const S_CLAST: i32 = 2;
const S_MU0: i32 = 3;
const S_SEGSUM: i32 = 4;
const S_SEGW: i32 = 5;
const S_HEADER: i32 = 8;

const R_MASS: i32 = 0;
const R_START: i32 = 1;
const R_S1: i32 = 2;
const R_S2: i32 = 3;
const R_S3: i32 = 4;
const R_RAWSUM: i32 = 5;
const R_RAWW: i32 = 6;
const R_C1: i32 = 7;
const R_C2: i32 = 8;
const R_C3: i32 = 9;
const R_WIDTH: i32 = 10;

const EVENT_W: i32 = 4;

const HALF_LOG_2PI: f64 = 0.9189385332046728;
const PI: f64 = 3.141592653589793;

// Scratch (log predictive per run) and the Student-t Γ-ratio table, static, never allocated.
const MAX_RUNS: i32 = 4096;
const LP: usize = memory.data(8 * (MAX_RUNS + 2)); // log-domain part of each run's predictive
const LC: usize = memory.data(8 * (MAX_RUNS + 2)); // linear factor of each run's predictive
const GTAB_N: i32 = 4096;
const GTAB: usize = memory.data(8 * (GTAB_N + 1));
let gtabAlpha0: f64 = NaN;

@inline function ld(base: usize, i: i32): f64 {
  return load<f64>(base + (<usize>i << 3));
}
@inline function sto(base: usize, i: i32, v: f64): void {
  store<f64>(base + (<usize>i << 3), v);
}

// ln: AssemblyScript's Math.log (musl's table-driven log at shrinkLevel 0) measured 6 ns here
// against 8-10 ns for a table-free atanh series; kept.
@inline function ln(x: f64): f64 {
  return Math.log(x);
}

/**
 * ln Γ(x) for x > 0: Stirling's series with six terms for x ≥ 7 (next term < 7e-14); below 7,
 * ln Γ(x) = ln Γ(x + 7) − ln(x (x+1) … (x+6)), the product taken as a shallow tree.
 */
export function lgamma(x: f64): f64 {
  let shift: f64 = 0;
  if (x < 7) {
    const p = x * (x + 1) * ((x + 2) * (x + 3)) * ((x + 4) * (x + 5) * (x + 6));
    shift = ln(p);
    x += 7;
  }
  const r = 1 / x;
  const r2 = r * r;
  const series =
    r * (0.08333333333333333 - r2 * (0.002777777777777778 - r2 * (0.0007936507936507937 - r2 * (0.0005952380952380952 - r2 * (0.0008417508417508417 - r2 * 0.0019175269175269176)))));
  return (x - 0.5) * ln(x) - x + HALF_LOG_2PI + series - shift;
}

/** Γ(α0 + n/2 + 1/2) / Γ(α0 + n/2), tabulated per α0 for n ≤ GTAB_N. */
function fillGammaTable(alpha0: f64): void {
  if (alpha0 == gtabAlpha0) return;
  for (let n: i32 = 0; n <= GTAB_N; n++) {
    const a = alpha0 + 0.5 * <f64>n;
    sto(GTAB, n, Math.exp(lgamma(a + 0.5) - lgamma(a)));
  }
  gtabAlpha0 = alpha0;
}

@inline function gammaHalfRatio(alpha: f64, n: f64): f64 {
  if (n <= <f64>GTAB_N) return ld(GTAB, <i32>n);
  return Math.exp(lgamma(alpha + 0.5) - lgamma(alpha));
}

/**
 * Student-t predictive split as factor · exp(exponent): the factor Γ(α+½)/Γ(α)/√(πνs²) is linear
 * (table + sqrt), the exponent −(α+½)·ln(1 + d²/(νs²)) is the only transcendental. Writes the
 * factor to LC[slot] and returns the exponent.
 */
@inline function ngPred(kappa0: f64, alpha0: f64, beta0: f64, mu0: f64, n: f64, mean: f64, m2: f64, y: f64, slot: i32): f64 {
  const kappa = kappa0 + n;
  const mu = (kappa0 * mu0 + n * mean) / kappa;
  const alpha = alpha0 + 0.5 * n;
  const dm = mean - mu0;
  const beta = beta0 + 0.5 * m2 + (kappa0 * n * dm * dm) / (2 * kappa);
  const nus2 = (2 * beta * (kappa + 1)) / kappa;
  const d = y - mu;
  sto(LC, slot, gammaHalfRatio(alpha, n) / Math.sqrt(PI * nus2));
  return -(alpha + 0.5) * Math.log1p((d * d) / nus2);
}

@inline function bbLogPred(a: f64, b: f64, k: f64, n: f64): f64 {
  return lgamma(a + k) + lgamma(b + n - k) - lgamma(a + b + n) - lgamma(a) - lgamma(b) + lgamma(a + b);
}

@inline function gpLogPred(alpha: f64, beta: f64, k: f64, w: f64): f64 {
  const kw = k * w;
  const bw = beta / w;
  return lgamma(alpha + kw) - lgamma(alpha) - lgamma(kw + 1) + alpha * ln(bw / (bw + 1)) - kw * ln(bw + 1) + ln(w);
}

@inline function isPow2(n: f64): bool {
  const i = <i32>n;
  return n < 1073741824 && (i & (i - 1)) == 0;
}

@inline function meanOf(kind: i32, sum: f64, w: f64): f64 {
  if (!(w > 0)) return NaN;
  return kind == MODEL_BINOMIAL ? (100 * sum) / w : sum / w;
}

function runSeries(p: usize, xs: usize, ns: usize, from: i32, to: i32, st: usize, ev: usize, seriesIndex: f64): i32 {
  const kind = <i32>ld(p, P_KIND);
  const logH = ld(p, P_LOGH);
  const log1mH = ld(p, P_LOG1MH);
  const threshold = ld(p, P_THRESHOLD);
  const minLag = ld(p, P_MINLAG);
  const maxRuns = <i32>ld(p, P_MAXRUNS);
  const eps = ld(p, P_EPS);
  const spread = ld(p, P_SPREAD);
  const dead = ld(p, P_DEAD);
  const loc = ld(p, P_LOC);
  const scale = ld(p, P_SCALE);
  const kappa0 = ld(p, P_KAPPA0);
  const alpha0 = ld(p, P_ALPHA0);
  const beta0 = ld(p, P_BETA0);
  const a0 = ld(p, P_A0);
  const b0 = ld(p, P_B0);
  const n0 = ld(p, P_N0);
  const ga0 = ld(p, P_GA0);
  const k0 = ld(p, P_K0);
  let t = ld(st, S_T);
  let nRuns = <i32>ld(st, S_NRUNS);
  let cLast = ld(st, S_CLAST);
  let mu0 = ld(st, S_MU0);
  let segSum = ld(st, S_SEGSUM);
  let segW = ld(st, S_SEGW);
  const base: usize = st + (<usize>S_HEADER << 3);
  let written: i32 = 0;
  let lastEvent: i32 = -1;
  if (kind != MODEL_BINOMIAL && kind != MODEL_POISSON) fillGammaTable(alpha0);

  for (let i = from; i < to; i++, t++) {
    const x = ld(xs, i);
    let y: f64 = 0;
    let k: f64 = 0;
    let nn: f64 = 0;
    let rawX = x;
    let rawW: f64 = 1;
    if (kind == MODEL_BINOMIAL) {
      const calls = ld(ns, i);
      if (!(calls > 0 && calls < Infinity) || !(x >= 0)) continue;
      const kk = x > calls ? calls : x;
      const w = 1 / (1 + calls / n0);
      k = kk * w;
      nn = calls * w;
      rawX = kk;
      rawW = calls;
    } else if (kind == MODEL_POISSON) {
      if (!(x >= 0 && x < Infinity)) continue;
      k = x;
    } else if (kind == MODEL_LOGNORMAL) {
      if (!(x >= 0 && x < Infinity)) continue;
      y = Math.log1p(x);
    } else {
      if (!(x - x == 0)) continue;
      y = (x - loc) / scale;
    }
    if (nRuns == 0) {
      mu0 = kind == MODEL_POISSON ? Math.max(k, 1) : y;
      cLast = t;
    }

    // predictive of run r = LC[r] * exp(LP[r]); slot nRuns holds the prior predictive (new run)
    let lp0: f64;
    if (kind == MODEL_BINOMIAL) lp0 = bbLogPred(a0, b0, k, nn);
    else if (kind == MODEL_POISSON) lp0 = gpLogPred(ga0, ga0 / mu0, k, 1 / (1 + mu0 / k0));
    else lp0 = ngPred(kappa0, alpha0, beta0, mu0, 0, 0, 0, y, nRuns);
    if (kind == MODEL_BINOMIAL || kind == MODEL_POISSON) sto(LC, nRuns, 1);
    sto(LP, nRuns, lp0);

    // pass 1: log predictive of every run (into LP), stats absorb x_t
    let maxLP: f64 = lp0;
    for (let r: i32 = 0; r < nRuns; r++) {
      const o: usize = base + (<usize>(r * R_WIDTH) << 3);
      let lp: f64;
      if (kind == MODEL_BINOMIAL) {
        const s1 = ld(o, R_S1) + k;
        const s2 = ld(o, R_S2) + nn - k;
        const c1 = k == 0 ? ld(o, R_C1) : lgamma(a0 + s1); // a bucket without errors leaves a as is
        const c2 = lgamma(b0 + s2);
        const c3 = lgamma(a0 + b0 + s1 + s2);
        lp = c1 + c2 - c3 - ld(o, R_C1) - ld(o, R_C2) + ld(o, R_C3);
        sto(o, R_S1, s1);
        sto(o, R_S2, s2);
        sto(o, R_C1, c1);
        sto(o, R_C2, c2);
        sto(o, R_C3, c3);
        sto(LC, r, 1);
      } else if (kind == MODEL_POISSON) {
        // caches: c1 = ln Γ(alpha), c2 = ln(beta / w), c3 = ln w; between refreshes of w,
        // alpha grows by k·w and beta / w by 1, so they roll forward with one ln Γ and one ln
        const sum = ld(o, R_S1);
        const cnt = ld(o, R_S2);
        const gb = ga0 / mu0;
        let w = ld(o, R_S3);
        let c1old: f64;
        let lbw: f64;
        let lw: f64;
        if (isPow2(cnt)) {
          w = 1 / (1 + (ga0 + sum) / (gb + cnt) / k0);
          sto(o, R_S3, w);
          c1old = lgamma(ga0 + w * sum);
          lbw = ln(gb / w + cnt);
          lw = ln(w);
          sto(o, R_C3, lw);
        } else {
          c1old = ld(o, R_C1);
          lbw = ld(o, R_C2);
          lw = ld(o, R_C3);
        }
        const kw = k * w;
        const alpha = ga0 + w * sum;
        const c2 = ln(gb / w + cnt + 1);
        let c1 = c1old; // a zero count leaves alpha as is, and ln Γ(0 + 1) = 0
        lp = alpha * (lbw - c2) + lw;
        if (kw > 0) {
          c1 = lgamma(alpha + kw);
          lp += c1 - c1old - lgamma(kw + 1) - kw * c2;
        }
        sto(o, R_S1, sum + k);
        sto(o, R_S2, cnt + 1);
        sto(o, R_C1, c1);
        sto(o, R_C2, c2);
        sto(LC, r, 1);
      } else {
        const n = ld(o, R_S1);
        const mean = ld(o, R_S2);
        const m2 = ld(o, R_S3);
        lp = ngPred(kappa0, alpha0, beta0, mu0, n, mean, m2, y, r);
        const n1 = n + 1;
        const d = y - mean;
        const mean1 = mean + d / n1;
        sto(o, R_S1, n1);
        sto(o, R_S2, mean1);
        sto(o, R_S3, m2 + d * (y - mean1));
      }
      sto(LP, r, lp);
      sto(o, R_RAWSUM, ld(o, R_RAWSUM) + rawX);
      sto(o, R_RAWW, ld(o, R_RAWW) + rawW);
      if (lp > maxLP) maxLP = lp;
    }
    // pass 2: masses in the linear domain, scaled by the best predictive (no log of a mass)
    const grow = Math.exp(log1mH);
    let z: f64 = 0;
    for (let r: i32 = 0; r < nRuns; r++) {
      const o: usize = base + (<usize>(r * R_WIDTH) << 3);
      const m = ld(o, R_MASS) * grow * ld(LC, r) * Math.exp(ld(LP, r) - maxLP);
      sto(o, R_MASS, m);
      z += m;
    }
    {
      const o: usize = base + (<usize>(nRuns * R_WIDTH) << 3);
      const m: f64 = nRuns == 0 ? 1 : ld(LC, nRuns) * Math.exp(logH + lp0 - maxLP);
      sto(o, R_MASS, m);
      z += m;
      sto(o, R_START, t);
      if (kind == MODEL_BINOMIAL) {
        sto(o, R_S1, k);
        sto(o, R_S2, nn - k);
        sto(o, R_S3, 0);
        sto(o, R_C1, lgamma(a0 + k));
        sto(o, R_C2, lgamma(b0 + nn - k));
        sto(o, R_C3, lgamma(a0 + b0 + nn));
      } else if (kind == MODEL_POISSON) {
        const w = 1 / (1 + mu0 / k0);
        sto(o, R_S1, k);
        sto(o, R_S2, 1);
        sto(o, R_S3, w);
        sto(o, R_C1, lgamma(ga0 + w * k));
        sto(o, R_C2, ln(ga0 / mu0 / w + 1));
        sto(o, R_C3, ln(w));
      } else {
        sto(o, R_S1, 1);
        sto(o, R_S2, y);
        sto(o, R_S3, 0);
      }
      sto(o, R_RAWSUM, rawX);
      sto(o, R_RAWW, rawW);
      nRuns++;
    }
    segSum += rawX;
    segW += rawW;

    // normalise, prune by mass, cap the number of runs
    const iz = 1 / z;
    let kept: i32 = 0;
    for (let r: i32 = 0; r < nRuns; r++) {
      const o = r * R_WIDTH;
      const m = ld(base, o + R_MASS) * iz;
      if (!(m >= eps)) continue;
      const d = kept * R_WIDTH;
      if (d != o) for (let j: i32 = 1; j < R_WIDTH; j++) sto(base, d + j, ld(base, o + j));
      sto(base, d + R_MASS, m);
      kept++;
    }
    nRuns = kept;
    if (nRuns > maxRuns) {
      let minR: i32 = 0;
      let minLM: f64 = Infinity;
      for (let r: i32 = 0; r < nRuns; r++) {
        const m = ld(base, r * R_WIDTH + R_MASS);
        if (m < minLM) {
          minLM = m;
          minR = r;
        }
      }
      const into: i32 = minR > 0 ? minR - 1 : 1;
      sto(base, into * R_WIDTH + R_MASS, ld(base, into * R_WIDTH + R_MASS) + minLM);
      for (let r = minR; r < nRuns - 1; r++) {
        const d = r * R_WIDTH;
        for (let j: i32 = 0; j < R_WIDTH; j++) sto(base, d + j, ld(base, d + R_WIDTH + j));
      }
      nRuns--;
    }

    let bestLM: f64 = -Infinity;
    let bestR: i32 = -1;
    for (let r: i32 = 0; r < nRuns; r++) {
      const o = r * R_WIDTH;
      if (ld(base, o + R_START) <= cLast) continue;
      const m = ld(base, o + R_MASS);
      if (m > bestLM) {
        bestLM = m;
        bestR = r;
      }
    }
    let candMass: f64 = 0;
    let oldMass: f64 = 0;
    if (bestR >= 0) {
      const sBest = ld(base, bestR * R_WIDTH + R_START);
      for (let r: i32 = 0; r < nRuns; r++) {
        const o = r * R_WIDTH;
        const s0 = ld(base, o + R_START);
        if (s0 <= cLast) oldMass += ld(base, o + R_MASS);
        else if (s0 >= sBest - spread && s0 <= sBest + spread) candMass += ld(base, o + R_MASS);
      }
    }
    if (bestR >= 0 && (candMass > threshold || oldMass < dead)) {
      const o = bestR * R_WIDTH;
      const s = ld(base, o + R_START);
      if (t - s >= minLag) {
        const aSum = ld(base, o + R_RAWSUM);
        const aW = ld(base, o + R_RAWW);
        const before = meanOf(kind, segSum - aSum, segW - aW);
        if (lastEvent >= 0) sto(ev, lastEvent + 3, before);
        const e = written * EVENT_W;
        sto(ev, e, seriesIndex);
        sto(ev, e + 1, s);
        sto(ev, e + 2, before);
        sto(ev, e + 3, meanOf(kind, aSum, aW));
        lastEvent = e;
        written++;
        cLast = s;
        segSum = aSum;
        segW = aW;
      }
    }
  }
  if (lastEvent >= 0) sto(ev, lastEvent + 3, meanOf(kind, segSum, segW));
  sto(st, S_T, t);
  sto(st, S_NRUNS, <f64>nRuns);
  sto(st, S_CLAST, cLast);
  sto(st, S_MU0, mu0);
  sto(st, S_SEGSUM, segSum);
  sto(st, S_SEGW, segW);
  return written;
}

/** See runBatch in src/detect/bocpd/reference.ts; all pointers are to f64 regions. */
export function runBatch(
  params: usize,
  xs: usize,
  ns: usize,
  offsets: usize,
  nSeries: i32,
  states: usize,
  stateSize: i32,
  ev: usize,
  evCap: i32,
  firstSeries: i32,
  info: usize,
): void {
  let written: i32 = 0;
  let i = firstSeries;
  for (; i < nSeries; i++) {
    const from = <i32>ld(offsets, i);
    const to = <i32>ld(offsets, i + 1);
    if (written + (to - from) > evCap) break;
    written += runSeries(
      params,
      xs,
      ns,
      from,
      to,
      states + ((<usize>i * <usize>stateSize) << 3),
      ev + (<usize>(written * EVENT_W) << 3),
      <f64>i,
    );
  }
  sto(info, 0, <f64>written);
  sto(info, 1, <f64>i);
}
