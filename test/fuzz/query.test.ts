// Fuzzing POST /v1/query's statement guard and runner on a real DuckDB store (the query tests'
// fixture), with hostile SQL built from the query corpora. Properties: the guard answers every
// statement with a verdict (never throws), every refusal is a 4xx code with a message and a hint;
// the whole path (guard, then the statement on a locked-down connection under the time limit and
// row cap) answers rows or an ApiError whose status is 4xx; nothing stored changes and no file is
// written.
import fc from 'fast-check';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ERROR_STATUS } from '../../src/core/errors.js';
import { checkSelect } from '../../src/query/guard.js';
import { openQueryPool, type QueryPool } from '../../src/query/run.js';
import { openFixture, type Fixture } from '../query/fixture.js';
import { budget, HANG_MS, testTimeout } from './budget.js';
import { hostileSql } from './sql-gen.js';

let fx: Fixture;
let pool: QueryPool;
let before: string;

const snapshot = async (): Promise<string> => {
  const r = await fx.writer.runAndReadAll('SELECT (SELECT count(*) FROM svc_spans) || \'/\' || (SELECT count(*) FROM svc_logs) || \'/\' || (SELECT count(*) FROM duckdb_tables())');
  return String(r.getRows()[0]![0]);
};

beforeAll(async () => {
  fx = await openFixture();
  before = await snapshot();
  // A short time limit: a hostile statement that is allowed but slow costs the test one second.
  pool = await openQueryPool(fx.instance, { spoolDir: fx.spoolDir, timeoutMs: 1000, rowCap: 1000, size: 1 });
});
afterAll(async () => {
  await pool.close();
  fx.cleanup();
});

describe('/v1/query guard and runner', () => {
  it('the guard gives every statement a verdict; every refusal is a 4xx code with a message and a hint', async () => {
    await fc.assert(
      fc.asyncProperty(hostileSql, async (sql) => {
        const v = await pool.use((conn) => checkSelect(conn, sql));
        if (v.ok) return;
        expect(ERROR_STATUS[v.code]).toBeGreaterThanOrEqual(400);
        expect(ERROR_STATUS[v.code]).toBeLessThan(500);
        expect(v.message.length).toBeGreaterThan(0);
        expect(v.hint.length).toBeGreaterThan(0);
      }),
      { ...budget(200), timeout: HANG_MS },
    );
  }, testTimeout());

  it('guard then run: rows or a 4xx ApiError for every statement; nothing stored changes, no file is written', async () => {
    await fc.assert(
      fc.asyncProperty(hostileSql, async (sql) => {
        try {
          const answer = await pool.query(sql);
          expect(Array.isArray(answer.rows)).toBe(true);
        } catch (e) {
          expect(e, String(e)).toBeInstanceOf(ApiError);
          expect((e as ApiError).status, `${(e as ApiError).code}: ${(e as ApiError).message}`).toBeLessThan(500);
        }
      }),
      { ...budget(80, 0.3), timeout: HANG_MS },
    );
    expect(await snapshot()).toBe(before);
    expect(existsSync('/tmp/tds-fuzz-out.csv')).toBe(false);
  }, testTimeout(120_000));
});
