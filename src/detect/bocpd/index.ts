/**
 * Bayesian online changepoint detection (Adams & MacKay 2007) for 5-minute service series, usable
 * on its own (no server): series in, change points out.
 *
 * ```ts
 * import { BocpdDetector, worsening } from './detect/bocpd/index.js';
 * const det = new BocpdDetector('error_rate');            // fixed, calibrated configuration
 * const { changes, state } = det.run({ values: errors, calls });
 * // later, only the new points; `state` carries everything needed to resume:
 * const next = det.run({ values: newErrors, calls: newCalls }, state);
 * const shifts = worsening(next.changes);                 // after > before only
 * ```
 *
 * - `values[i]` is point i of the series (NaN = missing). For `error_rate` it is the number of
 *   errors and `calls[i]` the number of calls; a bucket with no calls is no observation (not 0%).
 * - A change's `index` is the first point of the new regime, counted from the first point ever fed
 *   to that state (so indices keep growing across resumed runs). `before`/`after` are the means of
 *   the regime before and from the change (raw units: error %, µs, count per bucket, cost), `after`
 *   up to the next reported change or the last point fed in this call.
 * - Reported changes are final: a resumed run never reports a change again or moves it, and
 *   feeding a series in pieces gives the same changes as feeding it whole.
 * - Cost per point is bounded (at most `maxRuns` run-length hypotheses, 8 for the service signals);
 *   a state is `stateSize(maxRuns)` doubles (784 bytes for the service signals) and `saveState`
 *   serialises only its live part. Missing points cost nothing but advance the index.
 * - Engines: 'wasm' (default; build/wasm/bocpd.wasm, one instance and one pinned buffer per
 *   thread) or 'ts', the plain TypeScript reference; they agree within 1e-9 (test/detect).
 */
import { BASE_CONFIG, SIGNAL_CONFIG, packParams, type DetectorConfig, type Signal } from './config.js';
import { tsEngine, wasmEngine, type Engine } from './engine.js';
import { EVENT_W, MODEL, R, S, stateSize } from './layout.js';

export { BASE_CONFIG, SIGNAL_CONFIG, validateConfig, type DetectorConfig, type Signal } from './config.js';
export { MODEL, stateSize, type ModelName } from './layout.js';

export interface SeriesInput {
  /** One value per point; NaN for a missing point. error_rate: errors per bucket. */
  values: ArrayLike<number>;
  /** error_rate (binomial model) only: calls per bucket; 0 or NaN = no observation. */
  calls?: ArrayLike<number>;
}

export interface ChangePoint {
  /** First point of the new regime (absolute index since the state was created). */
  index: number;
  /** Mean of the regime before the change, raw units. */
  before: number;
  /** Mean from the change on, raw units. */
  after: number;
}

export interface RunResult {
  changes: ChangePoint[];
  /** Pass it back with the next points to resume. */
  state: Float64Array;
}

export interface DetectorOptions {
  /** 'wasm' (default) or the plain TypeScript reference 'ts'; same answers within 1e-9. */
  engine?: 'wasm' | 'ts';
}

export class BocpdDetector {
  readonly config: Readonly<DetectorConfig>;
  readonly stateSize: number;
  private readonly params: Float64Array;
  private readonly engine: Engine;

  constructor(configOrSignal: Signal | DetectorConfig = 'generic', opts: DetectorOptions = {}) {
    this.config = typeof configOrSignal === 'string' ? SIGNAL_CONFIG[configOrSignal] : { ...BASE_CONFIG, ...configOrSignal };
    if (!this.config) throw new RangeError(`bocpd: unknown signal ${String(configOrSignal)}`);
    this.params = packParams(this.config);
    this.stateSize = stateSize(this.config.maxRuns);
    this.engine = opts.engine === 'ts' ? tsEngine : wasmEngine();
  }

  /** A fresh state (no point seen yet). */
  newState(): Float64Array {
    const s = new Float64Array(this.stateSize);
    s[S.cLast] = -1;
    s[S.model] = MODEL[this.config.model] + 1;
    return s;
  }

  /** Feeds one series (optionally resuming `state`, which is not modified; a new one is returned). */
  run(series: SeriesInput, state?: Float64Array): RunResult {
    const [r] = this.runBatch([series], state ? [state] : undefined);
    return r!;
  }

  /**
   * Feeds many series in one engine call (one WASM call for the whole batch). `states[i]` resumes
   * series i (omit or undefined for a new one); inputs are not modified.
   */
  runBatch(series: readonly SeriesInput[], states?: ReadonlyArray<Float64Array | undefined>): RunResult[] {
    const n = series.length;
    const offsets = new Float64Array(n + 1);
    for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i]! + series[i]!.values.length;
    const total = offsets[n]!;
    const xs = new Float64Array(total);
    const binomial = this.config.model === 'binomial';
    const ns = binomial ? new Float64Array(total) : new Float64Array(0);
    const ss = this.stateSize;
    const st = new Float64Array(n * ss);
    for (let i = 0; i < n; i++) {
      const s = series[i]!;
      const o = offsets[i]!;
      xs.set(s.values, o);
      if (binomial) {
        if (!s.calls || s.calls.length !== s.values.length) throw new RangeError(`bocpd: series ${i}: error_rate needs calls[] of the same length as values[]`);
        ns.set(s.calls, o);
      }
      const prev = states?.[i];
      const tag = MODEL[this.config.model] + 1;
      if (prev) {
        if (prev.length !== ss) throw new RangeError(`bocpd: series ${i}: state has ${prev.length} slots, this configuration needs ${ss}`);
        if (prev[S.model] !== tag) throw new RangeError(`bocpd: series ${i}: state was made by another observation model`);
        st.set(prev, i * ss);
      } else {
        st[i * ss + S.cLast] = -1;
        st[i * ss + S.model] = tag;
      }
    }
    const ev = this.engine.run({ params: this.params, xs, ns, offsets, nSeries: n, states: st, stateSize: ss });
    const out: RunResult[] = [];
    for (let i = 0; i < n; i++) out.push({ changes: [], state: st.slice(i * ss, (i + 1) * ss) });
    for (let e = 0; e < ev.length; e += EVENT_W) {
      out[ev[e]!]!.changes.push({ index: ev[e + 1]!, before: ev[e + 2]!, after: ev[e + 3]! });
    }
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

/** Compact serialisation: header plus live runs only (the unused run slots are dropped). */
export function saveState(state: Float64Array): Uint8Array {
  const used = S.header + (state[S.nRuns]! | 0) * R.width;
  const out = new Float64Array(used + 1);
  out[0] = state.length;
  out.set(state.subarray(0, used), 1);
  return new Uint8Array(out.buffer);
}

export function loadState(bytes: Uint8Array): Float64Array {
  const copy = new Float64Array(bytes.slice().buffer);
  const full = new Float64Array(copy[0]!);
  full.set(copy.subarray(1));
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
