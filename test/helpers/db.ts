import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { join } from 'node:path';

/** Opens a stopped server's database file read-only and returns the rows of one query as JS objects. */
export async function queryStopped(dataDir: string, sql: string): Promise<Record<string, unknown>[]> {
  return (await queriesStopped(dataDir, [sql]))[0]!;
}

/**
 * The rows of each query, from one read-only opening of a stopped (or killed: DuckDB replays the WAL
 * in memory, the files are not changed) server's database file.
 */
export async function queriesStopped(dataDir: string, sqls: readonly string[]): Promise<Record<string, unknown>[][]> {
  const inst = await DuckDBInstance.create(join(dataDir, 'lake.duckdb'), { access_mode: 'READ_ONLY' });
  const conn = await inst.connect();
  try {
    const out: Record<string, unknown>[][] = [];
    for (const sql of sqls) out.push((await conn.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[]);
    return out;
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
}

/** `conn` with each statement passed to `before` ahead of running (to hold or watch it), the rest of the connection as it is. */
export function beforeEachRun(conn: DuckDBConnection, before: (sql: string) => Promise<void>): DuckDBConnection {
  const run = conn.run.bind(conn);
  return Object.assign(Object.create(conn) as DuckDBConnection, {
    run: async (sql: string) => {
      await before(sql);
      return run(sql);
    },
  });
}
