// Runs the detection pass at start, as soon as each 5-minute bucket's grace has passed (so a bucket
// is closed and detected within seconds of its grace, not at the next tick of a fixed interval), and
// at least every SVC_DETECT_INTERVAL_S seconds (for late data into older buckets); one pass at a
// time (a slow pass delays the next rather than overlapping it). Keeps the last report for
// /admin/status and the detector states between passes (written to the store in turns, and all at
// stop). Before its first pass, and after a failed one, it takes up what an interrupted pass left
// unfed, with the states read again from the store.
import { BUCKET_US } from '../core/time.js';
import { flushStates, markUnfedBuckets, runPass, type PassDeps, type PassOptions, type PassReport } from './pass.js';
import type { StateCache } from './states.js';

export interface Scheduler {
  /** Runs a pass now (after any pass in progress), as of `opts` (see runPass), and returns its report. */
  runNow(opts?: PassOptions): Promise<PassReport>;
  /** Runs `pass` over the scheduler's store and detector states in its turn, instead of the scheduled pass (detect/on-demand.ts); reported like it. */
  turn(pass: (deps: PassDeps) => Promise<PassReport>): Promise<PassReport>;
  status(): { interval_s: number; grace_s: number; passes: number; last: PassReport | null; last_error: string | null };
  stop(): Promise<void>;
}

/** Milliseconds from `nowMs` until the next bucket's grace has passed (a few ms after, so the pass sees it closed). */
export function untilNextClose(nowMs: number, graceS: number): number {
  const bucketMs = BUCKET_US / 1000;
  const graceMs = graceS * 1000;
  const next = Math.floor((nowMs - graceMs) / bucketMs + 1) * bucketMs + graceMs;
  return next - nowMs + 5;
}

export function startScheduler(deps: PassDeps, intervalS: number, log: (f: Record<string, unknown>) => void): Scheduler {
  const cache: StateCache = new Map();
  const passDeps: PassDeps = { ...deps, cache };
  let last: PassReport | null = null;
  let lastError: string | null = null;
  let passes = 0;
  let running: Promise<PassReport> | null = null;
  let stopped = false;
  let resumed = false;
  let timer: NodeJS.Timeout | undefined;
  const resume = async () => {
    if (resumed) return;
    const buckets = await markUnfedBuckets(deps);
    resumed = true;
    if (buckets) log({ level: 'info', msg: 'detection resumes an interrupted pass', buckets });
  };
  const once = (pass: (d: PassDeps) => Promise<PassReport> = (d) => runPass(d)): Promise<PassReport> => {
    const run = (running ?? Promise.resolve(null as unknown as PassReport))
      .catch(() => null)
      .then(resume)
      .then(() => pass(passDeps))
      .then(
        (r) => {
          passes++;
          last = r;
          lastError = null;
          if (r.anomalies_written || r.buckets_closed) log({ level: 'info', msg: 'detection pass', ...r });
          return r;
        },
        (err: unknown) => {
          resumed = false; // it may have stopped after closing buckets, like a crash
          cache.clear(); // and before saving the states it fed
          lastError = (err as Error).message;
          log({ level: 'error', msg: 'detection pass failed', error: lastError });
          throw err;
        },
      );
    running = run;
    return run;
  };
  const schedule = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      const started = Date.now();
      once()
        .catch(() => {})
        .finally(() => schedule(Math.min(untilNextClose(Date.now(), deps.graceS), Math.max(0, intervalS * 1000 - (Date.now() - started)))));
    }, delayMs);
    timer.unref();
  };
  schedule(0);
  return {
    runNow: (opts?: PassOptions) => once((d) => runPass(d, opts)),
    turn: once,
    status: () => ({ interval_s: intervalS, grace_s: deps.graceS, passes, last, last_error: lastError }),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => {});
      await flushStates(passDeps).catch((err: Error) => log({ level: 'error', msg: 'detector states not saved', error: err.message }));
    },
  };
}
