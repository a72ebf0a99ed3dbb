// The diagnosis limiter on its own: calls start first come first served and never more than the
// limit at once; a full queue or a wait past its bound is a busy answer and the call never runs; a
// failing call frees its slot; identical keys share one run, its value and its failure.
import { describe, expect, it } from 'vitest';
import { busyMessage, createAdmission, retryAfterSeconds, type Admitted } from '../../src/diagnose/admission.js';
import { busyLogger, busyResponse, diagnoseKey } from '../../src/api/routes/diagnose.js';

/** A call whose end the test decides. */
function held<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const settle = () => new Promise((r) => setImmediate(r));
const LONG = 3_600_000; // a wait bound no test reaches

describe('diagnosis admission', () => {
  it('starts calls in arrival order and never runs more than the limit at once', async () => {
    const a = createAdmission<number>({ limit: 2, maxWaiting: 10, maxWaitMs: LONG });
    const started: number[] = [];
    const runningAtStart: number[] = [];
    const calls = Array.from({ length: 8 }, () => held<number>());
    const answers = calls.map((c, i) =>
      a.run(`k${i}`, () => {
        started.push(i);
        runningAtStart.push(a.status().running);
        return c.promise;
      }),
    );
    expect(started).toEqual([0, 1]);
    expect(a.status()).toMatchObject({ running: 2, waiting: 6 });
    // Finish them out of order: whoever finishes, the next in line starts.
    for (const i of [1, 0, 3, 2, 5, 4, 7, 6]) {
      calls[i]!.resolve(i * 10);
      await settle();
    }
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // status().running counts the call itself once it started (execute increments before fn).
    expect(Math.max(...runningAtStart)).toBeLessThanOrEqual(2);
    const values = (await Promise.all(answers)).map((r) => (r.busy === null ? r.value : null));
    expect(values).toEqual([0, 10, 20, 30, 40, 50, 60, 70]);
    expect(a.status()).toEqual({ limit: 2, max_waiting: 10, running: 0, waiting: 0, busy: 0, coalesced: 0 });
  });

  it('answers busy at once a call that would wait too long to finish within its time limit', async () => {
    let clock = 0;
    const a = createAdmission<string>({ limit: 1, maxWaiting: 10, maxWaitMs: LONG, timeLimitMs: 1000, now: () => clock });
    // One run of 400 ms makes the recent median.
    const first = held<string>();
    const r1 = a.run('a', () => first.promise);
    clock += 400;
    first.resolve('a');
    expect((await r1).busy).toBeNull();
    const b = held<string>();
    const c = held<string>();
    const rb = a.run('b', () => b.promise); // runs at once
    const rc = a.run('c', () => c.promise); // waits ~400 ms, runs ~400: within 1,000
    let dRan = false;
    const rd = await a.run('d', async () => {
      dRan = true;
      return 'd';
    }); // would wait ~800 ms for b and c, then run ~400: past 1,000
    expect(rd.busy).toMatchObject({ running: 1, waiting: 1 });
    expect(dRan).toBe(false);
    b.resolve('b');
    await settle();
    c.resolve('c');
    expect([(await rb).busy, (await rc).busy]).toEqual([null, null]);
  });

  it('answers busy at once when the queue is full, and the call never runs', async () => {
    const a = createAdmission<string>({ limit: 1, maxWaiting: 1, maxWaitMs: LONG });
    const first = held<string>();
    const second = held<string>();
    let thirdRan = false;
    const r1 = a.run('a', () => first.promise);
    const r2 = a.run('b', () => second.promise);
    const r3 = await a.run('c', async () => {
      thirdRan = true;
      return 'c';
    });
    expect(r3.busy).toMatchObject({ running: 1, waiting: 1 });
    expect(r3.busy!.waitedMs).toBeUndefined();
    expect(r3.busy!.retryAfterS).toBeGreaterThanOrEqual(1);
    expect(Number.isInteger(r3.busy!.retryAfterS)).toBe(true);
    expect(busyMessage(r3.busy!)).toBe(`the server is busy: 1 diagnoses running, 1 waiting; retry in ${r3.busy!.retryAfterS} s`);
    first.resolve('a');
    second.resolve('b');
    expect(await r1).toEqual({ busy: null, value: 'a' });
    expect(await r2).toEqual({ busy: null, value: 'b' });
    expect(thirdRan).toBe(false);
    expect(a.status()).toMatchObject({ busy: 1, running: 0, waiting: 0 });
  });

  it('answers busy a waiter not started within its wait bound, and never runs it', async () => {
    const a = createAdmission<string>({ limit: 1, maxWaiting: 4, maxWaitMs: 20 });
    const first = held<string>();
    let secondRan = false;
    const r1 = a.run('a', () => first.promise);
    const r2 = await a.run('b', async () => {
      secondRan = true;
      return 'b';
    });
    expect(r2.busy).toMatchObject({ running: 1, waiting: 0, waitedMs: 20 });
    expect(busyMessage(r2.busy!)).toMatch(/^the server is busy: not started after waiting 20 ms \(1 diagnoses running, 0 waiting\); retry in \d+ s$/);
    expect(a.status()).toMatchObject({ running: 1, waiting: 0, busy: 1 });
    first.resolve('a');
    expect((await r1).busy).toBeNull();
    await settle();
    expect(secondRan).toBe(false);
  });

  it('frees the slot of a failing call: its caller gets the failure, the next call runs', async () => {
    const a = createAdmission<string>({ limit: 1, maxWaiting: 4, maxWaitMs: LONG });
    const first = held<string>();
    const r1 = a.run('a', () => first.promise);
    const r2 = a.run('b', async () => 'b');
    first.reject(new Error('the store went away'));
    await expect(r1).rejects.toThrow('the store went away');
    expect(await r2).toEqual({ busy: null, value: 'b' });
    expect(a.status()).toMatchObject({ running: 0, waiting: 0 });
  });

  it('shares one run of identical keys: its value and its failure; a later identical call runs again', async () => {
    const a = createAdmission<{ n: number }>({ limit: 1, maxWaiting: 4, maxWaitMs: LONG });
    let runs = 0;
    const call = held<{ n: number }>();
    const fn = () => {
      runs++;
      return call.promise;
    };
    const [x, y] = [a.run('same', fn), a.run('same', fn)];
    call.resolve({ n: 7 });
    const [rx, ry] = (await Promise.all([x, y])) as [Admitted<{ n: number }>, Admitted<{ n: number }>];
    expect(runs).toBe(1);
    expect(rx.busy === null && ry.busy === null && rx.value === ry.value).toBe(true);
    expect(a.status().coalesced).toBe(1);

    const failing = held<{ n: number }>();
    const failed = () => {
      runs++;
      return failing.promise;
    };
    const [f1, f2] = [a.run('broken', failed), a.run('broken', failed)];
    failing.reject(new Error('boom'));
    await expect(f1).rejects.toThrow('boom');
    await expect(f2).rejects.toThrow('boom');
    expect(runs).toBe(2);
    expect(a.status().coalesced).toBe(2);

    expect(await a.run('same', async () => ({ n: 8 }))).toEqual({ busy: null, value: { n: 8 } });
    expect(a.status()).toMatchObject({ coalesced: 2, running: 0 });
  });

  it('coalesces a call identical to one that is waiting, and shares its busy answer', async () => {
    const a = createAdmission<string>({ limit: 1, maxWaiting: 1, maxWaitMs: 20 });
    const first = held<string>();
    const r1 = a.run('a', () => first.promise);
    const [w1, w2] = await Promise.all([a.run('b', async () => 'b'), a.run('b', async () => 'b')]);
    expect(w1).toBe(w2);
    expect(w1.busy).toMatchObject({ waitedMs: 20 });
    expect(a.status()).toMatchObject({ busy: 1, coalesced: 1 });
    first.resolve('a');
    await r1;
  });
});

describe('retry estimate and busy answers', () => {
  it('estimates Retry-After from the recent durations and the calls ahead, at least 1 s', () => {
    expect(retryAfterSeconds([], 0, 0, 2)).toBe(1);
    expect(retryAfterSeconds([], 2, 8, 2)).toBe(5); // no history: a second each
    expect(retryAfterSeconds([4000, 6000, 100_000], 2, 8, 2)).toBe(30); // median 6 s, 10 calls over 2 slots
    expect(retryAfterSeconds([10], 1, 0, 1)).toBe(1);
  });

  it('puts every requested service in errors, and keys identical calls alike', () => {
    const body = busyResponse(['a', '__proto__'], { running: 2, waiting: 8, retryAfterS: 5 });
    expect(body.results).toEqual({});
    expect(Object.keys(body.errors)).toEqual(['a', '__proto__']);
    expect(body.errors['a']).toBe('the server is busy: 2 diagnoses running, 8 waiting; retry in 5 s');
    expect(diagnoseKey({ services: ['a', 'b'], from: 1, to: 2 })).toBe(diagnoseKey({ services: ['a', 'b'], from: 1, to: 2 }));
    expect(diagnoseKey({ services: ['a', 'b'], from: 1, to: 2 })).not.toBe(diagnoseKey({ services: ['b', 'a'], from: 1, to: 2 }));
    expect(diagnoseKey({ services: ['a'], from: 1, to: 2 })).not.toBe(diagnoseKey({ services: ['a'], from: 1, to: 3 }));
  });

  it('logs one line for a flood of busy answers, counting them', () => {
    const lines: Record<string, unknown>[] = [];
    const logBusy = busyLogger((f) => lines.push(f), LONG);
    for (let i = 0; i < 5; i++) logBusy('default', { running: 2, waiting: 8, retryAfterS: 5 });
    expect(lines).toEqual([{ level: 'warn', msg: 'diagnosis answered busy', tenant: 'default', running: 2, waiting: 8, retry_after_s: 5, busy_answers: 1 }]);
  });
});
