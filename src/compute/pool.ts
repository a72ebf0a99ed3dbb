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
}

export function createPool(threads: number, opts: PoolOptions = {}, file = 'worker.js'): Pool {
  return new Piscina({
    filename: pathToFileURL(join(DIST_SRC, file)).href,
    workerData: { lowPriority: opts.lowPriority ?? false },
    minThreads: threads,
    maxThreads: threads,
    // Tasks queue while all workers are busy. The queue is bounded by admission control (bytes in
    // flight), not by a task count: piscina's 'auto' (threads²) refused bursts of small requests.
    maxQueue: Infinity,
    idleTimeout: 60_000,
  });
}
