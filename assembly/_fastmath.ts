// ln and exp for the WASM modules' inner loops (bocpd.ts, _seasonal.ts), table-driven like musl's
// but without its last-bit refinements: |ln error| < 4e-15 and exp within 2 ulp, enough where the
// result's absolute error is what counts. AssemblyScript's Math.log / Math.exp (musl's) are slower
// on every BOCPD model and on the seasonal path's lognormal reading (bench/detect.ts).
// Tables are filled at start-up.

@inline function ld(base: usize, i: i32): f64 {
  return load<f64>(base + (<usize>i << 3));
}
@inline function sto(base: usize, i: i32, v: f64): void {
  store<f64>(base + (<usize>i << 3), v);
}

const LN_BITS: i32 = 7;
const LN_N: i32 = 1 << LN_BITS;
const LN_OFF: u64 = 0x3fe6000000000000; // x = 2^k · z with z in [0.6875, 1.375), split in LN_N intervals
const LN_TAB: usize = memory.data(16 * LN_N); // per interval: 1/c, ln c (c its centre)
const LN2_HI: f64 = reinterpret<f64>(0x3fe62e42fefa3800); // k · LN2_HI is exact
const LN2_LO: f64 = reinterpret<f64>(0x3d2ef35793c76730);
const EXP_N: i32 = 128;
const EXP_TAB: usize = memory.data(8 * EXP_N); // 2^(j/EXP_N)
const EXP_INV_STEP: f64 = 184.6649652337873; // EXP_N / ln 2
const EXP_STEP_HI: f64 = 0.005415212348111709; // ln 2 / EXP_N, 36 bits: kd · EXP_STEP_HI is exact
const EXP_STEP_LO: f64 = 1.2864023111638346e-14;

function fillMathTables(): void {
  for (let i: i32 = 0; i < LN_N; i++) {
    const invc = 1 / reinterpret<f64>(LN_OFF + (<u64>(2 * i + 1) << (51 - LN_BITS)));
    sto(LN_TAB, 2 * i, invc);
    sto(LN_TAB, 2 * i + 1, -Math.log(invc));
  }
  for (let j: i32 = 0; j < EXP_N; j++) sto(EXP_TAB, j, Math.exp(<f64>j * (0.6931471805599453 / <f64>EXP_N)));
}
fillMathTables();

/** ln x: k·ln 2 + ln c + log1p(r), r = z/c − 1 (|r| < 0.004, Taylor to r⁶); Math.log outside the positive normal range. */
@inline export function ln(x: f64): f64 {
  const ix = reinterpret<u64>(x);
  if (ix - 0x0010000000000000 >= 0x7fe0000000000000) return Math.log(x); // 0, subnormal, < 0, ∞, NaN
  const tmp = ix - LN_OFF;
  const i = <i32>((tmp >> (52 - LN_BITS)) & <u64>(LN_N - 1));
  const k = <f64>(<i64>tmp >> 52);
  const r = reinterpret<f64>(ix - (tmp & (<u64>0xfff << 52))) * ld(LN_TAB, 2 * i) - 1;
  const r2 = r * r;
  const poly = r2 * (-0.5 + r * 0.3333333333333333 + r2 * (-0.25 + r * 0.2 - r2 * 0.16666666666666666));
  return k * LN2_HI + ld(LN_TAB, 2 * i + 1) + (r + poly) + k * LN2_LO;
}

/** e^x: 2^(kd/EXP_N) · e^r, |r| ≤ ln 2 / 256 (Taylor to r⁵); Math.exp near under/overflow. */
@inline export function exp(x: f64): f64 {
  if (!(x > -708 && x < 709)) return Math.exp(x);
  const kd = nearest<f64>(x * EXP_INV_STEP);
  const r = x - kd * EXP_STEP_HI - kd * EXP_STEP_LO;
  const ki = <i64>kd;
  const scale = reinterpret<f64>(reinterpret<u64>(ld(EXP_TAB, <i32>(ki & (EXP_N - 1)))) + (<u64>(ki >> 7) << 52));
  const r2 = r * r;
  return scale * (1 + r + r2 * (0.5 + r * 0.16666666666666666 + r2 * (0.041666666666666664 + r * 0.008333333333333333)));
}

