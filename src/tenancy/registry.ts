// The open tenant stores of this instance: opened on the first request that needs one, kept while
// requests use it, closed after SVC_TENANT_IDLE_S without one. A request arriving while its tenant
// is closing waits for the close and opens it again, so a store is never used after it closed and
// never opened twice. Open mode pins its one store (`default`) for the life of the process. At most
// `maxOpen` stores are open at once (each has its share of the memory budget): opening one more first
// closes the least recently used idle one, and when every one is in use the request is answered 503.
// A store DuckDB has invalidated is closed at the first request that fails on it, and opened again
// by the next. A store whose DuckDB instance has committed `reopenRows` rows is closed and opened
// again too, at a moment no request uses it: DuckDB's in-process state grows with the rows an
// instance appends, outside its memory limit (core/budget.ts sizes `reopenRows` by it); in a long soak
// diagnoses also run out of memory on an instance that has appended for long, and not on the same file
// opened afresh.
import { statSync } from 'node:fs';
import { ApiError } from '../core/errors.js';
import { join } from 'node:path';
import { tenantDir } from '../store/db.js';
import { isInvalidated } from '../store/sql.js';
import type { TenantRuntime } from './runtime.js';

export interface TenantRegistry {
  /** Runs `fn` with the tenant's runtime, opening it if needed; it stays open at least until `fn` settles. */
  use<T>(tenant: string, fn: (rt: TenantRuntime) => Promise<T> | T): Promise<T>;
  /** Bytes of the tenant's database files (cached for a few seconds; 0 before its first write). */
  storedBytes(tenant: string): number;
  /** Marks an ingest for status. */
  ingested(tenant: string): void;
  status(): { open: number; idle_close_s: number; stores: { tenant: string; refs: number; closing: boolean }[] };
  /** Per tenant known to this instance: stored bytes and last ingest here. */
  tenantStatus(tenant: string): { stored_bytes: number; last_ingest: string | null; open: boolean };
  /** Closes a tenant's store once the requests using it are done (its lease went elsewhere). */
  evict(tenant: string): Promise<void>;
  /** The tenants whose store is open (or opening) here. */
  openTenants(): string[];
  closeAll(): Promise<void>;
}

interface Entry {
  runtime: Promise<TenantRuntime>;
  refs: number;
  lastUsed: number;
  closing: Promise<void> | null;
  /** When the store first had `reopenRows` rows and was still in use (ms). */
  reopenDueAt?: number;
}

/** A store due to be reopened waits this long for a moment nobody uses it; then arrivals wait while the requests in flight finish. */
const REOPEN_IDLE_WAIT_MS = 30_000;

const SIZE_TTL_MS = 5000;


/** Sum of the sizes of the files a tenant's data lives in (missing files count 0). */
export function databaseBytes(dir: string): number {
  let total = 0;
  for (const f of ['lake.duckdb', 'lake.duckdb.wal']) {
    try {
      total += statSync(join(dir, f)).size;
    } catch {
      /* not created yet */
    }
  }
  return total;
}

export function createRegistry(opts: {
  dataDir: string;
  open: (tenant: string) => Promise<TenantRuntime>;
  idleS: number;
  /** Stores open at once (SVC_TENANT_MAX_OPEN); unbounded when absent. */
  maxOpen?: number;
  /** Tenants never closed for idleness (open mode's `default`). */
  pinned?: readonly string[];
  /** Rows a store's DuckDB instance commits before the store is closed and opened again (SVC_STORE_REOPEN_ROWS); 0 or absent: never. */
  reopenRows?: number;
  /** How long a store due to be reopened waits for a moment nobody uses it (default REOPEN_IDLE_WAIT_MS). */
  reopenIdleWaitMs?: number;
  log: (f: Record<string, unknown>) => void;
}): TenantRegistry {
  const entries = new Map<string, Entry>();
  const sizes = new Map<string, { bytes: number; at: number }>();
  const lastIngest = new Map<string, number>();
  const pinned = new Set(opts.pinned ?? []);
  const maxOpen = opts.maxOpen ?? Infinity;
  let stopped = false;

  /** Closes the store; `drain`: once the requests using it are done (arrivals wait for the close meanwhile). */
  const close = (tenant: string, e: Entry, drain = false): Promise<void> => {
    const drained = async () => {
      while (drain && e.refs > 0 && !stopped) await new Promise((r) => setTimeout(r, 10));
    };
    e.closing ??= drained()
      .then(() => e.runtime)
      .then((rt) => rt.close())
      .catch((err) => opts.log({ level: 'error', msg: 'tenant store close failed', tenant, error: (err as Error).message }))
      .finally(() => {
        if (entries.get(tenant) === e) entries.delete(tenant);
      });
    return e.closing;
  };

  const sweep = () => {
    const now = Date.now();
    for (const [tenant, e] of entries) {
      if (!pinned.has(tenant) && e.refs === 0 && !e.closing && now - e.lastUsed > opts.idleS * 1000) {
        opts.log({ level: 'info', msg: 'tenant store closed (idle)', tenant });
        void close(tenant, e);
      }
    }
  };
  const timer = setInterval(sweep, Math.min(30_000, Math.max(200, (opts.idleS * 1000) / 4)));
  timer.unref();

  const invalidated = (tenant: string, e: Entry, error: string): void => {
    if (e.closing) return;
    opts.log({ level: 'error', msg: 'tenant store invalidated by DuckDB: reopening it', tenant, error });
    void close(tenant, e);
  };

  /** Makes room for one more store: closes the least recently used idle one, or refuses when none is idle. */
  const makeRoom = async (): Promise<void> => {
    let lru: [string, Entry] | undefined;
    for (const [tenant, e] of entries) if (!pinned.has(tenant) && e.refs === 0 && !e.closing && (!lru || e.lastUsed < lru[1].lastUsed)) lru = [tenant, e];
    if (!lru) {
      throw new ApiError('OVERLOADED', `all ${maxOpen} tenant stores this instance may hold open at once are in use`, 'retry after the delay in Retry-After; an operator can raise SVC_TENANT_MAX_OPEN (each store then gets a smaller share of SVC_MEMORY_BUDGET)', 1);
    }
    opts.log({ level: 'info', msg: 'tenant store closed (room for another)', tenant: lru[0], max_open: maxOpen });
    await close(lru[0], lru[1]);
  };

  return {
    async use(tenant, fn) {
      for (;;) {
        if (stopped) throw new Error('the server is shutting down');
        let e = entries.get(tenant);
        if (e?.closing) {
          await e.closing;
          continue;
        }
        if (!e) {
          // Counted with the stores still closing: their memory is not free until they are closed.
          if (entries.size >= maxOpen) {
            await makeRoom();
            continue;
          }
          const fresh: Entry = { runtime: opts.open(tenant), refs: 0, lastUsed: Date.now(), closing: null };
          entries.set(tenant, fresh);
          fresh.runtime.catch(() => entries.get(tenant) === fresh && entries.delete(tenant));
          e = fresh;
        }
        // DuckDB invalidates a database whose checkpoint failed (out of memory at its limit, say)
        // and fails every statement after it until it is attached again: such a store is closed
        // as soon as a request meets it, or its writer saw it fail (ingest may be refused before it
        // reaches a commit), and opened afresh (the WAL replays what was acknowledged).
        const stats = (await e.runtime.catch(() => null))?.writer?.stats();
        if (stats?.invalidated) {
          invalidated(tenant, e, 'its writer saw DuckDB invalidate the database');
          continue;
        }
        const rows = stats?.rowsCommitted ?? 0;
        if (opts.reopenRows && rows >= opts.reopenRows) {
          const now = Date.now();
          e.reopenDueAt ??= now;
          if (e.refs === 0 || now - e.reopenDueAt > (opts.reopenIdleWaitMs ?? REOPEN_IDLE_WAIT_MS)) {
            opts.log({ level: 'info', msg: 'tenant store reopening: DuckDB state grows with the rows an instance commits', tenant, rows_committed: rows, reopen_rows: opts.reopenRows });
            void close(tenant, e, true);
            continue;
          }
        }
        e.refs++;
        try {
          return await fn(await e.runtime);
        } catch (err) {
          if (isInvalidated(err)) invalidated(tenant, e, (err as Error).message);
          throw err;
        } finally {
          e.refs--;
          e.lastUsed = Date.now();
        }
      }
    },
    storedBytes(tenant) {
      const now = Date.now();
      const c = sizes.get(tenant);
      if (c && now - c.at < SIZE_TTL_MS) return c.bytes;
      const bytes = databaseBytes(tenantDir(opts.dataDir, tenant));
      sizes.set(tenant, { bytes, at: now });
      return bytes;
    },
    ingested(tenant) {
      lastIngest.set(tenant, Date.now());
      sizes.delete(tenant); // the next admission measures the files again: a limit is not overrun by a stale size
    },
    status: () => ({
      open: entries.size,
      max_open: maxOpen,
      idle_close_s: opts.idleS,
      stores: [...entries.keys()].map((tenant) => ({ tenant, refs: entries.get(tenant)!.refs, closing: entries.get(tenant)!.closing !== null })),
    }),
    tenantStatus(tenant) {
      const last = lastIngest.get(tenant);
      return { stored_bytes: this.storedBytes(tenant), last_ingest: last ? new Date(last).toISOString() : null, open: entries.has(tenant) };
    },
    async evict(tenant) {
      const e = entries.get(tenant);
      // Requests in flight finish first (each is bounded by its own time limit).
      if (e) await close(tenant, e, true);
    },
    openTenants: () => [...entries.keys()],
    async closeAll() {
      stopped = true;
      clearInterval(timer);
      await Promise.all([...entries].map(([t, e]) => close(t, e)));
    },
  };
}
