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
   * Holds room for a request whose size is not known yet (OTLP/gRPC at its stream's headers), counted
   * as large as recent ones, or throws RATE_LIMITED; the returned function lets the room go (the body
   * arrived and is admitted by its size, or the stream ended).
   */
  hold(): () => void;
  /** The estimated wait of a small request admitted now, ms (status). */
  estimatedWaitMs(): number;
  /** Requests held and not yet let go (status: gRPC exports whose message is still arriving). */
  arriving(): number;
  /** Requests refused by the estimate since start (status). */
  refused(): number;
}

/** Bytes in flight admitted on trust, before the queue stands or a rate is known: 16 requests of 512 KiB, ~50,000 spans. */
export const TRUSTED_BURST_BYTES = 32 * 1024 * 1024;

/** The size a held request counts as before any was admitted: a typical exporter batch. */
const FIRST_TYPICAL_BYTES = 64 * 1024;

/** `maxAckWaitMs` 0 admits everything (the byte limit and the disk check still apply). */
export function createLatencyAdmission(opts: { maxAckWaitMs: number; now?: () => number; trustedBurstBytes?: number }): LatencyAdmission {
  const trusted = opts.trustedBurstBytes ?? TRUSTED_BURST_BYTES;
  const now = opts.now ?? (() => performance.now());
  const estimator = new AckWaitEstimator();
  let refused = 0;
  // Requests held before their size is known (hold()): without them, every gRPC stream whose headers
  // came while the queue was short was let through, and all their bodies then arrived together.
  // A hold stops counting after maxAckWaitMs: a client that opens streams and never sends their
  // messages must not keep ingest refused.
  const holds: { t: number; n: number; counted: boolean }[] = [];
  let held = 0;
  let heldBytes = 0;
  const uncount = (h: { n: number; counted: boolean }) => {
    if (!h.counted) return;
    h.counted = false;
    held--;
    heldBytes -= h.n;
  };
  const expireHolds = (t: number) => {
    while (holds.length && (!holds[0]!.counted || t - holds[0]!.t > opts.maxAckWaitMs)) uncount(holds.shift()!);
  };
  let typical = FIRST_TYPICAL_BYTES; // recent admitted sizes, smoothed
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
    expireHolds(t);
    const n = Math.max(bytes, 1) + heldBytes;
    const wait = estimator.waitMs(n, t);
    const { bytes: queued, requests } = estimator.inflight();
    const beyondTrust = requests + held > 0 && queued + n > trusted;
    const unknown = beyondTrust && estimator.rate(t) === null; // none answered yet
    if (!(opts.maxAckWaitMs > 0 && (wait > opts.maxAckWaitMs || unknown) && (beyondTrust || queueStands(t)))) return null;
    refused++;
    const about = unknown ? 'an unknown time (none answered yet)' : `about ${Number.isFinite(wait) ? Math.round(wait) : 'unbounded'} ms`;
    return new ApiError(
      'RATE_LIMITED',
      `ingest is busy: ${requests} requests (${queued} bytes)${held ? ` and ${held} arriving` : ''} ahead would make this one wait ${about} for its acknowledgement (limit ${opts.maxAckWaitMs} ms)`,
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
      typical += (n - typical) / 16;
      const entry = { t, done: false };
      open.push(entry);
      return () => {
        if (entry.done) return;
        entry.done = true;
        estimator.finished(n, now());
      };
    },
    hold() {
      const n = Math.round(typical);
      const t = now();
      const refusedWith = refusal(n, t);
      if (refusedWith) throw refusedWith;
      const h = { t, n, counted: true };
      holds.push(h);
      held++;
      heldBytes += n;
      return () => uncount(h);
    },
    estimatedWaitMs: () => Math.round(estimator.waitMs(1, now())),
    arriving: () => {
      expireHolds(now());
      return held;
    },
    refused: () => refused,
  };
}
