// Everything one tenant's data needs, opened together: its store (one DuckDB file), the group-commit
// writer, read and query connections, the log miner's state, retention and the detection scheduler.
// Open mode has one of these (`default`) for the life of the process; the hosted variant opens one
// per tenant on demand (tenancy/registry.ts). Opened downstream first; closed in reverse, and a
// failure halfway closes what was opened.
import { stopStack } from '../core/stops.js';
import type { Config } from '../core/config.js';
import { memoryBudget } from '../core/budget.js';
import type { Pool } from '../compute/pool.js';
import { openStore, type Store } from '../store/db.js';
import { repairTemplateCounts } from '../store/recovery.js';
import { createWriter, type EncodedPart, type Writer } from '../store/writer.js';
import { openReadPool, readRows, readServiceSpans, type ReadPool } from '../store/readers.js';
import { openQueryPool, type QueryPool } from '../query/index.js';
import { startRetention } from '../store/retention.js';
import { startScheduler, type Scheduler } from '../detect/scheduler.js';
import { LOG_TEMPLATES } from '../store/schema.js';

export interface TenantRuntime {
  readonly tenant: string;
  readonly store: Store;
  readonly writer: Writer;
  readonly reads: ReadPool;
  readonly queries: QueryPool;
  readonly detection: Scheduler;
  close(): Promise<void>;
}

export interface RuntimeDeps {
  config: Config;
  threads: number;
  /** Decode and detection workers, shared by every tenant. */
  pool: Pool;
  /** The one logs thread; it holds a miner per open tenant. */
  logPool: Pool;
  log: (f: Record<string, unknown>) => void;
}

export async function openTenantRuntime(deps: RuntimeDeps, tenant: string): Promise<TenantRuntime> {
  const { config, pool, logPool } = deps;
  const log = tenant === 'default' ? deps.log : (f: Record<string, unknown>) => deps.log({ ...f, tenant });
  const stops = stopStack((err) => log({ level: 'error', msg: 'closing a tenant store step failed', error: err.message }));
  const closeAll = stops.stopAll;
  try {
    const store = await openStore(config.dataDir, tenant, { threads: deps.threads, memoryLimit: memoryBudget(config).duckdbMemoryLimit, loaders: config.duckdbLoaders });
    stops.push(() => store.close());
    const writer = createWriter(store, { flushIntervalMs: config.flushIntervalMs, services: await readServiceSpans(store.writer) });
    stops.push(() => writer.flush());
    // The query pool locks the database's configuration (external access off but for the spool):
    // every global setting must be applied before it opens. Each tenant's DuckDB instance is its own,
    // so the lock, the allowed directory (its own spool) and the catalog are per tenant.
    const queries = await openQueryPool(store, { size: 2, timeoutMs: config.queryTimeoutMs, rowCap: config.queryRowCap, spoolDir: store.spoolDir });
    stops.push(() => queries.close());
    const reads = await openReadPool(store, { size: 4 });
    stops.push(() => reads.close());
    // Template counts held back between batches are committed before the tenant's miner goes away.
    stops.push(async () => {
      const parts = (await logPool.run({ kind: 'logs-flush', tenant })) as EncodedPart[];
      if (parts.length) await writer.submit({ parts, services: {} });
    });
    // After a crash the template counts lag the stored logs: raised before the miner reads them.
    if (store.crashed) log({ level: 'info', msg: 'store recovered after a crash', templates_repaired: await repairTemplateCounts(store.writer) });
    // Template ids are stable across restarts: the miner starts from the stored templates.
    const templates = await reads.use((c) => readRows(c, `SELECT * EXCLUDE (timestamp) FROM ${LOG_TEMPLATES.name}`));
    await logPool.run({ kind: 'logs-init', tenant, rows: templates });
    const retention = startRetention(writer, store, config.retentionHours, log);
    stops.push(() => retention.stop());
    const detection = startScheduler({ store, writer, reads, pool, graceS: config.detectGraceS }, config.detectIntervalS, log);
    stops.push(() => detection.stop());
    return { tenant, store, writer, reads, queries, detection, close: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
