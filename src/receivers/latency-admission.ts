// Overload is refused before it queues, by time as well as bytes: a request is admitted only while
// its estimated wait for an acknowledgement (ack-wait.ts) stays under SVC_MAX_ACK_WAIT_MS. Under a
// flood of senders that never back off, the byte limit alone let accepted requests wait far past the
// 10 s after which OTel exporters give up and send again (duplicates). Refusals are 429 / gRPC
// UNAVAILABLE with Retry-After, decided before the body is read.
// The estimate alone is not enough: after light traffic the rate it knows is that of small requests
// answered at each flush, far below what the server can take, so the first burst would look slow.
// So a burst is trusted up to TRUSTED_BURST_BYTES in flight until a queue stands (the oldest request
// in flight has waited half the limit); from then on, and for LOADED_MEMORY_MS after the queue last
// stood, the rate is one learnt under load and the estimate decides alone. Trusting the burst again
// as soon as the queue had drained let a flood in by the trusted bytes at each drain, which a
// loaded server took seconds to answer (bench/README.md, bench:overload). Before the first answer (no
// rate yet) nothing beyond the trusted burst is admitted.
import { ApiError } from '../core/errors.js';
import { ACK_WAIT_TAU_MS, AckWaitEstimator, retryAfterSeconds } from './ack-wait.js';
import { createObservedWaits, type WaitSummary } from './observed-waits.js';

/** An admitted request's wait: told when its body has arrived, and once it is answered. */
export interface Waiting {
  arrived(): void;
  answered(): void;
}

export interface LatencyAdmission {
  /** Admits a request of `bytes` or throws RATE_LIMITED. */
  admit(bytes: number): Waiting;
  /** The estimated wait of a small request admitted now, ms (status). */
  estimatedWaitMs(): number;
  /** Requests refused by the estimate since start (status). */
  refused(): number;
  /** The waits admitted requests really had lately (status). */
  observed(): WaitSummary;
}

/** Bytes in flight admitted on trust, before a queue stands or a rate is known: 16 requests of 512 KiB, ~50,000 spans. */
export const TRUSTED_BURST_BYTES = 32 * 1024 * 1024;

/**
 * How long the estimate keeps deciding alone after a queue last stood: a few of the estimator's time
 * constants, after which a rate learnt under load has given way to the light traffic's since.
 */
export const LOADED_MEMORY_MS = 3 * ACK_WAIT_TAU_MS;

/** `maxAckWaitMs` 0 admits everything (the byte limit and the disk check still apply). */
export function createLatencyAdmission(opts: { maxAckWaitMs: number; now?: () => number; trustedBurstBytes?: number }): LatencyAdmission {
  const trusted = opts.trustedBurstBytes ?? TRUSTED_BURST_BYTES;
  const now = opts.now ?? (() => performance.now());
  const estimator = new AckWaitEstimator();
  const observed = createObservedWaits();
  let refused = 0;
  // Requests in flight in admission order; answered ones leave the head lazily.
  const open: { t: number; done: boolean }[] = [];
  const oldestWaitMs = (t: number) => {
    while (open.length && open[0]!.done) open.shift();
    return open.length ? t - open[0]!.t : 0;
  };
  let stoodAt = -Infinity; // when a queue last stood
  const loaded = (t: number) => {
    if (oldestWaitMs(t) >= opts.maxAckWaitMs / 2) stoodAt = t;
    return t - stoodAt <= LOADED_MEMORY_MS;
  };
  /** The refusal of a request of `bytes` admitted now, or null; counts the refusal. */
  const refusal = (bytes: number, t: number): ApiError | null => {
    const wait = estimator.waitMs(bytes, t);
    const { bytes: queued, requests } = estimator.inflight();
    const beyondTrust = requests > 0 && queued + bytes > trusted;
    const unknown = beyondTrust && estimator.rate(t) === null; // none answered yet
    if (!(opts.maxAckWaitMs > 0 && (wait > opts.maxAckWaitMs || unknown) && (beyondTrust || loaded(t)))) return null;
    refused++;
    const about = unknown ? 'an unknown time (none answered yet)' : `about ${Number.isFinite(wait) ? Math.round(wait) : 'unbounded'} ms`;
    return ApiError.refusal(
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
      let arrivedAt = NaN;
      return {
        arrived() {
          if (arrivedAt === arrivedAt || entry.done) return;
          arrivedAt = now();
          estimator.arrived(n, arrivedAt);
        },
        answered() {
          if (entry.done) return;
          entry.done = true;
          const u = now();
          const arrived = arrivedAt === arrivedAt;
          estimator.finished(n, u, arrived);
          if (arrived) observed.record(u, u - t, arrivedAt - t);
        },
      };
    },
    estimatedWaitMs: () => Math.round(estimator.waitMs(1, now())),
    refused: () => refused,
    observed: () => observed.summary(now(), opts.maxAckWaitMs),
  };
}
