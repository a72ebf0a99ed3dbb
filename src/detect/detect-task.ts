// The detection task run in the pool: many series of one signal through the WASM detector in one
// call, each resuming from its saved state.
import { BocpdDetector, type ChangePoint, type SeriesInput } from './bocpd/index.js';
import type { SignalName } from './signals.js';

/** One series to feed: its points as stored, the bucket range to feed, and what an absent bucket is. */
export interface DetectSeries {
  /** JSON list of [bucket, value, n, k], ascending (as the pass reads it from svc_series_5m). */
  points: string;
  /** Bucket index of the first point to feed, and how many consecutive buckets. */
  from: number;
  length: number;
  /** Timestamp (µs) of bucket `from`: the detector's seasonal path. */
  start: number;
  /** An absent bucket is no observation (NaN) or a zero count. */
  missing: 'none' | 'zero';
  /** Saved detector state to resume from; absent for a new series. */
  state?: Float64Array;
  /** The series is fed again from its first point: of `state`, only the seasonal context is kept. */
  refeed?: boolean;
}

export interface DetectTask {
  kind: 'detect';
  signal: SignalName;
  series: DetectSeries[];
}

export interface DetectOutput {
  changes: ChangePoint[];
  state: Float64Array;
}

const detectors = new Map<SignalName, BocpdDetector>();

/** The detector's input for buckets [from, from + length): error_rate feeds (errors, calls), others the value. */
export function seriesInput(signal: SignalName, s: DetectSeries): SeriesInput {
  const values = new Float64Array(s.length).fill(s.missing === 'zero' ? 0 : NaN);
  const calls = signal === 'error_rate' ? new Float64Array(s.length) : undefined;
  for (const [bucket, value, n, k] of JSON.parse(s.points) as number[][]) {
    const i = bucket! - s.from;
    if (i < 0 || i >= s.length) continue;
    if (calls) {
      values[i] = k!;
      calls[i] = n!;
    } else values[i] = value!;
  }
  return calls ? { values, calls, start: s.start } : { values, start: s.start };
}

export function runDetect(task: DetectTask): DetectOutput[] {
  let det = detectors.get(task.signal);
  if (!det) detectors.set(task.signal, (det = new BocpdDetector(task.signal)));
  const inputs = task.series.map((s) => seriesInput(task.signal, s));
  const states = task.series.map((s) => (s.state && s.refeed ? det.refeedState(s.state, s.start) : s.state));
  return det.runBatch(inputs, states).map((r) => ({ changes: r.changes, state: r.state }));
}
