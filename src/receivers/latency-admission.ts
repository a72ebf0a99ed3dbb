// Overload is refused before it queues, by time as well as bytes: a request is admitted only while
// its estimated wait for an acknowledgement (ack-wait.ts) stays under SVC_MAX_ACK_WAIT_MS. Under a
// flood of senders that never back off, the byte limit alone let accepted requests wait 9.6 s at the
// median and 42 s at p99, past the 10 s after which OTel exporters give up and send again
// (duplicates). Refusals are 429 / gRPC UNAVAILABLE with Retry-After, decided before the body is read.
import { ApiError } from '../core/errors.js';
import { AckWaitEstimator, retryAfterSeconds } from './ack-wait.js';

export interface LatencyAdmission {
  /** Admits a request of `bytes` or throws RATE_LIMITED; the returned function is called once it is answered. */
  admit(bytes: number): () => void;
  /** The estimated wait of a small request admitted now, ms (status). */
  estimatedWaitMs(): number;
  /** Requests refused by the estimate since start (status). */
  refused(): number;
}

/** `maxAckWaitMs` 0 admits everything (the byte limit and the disk check still apply). */
export function createLatencyAdmission(opts: { maxAckWaitMs: number; now?: () => number }): LatencyAdmission {
  const now = opts.now ?? (() => performance.now());
  const estimator = new AckWaitEstimator();
  let refused = 0;
  return {
    admit(bytes) {
      const n = Math.max(bytes, 1);
      const t = now();
      const wait = estimator.waitMs(n, t);
      if (opts.maxAckWaitMs > 0 && wait > opts.maxAckWaitMs) {
        refused++;
        const { bytes: queued, requests } = estimator.inflight();
        throw new ApiError(
          'RATE_LIMITED',
          `ingest is busy: ${requests} requests (${queued} bytes) ahead would make this one wait about ${Number.isFinite(wait) ? Math.round(wait) : 'unbounded'} ms for its acknowledgement (limit ${opts.maxAckWaitMs} ms)`,
          'retry after the delay in Retry-After; a sender that retries sooner is refused again',
          retryAfterSeconds(wait, opts.maxAckWaitMs),
        );
      }
      estimator.started(n, t);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        estimator.finished(n, now());
      };
    },
    estimatedWaitMs: () => Math.round(estimator.waitMs(1, now())),
    refused: () => refused,
  };
}
