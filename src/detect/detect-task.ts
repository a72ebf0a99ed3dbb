// The detection task run in the pool: many series of one signal through the WASM detector in one
// call, each resuming from its saved state.
import { BocpdDetector, type ChangePoint } from './bocpd/index.js';
import type { SignalName } from './signals.js';

export interface DetectSeries {
  values: Float64Array;
  /** error_rate only: calls per bucket. */
  calls?: Float64Array;
  /** Saved detector state to resume from; absent for a new series. */
  state?: Float64Array;
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

export function runDetect(task: DetectTask): DetectOutput[] {
  let det = detectors.get(task.signal);
  if (!det) detectors.set(task.signal, (det = new BocpdDetector(task.signal)));
  const inputs = task.series.map((s) => (s.calls ? { values: s.values, calls: s.calls } : { values: s.values }));
  return det.runBatch(inputs, task.series.map((s) => s.state)).map((r) => ({ changes: r.changes, state: r.state }));
}
