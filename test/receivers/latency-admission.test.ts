// Admission by the wait for an acknowledgement (receivers/latency-admission.ts) on a simulated clock:
// it refuses only while the queue really stands, not on an estimate learnt from light traffic.
import { describe, expect, it } from 'vitest';
import { createLatencyAdmission } from '../../src/receivers/latency-admission.js';
import { ApiError } from '../../src/core/errors.js';

function clocked(maxAckWaitMs: number, trustedBurstBytes?: number) {
  const clock = { t: 0 };
  return { clock, adm: createLatencyAdmission({ maxAckWaitMs, now: () => clock.t, ...(trustedBurstBytes ? { trustedBurstBytes } : {}) }) };
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
    // A request whose size is not known yet (a gRPC stream at its headers) is refused too, and counted.
    expect(() => adm.hold()).toThrow(ApiError);
    expect(adm.refused()).toBe(2);
    // Answered: the queue is gone, and so is the refusal; a hold let go leaves nothing in flight.
    for (const done of burst) done();
    const wait = adm.estimatedWaitMs();
    adm.hold()();
    expect(adm.estimatedWaitMs()).toBe(wait);
    expect(adm.refused()).toBe(2);
    expect(() => adm.admit(512 * 1024)).not.toThrow();
  });

  it('keeps refusing by the estimate while the queue stands, though a commit has just answered the oldest', () => {
    const { clock, adm } = clocked(2000, 2 ** 40); // the standing queue alone, whatever the burst's bytes
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

  it('trusts a burst only up to trustedBurstBytes: beyond it the estimate decides, and before any answer nothing more is admitted', () => {
    const clock = { t: 0 };
    const adm = createLatencyAdmission({ maxAckWaitMs: 2000, now: () => clock.t, trustedBurstBytes: 1 << 20 });
    // A fresh server: four 256 KiB requests fit the trust, a fifth does not, with no rate known.
    const first = Array.from({ length: 4 }, () => adm.admit(256 * 1024));
    expect(() => adm.admit(256 * 1024)).toThrow(/none answered yet/);
    // Answered in 100 ms: a rate of ~10 KiB/ms, so 20 MiB more would wait ~2 s; 8 MiB is admitted
    // (the oldest has not waited at all), and past the limit the estimate refuses though nothing stands.
    clock.t += 100;
    for (const done of first) done();
    const more = Array.from({ length: 32 }, () => adm.admit(256 * 1024));
    expect(more).toHaveLength(32);
    expect(adm.estimatedWaitMs()).toBeLessThan(2000);
    expect(() => { for (let i = 0; i < 64; i++) more.push(adm.admit(256 * 1024)); }).toThrow(ApiError);
    expect(adm.estimatedWaitMs()).toBeGreaterThan(1000);
  });

  it('counts streams held before their size is known, so those let through together are bounded too', () => {
    const clock = { t: 0 };
    const adm = createLatencyAdmission({ maxAckWaitMs: 2000, now: () => clock.t, trustedBurstBytes: 1 << 20 });
    // A fresh server (no rate yet) under a flood of streams whose sizes are not known: each is held as
    // a typical exporter batch (tens of KiB), so a bounded number gets through — not all of them, as
    // when only admitted requests counted and none had been admitted yet.
    const holds: (() => void)[] = [];
    let refusal: unknown = null;
    try {
      for (let i = 0; i < 1000; i++) holds.push(adm.hold());
    } catch (err) {
      refusal = err;
    }
    expect(holds.length).toBeGreaterThanOrEqual(4);
    expect(holds.length).toBeLessThanOrEqual(64);
    expect(refusal).toBeInstanceOf(ApiError);
    expect((refusal as ApiError).message).toMatch(new RegExp(`and ${holds.length} arriving`));
    expect(() => adm.admit(1)).toThrow(ApiError); // a body of known size waits behind them too
    // Their bodies arrived and were admitted by size, or their calls ended: let go (twice counts once).
    for (const letGo of holds) {
      letGo();
      letGo();
    }
    const done = adm.admit(256 * 1024);
    clock.t += 50;
    done();
    expect(() => adm.hold()()).not.toThrow();
  });

  it('stops counting a hold never let go once it is older than the limit', () => {
    const clock = { t: 0 };
    const adm = createLatencyAdmission({ maxAckWaitMs: 2000, now: () => clock.t, trustedBurstBytes: 1 << 20 });
    // Streams opened and never sent (a slow or hostile client): they fill the trust of a fresh server.
    let held = 0;
    for (; held < 1000; held++) {
      try {
        adm.hold();
      } catch {
        break;
      }
    }
    expect(held).toBeLessThan(1000);
    expect(adm.arriving()).toBe(held);
    clock.t += 1999;
    expect(() => adm.hold()).toThrow(ApiError);
    clock.t += 2;
    expect(adm.arriving()).toBe(0);
    expect(() => adm.hold()).not.toThrow();
  });

  it('admits everything with the limit at 0', () => {
    const { clock, adm } = clocked(0);
    adm.admit(1024);
    clock.t += 60_000;
    expect(() => adm.admit(1 << 30)).not.toThrow();
  });
});
