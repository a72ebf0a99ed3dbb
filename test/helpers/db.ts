import { DuckDBInstance } from '@duckdb/node-api';
import { join } from 'node:path';

/** Opens a stopped server's database file read-only and returns the rows of one query as JS objects. */
export async function queryStopped(dataDir: string, sql: string): Promise<Record<string, unknown>[]> {
  const inst = await DuckDBInstance.create(join(dataDir, 'lake.duckdb'), { access_mode: 'READ_ONLY' });
  const conn = await inst.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
}
