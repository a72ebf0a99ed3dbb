// A tenant-scoped store handle: one DuckDB database file and the connections over it. Open mode has
// one tenant ("default", SVC_DATA_DIR/lake.duckdb); the hosted variant opens one file per tenant
// (SVC_DATA_DIR/tenants/<id>/lake.duckdb), so isolation is structural. The file is attached as
// `lake` and every connection USEs it: `svc_spans`, `lake.svc_spans` and `main.svc_spans` all resolve.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { migrate } from './migrate.js';
import { closeMarker, openMarker } from './recovery.js';
import { sqlString } from './sql.js';

export interface Store {
  readonly tenant: string;
  readonly dir: string;
  readonly path: string;
  /** Whether the previous process left the file without closing it (a crash): repairs are due (store/recovery.ts). */
  readonly crashed: boolean;
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

/** DuckDB's own checkpoint threshold: a fallback; the ingest writer checkpoints at a row group's worth of WAL (store/commit-policy.ts). */
export const STORE_CHECKPOINT_THRESHOLD = '256MB';

/**
 * A free of this much at once makes DuckDB's jemalloc give every arena's freed pages back to the
 * system at once (DuckDB's default: 512 MB). Chosen on bench:overload (one value tried): at the
 * flood's peak the large anonymous mappings, DuckDB's, held 508-557 MiB at the default (four gRPC
 * runs) and 355-447 MiB at 32 MB (three runs), at the same unloaded ingest rate (bench/README.md).
 */
export const STORE_BULK_FLUSH_THRESHOLD = '32MB';

/**
 * Rows per row group (DuckDB's default is 122,880): a commit of at least this many rows to a table
 * is written straight into the file instead of through the WAL, whose checkpoints stop every commit.
 */
export const STORE_ROW_GROUP_SIZE = 8192;

/**
 * The file format the store writes (DuckDB's default keeps files readable by v0.10.2). Older formats
 * make a checkpoint after a retention DELETE load the metadata of every row group behind the deleted
 * ones and keep it until the instance closes (seen in `npm run soak`). A file written before takes
 * this format when opened; DuckDB before 1.5 cannot read it after.
 */
export const STORE_STORAGE_VERSION = 'v1.5.0';

/** ATTACH's options for a store file: its format, and its row group size (DuckDB's default if null). */
export function storeAttachOptions(rowGroupSize: number | null = STORE_ROW_GROUP_SIZE): string {
  return `(STORAGE_VERSION '${STORE_STORAGE_VERSION}'${rowGroupSize ? `, ROW_GROUP_SIZE ${rowGroupSize}` : ''})`;
}

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
  // checkpoint_threshold: at DuckDB's 16 MB every group commit checkpointed, and ingest slowed to a crawl.
  // Threads: a group commit costs DuckDB twice the CPU on 2 threads, so the decode cores stay theirs.
  // The row group size is an ATTACH option only, hence an in-memory database with the file attached.
  // max_vacuum_tasks=0: merging the partly filled row groups of direct writes rewrote neighbours.
  // allocator_background_threads (global to the process): DuckDB's jemalloc otherwise returns freed
  // pages to the system only when later allocations get round to it (seen in `npm run soak`); they
  // return them lazily, hence also the bulk flush.
  const instance = await DuckDBInstance.create(':memory:', {
    checkpoint_threshold: STORE_CHECKPOINT_THRESHOLD,
    max_vacuum_tasks: '0',
    allocator_background_threads: 'true',
    allocator_bulk_deallocation_flush_threshold: STORE_BULK_FLUSH_THRESHOLD,
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
  let crashed: boolean;
  try {
    await writer.run(`ATTACH ${sqlString(path)} AS ${CATALOG} ${storeAttachOptions()}`);
    await writer.run(`USE ${CATALOG}`);
    await migrate(writer);
    crashed = await openMarker(writer);
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
    crashed,
    spoolDir,
    writer,
    loaders,
    connect,
    async close() {
      if (closed) return;
      closed = true;
      for (const c of loaders) c.closeSync();
      try {
        await closeMarker(writer);
        await writer.run('CHECKPOINT'); // may fail on a full disk: the WAL still holds every commit
      } finally {
        writer.closeSync();
        instance.closeSync();
      }
    },
  };
}


/**
 * DuckDB's memory limit as it applies (e.g. `1.0 GiB`), the memory its buffer manager holds now, and
 * what holds it by DuckDB's own tags (BASE_TABLE is the evictable cache of table blocks; HASH_TABLE,
 * ORDER_BY and the like are queries' working memory), with what it has spilled to its temp directory
 * — bytes (status). A store near its limit shows here which part would not give way.
 */
export async function duckdbMemory(conn: DuckDBConnection): Promise<{ memory_limit: string; memory_used_bytes: number; temporary_storage_bytes: number; by_tag: Record<string, number> }> {
  const reader = await conn.runAndReadAll(`SELECT current_setting('memory_limit') AS lim, tag, memory_usage_bytes AS used, temporary_storage_bytes AS spilled FROM duckdb_memory()`);
  const by_tag: Record<string, number> = {};
  let limit = '';
  let used = 0;
  let spilled = 0;
  for (const [lim, tag, u, t] of reader.getRows()) {
    limit = String(lim);
    used += Number(u);
    spilled += Number(t);
    if (Number(u) > 0) by_tag[String(tag)] = Number(u);
  }
  return { memory_limit: limit, memory_used_bytes: used, temporary_storage_bytes: spilled, by_tag };
}
