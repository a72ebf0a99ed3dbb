// Runs the detection pass at start and then every SVC_DETECT_INTERVAL_S seconds, one at a time
// (a slow pass delays the next rather than overlapping it). Keeps the last report for /admin/status.
// Before its first pass, and after a failed one, it takes up what an interrupted pass left unfed.
import { markUnfedBuckets, runPass, type PassDeps, type PassReport } from './pass.js';

export interface Scheduler {
  /** Runs a pass now (after any pass in progress) and returns its report. */
  runNow(): Promise<PassReport>;
  /** Runs `pass` over the scheduler's store in its turn, instead of the scheduled pass (detect/on-demand.ts); reported like it. */
  turn(pass: (deps: PassDeps) => Promise<PassReport>): Promise<PassReport>;
  status(): { interval_s: number; grace_s: number; passes: number; last: PassReport | null; last_error: string | null };
  stop(): Promise<void>;
}

export function startScheduler(deps: PassDeps, intervalS: number, log: (f: Record<string, unknown>) => void): Scheduler {
  let last: PassReport | null = null;
  let lastError: string | null = null;
  let passes = 0;
  let running: Promise<PassReport> | null = null;
  let stopped = false;
  let resumed = false;
  const resume = async () => {
    if (resumed) return;
    const buckets = await markUnfedBuckets(deps);
    resumed = true;
    if (buckets) log({ level: 'info', msg: 'detection resumes an interrupted pass', buckets });
  };
  const once = (pass: (d: PassDeps) => Promise<PassReport> = runPass): Promise<PassReport> => {
    const run = (running ?? Promise.resolve(null as unknown as PassReport))
      .catch(() => null)
      .then(resume)
      .then(() => pass(deps))
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
          lastError = (err as Error).message;
          log({ level: 'error', msg: 'detection pass failed', error: lastError });
          throw err;
        },
      );
    running = run;
    return run;
  };
  const tick = () => {
    if (!stopped) once().catch(() => {});
  };
  const first = setTimeout(tick, 0);
  const timer = setInterval(tick, intervalS * 1000);
  timer.unref();
  return {
    runNow: () => once(),
    turn: once,
    status: () => ({ interval_s: intervalS, grace_s: deps.graceS, passes, last, last_error: lastError }),
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
