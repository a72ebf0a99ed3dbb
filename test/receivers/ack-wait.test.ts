// The acknowledgement-wait estimate that admission refuses on (receivers/ack-wait.ts), driven by a
// simulated ingest path: a FIFO that answers `capacity` bytes per ms, fed by senders that send again
// as soon as they are answered (a flood that never backs off), their bodies arriving at once unless
// said otherwise. Time is simulated, not measured.
import { describe, expect, it } from 'vitest';
import { AckWaitEstimator, retryAfterSeconds } from '../../src/receivers/ack-wait.js';

interface Sim {
  est: AckWaitEstimator;
  now: number;
  queue: { bytes: number; left: number }[];
  /** Bytes per ms the path answers; 0 = stalled. */
  capacity: number;
}

function sim(): Sim {
  return { est: new AckWaitEstimator(), now: 0, queue: [], capacity: 100 };
}

function send(s: Sim, bytes: number): void {
  s.est.started(bytes, s.now);
  s.est.arrived(bytes, s.now);
  s.queue.push({ bytes, left: bytes });
}

/** Runs `ms` of simulated time in 1 ms steps; with `senders`, each answered request is sent again at once. */
function run(s: Sim, ms: number, senders?: { bytes: number }): void {
  for (let i = 0; i < ms; i++) {
    s.now++;
    let budget = s.capacity;
    while (budget > 0 && s.queue.length) {
      const head = s.queue[0]!;
      const take = Math.min(budget, head.left);
      head.left -= take;
      budget -= take;
      if (head.left > 0) break;
      s.queue.shift();
      s.est.finished(head.bytes, s.now, true);
      if (senders) send(s, senders.bytes);
    }
  }
}

/** What a request of `bytes` sent now would really wait: the bytes ahead of it and its own, at the current capacity. */
const trueWait = (s: Sim, bytes: number) => (s.queue.reduce((n, q) => n + q.left, 0) + bytes) / s.capacity;

describe('the acknowledgement-wait estimate', () => {
  it('admits with nothing in flight, and before the first answer however much is queued', () => {
    const s = sim();
    expect(s.est.waitMs(1_000_000, s.now)).toBe(0);
    for (let i = 0; i < 50; i++) send(s, 100_000);
    expect(s.est.rate(s.now)).toBeNull();
    expect(s.est.waitMs(100_000, s.now)).toBe(0);
  });

  it('tracks the real wait of a flood: the queued bytes over the rate they are answered at', () => {
    const s = sim();
    for (let i = 0; i < 40; i++) send(s, 20_000); // 800,000 bytes queued at 100 bytes/ms: 8 s
    run(s, 10_000, { bytes: 20_000 });
    const est = s.est.waitMs(20_000, s.now);
    expect(est / trueWait(s, 20_000)).toBeGreaterThan(0.9);
    expect(est / trueWait(s, 20_000)).toBeLessThan(1.1);
  });

  it('answers at once by a group (one commit acknowledges many) are counted together', () => {
    const s = sim();
    // Ten requests of 1,000 bytes answered together every 100 ms: 100 bytes/ms.
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 10; i++) {
        s.est.started(1000, s.now);
        s.est.arrived(1000, s.now);
      }
      s.now += 100;
      for (let i = 0; i < 10; i++) s.est.finished(1000, s.now, true);
    }
    expect(s.est.rate(s.now)! / 100).toBeGreaterThan(0.95);
    expect(s.est.rate(s.now)! / 100).toBeLessThan(1.05);
  });

  it('raises the estimate when answers slow down, and while they stop altogether', () => {
    const s = sim();
    for (let i = 0; i < 10; i++) send(s, 10_000);
    run(s, 5000, { bytes: 10_000 });
    const before = s.est.waitMs(10_000, s.now);
    s.capacity = 10; // commits ten times slower
    run(s, 10_000, { bytes: 10_000 });
    const slowed = s.est.waitMs(10_000, s.now);
    expect(slowed).toBeGreaterThan(5 * before);
    expect(slowed / trueWait(s, 10_000)).toBeGreaterThan(0.7);
    // A stall: nothing is answered; the estimate keeps growing with it, without an answer to tell.
    s.capacity = 0;
    const atStall = s.est.waitMs(10_000, s.now);
    run(s, 2000);
    const during = s.est.waitMs(10_000, s.now);
    run(s, 2000);
    expect(during).toBeGreaterThan(1.5 * atStall);
    expect(s.est.waitMs(10_000, s.now)).toBeGreaterThan(1.5 * during);
  });

  it('recovers when answers speed up again, and admits as soon as the queue is empty', () => {
    const s = sim();
    s.capacity = 10;
    for (let i = 0; i < 10; i++) send(s, 10_000);
    run(s, 8000, { bytes: 10_000 });
    const slow = s.est.waitMs(10_000, s.now);
    s.capacity = 100;
    run(s, 6000, { bytes: 10_000 });
    const fast = s.est.waitMs(10_000, s.now);
    expect(fast).toBeLessThan(slow / 5);
    expect(fast / trueWait(s, 10_000)).toBeLessThan(1.3);
    // The senders stop; once everything is answered a request waits for nothing.
    s.capacity = 1; // even if the last rate measured was poor
    run(s, 200_000);
    expect(s.queue.length).toBe(0);
    expect(s.est.waitMs(10_000, s.now)).toBe(0);
  });

  it('counts the bytes still arriving in the queue, but not their transfer in the rate', () => {
    // Ten senders of 100 KB whose bodies take 900 ms to arrive (slow senders), each then answered
    // 10 ms later: the path takes 10 KB/ms, though every request spends ~1 s in flight.
    const est = new AckWaitEstimator();
    let now = 0;
    const flight: { at: number }[] = Array.from({ length: 10 }, (_v, i) => ({ at: i * 100 }));
    for (const f of flight) est.started(100_000, f.at);
    for (; now < 20_000; now += 10) {
      for (const f of flight) {
        if (now === f.at + 900) est.arrived(100_000, now);
        if (now === f.at + 910) {
          est.finished(100_000, now, true);
          f.at = now;
          est.started(100_000, now); // sent again at once
        }
      }
    }
    expect(est.rate(now)! / 10_000).toBeGreaterThan(0.9);
    expect(est.rate(now)! / 10_000).toBeLessThan(1.1);
    // An eleventh would wait for the 1 MB ahead of it at the path's pace, not for their transfers.
    expect(est.waitMs(100_000, now)).toBeLessThan(150);
    // A request that went away before its body arrived leaves the queue without counting as answered.
    const before = est.inflight();
    est.started(50_000, now);
    est.finished(50_000, now + 5, false);
    expect(est.inflight()).toEqual(before);
  });

  it('does not count idle time: a quiet hour leaves the rate as it was', () => {
    const s = sim();
    for (let i = 0; i < 5; i++) send(s, 10_000);
    run(s, 3000, { bytes: 10_000 });
    run(s, 3000); // drain
    expect(s.queue.length).toBe(0);
    const rate = s.est.rate(s.now)!;
    s.now += 3_600_000;
    expect(s.est.rate(s.now)).toBe(rate);
    send(s, 10_000);
    expect(s.est.waitMs(10_000, s.now)).toBeCloseTo(20_000 / rate, 6);
  });
});

describe('Retry-After of a refusal', () => {
  it('is about when the estimate falls to the target, in whole seconds from 1 to 60', () => {
    expect(retryAfterSeconds(2100, 2000)).toBe(1);
    expect(retryAfterSeconds(4500, 2000)).toBe(3);
    expect(retryAfterSeconds(500_000, 2000)).toBe(60);
    expect(retryAfterSeconds(Infinity, 2000)).toBe(60);
  });
});
