// What eval:recorded needs of a recorded fault dataset, whatever its research format: the faults
// with their truth, the telemetry in time order (as the scenario sender's chunks), and the
// dataset's own published per-fault results to print beside ours. A reader per format
// (nezha.ts) produces it; nothing in the product knows these formats.
import type { ScenarioData } from '../../testkit/scenario/traffic.js';

export interface RecordedFault {
  /** Stable name: `<split>/<HH:MM:SS>`. */
  id: string;
  split: string;
  /** Injection time in the recording's clock, µs. */
  injectUs: number;
  /** The truth: the service the fault was injected into. */
  service: string;
  /** The fault type as the dataset names it. */
  type: string;
  /** The published method's rank of the truth for this fault (null: not ranked, or unknown). */
  publishedRank: number | null;
}

/** A part of the recording that replays into a store of its own (a day, for Nezha). */
export interface RecordingSplit {
  name: string;
  faults: RecordedFault[];
  /** The last timestamp of the split's telemetry, µs (where `--shift-to now` puts it). */
  lastUs: number;
  /** The telemetry in time order, in chunks of bounded size; `keep` says which stretches to read (all when absent). */
  chunks(opts?: { keep?: (startUs: number, endUs: number) => boolean }): AsyncGenerator<ScenarioData>;
}

export interface Recording {
  name: string;
  /** The published method's name and its overall figures, for the report. */
  published: { method: string; as1: number; as3: number; note: string } | null;
  splits: RecordingSplit[];
}
