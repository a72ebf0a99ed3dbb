/**
 * Bayesian online changepoint detection (Adams & MacKay 2007) for 5-minute service series, usable
 * on its own (no server): series in, change points out.
 *
 * ```ts
 * import { BocpdDetector, worsening } from './detect/bocpd/index.js';
 * const det = new BocpdDetector('error_rate');            // fixed, calibrated configuration
 * const { changes, state } = det.run({ values: errors, calls, start });  // start: µs of values[0]
 * // later, only the new points; `state` carries everything needed to resume:
 * const next = det.run({ values: newErrors, calls: newCalls, start: nextStart }, state);
 * const shifts = worsening(next.changes);                 // after > before only
 * ```
 *
 * - `values[i]` is point i of the series (NaN = missing). For `error_rate` it is the number of
 *   errors and `calls[i]` the number of calls; a bucket with no calls is no observation (not 0%).
 * - With `start` (the timestamp of values[0], each value one 5-minute bucket) the series takes the
 *   seasonal path (timed.ts): BOCPD reads its residual from a daily (and, after two weeks, weekly)
 *   profile learnt as it goes, and a worsening change is reported only once it persists above what
 *   the series has recently done (envelope.ts). Without `start`, every point is read as it is.
 * - A change's `index` is the first point of the new regime and `at` the point that reported it,
 *   both counted from the first point ever fed to that state (so indices keep growing across resumed
 *   runs). `before`/`after` are the regime means before and from the change in raw units (error %,
 *   µs, count per bucket, cost); on the seasonal path both are taken at the time of day of the
 *   change's first point, `after` up to `at`; otherwise `after` runs to the next change or the last
 *   point fed in this call.
 * - Reported changes are final: a resumed run never reports a change again or moves it, and
 *   feeding a series in pieces gives the same changes as feeding it whole.
 * - Cost per point is bounded (at most `maxRuns` run-length hypotheses, 8 for the service signals);
 *   a state is `stateSize(maxRuns)` doubles (784 bytes for the service signals; T.size more on the
 *   seasonal path) and `saveState` serialises only its live part.
 * - Engines: 'wasm' (default; build/wasm/bocpd.wasm, one instance and one pinned buffer per
 *   thread) or 'ts', the plain TypeScript reference; they agree within 1e-9 (test/detect).
 */
import { BASE_CONFIG, SIGNAL_CONFIG, packParams, type DetectorConfig, type Signal } from './config.js';
import { tsEngine, wasmEngine, type Engine } from './engine.js';
import { MODEL, R, S, stateSize } from './layout.js';
import { runPlain, runTimed, type BatchCore, type ChangePoint, type RunResult, type SeriesInput } from './batch.js';
import { T, TIMED_MIN_LAG, rewindContext, timedModel } from './timed.js';
import { newRecord } from './record.js';
import { BUCKET_US } from '../../core/time.js';

export { BASE_CONFIG, SIGNAL_CONFIG, validateConfig, type DetectorConfig, type Signal } from './config.js';
export { MODEL, stateSize, type ModelName } from './layout.js';
export type { ChangePoint, RunResult, SeriesInput } from './batch.js';

export interface DetectorOptions {
  /** 'wasm' (default) or the plain TypeScript reference 'ts'; same answers within 1e-9. */
  engine?: 'wasm' | 'ts';
}

export class BocpdDetector {
  readonly config: Readonly<DetectorConfig>;
  /** Slots of a state without a timestamp (the detector's own part). */
  readonly stateSize: number;
  private readonly core: BatchCore;

  constructor(configOrSignal: Signal | DetectorConfig = 'generic', opts: DetectorOptions = {}) {
    this.config = typeof configOrSignal === 'string' ? SIGNAL_CONFIG[configOrSignal] : { ...BASE_CONFIG, ...configOrSignal };
    if (!this.config) throw new RangeError(`bocpd: unknown signal ${String(configOrSignal)}`);
    this.stateSize = stateSize(this.config.maxRuns);
    const engine: Engine = opts.engine === 'ts' ? tsEngine : wasmEngine();
    this.core = {
      engine,
      params: packParams(this.config),
      timedParams: packParams({ ...this.config, minLag: TIMED_MIN_LAG }),
      stateSize: this.stateSize,
      tag: MODEL[this.config.model] + 1,
      binomial: this.config.model === 'binomial',
      timed: timedModel(this.config),
    };
  }

  /** A fresh state (no point seen yet). */
  newState(): Float64Array {
    const s = new Float64Array(this.stateSize);
    s[S.cLast] = -1;
    s[S.model] = this.core.tag;
    return s;
  }

  /** Feeds one series (optionally resuming `state`, which is not modified; a new one is returned). */
  run(series: SeriesInput, state?: Float64Array): RunResult {
    const [r] = this.runBatch([series], state ? [state] : undefined);
    return r!;
  }

  /**
   * Feeds many series in one engine call per path (one WASM call for the whole batch). `states[i]`
   * resumes series i (omit or undefined for a new one); inputs are not modified.
   */
  runBatch(series: readonly SeriesInput[], states?: ReadonlyArray<Float64Array | undefined>): RunResult[] {
    const timed: number[] = [];
    const plain: number[] = [];
    series.forEach((s, i) => (s.start === undefined ? plain : timed).push(i));
    const out: RunResult[] = new Array(series.length);
    const run = (idx: number[], fn: typeof runPlain) => {
      if (!idx.length) return;
      const res = fn(this.core, idx.map((i) => series[i]!), idx.map((i) => states?.[i]));
      idx.forEach((i, k) => (out[i] = res[k]!));
    };
    run(plain, runPlain);
    run(timed, runTimed);
    return out;
  }

  /**
   * The state to feed a timestamped series again from `start` (µs) on, after its history there
   * changed (late data, a backfill): the change detection starts afresh, what was learnt of the
   * series' cycle and of its levels before that day is kept. Without a timestamp: a fresh state.
   */
  refeedState(state: Float64Array, start: number): Float64Array {
    const fresh = this.newState();
    if (state[S.timed] !== 1 || state.length !== this.stateSize + T.size) return fresh;
    const out = new Float64Array(this.stateSize + T.size);
    out.set(fresh);
    out[S.timed] = 1;
    out.set(state.subarray(this.stateSize), this.stateSize);
    rewindContext(out, this.stateSize, Math.floor(start / BUCKET_US));
    return out;
  }
}

/** One-shot: the change points of a whole series. */
export function detectChanges(series: SeriesInput, configOrSignal: Signal | DetectorConfig = 'generic', opts?: DetectorOptions): ChangePoint[] {
  return new BocpdDetector(configOrSignal, opts).run(series).changes;
}

/** The changes whose regime mean went up (after > before): the only ones the service stores. */
export function worsening(changes: readonly ChangePoint[]): ChangePoint[] {
  return changes.filter((c) => c.after > c.before);
}

/** Compact serialisation: the detector's header and live runs (unused run slots dropped), then the context of a timestamped series. */
export function saveState(state: Float64Array): Uint8Array {
  const used = S.header + (state[S.nRuns]! | 0) * R.width;
  const context = state[S.timed] === 1 ? T.size : 0;
  const out = new Float64Array(1 + used + context);
  out[0] = state.length;
  out.set(state.subarray(0, used), 1);
  if (context) out.set(state.subarray(state.length - context), 1 + used);
  return new Uint8Array(out.buffer);
}

export function loadState(bytes: Uint8Array): Float64Array {
  const copy = new Float64Array(new Uint8Array(bytes).buffer); // a copy (a Buffer's slice() would share its pool)
  const used = S.header + (copy[1 + S.nRuns]! | 0) * R.width;
  const context = copy.length - 1 - used;
  // a context of another layout (saved by an older version) is dropped: the series resumes with a
  // fresh one; one saved before the week's record, the zero's flag or the blocks' spread existed (the
  // same slots up to it) keeps what it learnt, its record starting empty, no zero pending, the spread
  // unmeasured, and a reported worsening's flag (1) read as a base of 0, so that any fall ends it, as
  // it did then
  const known = context === T.size || context === T.spread || context === T.zero || context === T.record;
  const full = new Float64Array(copy[0]! - context + (known ? T.size : 0));
  full.set(copy.subarray(1, 1 + used));
  if (full[S.timed] === 1 && !known) full[S.timed] = 0;
  if (full[S.timed] === 1) {
    const c = full.length - T.size;
    full.set(copy.subarray(1 + used), c);
    if (context === T.record) newRecord(full, c + T.record);
    if (context < T.spread) full[c + T.raised] = full[c + T.raised] === 1 ? 0 : NaN;
  }
  return full;
}

/**
 * Standardisation for the generic signal on an arbitrary whole series: loc = mean, scale = standard
 * deviation (NaN ignored; 1 for a constant series). The overall spread, not the point-to-point noise,
 * keeps the detector to shifts that matter at the series' scale (TCPD F1 0.85 vs 0.77).
 */
export function standardScaling(values: ArrayLike<number>): { loc: number; scale: number } {
  let n = 0;
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v === v) {
      n++;
      sum += v;
    }
  }
  const loc = n > 0 ? sum / n : 0;
  let ss = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v === v) ss += (v - loc) * (v - loc);
  }
  const scale = n > 0 ? Math.sqrt(ss / n) : 0;
  return { loc, scale: scale > 0 ? scale : 1 };
}
