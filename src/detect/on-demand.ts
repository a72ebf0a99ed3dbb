// Detection on demand (POST /admin/detect): a pass that closes buckets whatever the grace, for a
// harness that has loaded a recording and wants the detector's verdict now, and an explicit "as of"
// so that the verdict on a recorded window does not depend on the wall clock of the run.
//   - without `asOfUs`: every bucket that received data is closed (the newest included, even while
//     it is still filling: data arriving later reopens it, and the next pass re-derives it);
//   - with `asOfUs`: the buckets that end at or before it are closed, and the pass is stamped as of
//     then (`detected_at`, alert times), so the same recording gives the same rows in any run.
// Each pass runs in the scheduler's turn (never beside a scheduled pass); `untilIdle` repeats until
// a pass closes nothing.
import { BUCKET_US } from '../core/time.js';
import { readRows } from '../store/readers.js';
import { DIRTY_BUCKETS } from '../store/schema.js';
import { runPass, type PassDeps, type PassReport } from './pass.js';

/** Passes one call runs at most with `untilIdle`: a sender that never stops must not hold the call forever. */
export const MAX_PASSES = 20;

export interface OnDemandOptions {
  /** Close only the buckets that end at or before this time, and stamp the pass with it (µs). */
  asOfUs?: number | undefined;
  /** Repeat until a pass closes no bucket (at most MAX_PASSES passes). */
  untilIdle?: boolean | undefined;
  /** The wall clock, µs (tests). */
  nowUs?: () => number;
}

export interface OnDemandReport {
  /** The time the passes were stamped with: `asOfUs`, else the wall clock of the first pass. */
  as_of_us: number;
  passes: number;
  /** Whether the last pass found no bucket to close. */
  idle: boolean;
  buckets_closed: number;
  /** Start of the first and the end of the last bucket closed (µs), null when none was. */
  closed_from_us: number | null;
  closed_to_us: number | null;
  series_updated: number;
  points_fed: number;
  anomalies_written: number;
  alerts_changed: number;
  duration_ms: number;
}

/** Runs one pass over a store in its scheduler's turn (so never beside another pass on the same store). */
export type PassTurn = (pass: (deps: PassDeps) => Promise<PassReport>) => Promise<PassReport>;

/**
 * The close limit of one pass, as a bucket index: buckets below it are closed. With an "as of", the
 * buckets that end by then; without, every bucket holding data (the dirty ones), the newest included.
 */
export function closeLimit(dirty: readonly number[], asOfUs: number | undefined): number {
  if (asOfUs !== undefined) return Math.floor(asOfUs / BUCKET_US);
  return dirty.length ? Math.max(...dirty) + 1 : 0;
}

/**
 * One pass closing the buckets below `limit`, as of `stampUs`. The pass takes its close limit as
 * (as of − grace), so the limit is given through the grace; the middle of the limit's bucket keeps the
 * floor in `runPass` clear of rounding.
 */
function passBelow(deps: PassDeps, limit: number, stampUs: number): Promise<PassReport> {
  const limitUs = limit * BUCKET_US + BUCKET_US / 2;
  return runPass(deps, { asOfUs: stampUs, graceUs: stampUs - limitUs });
}

async function dirtyBuckets(deps: PassDeps): Promise<number[]> {
  const rows = await deps.reads.use((c) => readRows(c, `SELECT bucket FROM ${DIRTY_BUCKETS.name} ORDER BY bucket`));
  return rows.map((r) => Number(r['bucket']));
}

export async function detectOnDemand(turn: PassTurn, opts: OnDemandOptions = {}): Promise<OnDemandReport> {
  const started = performance.now();
  const now = opts.nowUs ?? (() => Date.now() * 1000);
  const stamp = opts.asOfUs ?? now();
  const out: OnDemandReport = {
    as_of_us: stamp,
    passes: 0,
    idle: false,
    buckets_closed: 0,
    closed_from_us: null,
    closed_to_us: null,
    series_updated: 0,
    points_fed: 0,
    anomalies_written: 0,
    alerts_changed: 0,
    duration_ms: 0,
  };
  do {
    const r = await turn(async (deps) => {
      const dirty = await dirtyBuckets(deps);
      const limit = closeLimit(dirty, opts.asOfUs);
      const closing = dirty.filter((b) => b < limit);
      if (closing.length) {
        out.closed_from_us = Math.min(out.closed_from_us ?? Infinity, closing[0]! * BUCKET_US);
        out.closed_to_us = Math.max(out.closed_to_us ?? -Infinity, (closing[closing.length - 1]! + 1) * BUCKET_US);
      }
      return passBelow(deps, limit, opts.asOfUs ?? now());
    });
    out.passes++;
    out.buckets_closed += r.buckets_closed;
    out.series_updated += r.series_updated;
    out.points_fed += r.points_fed;
    out.anomalies_written += r.anomalies_written;
    out.alerts_changed += r.alerts_changed;
    out.idle = r.buckets_closed === 0;
  } while (opts.untilIdle && !out.idle && out.passes < MAX_PASSES);
  out.duration_ms = Math.round(performance.now() - started);
  return out;
}
