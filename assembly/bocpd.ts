// Bayesian online changepoint detection (Adams & MacKay 2007), the WASM build: the twin of
// src/detect/bocpd/reference.ts (read that file for the algorithm) over the flat layouts of
// src/detect/bocpd/layout.ts, mirrored below. Same steps, same state; it differs only in how it
// computes (bench/detect.ts measures the effect):
// - each observation model has its own growth loop (few live values, no per-run model dispatch);
// - binomial runs carry ln Γ(a), ln Γ(b), ln Γ(a+b) from one point to the next (3 ln Γ per point
//   instead of 6), Gamma–Poisson runs ln Γ(alpha), ln(beta/w), ln w; the prior predictive's terms
//   that do not depend on the point are computed once per call, and its ln Γ are reused by the new run;
// - the Student-t Γ ratio and 1/κ come from tables indexed by the run's n;
// - masses are updated in the linear domain (no log of a mass).
// Answers agree with the reference within float rounding.
//
// Boundary: every argument is the address of a Float64Array region the caller wrote into this
// module's memory (one pinned buffer it allocated once and reuses); nothing is allocated here.

import { exp, ln } from './_fastmath';

// --- layout.ts mirror (test/detect/layout.test.ts checks each against its source) ---
const MODEL_BINOMIAL: i32 = 2;
const MODEL_POISSON: i32 = 3;
const MODEL_LOGNORMAL: i32 = 1;
const MODEL_TREND: i32 = 4;

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
const P_ANCHOR: i32 = 19;
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

const E_SERIES: i32 = 0;
const E_INDEX: i32 = 1;
const E_BEFORE: i32 = 2;
const E_AFTER: i32 = 3;
const E_AT: i32 = 4;
const E_SUM: i32 = 5;
const E_WEIGHT: i32 = 6;
const EVENT_W: i32 = 7;

const HALF_LOG_2PI: f64 = 0.9189385332046728;
const INV_PI: f64 = 0.3183098861837907;

// Scratch per run, static, never allocated; RX moves with its run (copyRun).
const MAX_RUNS: i32 = 4096;
const LP: usize = memory.data(8 * (MAX_RUNS + 2)); // log-domain part of each run's predictive
const LC: usize = memory.data(8 * (MAX_RUNS + 2)); // linear factor of each run's predictive
const RX: usize = memory.data(8 * (MAX_RUNS + 2)); // Gamma–Poisson: the run's gb / w (saves a division per point)
const TAB_N: i32 = 4096;
const GTAB: usize = memory.data(8 * (TAB_N + 1)); // Γ(α0 + n/2 + 1/2) / Γ(α0 + n/2)
const KTAB: usize = memory.data(8 * (TAB_N + 1)); // 1 / (κ0 + n)
let tabAlpha0: f64 = NaN;
let tabKappa0: f64 = NaN;

@inline function ld(base: usize, i: i32): f64 {
  return load<f64>(base + (<usize>i << 3));
}
@inline function sto(base: usize, i: i32, v: f64): void {
  store<f64>(base + (<usize>i << 3), v);
}
@inline function runAt(base: usize, r: i32): usize {
  return base + (<usize>(r * R_WIDTH) << 3);
}
/** Moves run `from` (its slots and its scratch) to slot `to`. */
@inline function copyRun(base: usize, from: i32, to: i32): void {
  const d = to * R_WIDTH;
  const o = from * R_WIDTH;
  for (let j: i32 = 0; j < R_WIDTH; j++) sto(base, d + j, ld(base, o + j));
  sto(RX, to, ld(RX, from));
}

// --- ln Γ, inlined into the loops (ln and exp: _fastmath.ts) ---
/**
 * ln Γ(x) for x > 0: Stirling's series for x ≥ 7 (six terms, next term < 7e-14; three from x ≥ 40,
 * next term < 4e-15: most calls, ~8% faster on the binomial model); below 7,
 * ln Γ(x) = ln Γ(x + 7) − ln(x (x+1) … (x+6)), the product taken as a shallow tree.
 */
@inline function lnGamma(x: f64): f64 {
  let shift: f64 = 0;
  if (x < 7) {
    const p = x * (x + 1) * ((x + 2) * (x + 3)) * ((x + 4) * (x + 5) * (x + 6));
    shift = ln(p);
    x += 7;
  }
  const r = 1 / x;
  const r2 = r * r;
  const series =
    x >= 40
      ? r * (0.08333333333333333 - r2 * (0.002777777777777778 - r2 * 0.0007936507936507937))
      : r * (0.08333333333333333 - r2 * (0.002777777777777778 - r2 * (0.0007936507936507937 - r2 * (0.0005952380952380952 - r2 * (0.0008417508417508417 - r2 * 0.0019175269175269176)))));
  return (x - 0.5) * ln(x) - x + HALF_LOG_2PI + series - shift;
}

/** ln Γ, exported for the accuracy test against the reference (test/detect/engines.test.ts). */
export function lgamma(x: f64): f64 {
  return lnGamma(x);
}

/** Fills the Student-t tables for (α0, κ0), once per configuration. */
function fillTables(alpha0: f64, kappa0: f64): void {
  if (alpha0 == tabAlpha0 && kappa0 == tabKappa0) return;
  for (let n: i32 = 0; n <= TAB_N; n++) {
    const a = alpha0 + 0.5 * <f64>n;
    sto(GTAB, n, exp(lnGamma(a + 0.5) - lnGamma(a)));
    sto(KTAB, n, 1 / (kappa0 + <f64>n));
  }
  tabAlpha0 = alpha0;
  tabKappa0 = kappa0;
}

@inline function gammaHalfRatio(alpha: f64, n: f64): f64 {
  if (n <= <f64>TAB_N) return ld(GTAB, <i32>n);
  return exp(lnGamma(alpha + 0.5) - lnGamma(alpha));
}

/**
 * Student-t predictive (2α degrees of freedom, α = α0 + n/2, ν·s² = nus2) of residual d split as
 * factor · exp(exponent): the factor Γ(α+½)/Γ(α)/√(πνs²) is linear (table + sqrt), the exponent
 * −(α+½)·ln(1 + d²/(νs²)) is the only transcendental (ln rather than log1p: its absolute error is
 * what matters, and musl's log1p divides). Writes the factor to LC[slot], returns the exponent.
 */
@inline function studentT(alpha: f64, n: f64, nus2: f64, d: f64, slot: i32): f64 {
  const inv = 1 / nus2;
  sto(LC, slot, gammaHalfRatio(alpha, n) * Math.sqrt(inv * INV_PI));
  return -(alpha + 0.5) * ln(1 + d * d * inv);
}

/** Normal–Gamma predictive of y for a run of n points (mean, M2); n = 0 is the prior predictive. */
@inline function ngPred(kappa0: f64, alpha0: f64, beta0: f64, mu0: f64, n: f64, mean: f64, m2: f64, y: f64, slot: i32): f64 {
  const ik = n <= <f64>TAB_N ? ld(KTAB, <i32>n) : 1 / (kappa0 + n);
  const dm = mean - mu0;
  const beta = beta0 + 0.5 * m2 + 0.5 * kappa0 * n * dm * dm * ik;
  return studentT(alpha0 + 0.5 * n, n, 2 * beta * (1 + ik), y - (kappa0 * mu0 + n * mean) * ik, slot);
}

/** Trend run of n points, u points after its start: predictive of y (see trendStep in reference.ts), then the update. */
function trendStep(o: usize, alpha0: f64, n: f64, u: f64, y: f64, slot: i32): f64 {
  const v00 = ld(o, R_C1);
  const v01 = ld(o, R_C2);
  const v11 = ld(o, R_C3);
  const g0 = v00 + v01 * u;
  const g1 = v01 + v11 * u;
  const s = 1 + g0 + g1 * u;
  const e = y - (ld(o, R_S1) + ld(o, R_S2) * u);
  const beta = ld(o, R_S3);
  const lp = studentT(alpha0 + 0.5 * n, n, 2 * beta * s, e, slot);
  sto(o, R_S1, ld(o, R_S1) + (g0 * e) / s);
  sto(o, R_S2, ld(o, R_S2) + (g1 * e) / s);
  sto(o, R_S3, beta + (0.5 * e * e) / s);
  sto(o, R_C1, v00 - (g0 * g0) / s);
  sto(o, R_C2, v01 - (g0 * g1) / s);
  sto(o, R_C3, v11 - (g1 * g1) / s);
  return lp;
}

/** Run r (at o) absorbs the point's raw sums and records the point's predictive lp. */
@inline function settle(o: usize, r: i32, lp: f64, rawX: f64, rawW: f64): void {
  sto(o, R_RAWSUM, ld(o, R_RAWSUM) + rawX);
  sto(o, R_RAWW, ld(o, R_RAWW) + rawW);
  sto(LP, r, lp);
}

// --- growth: every run absorbs the point; LP[r] (and LC[r]) get its predictive; returns max LP ---

function growBinomial(base: usize, nRuns: i32, a0: f64, b0: f64, k: f64, nn: f64, rawX: f64, rawW: f64, maxLP: f64): f64 {
  for (let r: i32 = 0; r < nRuns; r++) {
    const o = runAt(base, r);
    const s1 = ld(o, R_S1) + k;
    const s2 = ld(o, R_S2) + nn - k;
    const c1old = ld(o, R_C1);
    const c1 = k == 0 ? c1old : lnGamma(a0 + s1); // a bucket without errors leaves a as is
    const c2 = lnGamma(b0 + s2);
    const c3 = lnGamma(a0 + b0 + s1 + s2);
    const lp = c1 + c2 - c3 - c1old - ld(o, R_C2) + ld(o, R_C3);
    sto(o, R_S1, s1);
    sto(o, R_S2, s2);
    sto(o, R_C1, c1);
    sto(o, R_C2, c2);
    sto(o, R_C3, c3);
    settle(o, r, lp, rawX, rawW);
    sto(LC, r, 1);
    if (lp > maxLP) maxLP = lp;
  }
  return maxLP;
}

@inline function isPow2(n: f64): bool {
  const i = <i32>n;
  return n < 1073741824 && (i & (i - 1)) == 0;
}

/**
 * Gamma–Poisson runs (caches c1 = ln Γ(alpha), c2 = ln(beta / w), c3 = ln w): between refreshes
 * of w, alpha grows by k·w and beta / w by 1, so they roll forward with one ln Γ and one ln.
 */
function growPoisson(base: usize, nRuns: i32, ga0: f64, gb: f64, k0: f64, k: f64, rawX: f64, rawW: f64, maxLP: f64): f64 {
  for (let r: i32 = 0; r < nRuns; r++) {
    const o = runAt(base, r);
    const sum = ld(o, R_S1);
    const cnt = ld(o, R_S2);
    let w = ld(o, R_S3);
    let gbw = ld(RX, r);
    let c1old: f64;
    let lbw: f64;
    let lw: f64;
    if (isPow2(cnt)) {
      w = 1 / (1 + (ga0 + sum) / (gb + cnt) / k0);
      gbw = gb / w;
      sto(o, R_S3, w);
      sto(RX, r, gbw);
      c1old = lnGamma(ga0 + w * sum);
      lbw = ln(gbw + cnt);
      lw = ln(w);
      sto(o, R_C3, lw);
    } else {
      c1old = ld(o, R_C1);
      lbw = ld(o, R_C2);
      lw = ld(o, R_C3);
    }
    const kw = k * w;
    const alpha = ga0 + w * sum;
    const c2 = ln(gbw + cnt + 1);
    let c1 = c1old; // a zero count leaves alpha as is, and ln Γ(0 + 1) = 0
    let lp = alpha * (lbw - c2) + lw;
    if (kw > 0) {
      c1 = lnGamma(alpha + kw);
      lp += c1 - c1old - lnGamma(kw + 1) - kw * c2;
    }
    sto(o, R_S1, sum + k);
    sto(o, R_S2, cnt + 1);
    sto(o, R_C1, c1);
    sto(o, R_C2, c2);
    settle(o, r, lp, rawX, rawW);
    sto(LC, r, 1);
    if (lp > maxLP) maxLP = lp;
  }
  return maxLP;
}

function growNormal(base: usize, nRuns: i32, kappa0: f64, alpha0: f64, beta0: f64, mu0: f64, y: f64, rawX: f64, rawW: f64, maxLP: f64): f64 {
  for (let r: i32 = 0; r < nRuns; r++) {
    const o = runAt(base, r);
    const n = ld(o, R_S1);
    const mean = ld(o, R_S2);
    const m2 = ld(o, R_S3);
    const lp = ngPred(kappa0, alpha0, beta0, mu0, n, mean, m2, y, r);
    const n1 = n + 1;
    const d = y - mean;
    const mean1 = mean + d / n1;
    sto(o, R_S1, n1);
    sto(o, R_S2, mean1);
    sto(o, R_S3, m2 + d * (y - mean1));
    settle(o, r, lp, rawX, rawW);
    if (lp > maxLP) maxLP = lp;
  }
  return maxLP;
}

function growTrend(base: usize, nRuns: i32, alpha0: f64, t: f64, y: f64, rawX: f64, rawW: f64, maxLP: f64): f64 {
  for (let r: i32 = 0; r < nRuns; r++) {
    const o = runAt(base, r);
    const lp = trendStep(o, alpha0, ld(o, R_RAWW), t - ld(o, R_START), y, r);
    settle(o, r, lp, rawX, rawW);
    if (lp > maxLP) maxLP = lp;
  }
  return maxLP;
}

@inline function meanOf(kind: i32, sum: f64, w: f64): f64 {
  if (!(w > 0)) return NaN;
  return kind == MODEL_BINOMIAL ? (100 * sum) / w : sum / w;
}

// One function: the per-point loop keeps its locals in registers; calls per point cost more in WASM.
function runSeries(p: usize, xs: usize, ns: usize, from: i32, to: i32, st: usize, ev: usize, seriesIndex: f64): i32 {
  const kind = <i32>ld(p, P_KIND);
  const logH = ld(p, P_LOGH);
  const grow = exp(ld(p, P_LOG1MH));
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
  const anchor = kind == MODEL_POISSON ? ld(p, P_ANCHOR) : 0;
  let t = ld(st, S_T);
  let nRuns = <i32>ld(st, S_NRUNS);
  let cLast = ld(st, S_CLAST);
  let mu0 = ld(st, S_MU0);
  let segSum = ld(st, S_SEGSUM);
  let segW = ld(st, S_SEGW);
  const base: usize = st + (<usize>S_HEADER << 3);
  const births: i32 = kind == MODEL_TREND ? 2 : 1;
  let written: i32 = 0;
  let lastEvent: i32 = -1;
  const studentModel = kind != MODEL_BINOMIAL && kind != MODEL_POISSON;
  if (studentModel) fillTables(alpha0, kappa0);
  // prior-predictive terms that do not depend on the point (Gamma–Poisson: once mu0 is known)
  const lgA0 = kind == MODEL_BINOMIAL ? lnGamma(a0) : 0;
  const bbPrior = kind == MODEL_BINOMIAL ? lgA0 + lnGamma(b0) - lnGamma(a0 + b0) : 0;
  const lgGa0 = kind == MODEL_POISSON ? lnGamma(ga0) : 0;
  let gb: f64 = 0; // Gamma prior rate ga0 / mu0
  let w0: f64 = 0; // a new run's tempering weight
  let lB0: f64 = 0; // ln(gb / w0)
  let lB1: f64 = 0; // ln(gb / w0 + 1)
  let lw0: f64 = 0; // ln w0
  if (kind == MODEL_POISSON && nRuns > 0) {
    gb = ga0 / mu0;
    w0 = 1 / (1 + mu0 / k0);
    lB0 = ln(gb / w0);
    lB1 = ln(gb / w0 + 1);
    lw0 = ln(w0);
    for (let r: i32 = 0; r < nRuns; r++) sto(RX, r, gb / ld(runAt(base, r), R_S3));
  }

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
      y = ln(1 + x); // log1p's relative accuracy near 0 is not needed: y's absolute error is what counts
    } else {
      if (!(x - x == 0)) continue;
      y = (x - loc) / scale;
    }
    if (nRuns == 0) {
      cLast = t;
      if (kind == MODEL_POISSON) {
        mu0 = Math.max(k, 1);
        gb = ga0 / mu0;
        w0 = 1 / (1 + mu0 / k0);
        lB0 = ln(gb / w0);
        lB1 = ln(gb / w0 + 1);
        lw0 = ln(w0);
      } else mu0 = y;
    }

    // prior predictive (a change at t); the new run's caches reuse its ln Γ terms (c1..c3)
    let lp0: f64;
    let c1: f64 = 0;
    let c2: f64 = 0;
    let c3: f64 = 0;
    if (kind == MODEL_BINOMIAL) {
      c1 = k == 0 ? lgA0 : lnGamma(a0 + k);
      c2 = lnGamma(b0 + nn - k);
      c3 = lnGamma(a0 + b0 + nn);
      lp0 = c1 + c2 - c3 - bbPrior;
      sto(LC, nRuns, 1);
    } else if (kind == MODEL_POISSON) {
      const kw = k * w0;
      c1 = lnGamma(ga0 + kw);
      lp0 = c1 - lgGa0 - lnGamma(kw + 1) + ga0 * (lB0 - lB1) - kw * lB1 + lw0;
      sto(LC, nRuns, 1);
    } else lp0 = ngPred(kappa0, alpha0, beta0, mu0, 0, 0, 0, y, nRuns);

    // predictive of run r = LC[r] * exp(LP[r])
    let maxLP: f64;
    if (kind == MODEL_BINOMIAL) maxLP = growBinomial(base, nRuns, a0, b0, k, nn, rawX, rawW, lp0);
    else if (kind == MODEL_POISSON) maxLP = growPoisson(base, nRuns, ga0, gb, k0, k, rawX, rawW, lp0);
    else if (kind == MODEL_TREND) maxLP = growTrend(base, nRuns, alpha0, t, y, rawX, rawW, lp0);
    else maxLP = growNormal(base, nRuns, kappa0, alpha0, beta0, mu0, y, rawX, rawW, lp0);

    // masses in the linear domain, scaled by the best predictive (no log of a mass)
    let z: f64 = 0;
    for (let r: i32 = 0; r < nRuns; r++) {
      const o = runAt(base, r);
      const m = ld(o, R_MASS) * grow * ld(LC, r) * exp(ld(LP, r) - maxLP);
      sto(o, R_MASS, m);
      z += m;
    }
    // the new run(s), appended last; the trend model starts a level, then a line
    const m0: f64 = (nRuns == 0 ? 1 : ld(LC, nRuns) * exp(logH + lp0 - maxLP)) / <f64>births;
    for (let q: i32 = 0; q < births; q++) {
      const o = runAt(base, nRuns);
      sto(o, R_MASS, m0);
      z += m0;
      sto(o, R_START, t);
      if (kind == MODEL_BINOMIAL) {
        sto(o, R_S1, k);
        sto(o, R_S2, nn - k);
        sto(o, R_S3, 0);
        sto(o, R_C1, c1);
        sto(o, R_C2, c2);
        sto(o, R_C3, c3);
      } else if (kind == MODEL_POISSON) {
        sto(o, R_S1, k);
        sto(o, R_S2, 1);
        sto(o, R_S3, w0);
        sto(RX, nRuns, gb / w0);
        sto(o, R_C1, c1);
        sto(o, R_C2, lB1);
        sto(o, R_C3, lw0);
      } else if (kind == MODEL_TREND) {
        sto(o, R_S1, mu0);
        sto(o, R_S2, 0);
        sto(o, R_S3, beta0);
        sto(o, R_C1, 1 / kappa0);
        sto(o, R_C2, 0);
        sto(o, R_C3, q == 1 ? 1 / kappa0 : 0); // the second run is the line: its slope is free
        trendStep(o, alpha0, 0, 0, y, nRuns);
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
      const m = ld(base, r * R_WIDTH + R_MASS) * iz;
      if (!(m >= eps)) continue;
      if (kept != r) copyRun(base, r, kept);
      sto(base, kept * R_WIDTH + R_MASS, m);
      kept++;
    }
    nRuns = kept;
    while (nRuns > maxRuns + 1 - births) {
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
      for (let r = minR; r < nRuns - 1; r++) copyRun(base, r + 1, r);
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
    let reported = false;
    if (bestR >= 0 && (candMass > threshold || oldMass < dead)) {
      const o = bestR * R_WIDTH;
      const s = ld(base, o + R_START);
      if (t - s >= minLag) {
        reported = true;
        const aSum = ld(base, o + R_RAWSUM);
        const aW = ld(base, o + R_RAWW);
        const before = meanOf(kind, segSum - aSum, segW - aW);
        if (lastEvent >= 0) sto(ev, lastEvent + E_AFTER, before);
        const e = written * EVENT_W;
        sto(ev, e + E_SERIES, seriesIndex);
        sto(ev, e + E_INDEX, s);
        sto(ev, e + E_BEFORE, before);
        sto(ev, e + E_AFTER, meanOf(kind, aSum, aW));
        sto(ev, e + E_AT, t);
        sto(ev, e + E_SUM, aSum);
        sto(ev, e + E_WEIGHT, aW);
        lastEvent = e;
        written++;
        cLast = s;
        segSum = aSum;
        segW = aW;
      }
    }
    // the count model's prior mean follows the regime once it has `anchor` points; the runs' cached ln(beta / w) follow it
    if (anchor > 0 && (reported ? segW >= anchor : segW == anchor)) {
      mu0 = Math.max(segSum / segW, 1);
      gb = ga0 / mu0;
      w0 = 1 / (1 + mu0 / k0);
      lB0 = ln(gb / w0);
      lB1 = ln(gb / w0 + 1);
      lw0 = ln(w0);
      for (let r: i32 = 0; r < nRuns; r++) {
        const o = runAt(base, r);
        const gbw = gb / ld(o, R_S3);
        sto(RX, r, gbw);
        sto(o, R_C2, ln(gbw + ld(o, R_S2)));
      }
    }
  }
  if (lastEvent >= 0) sto(ev, lastEvent + E_AFTER, meanOf(kind, segSum, segW));
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
export { seasonalReading, seasonalScaleAt } from './_seasonal';
