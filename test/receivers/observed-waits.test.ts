// The waits admitted requests really had (receivers/observed-waits.ts), on a clock of its own: the
// last minute's answers only, quantiles by nearest rank, and the ones past the limit.
import { describe, expect, it } from 'vitest';
import { OBSERVED_WINDOW_MS, createObservedWaits } from '../../src/receivers/observed-waits.js';

describe('observed acknowledgement waits', () => {
  it('says nothing with no answer', () => {
    expect(createObservedWaits().summary(1000)).toEqual({ window_s: 60, requests: 0, over_limit: 0, p50_ms: null, p99_ms: null, arrival_p50_ms: null, arrival_p99_ms: null });
  });

  it('summarises the last minute: nearest-rank quantiles, and the waits past the limit', () => {
    const w = createObservedWaits();
    // Ten answers long ago (outside the window), waiting 10 s each: left out.
    for (let i = 0; i < 10; i++) w.record(1000 + i, 10_000, 5_000, 1000);
    // 200 answers in the window: waits 10, 20, ..., 2000 ms, arrivals a tenth of each; admitted under
    // a limit of 1000 ms, but for the last ten, admitted with none.
    const now = 1000 + OBSERVED_WINDOW_MS + 5000;
    for (let i = 1; i <= 200; i++) w.record(now - 200 + i, 10 * i, i, i > 190 ? 0 : 1000);
    const s = w.summary(now);
    expect(s.requests).toBe(200);
    expect(s.p50_ms).toBe(1000); // rank ceil(0.5 * 200) = 100: 10 * 100
    expect(s.p99_ms).toBe(1980); // rank 198
    expect(s.arrival_p50_ms).toBe(100);
    expect(s.arrival_p99_ms).toBe(198);
    expect(s.over_limit).toBe(90); // 1010 .. 1900 ms; 1910 .. 2000 had no limit
  });

  it('tells how far past their limits the recent waits went', () => {
    const w = createObservedWaits();
    // Under a limit of 1000 ms, 100 waits of 10 .. 1000 ms; under 500 ms, one of 1500 ms; one with no limit.
    for (let i = 1; i <= 100; i++) w.record(10_000 + i, 10 * i, 0, 1000);
    w.record(10_200, 1500, 0, 500);
    w.record(10_201, 60_000, 0, 0);
    expect(w.overLimit(10_300, 1000, 0.99, 50)).toBe(1); // rank 100 of 101: 1000 / 1000
    expect(w.overLimit(10_300, 1000, 1, 50)).toBe(3); // 1500 / 500
    // Only the window's answers count (the last 250 ms: 50 waits of 510 .. 1000 under 1000 ms, and
    // 1500 under 500), and too few say nothing.
    expect(w.overLimit(10_300, 250, 0, 1)).toBe(0.51);
    expect(w.overLimit(10_300, 250, 1, 1)).toBe(3);
    expect(w.overLimit(10_300, 250, 1, 52)).toBeNull();
  });

  it('keeps the latest answers when more come in a minute than it holds', () => {
    const w = createObservedWaits();
    for (let i = 0; i < 5000; i++) w.record(i, i < 1000 ? 9_999 : 1, 0, 1000);
    const s = w.summary(5000);
    expect(s.requests).toBe(4096);
    // The 1,000 long waits were the first: only 96 of them are still held.
    expect(s.over_limit).toBe(96);
  });
});
