// A pool of N locked-down query connections so several `/v1/query` requests run in parallel. DuckDB
// runs each query on its own threads; the node bindings run every call on the libuv thread pool
// (UV_THREADPOOL_SIZE, default 4, shared with fs and the ingest writer), so keep N below that size.
// Requests beyond N wait in a bounded queue; beyond the queue they are refused with OVERLOADED.
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Connector } from '../store/db.js';
import { ApiError } from '../core/errors.js';
import { prepareQueryConnection, type PrepareOptions } from './connection.js';
import { checkSelect } from './guard.js';
import { runQueryWithColumns, type QueryAnswer, type RunOptions } from './run.js';

export interface QueryPoolOptions extends PrepareOptions, RunOptions {
  /** Connections, i.e. queries running at once. Default 2. */
  size?: number;
  /** Requests that may wait for a connection; more are refused (503 OVERLOADED). Default 64. */
  maxQueue?: number;
}

export class QueryPool {
  private readonly free: DuckDBConnection[];
  private readonly waiting: Array<{ resolve: (conn: DuckDBConnection) => void; reject: (err: Error) => void }> = [];
  private closed = false;

  private constructor(
    private readonly all: DuckDBConnection[],
    private readonly opts: Required<Pick<QueryPoolOptions, 'maxQueue'>> & RunOptions,
  ) {
    this.free = [...all];
  }

  static async open(store: Connector, opts: QueryPoolOptions): Promise<QueryPool> {
    const size = Math.max(1, opts.size ?? 2);
    const conns: DuckDBConnection[] = [];
    try {
      for (let i = 0; i < size; i++) conns.push(await prepareQueryConnection(store, opts));
    } catch (err) {
      for (const c of conns) c.closeSync();
      throw err;
    }
    return new QueryPool(conns, { maxQueue: opts.maxQueue ?? 64, timeoutMs: opts.timeoutMs, rowCap: opts.rowCap });
  }

  get size(): number {
    return this.all.length;
  }

  /** Guards and runs one statement. Throws ApiError (the guard's refusal, SQL_ERROR, INTERRUPT, ROW_CAP, OVERLOADED). */
  async query(sql: string, overrides: Partial<RunOptions> = {}): Promise<QueryAnswer> {
    const conn = await this.acquire();
    try {
      const verdict = await checkSelect(conn, sql);
      if (!verdict.ok) throw new ApiError(verdict.code, verdict.message, verdict.hint);
      return await runQueryWithColumns(conn, verdict.sql, {
        timeoutMs: overrides.timeoutMs ?? this.opts.timeoutMs,
        rowCap: overrides.rowCap ?? this.opts.rowCap,
      });
    } finally {
      this.release(conn);
    }
  }

  /** Runs `fn` with a connection of the pool (for callers that guard or run themselves). */
  async withConnection<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    const conn = await this.acquire();
    try {
      return await fn(conn);
    } finally {
      this.release(conn);
    }
  }

  private acquire(): Promise<DuckDBConnection> {
    if (this.closed) return Promise.reject(new ApiError('NOT_READY', 'The query pool is closed.', 'The server is shutting down; retry later.'));
    const conn = this.free.pop();
    if (conn) return Promise.resolve(conn);
    if (this.waiting.length >= this.opts.maxQueue) {
      return Promise.reject(new ApiError('OVERLOADED', `${this.all.length} queries are running and ${this.waiting.length} are waiting.`, 'Retry in a few seconds.', 2));
    }
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private release(conn: DuckDBConnection): void {
    if (this.closed) {
      conn.closeSync();
      return;
    }
    const next = this.waiting.shift();
    if (next) next.resolve(conn);
    else this.free.push(conn);
  }

  /** Refuses waiting requests, interrupts running queries, closes idle connections now and busy ones when they finish. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.reject(new ApiError('NOT_READY', 'The query pool is closed.', 'The server is shutting down; retry later.'));
    const idle = new Set(this.free.splice(0));
    for (const c of this.all) {
      if (idle.has(c)) c.closeSync();
      else c.interrupt();
    }
  }
}
