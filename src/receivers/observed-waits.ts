// The waits admitted ingest requests really had for their acknowledgement, over the last minute:
// whether admission keeps its promise (SVC_MAX_ACK_WAIT_MS), and where a long wait went, to the
// body's arrival or to decoding and committing after it. The estimate (ack-wait.ts) decides; this
// reports what came of it, in GET /admin/status, and tells admission how far past the limits it was
// told the recent waits' tail reached (latency-admission.ts narrows the limit by it).

/** The span of time a summary covers: long enough for a few hundred large exports under load. */
export const OBSERVED_WINDOW_MS = 60_000;
/** Answers kept at most (a ring): past this many in a window, the oldest are left out. */
const CAPACITY = 4096;

export interface WaitSummary {
  window_s: number;
  /** Requests answered in the window, whose body had arrived whole. */
  requests: number;
  /** Of them, those that waited longer than the limit each was admitted under. */
  over_limit: number;
  /** Admission to answer, ms (nearest rank); null with no request. */
  p50_ms: number | null;
  p99_ms: number | null;
  /** Admission to the body's last byte, ms: the transfer's part of the wait. */
  arrival_p50_ms: number | null;
  arrival_p99_ms: number | null;
}

export interface ObservedWaits {
  /**
   * A request answered at `at` (ms, monotonic) after `waitMs` since its admission, its body whole
   * `arrivalMs` after it, admitted under a limit of `limitMs` (0: none).
   */
  record(at: number, waitMs: number, arrivalMs: number, limitMs: number): void;
  /** The answers of the last OBSERVED_WINDOW_MS before `now`. */
  summary(now: number): WaitSummary;
  /**
   * Quantile `q` of wait ÷ limit over the answers of the last `windowMs` before `now` that had a
   * limit; null with fewer than `atLeast` of them.
   */
  overLimit(now: number, windowMs: number, q: number, atLeast: number): number | null;
}

/** The value at quantile q of sorted `xs` by nearest rank, or null when empty. */
function nearestRank(xs: Float64Array, q: number): number | null {
  return xs.length ? xs[Math.max(0, Math.ceil(q * xs.length) - 1)]! : null;
}

export function createObservedWaits(): ObservedWaits {
  const at = new Float64Array(CAPACITY).fill(-Infinity);
  const wait = new Float64Array(CAPACITY);
  const arrival = new Float64Array(CAPACITY);
  const limit = new Float64Array(CAPACITY);
  let next = 0;
  /** The slots of the answers in the `windowMs` before `now`. */
  const within = (now: number, windowMs: number): number[] => {
    const slots: number[] = [];
    for (let k = 0; k < CAPACITY; k++) if (at[k]! > now - windowMs && at[k]! <= now) slots.push(k);
    return slots;
  };
  return {
    record(t, waitMs, arrivalMs, limitMs) {
      at[next] = t;
      wait[next] = waitMs;
      arrival[next] = arrivalMs;
      limit[next] = limitMs;
      next = (next + 1) % CAPACITY;
    },
    summary(now) {
      const inWindow = within(now, OBSERVED_WINDOW_MS);
      const waits = Float64Array.from(inWindow, (k) => wait[k]!).sort();
      const arrivals = Float64Array.from(inWindow, (k) => arrival[k]!).sort();
      const round = (x: number | null) => (x === null ? null : Math.round(x));
      return {
        window_s: OBSERVED_WINDOW_MS / 1000,
        requests: waits.length,
        over_limit: inWindow.filter((k) => limit[k]! > 0 && wait[k]! > limit[k]!).length,
        p50_ms: round(nearestRank(waits, 0.5)),
        p99_ms: round(nearestRank(waits, 0.99)),
        arrival_p50_ms: round(nearestRank(arrivals, 0.5)),
        arrival_p99_ms: round(nearestRank(arrivals, 0.99)),
      };
    },
    overLimit(now, windowMs, q, atLeast) {
      const limited = within(now, windowMs).filter((k) => limit[k]! > 0);
      if (limited.length < atLeast) return null;
      return nearestRank(Float64Array.from(limited, (k) => wait[k]! / limit[k]!).sort(), q);
    },
  };
}
