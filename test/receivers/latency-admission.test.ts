// Admission by the wait for an acknowledgement (receivers/latency-admission.ts) on a simulated clock:
// it refuses by an estimate learnt under load, not by one learnt from light traffic.
import { describe, expect, it } from 'vitest';
import { LOADED_MEMORY_MS, TAIL_TARGET, createLatencyAdmission } from '../../src/receivers/latency-admission.js';
import { ApiError } from '../../src/core/errors.js';

function clocked(maxAckWaitMs: number, trustedBurstBytes?: number) {
  const clock = { t: 0 };
  const adm = createLatencyAdmission({ maxAckWaitMs, now: () => clock.t, ...(trustedBurstBytes ? { trustedBurstBytes } : {}) });
  // The requests here arrive whole with their headers: admitted, arrived, and answered by the function returned.
  const admit = (bytes: number) => {
    const w = adm.admit(bytes);
    w.arrived();
    return () => w.answered();
  };
  return { clock, adm, admit };
}

describe('latency admission', () => {
  it('takes the first burst after light traffic, and refuses once the oldest request has waited half the limit', () => {
    const { clock, adm, admit } = clocked(2000);
    // Light traffic: 1 KiB requests, each answered at the next flush 100 ms later (a rate of ~10 bytes/ms).
    for (let i = 0; i < 20; i++) {
      const done = admit(1024);
      clock.t += 100;
      done();
      clock.t += 400;
    }
    // A burst of 16 × 512 KiB: the estimate says minutes, but nothing has waited yet.
    const burst = Array.from({ length: 16 }, () => admit(512 * 1024));
    expect(burst).toHaveLength(16);
    // Nothing answered for 1.2 s: the queue stands, and the estimate is far past the limit.
    clock.t += 1200;
    let refusal: unknown = null;
    try {
      admit(512 * 1024);
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(ApiError);
    expect((refusal as ApiError).code).toBe('RATE_LIMITED');
    expect((refusal as ApiError).retryAfter).toBeGreaterThanOrEqual(1);
    expect(adm.refused()).toBe(1);
    // Answered: the queue is gone, and so is the refusal.
    for (const done of burst) done();
    expect(() => admit(512 * 1024)).not.toThrow();
    expect(adm.refused()).toBe(1);
  });

  it('keeps refusing by the estimate while the queue stands, though a commit has just answered the oldest', () => {
    const { clock, adm, admit } = clocked(2000, 2 ** 40); // the standing queue alone, whatever the burst's bytes
    // Under load: 64 KiB requests answered ~1 s after admission, a rate of ~64 bytes/ms.
    const inflight: { done: () => void; at: number }[] = [];
    for (let i = 0; i < 200; i++) {
      inflight.push({ done: admit(64 * 1024), at: clock.t });
      clock.t += 10;
      while (inflight.length && clock.t - inflight[0]!.at >= 1000) inflight.shift()!.done();
    }
    // A burst: the oldest has waited ~1 s, the estimate is past the limit: refused.
    const burstAt = clock.t;
    for (let i = 0; i < 500; i++) inflight.push({ done: admit(64 * 1024), at: clock.t });
    clock.t += 10;
    expect(() => admit(64 * 1024)).toThrow(ApiError);
    // A group commit answers everything from before the burst: the oldest has waited 500 ms, less than
    // half the limit, but a queue stood within LOADED_MEMORY_MS: the estimate still decides, and refuses.
    clock.t = burstAt + 500;
    while (inflight.length && inflight[0]!.at < burstAt) inflight.shift()!.done();
    expect(adm.estimatedWaitMs()).toBeGreaterThan(2000);
    expect(() => admit(64 * 1024)).toThrow(ApiError);
    // Drained: the estimate, learnt under load, admits what it expects to answer in time.
    while (inflight.length) inflight.shift()!.done();
    const young = admit(64 * 1024);
    clock.t += 100;
    expect(() => admit(64 * 1024)).not.toThrow();
    young();
  });

  it('does not trust a burst again as soon as a standing queue has drained, only once the load is past', () => {
    const { clock, adm, admit } = clocked(1000, 32 << 20);
    // A flood of 2.5 MiB requests offered every 100 ms to a server that answers one a second, in
    // order (a rate of ~2.5 KiB/ms): the queue stands and the estimate refuses most of them.
    const inflight: { done: () => void; answerAt: number }[] = [];
    for (let i = 0; i < 100; i++) {
      try {
        const done = admit(2.5 * 2 ** 20);
        inflight.push({ done, answerAt: Math.max(inflight.at(-1)?.answerAt ?? 0, clock.t) + 1000 });
      } catch {
        // refused
      }
      clock.t += 100;
      while (inflight.length && clock.t >= inflight[0]!.answerAt) inflight.shift()!.done();
    }
    expect(adm.refused()).toBeGreaterThan(50);
    // Drained: one request takes ~1 s at this rate, so of a burst within the trusted 32 MiB only
    // the first is admitted (with nothing in flight there is no wait to estimate).
    while (inflight.length) inflight.shift()!.done();
    const first = admit(2.5 * 2 ** 20);
    expect(() => admit(2.5 * 2 ** 20)).toThrow(ApiError);
    first();
    // Once no queue has stood for LOADED_MEMORY_MS, a burst is trusted again up to the trusted bytes.
    clock.t += LOADED_MEMORY_MS + 1;
    const burst = Array.from({ length: 12 }, () => admit(2.5 * 2 ** 20));
    expect(burst).toHaveLength(12);
    expect(() => admit(2.5 * 2 ** 20)).toThrow(ApiError);
  });

  it('trusts a burst only up to trustedBurstBytes: beyond it the estimate decides, and before any answer nothing more is admitted', () => {
    const { clock, adm, admit } = clocked(2000, 1 << 20);
    // A fresh server: four 256 KiB requests fit the trust, a fifth does not, with no rate known.
    const first = Array.from({ length: 4 }, () => admit(256 * 1024));
    expect(() => admit(256 * 1024)).toThrow(/none answered yet/);
    // Answered in 100 ms: a rate of ~10 KiB/ms, so 20 MiB more would wait ~2 s; 8 MiB is admitted
    // (the oldest has not waited at all), and past the limit the estimate refuses though nothing stands.
    clock.t += 100;
    for (const done of first) done();
    const more = Array.from({ length: 32 }, () => admit(256 * 1024));
    expect(more).toHaveLength(32);
    expect(adm.estimatedWaitMs()).toBeLessThan(2000);
    expect(() => { for (let i = 0; i < 64; i++) more.push(admit(256 * 1024)); }).toThrow(ApiError);
    expect(adm.estimatedWaitMs()).toBeGreaterThan(1000);
  });

  it('reports the waits its admitted requests had: from admission to answer, and to the body\'s arrival', () => {
    const { clock, adm } = clocked(1000);
    // Three requests admitted together: bodies in after 10, 20 and 30 ms, answered after 400, 1200, 1500 ms.
    const ws = [adm.admit(1024), adm.admit(1024), adm.admit(1024)];
    for (const [i, w] of ws.entries()) {
      clock.t = 10 * (i + 1);
      w.arrived();
    }
    clock.t = 400;
    ws[0]!.answered();
    clock.t = 1200;
    ws[1]!.answered();
    clock.t = 1500;
    ws[2]!.answered();
    ws[2]!.answered(); // once only
    // A sender that went away before its body was whole: no wait to report.
    adm.admit(1024).answered();
    expect(adm.observed()).toMatchObject({ requests: 3, over_limit: 2, p50_ms: 1200, p99_ms: 1500, arrival_p50_ms: 20, arrival_p99_ms: 30 });
  });

  it('narrows its limit by how far the waits went past it, only while requests are refused at the setting itself', () => {
    const { clock, adm, admit } = clocked(1000);
    // 60 small requests together (no queue has stood: all admitted), answered 2.5 s later: the
    // tail went to 2.5 times the limit they were admitted under.
    const first = Array.from({ length: 60 }, () => admit(1024));
    clock.t += 2500;
    for (const done of first) done();
    // Nothing is refused at the setting: the fleet, not admission, bounds this queue, and the limit stays.
    expect(adm.limitMs()).toBe(1000);
    // A queue stands (the oldest has waited 600 ms) and large requests would wait past the setting:
    // refused, and from now the limit is narrowed to keep the tail within TAIL_TARGET times the setting.
    const queue = Array.from({ length: 10 }, () => admit(1024));
    clock.t += 600;
    const narrowed = Math.round((1000 * TAIL_TARGET) / 2.5);
    expect(() => admit(64 * 1024)).toThrow(`limit ${narrowed} ms`);
    expect(adm.limitMs()).toBe(narrowed);
    // Small requests are admitted until the estimate reaches the narrowed limit, not the setting.
    let estimate = 0;
    let refusal: unknown = null;
    for (let i = 0; i < 1000 && !refusal; i++) {
      try {
        queue.push(admit(1024));
        estimate = adm.estimatedWaitMs();
      } catch (err) {
        refusal = err;
      }
    }
    expect(String(refusal)).toContain(`limit ${narrowed} ms`);
    expect(estimate).toBeGreaterThan(narrowed * 0.9);
    expect(estimate).toBeLessThan(1000);
    // Two seconds after the last refusal at the setting itself, the setting holds again.
    for (const done of queue) done();
    clock.t += 1500;
    expect(adm.limitMs()).toBe(narrowed);
    clock.t += 501;
    expect(adm.limitMs()).toBe(1000);
  });

  it('admits everything with the limit at 0', () => {
    const { clock, adm, admit } = clocked(0);
    admit(1024);
    clock.t += 60_000;
    expect(() => admit(1 << 30)).not.toThrow();
  });
});
