// Pool threads do batch work (decoding, mining, detection); the event loop answers the API and
// acknowledges commits. On a saturated machine the kernel shares the cores out evenly between
// runnable threads, so an API request waited behind the decode workers. Linux's nice value is per
// thread, so each thread of the decode pool lowers its own (compute/pool.ts, `lowPriority`): it then
// yields to the event loop and DuckDB when both want a core.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Nice value of pool threads (0 = normal, 19 = lowest). */
export const POOL_THREAD_NICE = 10;

/** Lowers the calling thread's CPU priority; false where the platform has no per-thread nice. */
export function lowerThreadPriority(nice = POOL_THREAD_NICE): boolean {
  try {
    // /proc/thread-self → "<pid>/task/<tid>": setpriority(PRIO_PROCESS, tid) affects that thread only.
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    return false; // not Linux, or not permitted: run at normal priority
  }
}
