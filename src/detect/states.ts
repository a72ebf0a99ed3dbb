// The detector states as the pass keeps them: in memory between passes (a steady pass reads none from
// the store) and in svc_detector_state (one row per series, compact: the detector's live runs and
// the seasonal context). A series' state is written when it is new or fed again from its start, and
// then once every SAVE_EVERY buckets (each series at its own phase, so a pass writes a sixth of
// them): a crash loses at most that much of it, and the next process refeeds those buckets from the
// store's series (markUnfedBuckets), re-deriving the same anomalies. The scheduler writes the rest
// at shutdown and drops the memory copy after a failed pass.
import { loadState, saveState } from './bocpd/index.js';

/** A series' state: the bucket of its point 0, the last bucket fed, the detector's state, and the last bucket the store has it for. */
export interface SeriesState {
  first: number;
  last: number;
  state: Float64Array;
  saved: number;
}

/** Buckets between two writes of a series' state (30 minutes). */
const SAVE_EVERY = 6;

/** Whether a series' state, saved as of bucket `saved`, is written now that it was fed up to `last`: once per SAVE_EVERY buckets, at a phase of its own. */
export function dueToSave(key: string, saved: number, last: number): boolean {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) | 0;
  const phase = (h >>> 0) % SAVE_EVERY;
  return Math.floor((last + phase) / SAVE_EVERY) > Math.floor((saved + phase) / SAVE_EVERY);
}

/** Stored states carry this prefix; those without it are the full Float64Array of an earlier version. */
const COMPACT = 'c1:';

export function encodeState(state: Float64Array): string {
  const b = saveState(state);
  return COMPACT + Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
}

export function decodeState(text: string): Float64Array {
  if (text.startsWith(COMPACT)) return loadState(Buffer.from(text.slice(COMPACT.length), 'base64'));
  const b = Buffer.from(text, 'base64');
  const out = new Float64Array(b.byteLength / 8);
  new Uint8Array(out.buffer).set(b);
  return out;
}

/** Series key → state, for the series the pass fed in this process. */
export type StateCache = Map<string, SeriesState>;
