// A tenant-scoped store handle: one DuckDB database file and the connections over it. Open mode has
// one tenant ("default", SVC_DATA_DIR/lake.duckdb); the hosted variant opens one file per tenant
// (SVC_DATA_DIR/tenants/<id>/lake.duckdb), so isolation is structural. The file is attached as
// `lake` and every connection USEs it: `svc_spans`, `lake.svc_spans` and `main.svc_spans` all resolve.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { migrate } from './migrate.js';
import { sqlString } from './sql.js';

export interface Store {
  readonly tenant: string;
  readonly dir: string;
  readonly path: string;
  /** Ingest files wait here for the commit that loads them; emptied at open. */
  readonly spoolDir: string;
  /**
   * The writer connection: the small serialised writes (service bounds, dirty buckets, upserts),
   * retention and detection writes.
   */
  readonly writer: DuckDBConnection;
  /** Connections that append ingest batches, each in its own transaction, concurrently (see store/writer.ts). */
  readonly loaders: readonly DuckDBConnection[];
  /** A new connection whose default database is the store's (`lake`); the DuckDB instance's own default is an empty in-memory one. */
  connect(): Promise<DuckDBConnection>;
  close(): Promise<void>;
}

/** Whatever hands out connections to the store: a Store, or a DuckDBInstance opened on the file itself (tests, tools). */
export interface Connector {
  connect(): Promise<DuckDBConnection>;
}

export const STORE_CHECKPOINT_THRESHOLD = '256MB';

/**
 * Rows per row group of the store file (DuckDB's default is 122,880). A commit that brings at least
 * this many rows to a table is written compressed straight into the database file, and its WAL entry
 * only points at those blocks (DuckDB's optimistic write), instead of going through the WAL and being
 * compressed later by a checkpoint that stops every commit while it runs. Group commits under load
 * are 5,000-20,000 rows; measured in raw DuckDB on realistic spans, commits of 16,384 rows: 104,000
 * rows/s with the default and its checkpoint, 138,000 at 8,192 (156,000 at 16,384, 112,000 at 4,096:
 * every row group has a fixed cost a column), ~25% more disk.
 */
export const STORE_ROW_GROUP_SIZE = 8192;

/** The store file's catalog name: its tables are `lake.<table>`, and `main.<table>` and bare too. */
const CATALOG = 'lake';

export function tenantDir(dataDir: string, tenant: string): string {
  return tenant === 'default' ? resolve(dataDir) : resolve(dataDir, 'tenants', tenant);
}

export interface StoreOptions {
  /** DuckDB worker threads (global to the instance: ingest loads and queries alike). */
  threads?: number;
  /** DuckDB's memory_limit, e.g. '2GB'; unset or empty keeps DuckDB's default (80% of the machine's memory). */
  memoryLimit?: string;
  /** Loader connections (`Store.loaders`); 2 if unset. */
  loaders?: number;
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
  // The row group size is an ATTACH option only (not remembered by the file), hence an in-memory
  // default database with the file attached as `lake`, and every connection's USE.
  // max_vacuum_tasks=0: each optimistic write ends in a partly filled row group, and a checkpoint
  // would otherwise merge neighbours by rewriting them (measured: commits of 20,480 rows, 16,384-row
  // groups: a 4 s checkpoint every 500,000 rows, 64,000 rows/s, against 144,000 without). Row groups
  // whose rows are all deleted (retention) are still dropped.
  const instance = await DuckDBInstance.create(':memory:', {
    checkpoint_threshold: STORE_CHECKPOINT_THRESHOLD,
    max_vacuum_tasks: '0',
    temp_directory: `${path}.tmp`,
    ...(opts.threads ? { threads: String(opts.threads) } : {}),
    ...(opts.memoryLimit ? { memory_limit: opts.memoryLimit } : {}),
  });
  const connect = async () => {
    const conn = await instance.connect();
    await conn.run(`USE ${CATALOG}`);
    return conn;
  };
  const writer = await instance.connect();
  try {
    await writer.run(`ATTACH ${sqlString(path)} AS ${CATALOG} (ROW_GROUP_SIZE ${STORE_ROW_GROUP_SIZE})`);
    await writer.run(`USE ${CATALOG}`);
    await migrate(writer);
  } catch (err) {
    writer.closeSync();
    instance.closeSync();
    throw err;
  }
  const loaders: DuckDBConnection[] = [];
  for (let i = 0; i < (opts.loaders ?? 2); i++) loaders.push(await connect());
  let closed = false;
  return {
    tenant,
    dir,
    path,
    spoolDir,
    writer,
    loaders,
    connect,
    async close() {
      if (closed) return;
      closed = true;
      for (const c of loaders) c.closeSync();
      await writer.run('CHECKPOINT');
      writer.closeSync();
      instance.closeSync();
    },
  };
}

