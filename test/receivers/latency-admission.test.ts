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

  it('admits everything with the limit at 0', () => {
    const { clock, adm } = clocked(0);
    adm.admit(1024);
    clock.t += 60_000;
    expect(() => adm.admit(1 << 30)).not.toThrow();
  });
});
