// The one read pool: a deadline per use interrupts the read and says so; uses wait first come first
// served; a closed pool refuses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { ApiError } from '../../src/core/errors.js';
import { DeadlineExceeded, openReadPool, readRows, type ReadPool } from '../../src/store/readers.js';

const SLOW = 'SELECT count(*) AS n FROM range(100000000000) AS t(i) WHERE i % 7 = 3';
let reads: ReadPool;
beforeAll(async () => {
  reads = await openReadPool(await DuckDBInstance.create(':memory:'), { size: 1 });
});
afterAll(() => reads.close());

describe('the read pool', () => {
  it('interrupts a use at its deadline and keeps the connection usable', async () => {
    const started = Date.now();
    await expect(reads.use((c) => readRows(c, SLOW), Date.now() + 150)).rejects.toBeInstanceOf(DeadlineExceeded);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await reads.use((c) => readRows(c, 'SELECT 42 AS x'), Date.now() + 5_000)).toEqual([{ x: 42 }]);
  });

  it('refuses a use whose deadline passed while it waited, without running it', async () => {
    let ran = false;
    const first = reads.use((c) => readRows(c, SLOW), Date.now() + 200).catch((e: unknown) => e);
    const second = reads.use(async () => (ran = true), Date.now() + 50).catch((e: unknown) => e);
    expect(await first).toBeInstanceOf(DeadlineExceeded);
    expect(await second).toBeInstanceOf(DeadlineExceeded);
    expect(ran).toBe(false);
  });

  it('hands connections out in arrival order', async () => {
    const order: number[] = [];
    await Promise.all(
      [1, 2, 3].map((i) =>
        reads.use(async (c) => {
          await readRows(c, 'SELECT 1');
          order.push(i);
        }),
      ),
    );
    expect(order).toEqual([1, 2, 3]);
  });

  it('refuses beyond its queue with OVERLOADED and with NOT_READY once closed', async () => {
    const pool = await openReadPool(await DuckDBInstance.create(':memory:'), { size: 1, maxQueue: 1 });
    const a = pool.use((c) => readRows(c, SLOW), Date.now() + 300).catch((e: unknown) => e);
    const b = pool.use((c) => readRows(c, 'SELECT 1 AS x'));
    expect(((await pool.use(async () => 0).catch((e: unknown) => e)) as ApiError).code).toBe('OVERLOADED');
    expect(await a).toBeInstanceOf(DeadlineExceeded);
    expect(await b).toEqual([{ x: 1 }]);
    pool.close();
    expect(((await pool.use(async () => 0).catch((e: unknown) => e)) as ApiError).code).toBe('NOT_READY');
  });
});
