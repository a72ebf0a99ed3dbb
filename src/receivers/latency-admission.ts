// Overload is refused before it queues, by time as well as bytes: a request is admitted only while
// its estimated wait for an acknowledgement (ack-wait.ts) stays under SVC_MAX_ACK_WAIT_MS. Under a
// flood of senders that never back off, the byte limit alone let accepted requests wait 9.6 s at the
// median and 42 s at p99, past the 10 s after which OTel exporters give up and send again
// (duplicates). Refusals are 429 / gRPC UNAVAILABLE with Retry-After, decided before the body is read.
// The estimate alone is not enough: after light traffic the rate it knows is that of small requests
// answered at each flush, far below what the server can take, so the first burst would look slow.
// A request is refused only while the queue really stands: once the oldest request in flight has
// waited half the limit, the estimate alone decides until the oldest has waited less than an eighth
// of it (the queue has drained). Checking the oldest on every request would let everything in
// whenever a group commit had just answered the oldest, the estimate notwithstanding.
// The guard trusts a burst only so far (TRUSTED_BURST_BYTES in flight): beyond it the estimate decides
// alone, and before the first answer (no rate yet) nothing more is admitted. 400 senders starting
// together were otherwise all admitted within the first second, ~140 MB that took the server 10 s
// and more to answer on a busy machine, the queue's wait growing the whole time.
import { ApiError } from '../core/errors.js';
import { AckWaitEstimator, retryAfterSeconds } from './ack-wait.js';

export interface LatencyAdmission {
  /** Admits a request of `bytes` or throws RATE_LIMITED; the returned function is called once it is answered. */
  admit(bytes: number): () => void;
  /**
   * The refusal even the smallest request would get now (counted in refused()), or null; admits nothing. Lets a receiver
   * refuse before it reads a body whose size it does not know yet (OTLP/gRPC at the stream's headers).
   */
  refusesAny(): ApiError | null;
  /** The estimated wait of a small request admitted now, ms (status). */
  estimatedWaitMs(): number;
  /** Requests refused by the estimate since start (status). */
  refused(): number;
}

/** `maxAckWaitMs` 0 admits everything (the byte limit and the disk check still apply). */
/** Bytes in flight admitted on trust, before the queue stands or a rate is known: 16 requests of 512 KiB, ~50,000 spans. */
export const TRUSTED_BURST_BYTES = 32 * 1024 * 1024;

export function createLatencyAdmission(opts: { maxAckWaitMs: number; now?: () => number; trustedBurstBytes?: number }): LatencyAdmission {
  const trusted = opts.trustedBurstBytes ?? TRUSTED_BURST_BYTES;
  const now = opts.now ?? (() => performance.now());
  const estimator = new AckWaitEstimator();
  let refused = 0;
  // Requests in flight in admission order; answered ones leave the head lazily.
  const open: { t: number; done: boolean }[] = [];
  const oldestWaitMs = (t: number) => {
    while (open.length && open[0]!.done) open.shift();
    return open.length ? t - open[0]!.t : 0;
  };
  let standing = false; // a queue stands: the estimate was learnt under load
  const queueStands = (t: number) => {
    const oldest = oldestWaitMs(t);
    if (oldest >= opts.maxAckWaitMs / 2) standing = true;
    else if (oldest < opts.maxAckWaitMs / 8) standing = false;
    return standing;
  };
  /** The refusal of a request of `bytes` admitted now, or null; counts the refusal. */
  const refusal = (bytes: number, t: number): ApiError | null => {
    const n = Math.max(bytes, 1);
    const wait = estimator.waitMs(n, t);
    const { bytes: queued, requests } = estimator.inflight();
    const beyondTrust = requests > 0 && queued + n > trusted;
    const unknown = beyondTrust && estimator.rate(t) === null; // none answered yet
    if (!(opts.maxAckWaitMs > 0 && (wait > opts.maxAckWaitMs || unknown) && (beyondTrust || queueStands(t)))) return null;
    refused++;
    const about = unknown ? 'an unknown time (none answered yet)' : `about ${Number.isFinite(wait) ? Math.round(wait) : 'unbounded'} ms`;
    return new ApiError(
      'RATE_LIMITED',
      `ingest is busy: ${requests} requests (${queued} bytes) ahead would make this one wait ${about} for its acknowledgement (limit ${opts.maxAckWaitMs} ms)`,
      'retry after the delay in Retry-After; a sender that retries sooner is refused again',
      retryAfterSeconds(wait, opts.maxAckWaitMs),
    );
  };
  return {
    admit(bytes) {
      const n = Math.max(bytes, 1);
      const t = now();
      const refusedWith = refusal(n, t);
      if (refusedWith) throw refusedWith;
      estimator.started(n, t);
      const entry = { t, done: false };
      open.push(entry);
      return () => {
        if (entry.done) return;
        entry.done = true;
        estimator.finished(n, now());
      };
    },
    refusesAny: () => refusal(1, now()),
    estimatedWaitMs: () => Math.round(estimator.waitMs(1, now())),
    refused: () => refused,
  };
}
