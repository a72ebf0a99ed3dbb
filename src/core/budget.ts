// The process's memory budget (SVC_MEMORY_BUDGET) and the limits derived from it when they are not
// set themselves. Without a budget DuckDB took 80% of the machine and the bytes in flight were a
// fixed 256 MiB, whatever else ran beside them; the default is a quarter of the machine's memory,
// at most 2 GiB, which keeps the previous in-flight limit on any machine of 8 GiB or more.
//
// The shares: DuckDB's memory limit a quarter (buffer cache, ingest loads, queries; it spills to
// disk beyond it); what DuckDB holds outside its limit a sixteenth — about 11 bytes of row-group
// metadata a row committed since the instance opened, bounded by reopening the store (registry.ts);
// the bytes in flight an eighth (a request's body is held while it is decoded and its rows are
// loaded, a few times its size at the peak); the rest (~9/16) for the event loop's heap, the decode
// workers and their WASM memories, allocator arenas and DuckDB's own fixed overhead. Under steady
// ingest DuckDB's buffer cache fills its limit and RSS follows it: the quarter was chosen on
// bench:overload, where three eighths left a server with the default budget well above issue 43's
// 1.1 GiB, and on `npm run soak`, where half went past the budget. The hosted variant opens a DuckDB
// instance per tenant store, at most SVC_TENANT_MAX_OPEN at once: each gets that share of DuckDB's
// parts, so the sum stays within them; there the stores share three eighths, as a quarter among the
// default 8 left a store too little for a log commit's blocks (test/tenancy/isolation.test.ts).
import { totalmem } from 'node:os';
import type { Config } from './config.js';

const MiB = 1024 * 1024;
export const DEFAULT_BUDGET_CAP = 2048 * MiB;
/**
 * DuckDB's memory outside its limit a row committed since the instance opened, bytes, rounded up:
 * measured as the RSS growth a row with DuckDB's own figure at its limit, on tens of millions of
 * spans in 8,192-row groups (the growth falls back when the store is reopened).
 */
export const DUCKDB_BYTES_PER_COMMITTED_ROW = 12;

export interface Budget {
  /** The budget, bytes. */
  bytes: number;
  /** Whether SVC_MEMORY_BUDGET set it, or the machine's memory did. */
  source: 'setting' | 'machine';
  /** DuckDB's memory_limit for each store, as DuckDB takes it. */
  duckdbMemoryLimit: string;
  /** How many stores may be open at once (and share DuckDB's parts). */
  stores: number;
  /** Rows a store's instance commits before it is reopened (0 = never). */
  storeReopenRows: number;
  maxInflightBytes: number;
}

export function memoryBudget(
  config: Pick<Config, 'memoryBudgetBytes' | 'duckdbMemoryLimit' | 'storeReopenRows' | 'maxInflightBytes' | 'auth' | 'tenantMaxOpen'>,
  machineBytes = totalmem(),
): Budget {
  const bytes = config.memoryBudgetBytes || Math.min(DEFAULT_BUDGET_CAP, Math.floor(machineBytes / 4));
  const stores = config.auth === 'keys' ? config.tenantMaxOpen : 1;
  return {
    bytes,
    source: config.memoryBudgetBytes ? 'setting' : 'machine',
    duckdbMemoryLimit: config.duckdbMemoryLimit || `${Math.floor(stores === 1 ? bytes / 4 : (bytes * 3) / 8 / stores)}B`,
    stores,
    storeReopenRows: config.storeReopenRows ?? Math.floor(bytes / 16 / stores / DUCKDB_BYTES_PER_COMMITTED_ROW),
    maxInflightBytes: config.maxInflightBytes || Math.max(1024, Math.floor(bytes / 8)),
  };
}
