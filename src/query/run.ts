// Runs one (already guarded) SELECT on a query connection: streamed chunk by chunk so a huge answer
// stops at the row cap instead of exhausting memory, interrupted at the time limit (withDeadline; the
// connection stays usable), values converted to JSON-ready form. `/v1/query`'s pool is the store's
// read pool over locked-down connections, several requests in parallel, the rest in a bounded queue.
import type { DuckDBConnection } from '@duckdb/node-api';
import { ApiError } from '../core/errors.js';
import type { Connector } from '../store/db.js';
import { DeadlineExceeded, openReadPool, withDeadline, type ReadPool } from '../store/readers.js';
import { prepareQueryConnection, type PrepareOptions } from './connection.js';
import { checkSelect } from './guard.js';
import { setKey, toJsonValue, type JsonRow } from './json.js';

export interface RunOptions {
  /** Time limit in milliseconds; the query is interrupted when it is reached (ApiError INTERRUPT). */
  timeoutMs: number;
  /** Most rows returned; one more is an ApiError ROW_CAP. */
  rowCap: number;
}

export interface QueryAnswer {
  /** Output column names, de-duplicated (`a`, `a:1`) as they key the row objects. */
  columns: string[];
  rows: JsonRow[];
}

/** Runs `sql` and returns its rows as JSON-ready objects keyed by column name or alias. Throws ApiError. */
export async function runQuery(conn: DuckDBConnection, sql: string, opts: RunOptions): Promise<JsonRow[]> {
  return (await runQueryWithColumns(conn, sql, opts)).rows;
}

export async function runQueryWithColumns(conn: DuckDBConnection, sql: string, opts: RunOptions): Promise<QueryAnswer> {
  try {
    const answer = await withDeadline(conn, opts.timeoutMs, () => streamRows(conn, sql, opts.rowCap));
    if (answer.capped) {
      // Release the half-read streaming result (and its read transaction) before the connection is reused.
      await conn.run('SELECT 1').catch(() => undefined);
      throw new ApiError(
        'ROW_CAP',
        `The answer has more than ${opts.rowCap} rows.`,
        'Aggregate (GROUP BY), filter with a narrower WHERE (a literal timestamp bound), or add LIMIT.',
      );
    }
    return { columns: answer.columns, rows: answer.rows };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof DeadlineExceeded || /^INTERRUPT Error/.test(message)) {
      throw new ApiError(
        'INTERRUPT',
        `The query was interrupted after the ${opts.timeoutMs} ms time limit.`,
        'Bound `timestamp` with literals (e.g. timestamp >= TIMESTAMP \'2024-01-01 00:00:00\') so storage can skip data; a bound built from now() is evaluated per row and reads everything. Aggregate or narrow the query.',
      );
    }
    throw new ApiError('SQL_ERROR', cleanDuckDBMessage(message), sqlErrorHint(message));
  }
}

/** Reads the answer chunk by chunk; stops (capped) before the chunk that would pass `rowCap` rows. */
async function streamRows(conn: DuckDBConnection, sql: string, rowCap: number): Promise<QueryAnswer & { capped: boolean }> {
  const result = await conn.stream(sql);
  const columns = result.deduplicatedColumnNames();
  const rows: JsonRow[] = [];
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    if (rows.length + chunk.rowCount > rowCap) return { columns, rows, capped: true };
    // Column-major reads are several times faster than chunk.getRows() in @duckdb/node-api 1.5.
    const vectors = chunk.getColumns();
    const n = chunk.rowCount;
    for (let r = 0; r < n; r++) {
      const row: JsonRow = {};
      for (let i = 0; i < columns.length; i++) setKey(row, columns[i]!, toJsonValue(vectors[i]![r] ?? null));
      rows.push(row);
    }
  }
  return { columns, rows, capped: false };
}

export interface QueryPoolOptions extends PrepareOptions, RunOptions {
  /** Connections, i.e. queries running at once; keep it below UV_THREADPOOL_SIZE (default 4, shared with fs and the writer). Default 2. */
  size?: number;
  /** Requests that may wait for a connection; more are refused (503 OVERLOADED). Default 64. */
  maxQueue?: number;
}

/** `/v1/query`'s read pool: locked-down connections, each use guarded and run under the pool's limits. */
export interface QueryPool extends ReadPool {
  /** Guards and runs one statement. Throws ApiError (the guard's refusal, SQL_ERROR, INTERRUPT, ROW_CAP, OVERLOADED, NOT_READY). */
  query(sql: string, overrides?: Partial<RunOptions>): Promise<QueryAnswer>;
}

export async function openQueryPool(store: Connector, opts: QueryPoolOptions): Promise<QueryPool> {
  const pool = await openReadPool(store, {
    size: Math.max(1, opts.size ?? 2),
    maxQueue: opts.maxQueue ?? 64,
    connect: () => prepareQueryConnection(store, opts),
    name: 'query',
  });
  return {
    ...pool,
    query: (sql, overrides = {}) =>
      pool.use(async (conn) => {
        // The guard runs outside the time limit, which is the statement's own.
        const verdict = await checkSelect(conn, sql);
        if (!verdict.ok) throw new ApiError(verdict.code, verdict.message, verdict.hint);
        return runQueryWithColumns(conn, verdict.sql, { timeoutMs: overrides.timeoutMs ?? opts.timeoutMs, rowCap: overrides.rowCap ?? opts.rowCap });
      }),
  };
}

/** DuckDB messages carry a "LINE 1: ..." excerpt and caret; keep the first line for the answer. */
function cleanDuckDBMessage(message: string): string {
  return message.split('\n')[0]!.trim();
}

function sqlErrorHint(message: string): string {
  if (/^Binder Error/.test(message)) return 'Check column and table names; DESCRIBE is not available, so SELECT * FROM <table> LIMIT 1 shows the columns.';
  if (/^Catalog Error/.test(message)) return 'Check the table or function name against the allowed tables and functions.';
  if (/^Conversion Error/.test(message)) return 'Check literal formats and casts (timestamps as TIMESTAMP \'YYYY-MM-DD HH:MM:SS\').';
  if (/^Out of Memory Error/.test(message)) return 'Aggregate, narrow the time range or add LIMIT.';
  return 'Check the statement; the message is DuckDB\'s.';
}
