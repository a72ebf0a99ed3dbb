// The waits admitted ingest requests really had for their acknowledgement, over the last minute:
// whether admission keeps its promise (SVC_MAX_ACK_WAIT_MS), and where a long wait went, to the
// body's arrival or to decoding and committing after it. The estimate (ack-wait.ts) decides; this
// only reports, in GET /admin/status, what came of it.

/** The span of time a summary covers: long enough for a few hundred large exports under load. */
export const OBSERVED_WINDOW_MS = 60_000;
/** Answers kept at most (a ring): past this many in a window, the oldest are left out. */
const CAPACITY = 4096;

export interface WaitSummary {
  window_s: number;
  /** Requests answered in the window, whose body had arrived whole. */
  requests: number;
  /** Of them, those that waited longer than the limit they were admitted under. */
  over_limit: number;
  /** Admission to answer, ms (nearest rank); null with no request. */
  p50_ms: number | null;
  p99_ms: number | null;
  /** Admission to the body's last byte, ms: the transfer's part of the wait. */
  arrival_p50_ms: number | null;
  arrival_p99_ms: number | null;
}

export interface ObservedWaits {
  /** A request answered at `at` (ms, monotonic) after `waitMs` since its admission, its body whole `arrivalMs` after it. */
  record(at: number, waitMs: number, arrivalMs: number): void;
  /** The answers of the last OBSERVED_WINDOW_MS before `now`; `limitMs` 0: no limit, none over it. */
  summary(now: number, limitMs: number): WaitSummary;
}

/** The value at quantile q of sorted `xs` by nearest rank, or null when empty. */
function nearestRank(xs: Float64Array, q: number): number | null {
  return xs.length ? xs[Math.max(0, Math.ceil(q * xs.length) - 1)]! : null;
}

export function createObservedWaits(): ObservedWaits {
  const at = new Float64Array(CAPACITY).fill(-Infinity);
  const wait = new Float64Array(CAPACITY);
  const arrival = new Float64Array(CAPACITY);
  let next = 0;
  return {
    record(t, waitMs, arrivalMs) {
      at[next] = t;
      wait[next] = waitMs;
      arrival[next] = arrivalMs;
      next = (next + 1) % CAPACITY;
    },
    summary(now, limitMs) {
      const inWindow: number[] = [];
      for (let k = 0; k < CAPACITY; k++) if (at[k]! > now - OBSERVED_WINDOW_MS && at[k]! <= now) inWindow.push(k);
      const waits = Float64Array.from(inWindow, (k) => wait[k]!).sort();
      const arrivals = Float64Array.from(inWindow, (k) => arrival[k]!).sort();
      const round = (x: number | null) => (x === null ? null : Math.round(x));
      return {
        window_s: OBSERVED_WINDOW_MS / 1000,
        requests: waits.length,
        over_limit: limitMs > 0 ? waits.filter((w) => w > limitMs).length : 0,
        p50_ms: round(nearestRank(waits, 0.5)),
        p99_ms: round(nearestRank(waits, 0.99)),
        arrival_p50_ms: round(nearestRank(arrivals, 0.5)),
        arrival_p99_ms: round(nearestRank(arrivals, 0.99)),
      };
    },
  };
}
