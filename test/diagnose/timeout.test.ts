// A diagnosis has a time limit: a query still running at the deadline is interrupted, and the
// services of the call get an entry in `errors` saying so, not a hung request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { openReadPool, type ReadPool } from '../../src/store/readers.js';
import { DiagnoseTimeout, readSql } from '../../src/diagnose/reads/index.js';
import { diagnose } from '../../src/diagnose/index.js';

let reads: ReadPool;
beforeAll(async () => {
  reads = await openReadPool(await DuckDBInstance.create(':memory:'), { size: 2 });
});
afterAll(() => reads.close());

describe('the diagnosis time limit', () => {
  it('interrupts a query still running at the deadline', async () => {
    const started = Date.now();
    await expect(readSql({ reads, deadline: Date.now() + 150 }, 'SELECT count(*) FROM range(100000000000) AS t(i) WHERE i % 7 = 3')).rejects.toBeInstanceOf(DiagnoseTimeout);
    expect(Date.now() - started).toBeLessThan(5_000);
    // The connection is usable afterwards.
    expect(await readSql({ reads, deadline: Date.now() + 5_000 }, 'SELECT 42 AS x')).toEqual([{ x: 42 }]);
  });

  it('answers every service of the call in errors when the limit is spent', async () => {
    const r = await diagnose({ reads, services: () => ({ a: [1, 2] }), timeoutMs: 0, scanSpans: 2_000_000 }, { services: ['a', 'b'], from: 1_790_000_000_000_000, to: 1_790_000_900_000_000 });
    expect(r.results).toEqual({});
    expect(Object.keys(r.errors).sort()).toEqual(['a', 'b']);
    expect(r.errors['a']).toMatch(/longer than 0 ms.*SVC_DIAGNOSE_TIMEOUT_MS/);
  });

  it('names the statement that failed for another reason', async () => {
    // A store without the service's tables: the first reads fail, and the answer says which one.
    const r = await diagnose({ reads, services: () => ({ a: [1, 2] }), timeoutMs: 10_000, scanSpans: 2_000_000 }, { services: ['a'], from: 1_790_000_000_000_000, to: 1_790_000_900_000_000 });
    expect(r.errors['a']).toMatch(/^diagnosis failed: (dirtyBuckets|windowSpans): Catalog Error/);
  });
});
