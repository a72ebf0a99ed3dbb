// Where a diagnosis reads from, and how much: the window's statistics whole or as evenly spread
// slices (a busy window costs about what a quiet one does), the call tree's reach and trace sample,
// the edge join's slice. Pure functions of the bounds and the window's span count.
import { BUCKET_US, FINE_BIN_US, MINUTE_US } from '../../core/time.js';

/** Spans of the history the call tree joins, about, when busier: whole traces are sampled to between this and twice it. */
export const STRUCTURE_SAMPLE_SPANS = 30_000;
/**
 * Spans of the recent part (a few minutes before the window, and the window) the call tree joins,
 * about. Sampled on its own, so the fault's own stretch keeps its share whatever the history's
 * length. Chosen on bench:diagnose's store (the call tree is the costliest read there; a larger
 * budget cost more than the rest of the reads together) and checked on the recording's tuning
 * day, where a larger budget found no fault this one misses.
 */
export const RECENT_SAMPLE_SPANS = 30_000;
/** The recent part begins this long before the window: the clean stretch just before an onset is read whole as well. */
export const RECENT_US = 5 * MINUTE_US;

/** Rows the call tree and log levels scan at most, about, when the store is busy. */
export const STRUCTURE_SCAN_ROWS = 1_500_000;

/** Where the call tree is read and how it is sampled: whole traces, one in `mod`, in each of two parts. */
export interface StructureRead {
  lo: number;
  /** Where the history part ends (where the recent part begins, or the named reference's end). */
  historyTo: number;
  /** Where the recent part begins. */
  mid: number;
  /** One trace in this many, before `mid` and from it on. */
  modHistory: number;
  modRecent: number;
}

/**
 * Where the call tree and log levels are read from, given the window's spans, and the trace sample:
 * a stable stretch before an onset needs tens of minutes, not the whole look-back — 30 minutes (or
 * twice the window) before it, less for a busy store (about STRUCTURE_SCAN_ROWS in all, never under
 * 5 minutes). The history is sampled to about STRUCTURE_SAMPLE_SPANS, the recent part to about
 * RECENT_SAMPLE_SPANS; a sample is taken only when it at least halves a part (scarce data is not thinned).
 */
export function structureRead(b: Bounds, windowSpans: number): StructureRead {
  const w = b.to - b.from;
  const perUs = windowSpans / Math.max(1, w);
  const mod = (us: number, budget: number) => Math.max(1, Math.floor((perUs * us) / budget));
  if (b.reference) {
    // The named reference and the recent part: nothing between them is read.
    const lo = Math.floor(b.reference.from / FINE_BIN_US) * FINE_BIN_US;
    const mid = Math.min(Math.max(lo, Math.floor((b.from - RECENT_US) / FINE_BIN_US) * FINE_BIN_US), Math.ceil(b.reference.to / FINE_BIN_US) * FINE_BIN_US);
    const historyTo = Math.min(mid, Math.ceil(b.reference.to / FINE_BIN_US) * FINE_BIN_US);
    const modRecent = mod(b.to - mid, RECENT_SAMPLE_SPANS);
    return { lo, historyTo, mid, modRecent, modHistory: modRecent * Math.max(1, Math.round(mod(historyTo - lo, STRUCTURE_SAMPLE_SPANS) / modRecent)) };
  }
  const longest = Math.max(30 * MINUTE_US, 2 * w);
  const affordable = windowSpans > 0 ? (STRUCTURE_SCAN_ROWS / windowSpans) * w - w : longest;
  const reach = Math.max(b.lookFrom, b.from - Math.floor(Math.min(longest, Math.max(5 * MINUTE_US, affordable))));
  const lo = Math.ceil(reach / FINE_BIN_US) * FINE_BIN_US; // whole fine bins, as the log levels' rollup keeps them
  const mid = Math.max(lo, Math.floor((b.from - RECENT_US) / FINE_BIN_US) * FINE_BIN_US);
  const modRecent = mod(b.to - mid, RECENT_SAMPLE_SPANS);
  return { lo, historyTo: mid, mid, modRecent, modHistory: modRecent * Math.max(1, Math.round(mod(mid - lo, STRUCTURE_SAMPLE_SPANS) / modRecent)) };
}

/** How many traces each one the call tree kept stands for, at a time. */
export function sampleAt(r: Pick<StructureRead, 'mid' | 'modHistory' | 'modRecent'>, t: number): number {
  return t < r.mid ? r.modHistory : r.modRecent;
}

/**
 * Time bounds of one diagnosis, µs. `lookFrom` ≤ baseline start: the series and events look back this
 * far. `newSince`: what first appeared at or after it (an error type, a log pattern) is new — the
 * baseline's start, so a pattern that began with an incident 40 minutes before the window is still new.
 */
export interface Bounds {
  from: number;
  to: number;
  lookFrom: number;
  newSince: number;
  /** The good stretch the request named, if any: the baseline of every comparison. */
  reference?: { from: number; to: number };
}

/**
 * Slices of a sampled window, about (periods are whole fine bins, longer for a longer window). Each
 * slice is a scan of its own: chosen on bench:diagnose's store (1 DuckDB thread), where a sample in
 * more slices cost more than reading the whole window, and one in 15 less.
 */
const WINDOW_SLICES = 15;
/** Shortest slice read, µs: a slice should hold whole requests rather than cut most of them. */
const MIN_SLICE_US = 250_000;

/** The parts of the window its statistics are read from: the whole window, or evenly spread slices of it. */
export interface WindowSample {
  slices: [number, number][];
  /** The window's length over the slices' (1: the whole window); counts from the slices are scaled up by it. */
  scale: number;
}

/**
 * Where the window's per-operation statistics are read: the whole window when it holds at most
 * `scanSpans` spans (SVC_DIAGNOSE_SCAN_SPANS); a busier one (20,000 spans/s fill 15 minutes with 18
 * million) as evenly spread slices holding about that many, the first part of every period on the
 * absolute grid, so that a diagnosis costs about the same whatever the traffic, every part of the
 * window is seen, and where the window falls on the grid does not matter. Each slice is its own range
 * read, so the store skips the row groups between them (one filter with an OR of the ranges skips
 * none).
 */
export function windowSample(b: Pick<Bounds, 'from' | 'to'>, windowSpans: number, scanSpans: number): WindowSample {
  const w = b.to - b.from;
  if (windowSpans <= scanSpans || w <= 0) return { slices: [[b.from, b.to]], scale: 1 };
  const period = Math.max(1, Math.ceil(w / WINDOW_SLICES / FINE_BIN_US)) * FINE_BIN_US;
  const len = Math.min(period, Math.max(MIN_SLICE_US, Math.floor((period * scanSpans) / windowSpans)));
  const slices: [number, number][] = [];
  for (let p = Math.floor(b.from / period) * period; p < b.to; p += period) {
    const lo = Math.max(p, b.from);
    const hi = Math.min(p + len, b.to);
    if (hi > lo) slices.push([lo, hi]);
  }
  const read = slices.reduce((s, [lo, hi]) => s + hi - lo, 0);
  // A window shorter than a period may miss every slice's start: then it is read whole.
  return read === 0 || read >= w ? { slices: [[b.from, b.to]], scale: 1 } : { slices, scale: w / read };
}

/** Spans of the edge join: at most this many a side, by a deterministic trace sample when the window holds more. */
export const EDGE_SAMPLE_SPANS = 200_000;
/** The start of the 5-minute bucket holding `us`. */
export function bucketStart(us: number): number {
  return Math.floor(us / BUCKET_US) * BUCKET_US;
}
