// The one pool of read connections, with a deadline per use: the service's own reads (services,
// traces, diagnosis, anomalies) have one, `/v1/query`'s locked-down connections another. DuckDB runs
// each query on its own threads and the node bindings run every call off the event loop, so a few
// connections let independent reads overlap without blocking the event loop or the writer.
import type { DuckDBConnection } from '@duckdb/node-api';
import { ApiError } from '../core/errors.js';
import type { Connector } from './db.js';
import type { ServiceSpans } from './batch.js';
import { SERVICES } from './schema.js';

export interface ReadPoolOptions {
  /** Connections, i.e. reads running at once. */
  size: number;
  /** Uses that may wait for a connection; more are refused (503 OVERLOADED). Default: no bound. */
  maxQueue?: number;
  /** Opens one connection; default a plain connection to the store. */
  connect?: () => Promise<DuckDBConnection>;
  /** Names the pool in the NOT_READY answer once it is closed. Default 'read'. */
  name?: string;
}

export interface ReadPool {
  readonly size: number;
  /**
   * Runs `fn` with a connection once one is free, first come first served. With `deadline` (ms since
   * the epoch) the connection is interrupted then and `fn`'s failure is a DeadlineExceeded (at once
   * if the deadline passed while waiting). Throws ApiError OVERLOADED beyond the queue, NOT_READY once closed.
   */
  use<T>(fn: (conn: DuckDBConnection) => Promise<T>, deadline?: number): Promise<T>;
  /**
   * Refuses waiting uses, interrupts running ones, closes idle connections now and busy ones when they
   * finish; resolves when every connection is closed, so the store can close after it.
   */
  close(): Promise<void>;
}

/** A read ran past its time limit and was interrupted. */
export class DeadlineExceeded extends Error {}

/** Runs `fn` on `conn`, interrupting the connection after `ms` (it stays usable); a failure once interrupted is a DeadlineExceeded. */
export async function withDeadline<T>(conn: DuckDBConnection, ms: number, fn: () => Promise<T>): Promise<T> {
  let reached = false;
  const timer = setTimeout(() => {
    reached = true;
    conn.interrupt();
  }, Math.max(1, ms));
  try {
    return await fn();
  } catch (err) {
    throw reached ? new DeadlineExceeded('the time limit was reached', { cause: err }) : err;
  } finally {
    clearTimeout(timer);
  }
}

export async function openReadPool(store: Connector, opts: ReadPoolOptions): Promise<ReadPool> {
  const connect = opts.connect ?? (() => store.connect());
  const maxQueue = opts.maxQueue ?? Infinity;
  const all: DuckDBConnection[] = [];
  try {
    for (let i = 0; i < opts.size; i++) all.push(await connect());
  } catch (err) {
    for (const c of all) c.closeSync();
    throw err;
  }
  const free = [...all];
  const waiting: { resolve: (conn: DuckDBConnection) => void; reject: (err: Error) => void }[] = [];
  let closed = false;
  let open = all.length;
  let allClosed: () => void = () => {};
  const whenClosed = new Promise<void>((resolve) => (allClosed = resolve));
  const closeOne = (conn: DuckDBConnection): void => {
    conn.closeSync();
    if (--open === 0) allClosed();
  };
  const notReady = () => new ApiError('NOT_READY', `The ${opts.name ?? 'read'} pool is closed.`, 'The server is shutting down; retry later.');

  const acquire = (): Promise<DuckDBConnection> => {
    if (closed) return Promise.reject(notReady());
    const conn = free.pop();
    if (conn) return Promise.resolve(conn);
    if (waiting.length >= maxQueue) {
      return Promise.reject(new ApiError('OVERLOADED', `${all.length} queries are running and ${waiting.length} are waiting.`, 'Retry in a few seconds.', 2));
    }
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };
  const release = (conn: DuckDBConnection): void => {
    if (closed) return closeOne(conn);
    const next = waiting.shift();
    if (next) next.resolve(conn);
    else free.push(conn);
  };

  return {
    size: all.length,
    async use(fn, deadline) {
      const conn = await acquire();
      try {
        if (deadline === undefined) return await fn(conn);
        const left = deadline - Date.now();
        if (left <= 0) throw new DeadlineExceeded('the time limit was reached');
        return await withDeadline(conn, left, () => fn(conn));
      } finally {
        release(conn);
      }
    },
    close() {
      if (closed) return whenClosed;
      closed = true;
      for (const w of waiting.splice(0)) w.reject(notReady());
      const idle = new Set(free.splice(0));
      for (const c of all) {
        if (idle.has(c)) closeOne(c);
        else c.interrupt();
      }
      if (open === 0) allClosed();
      return whenClosed;
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
