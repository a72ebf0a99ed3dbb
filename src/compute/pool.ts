// The worker pool for CPU work (decoding, mining, detection). One pool per process; tasks are plain
// objects, bodies are transferred, not copied.
import { Piscina } from 'piscina';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIST_SRC } from '../core/paths.js';

export type Pool = Piscina;

export interface PoolOptions {
  /** Run the threads at a lower CPU priority (compute/priority.ts). */
  lowPriority?: boolean;
  /** Cap each thread's young generation (V8's new space and its copy), MiB; unset: V8's default. */
  youngGenerationMb?: number;
}

/**
 * The decode threads' young generation. V8 grows a thread's new space when much survives its
 * scavenges, and is slow to shrink it: under bench:overload's flood each decode worker's went from 16
 * to 32 MiB and stayed so through the steady load after it. At 24 (a new space of 16 MiB, what steady
 * ingest had anyway) it stays at 16.
 */
const DECODE_YOUNG_GENERATION_MB = 24;

/** `worker`: the module the threads run (its default export handles a task); the service's own by default. */
export function createPool(threads: number, opts: PoolOptions = {}, worker = join(DIST_SRC, 'worker.js')): Pool {
  return new Piscina({
    filename: pathToFileURL(worker).href,
    workerData: { lowPriority: opts.lowPriority ?? false },
    minThreads: threads,
    maxThreads: threads,
    // Tasks queue while all workers are busy. The queue is bounded by admission control (bytes in
    // flight), not by a task count: piscina's 'auto' (threads²) refused bursts of small requests.
    maxQueue: Infinity,
    idleTimeout: 60_000,
    ...(opts.youngGenerationMb ? { resourceLimits: { maxYoungGenerationSizeMb: opts.youngGenerationMb } } : {}),
  });
}

/** The pool that decodes ingest and runs detection, as the server runs it (its threads' young generation capped). */
export function createDecodePool(threads: number, opts: Omit<PoolOptions, 'youngGenerationMb'> = {}): Pool {
  return createPool(threads, { ...opts, youngGenerationMb: DECODE_YOUNG_GENERATION_MB });
}
