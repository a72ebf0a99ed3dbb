// SQL text helpers and the one transaction wrapper, below the store's connections and migrations.
import type { DuckDBConnection } from '@duckdb/node-api';
import { BUCKET_US, isoFromUs } from '../core/time.js';

/** DuckDB's words for a database it will not use again until it is detached and attached (a checkpoint failed). */
const INVALIDATED = /has been invalidated/;
export const isInvalidated = (err: unknown) => INVALIDATED.test((err as Error)?.message ?? '');

/** DuckDB's answer to any statement but ROLLBACK on a connection whose transaction failed. */
const ABORTED = /Current transaction is aborted/;

/**
 * Rolls back what a failed statement left open on `conn`, if anything: ROLLBACK with no transaction
 * open only fails, harmlessly. For a connection nothing else uses at that moment.
 */
export async function rollbackLeftovers(conn: DuckDBConnection): Promise<void> {
  await conn.run('ROLLBACK').catch(() => {});
}

/**
 * Runs `fn` in one transaction on `conn`: committed if it resolves, rolled back if it throws. A
 * connection a failure left in an aborted transaction (DuckDB out of memory, say: every later commit
 * on the writer's connection would fail, and ingest would stop) is rolled
 * back before the transaction begins, so one failure does not fail every transaction after it.
 */
export async function inTransaction<T>(conn: DuckDBConnection, fn: () => Promise<T>): Promise<T> {
  try {
    await conn.run('BEGIN TRANSACTION');
  } catch (err) {
    if (!ABORTED.test((err as Error).message)) throw err;
    await conn.run('ROLLBACK');
    await conn.run('BEGIN TRANSACTION');
  }
  try {
    const out = await fn();
    await conn.run('COMMIT');
    return out;
  } catch (err) {
    await conn.run('ROLLBACK').catch(() => {});
    throw err;
  }
}

/** Quotes a string as a SQL literal (DuckDB strings have no backslash escapes). */
export function sqlString(s: string): string {
  return "'" + s.replace(/'/g, "''") + "'";
}

/** A TIMESTAMP literal for integer microseconds, e.g. TIMESTAMP '2024-01-01 00:00:00.000000'. */
export function sqlTimestamp(us: number): string {
  const iso = isoFromUs(us); // 2024-01-01T00:00:00.000000Z
  return `TIMESTAMP '${iso.slice(0, 10)} ${iso.slice(11, -1)}'`;
}

/** A timestamp column's 5-minute bucket, as the bucket's number since the epoch. */
export const bucketIndexSql = (col: string): string => `epoch_us(${col}) // ${BUCKET_US}`;
/**
 * A bucket number's start as a TIMESTAMP. Aggregates group on the number and make the timestamp once
 * a group: with the timestamp made for every row, closing 4 million spans' two buckets took 265-295
 * ms instead of 244-262 (two alternated runs, series and rollups).
 */
export const bucketStartSql = (index: string): string => `make_timestamp(${index} * ${BUCKET_US})`;
