// SQL text helpers and the one transaction wrapper, below the store's connections and migrations.
import type { DuckDBConnection } from '@duckdb/node-api';
import { isoFromUs } from '../core/time.js';

/** Runs `fn` in one transaction on `conn`: committed if it resolves, rolled back if it throws. */
export async function inTransaction<T>(conn: DuckDBConnection, fn: () => Promise<T>): Promise<T> {
  await conn.run('BEGIN TRANSACTION');
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
