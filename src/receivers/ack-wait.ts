// How long a request admitted now would wait for its acknowledgement, estimated from what is in flight
// and how fast acknowledgements have come lately. Pure (the caller passes the time), so it can be
// tested alone; latency-admission.ts asks it on every ingest request.
//
// The estimate is Little's law over the ingest path (decode queue, decoding, commit queue, commit):
// the bytes admitted and not yet answered, this request's own included, divided by the rate at which
// arrived bytes were answered. A request is admitted when its headers (or its gRPC message's prefix)
// arrive and its body arrives after; the bytes still arriving count in the queue (they will be
// decoded and committed), but the rate counts processing time only, while some arrived request
// waits for its answer. A rate counted over the transfers too made a server look slow whenever its
// senders were slow to send: under 400 gRPC senders on one busy loop, exports spent most of their
// time arriving, so few were admitted while the decode workers idled. Idle time says nothing of
// capacity either, and a quiet night must not make the morning's first burst look slow. The rate is a
// ratio of two sums that decay with the processing time elapsed (time constant tauMs), so bytes
// answered together by one group commit count at once, and a stall (a checkpoint, a slow disk) lowers
// the rate while it lasts, with no answer needed to notice it: processing time grows, answered bytes
// do not. With nothing in flight there is no wait to estimate; before the first answer there is no
// rate: both admit (the byte limit still bounds the first burst).

export interface AckWaitOptions {
  /** Decay time constant of the rate, in ms of busy time. */
  tauMs: number;
}

/** The busy-time decay constant: a few group commits' worth (they answer every 0.1-0.3 s under load). */
export const ACK_WAIT_TAU_MS = 2000;

export class AckWaitEstimator {
  private arrivingBytes = 0; // admitted, body still arriving
  private queuedBytes = 0; // arrived, not yet answered
  private inflightCount = 0;
  private queuedCount = 0;
  private answeredBytes = 0; // decayed sum
  private busyMs = 0; // decayed integral of processing time
  private last = 0; // when the sums were last brought up to date
  private answeredAny = false;

  constructor(private readonly opts: AckWaitOptions = { tauMs: ACK_WAIT_TAU_MS }) {}

  /** A request of `bytes` was admitted at `now` (ms, monotonic); its body is still to arrive. */
  started(bytes: number, now: number): void {
    this.advance(now);
    this.arrivingBytes += bytes;
    this.inflightCount++;
  }

  /** The body of a request admitted with `bytes` has arrived: it waits to be decoded and committed. */
  arrived(bytes: number, now: number): void {
    this.advance(now);
    this.arrivingBytes = Math.max(0, this.arrivingBytes - bytes);
    this.queuedBytes += bytes;
    this.queuedCount++;
  }

  /**
   * A request admitted with `bytes` was answered at `now`, after its body `arrived` or not (its sender
   * went away, or it was refused on arrival). Failures count as answered too: they went through the
   * same queues, and a failed request's bytes left the pipeline all the same.
   */
  finished(bytes: number, now: number, arrived: boolean): void {
    this.advance(now);
    this.inflightCount = Math.max(0, this.inflightCount - 1);
    if (!arrived) {
      this.arrivingBytes = Math.max(0, this.arrivingBytes - bytes);
      return;
    }
    this.queuedBytes = Math.max(0, this.queuedBytes - bytes);
    this.queuedCount = Math.max(0, this.queuedCount - 1);
    this.answeredBytes += bytes;
    this.answeredAny = true;
  }

  /** Answered bytes per ms of processing time lately, as of `now`; null before the first answer. */
  rate(now: number): number | null {
    if (!this.answeredAny) return null;
    const { answered, busy } = this.sumsAt(now);
    return busy > 0 ? answered / busy : null;
  }

  /** Estimated ms until a request of `bytes` admitted at `now` is answered; 0 with nothing in flight or no history. */
  waitMs(bytes: number, now: number): number {
    if (this.inflightCount === 0) return 0;
    const r = this.rate(now);
    if (r === null) return 0;
    return r > 0 ? (this.arrivingBytes + this.queuedBytes + bytes) / r : Infinity;
  }

  inflight(): { bytes: number; requests: number } {
    return { bytes: this.arrivingBytes + this.queuedBytes, requests: this.inflightCount };
  }

  /** The decayed sums as they would be at `now` (time since `last` is processing time if an arrived request waits). */
  private sumsAt(now: number): { answered: number; busy: number } {
    const dt = Math.max(0, now - this.last);
    if (this.queuedCount === 0 || dt === 0) return { answered: this.answeredBytes, busy: this.busyMs };
    const d = Math.exp(-dt / this.opts.tauMs);
    // The busy integral decays as it grows: ∫ e^{-(dt-s)/tau} ds over the interval = tau(1 - d).
    return { answered: this.answeredBytes * d, busy: this.busyMs * d + this.opts.tauMs * (1 - d) };
  }

  private advance(now: number): void {
    const { answered, busy } = this.sumsAt(now);
    this.answeredBytes = answered;
    this.busyMs = busy;
    this.last = Math.max(this.last, now);
  }
}

/**
 * Retry-After for a refused request, in whole seconds: about when the estimated wait will have
 * fallen to the target, at least 1 (the header's unit) and at most 60 (an estimate that far out
 * is a stall, whose end it cannot tell).
 */
export function retryAfterSeconds(waitMs: number, targetMs: number): number {
  const s = Math.ceil((waitMs - targetMs) / 1000);
  return Math.min(60, Math.max(1, Number.isFinite(s) ? s : 60));
}
