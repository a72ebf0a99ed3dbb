// Connections for the service's own reads (services, traces, diagnosis, anomalies). DuckDB runs
// each query on its own threads; a few connections let independent reads overlap.
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Connector } from './db.js';
import type { ServiceSpans } from './batch.js';
import { SERVICES } from './schema.js';

export interface ReadPool {
  use<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T>;
  close(): void;
}

export async function createReadPool(store: Connector, size: number): Promise<ReadPool> {
  const free: DuckDBConnection[] = [];
  for (let i = 0; i < size; i++) free.push(await store.connect());
  const all = [...free];
  const waiters: ((c: DuckDBConnection) => void)[] = [];
  const release = (c: DuckDBConnection) => {
    const w = waiters.shift();
    if (w) w(c);
    else free.push(c);
  };
  return {
    async use(fn) {
      const conn = free.pop() ?? (await new Promise<DuckDBConnection>((r) => waiters.push(r)));
      try {
        return await fn(conn);
      } finally {
        release(conn);
      }
    },
    close() {
      for (const c of all) c.closeSync();
    },
  };
}

/** Runs a prepared statement with positional parameters and returns plain row objects. */
export async function readRows(conn: DuckDBConnection, sql: string, params: (string | number | boolean | null)[] = []): Promise<Record<string, unknown>[]> {
  const stmt = await conn.prepare(sql);
  params.forEach((p, i) => {
    const at = i + 1;
    if (p === null) stmt.bindNull(at);
    else if (typeof p === 'string') stmt.bindVarchar(at, p);
    else if (typeof p === 'boolean') stmt.bindBoolean(at, p);
    else if (Number.isInteger(p)) stmt.bindBigInt(at, BigInt(p));
    else stmt.bindDouble(at, p);
  });
  const reader = await stmt.runAndReadAll();
  return reader.getRowObjectsJS() as Record<string, unknown>[];
}

/** The services table as first and last time seen per service, µs (what the writer keeps up to date from then on). */
export async function readServiceSpans(conn: DuckDBConnection): Promise<ServiceSpans> {
  const rows = await readRows(conn, `SELECT service_name, epoch_us(first_seen) AS f, epoch_us(last_seen) AS l FROM ${SERVICES.name}`);
  return Object.fromEntries(rows.map((r) => [String(r['service_name']), [Number(r['f']), Number(r['l'])]]));
}
