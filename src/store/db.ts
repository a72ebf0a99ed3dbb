// A tenant-scoped store handle: one DuckDB database file and the connections over it. Open mode has
// one tenant ("default", SVC_DATA_DIR/lake.duckdb); the hosted variant opens one file per tenant
// (SVC_DATA_DIR/tenants/<id>/lake.duckdb), so isolation is structural. The file is named lake.duckdb
// so its catalog is `lake`: `svc_spans`, `lake.svc_spans` and `main.svc_spans` all resolve.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { migrate } from './migrate.js';
import { isoFromUs } from '../api/time.js';

export interface Store {
  readonly tenant: string;
  readonly dir: string;
  readonly path: string;
  /** Ingest files wait here for the commit that loads them; emptied at open. */
  readonly spoolDir: string;
  readonly instance: DuckDBInstance;
  /** The single writer connection: all appends, retention and detection writes go through it. */
  readonly writer: DuckDBConnection;
  close(): Promise<void>;
}

export const STORE_CHECKPOINT_THRESHOLD = '256MB';

export function tenantDir(dataDir: string, tenant: string): string {
  return tenant === 'default' ? resolve(dataDir) : resolve(dataDir, 'tenants', tenant);
}

export interface StoreOptions {
  /** DuckDB worker threads (global to the instance: ingest loads and queries alike). */
  threads?: number;
  /** DuckDB's memory_limit, e.g. '2GB'; unset or empty keeps DuckDB's default (80% of the machine's memory). */
  memoryLimit?: string;
}

export async function openStore(dataDir: string, tenant = 'default', opts: StoreOptions = {}): Promise<Store> {
  const dir = tenantDir(dataDir, tenant);
  const spoolDir = join(dir, 'spool');
  mkdirSync(spoolDir, { recursive: true });
  // Files left by a crash belong to requests that were never acknowledged.
  for (const f of readdirSync(spoolDir)) rmSync(join(spoolDir, f), { force: true });
  const path = join(dir, 'lake.duckdb');
  // DuckDB checkpoints when the WAL passes checkpoint_threshold (16 MB by default); ingest commits
  // are often larger, so every commit checkpointed: 33k rows/s. At 256 MB: 83k rows/s (measured
  // here on realistic spans), and a crash replays at most that much WAL.
  // Threads: a group commit of a few thousand rows costs DuckDB about twice the CPU with 2 threads
  // as with 1 (per-thread sink states merged at the end; measured 13.5 vs 7 µs a span), so on a
  // small machine the decode workers' cores are not given to DuckDB as well. Queries still overlap:
  // each connection's query runs on its own calling thread.
  const instance = await DuckDBInstance.create(path, {
    checkpoint_threshold: STORE_CHECKPOINT_THRESHOLD,
    ...(opts.threads ? { threads: String(opts.threads) } : {}),
    ...(opts.memoryLimit ? { memory_limit: opts.memoryLimit } : {}),
  });
  const writer = await instance.connect();
  try {
    await migrate(writer);
  } catch (err) {
    writer.closeSync();
    instance.closeSync();
    throw err;
  }
  let closed = false;
  return {
    tenant,
    dir,
    path,
    spoolDir,
    instance,
    writer,
    async close() {
      if (closed) return;
      closed = true;
      await writer.run('CHECKPOINT');
      writer.closeSync();
      instance.closeSync();
    },
  };
}

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
