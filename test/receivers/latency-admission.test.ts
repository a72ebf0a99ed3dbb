// Admission by the wait for an acknowledgement (receivers/latency-admission.ts) on a simulated clock:
// it refuses only while the queue really stands, not on an estimate learnt from light traffic.
import { describe, expect, it } from 'vitest';
import { createLatencyAdmission } from '../../src/receivers/latency-admission.js';
import { ApiError } from '../../src/core/errors.js';

function clocked(maxAckWaitMs: number) {
  const clock = { t: 0 };
  return { clock, adm: createLatencyAdmission({ maxAckWaitMs, now: () => clock.t }) };
}

describe('latency admission', () => {
  it('takes the first burst after light traffic, and refuses once the oldest request has waited half the limit', () => {
    const { clock, adm } = clocked(2000);
    // Light traffic: 1 KiB requests, each answered at the next flush 100 ms later (a rate of ~10 bytes/ms).
    for (let i = 0; i < 20; i++) {
      const done = adm.admit(1024);
      clock.t += 100;
      done();
      clock.t += 400;
    }
    // A burst of 16 × 512 KiB: the estimate says minutes, but nothing has waited yet.
    const burst = Array.from({ length: 16 }, () => adm.admit(512 * 1024));
    expect(burst).toHaveLength(16);
    // Nothing answered for 1.2 s: the queue stands, and the estimate is far past the limit.
    clock.t += 1200;
    let refusal: unknown = null;
    try {
      adm.admit(512 * 1024);
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(ApiError);
    expect((refusal as ApiError).code).toBe('RATE_LIMITED');
    expect((refusal as ApiError).retryAfter).toBeGreaterThanOrEqual(1);
    expect(adm.refused()).toBe(1);
    // Answered: the queue is gone, and so is the refusal.
    for (const done of burst) done();
    expect(() => adm.admit(512 * 1024)).not.toThrow();
  });

  it('keeps refusing by the estimate while the queue stands, though a commit has just answered the oldest', () => {
    const { clock, adm } = clocked(2000);
    // Under load: 64 KiB requests answered ~1 s after admission, a rate of ~64 bytes/ms.
    const inflight: { done: () => void; at: number }[] = [];
    for (let i = 0; i < 200; i++) {
      inflight.push({ done: adm.admit(64 * 1024), at: clock.t });
      clock.t += 10;
      while (inflight.length && clock.t - inflight[0]!.at >= 1000) inflight.shift()!.done();
    }
    // A burst: the oldest has waited ~1 s, the estimate is past the limit: refused.
    const burstAt = clock.t;
    for (let i = 0; i < 500; i++) inflight.push({ done: adm.admit(64 * 1024), at: clock.t });
    clock.t += 10;
    expect(() => adm.admit(64 * 1024)).toThrow(ApiError);
    // A group commit answers everything from before the burst: the oldest has waited 500 ms, less than
    // half the limit, but the queue still stands (more than an eighth): the estimate still refuses.
    clock.t = burstAt + 500;
    while (inflight.length && inflight[0]!.at < burstAt) inflight.shift()!.done();
    expect(adm.estimatedWaitMs()).toBeGreaterThan(2000);
    expect(() => adm.admit(64 * 1024)).toThrow(ApiError);
    // Drained to requests younger than an eighth of the limit: the estimate no longer decides alone.
    while (inflight.length) inflight.shift()!.done();
    const young = adm.admit(64 * 1024);
    clock.t += 100;
    expect(() => adm.admit(64 * 1024)).not.toThrow();
    young();
  });

  it('admits everything with the limit at 0', () => {
    const { clock, adm } = clocked(0);
    adm.admit(1024);
    clock.t += 60_000;
    expect(() => adm.admit(1 << 30)).not.toThrow();
  });
});
