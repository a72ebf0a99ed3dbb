// Diagnoses are admitted so that they cannot starve ingest: at most `limit` run at once, at most
// `maxWaiting` wait for a turn (first come first served), and a call that finds the queue full or is
// not started within `maxWaitMs` is answered "busy" at once instead of running. A call identical to
// one already running or waiting (same key) shares its answer instead of running again. Without
// this, once a diagnosis outgrows the time between calls they pile up until RSS meets the memory
// budget and ingest is refused (`npm run soak`).

import { median } from './stats.js';

export interface AdmissionOptions {
  /** Diagnoses running at once (SVC_DIAGNOSE_CONCURRENCY). */
  limit: number;
  /** Calls that may wait for a turn (SVC_DIAGNOSE_QUEUE). */
  maxWaiting: number;
  /** A call not started after this long is answered busy (half of SVC_DIAGNOSE_TIMEOUT_MS). */
  maxWaitMs: number;
  /**
   * A call's time limit from its arrival (SVC_DIAGNOSE_TIMEOUT_MS): a call that would have to wait
   * so long that a run of the recent median length could not end within it is answered busy at
   * once. Otherwise, on a loaded machine, diagnoses that take twice the time between calls each wait
   * under the wait bound and then every one runs out of time: cores spent on answers nobody gets.
   */
  timeLimitMs?: number;
  /** The clock runs are timed with (ms); tests give their own. */
  now?: () => number;
}

/** Why a call did not run, and when to try again. */
export interface Busy {
  running: number;
  waiting: number;
  /** Set when the call waited its whole bound without starting. */
  waitedMs?: number;
  retryAfterS: number;
}

export type Admitted<T> = { busy: null; value: T } | { busy: Busy };

export interface AdmissionStatus {
  limit: number;
  max_waiting: number;
  running: number;
  waiting: number;
  /** Calls answered busy since start (one that shared the busy answer of an identical call counts as coalesced). */
  busy: number;
  /** Calls that shared the answer of an identical one since start. */
  coalesced: number;
}

export interface Admission<T> {
  /** Runs `fn` when a slot is free, or answers busy; a call whose key is running or waiting shares that call's answer (or failure). */
  run(key: string, fn: () => Promise<T>): Promise<Admitted<T>>;
  status(): AdmissionStatus;
}

/** Durations remembered for the Retry-After estimate. */
const RECENT = 16;

/**
 * Seconds until a call would likely find room: the work ahead (the running and waiting calls, each
 * as long as the recent median, 1 s before any finished) shared by the slots. At least 1.
 */
export function retryAfterSeconds(recentMs: readonly number[], running: number, waiting: number, limit: number): number {
  const typical = median(recentMs) || 1000;
  return Math.max(1, Math.ceil((typical * (running + waiting)) / Math.max(1, limit) / 1000));
}

/** The message of every service of a busy call. */
export function busyMessage(b: Busy): string {
  const state = `${b.running} diagnoses running, ${b.waiting} waiting`;
  const why = b.waitedMs === undefined ? state : `not started after waiting ${b.waitedMs} ms (${state})`;
  return `the server is busy: ${why}; retry in ${b.retryAfterS} s`;
}

interface Waiter {
  start: () => void;
  timer: ReturnType<typeof setTimeout>;
}

export function createAdmission<T>(opts: AdmissionOptions): Admission<T> {
  const now = opts.now ?? (() => performance.now());
  let running = 0;
  const queue: Waiter[] = [];
  const pending = new Map<string, Promise<Admitted<T>>>();
  const recent: number[] = [];
  let busy = 0;
  let coalesced = 0;

  const busyNow = (waitedMs?: number): Admitted<T> => {
    busy++;
    const b: Busy = { running, waiting: queue.length, retryAfterS: retryAfterSeconds(recent, running, queue.length, opts.limit) };
    return { busy: waitedMs === undefined ? b : { ...b, waitedMs } };
  };

  const execute = async (fn: () => Promise<T>): Promise<Admitted<T>> => {
    running++;
    const t0 = now();
    try {
      return { busy: null, value: await fn() };
    } finally {
      running--;
      recent.push(now() - t0);
      if (recent.length > RECENT) recent.shift();
      const next = queue.shift();
      if (next) {
        clearTimeout(next.timer);
        next.start();
      }
    }
  };

  /** Whether a call joining the queue now would likely run out of time: its wait (the runs ahead of it, shared by the slots) plus its own run. */
  const doomed = () => {
    if (opts.timeLimitMs === undefined || recent.length === 0) return false;
    const typical = median(recent);
    return (typical * (queue.length + 1)) / opts.limit + typical > opts.timeLimitMs;
  };

  const admit = (fn: () => Promise<T>): Promise<Admitted<T>> => {
    if (running < opts.limit && queue.length === 0) return execute(fn);
    if (queue.length >= opts.maxWaiting || doomed()) return Promise.resolve(busyNow());
    return new Promise<Admitted<T>>((resolve, reject) => {
      const w: Waiter = {
        start: () => execute(fn).then(resolve, reject),
        timer: setTimeout(() => {
          queue.splice(queue.indexOf(w), 1);
          resolve(busyNow(opts.maxWaitMs));
        }, opts.maxWaitMs),
      };
      queue.push(w);
    });
  };

  return {
    run(key, fn) {
      const same = pending.get(key);
      if (same) {
        coalesced++;
        return same;
      }
      const answer = admit(fn);
      pending.set(key, answer);
      const forget = () => pending.get(key) === answer && pending.delete(key);
      answer.then(forget, forget);
      return answer;
    },
    status: () => ({ limit: opts.limit, max_waiting: opts.maxWaiting, running, waiting: queue.length, busy, coalesced }),
  };
}
