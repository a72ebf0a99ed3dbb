// The pace at which refusals are answered (receivers/refusal-pace.ts): a burst at once, the rest in
// arrival order at the pace, at once again beyond the most that may wait.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRefusalPace, refusalsPerSecond, REFUSALS_PER_CORE_SECOND } from '../../src/receivers/refusal-pace.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A pace of 100 a second (a burst of 10) on the fake clock, and the order its answers came in. */
function paced(maxWaiting?: number) {
  const pace = createRefusalPace({ perSecond: 100, now: () => Date.now(), ...(maxWaiting === undefined ? {} : { maxWaiting }) });
  const answered: number[] = [];
  let next = 0;
  const hold = (n: number) => {
    for (let i = 0; i < n; i++) {
      const id = next++;
      pace.hold(() => answered.push(id));
    }
  };
  return { pace, answered, hold };
}

describe('refusal pace', () => {
  it('answers a burst at once and the rest in arrival order at the pace', async () => {
    const { pace, answered, hold } = paced();
    hold(30);
    expect(answered).toEqual(Array.from({ length: 10 }, (_v, i) => i));
    expect(pace.waiting()).toBe(20);
    expect(pace.paced()).toBe(20);
    await vi.advanceTimersByTimeAsync(100); // ten more turns
    expect(answered.length).toBeGreaterThanOrEqual(19);
    expect(answered.length).toBeLessThanOrEqual(21);
    await vi.advanceTimersByTimeAsync(150);
    expect(answered).toEqual(Array.from({ length: 30 }, (_v, i) => i));
    expect(pace.waiting()).toBe(0);
  });

  it('keeps a refusal that comes while others wait behind them', async () => {
    const { pace, answered } = paced();
    for (let i = 0; i < 12; i++) pace.hold(() => answered.push(i));
    expect(answered).toHaveLength(10);
    await vi.advanceTimersByTimeAsync(5); // half a turn: the tokens are not enough yet
    pace.hold(() => answered.push(12));
    expect(answered).toHaveLength(10);
    await vi.advanceTimersByTimeAsync(100);
    expect(answered).toEqual(Array.from({ length: 13 }, (_v, i) => i));
  });

  it('goes on with the others when an answer fails', async () => {
    const { pace, answered, hold } = paced();
    hold(10);
    pace.hold(() => {
      throw new Error('the sender went away');
    });
    hold(2);
    await vi.advanceTimersByTimeAsync(100);
    expect(answered).toHaveLength(12);
    expect(pace.waiting()).toBe(0);
  });

  it('answers at once beyond the most that may wait', () => {
    const { pace, answered, hold } = paced(5);
    hold(20); // 10 within the burst, 5 wait, 5 beyond them
    expect(answered).toHaveLength(15);
    expect(pace.waiting()).toBe(5);
    expect(pace.paced()).toBe(5);
  });

  it('gives the burst back after a quiet spell', async () => {
    const { answered, hold } = paced();
    hold(10);
    expect(answered).toHaveLength(10);
    hold(1);
    expect(answered).toHaveLength(10);
    await vi.advanceTimersByTimeAsync(1000);
    hold(10);
    expect(answered).toHaveLength(21);
  });

  it('scales the pace with the cores, at least one', () => {
    expect(refusalsPerSecond(4)).toBe(4 * REFUSALS_PER_CORE_SECOND);
    expect(refusalsPerSecond(0)).toBe(REFUSALS_PER_CORE_SECOND);
  });
});
