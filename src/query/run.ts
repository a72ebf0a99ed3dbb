// Runs one (already guarded) SELECT on a query connection: streamed chunk by chunk so a huge answer
// stops at the row cap instead of exhausting memory, interrupted at the time limit with
// `connection.interrupt()` (the connection stays usable), values converted to JSON-ready form.
// DuckDB executes on its own threads and the node bindings run each call off the event loop.
import type { DuckDBConnection } from '@duckdb/node-api';
import { ApiError } from '../core/errors.js';
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
  let timedOut = false;
  let capped = false;
  const timer = setTimeout(() => {
    timedOut = true;
    conn.interrupt();
  }, Math.max(1, opts.timeoutMs));
  try {
    const result = await conn.stream(sql);
    const columns = result.deduplicatedColumnNames();
    const rows: JsonRow[] = [];
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      if (rows.length + chunk.rowCount > opts.rowCap) {
        capped = true;
        break;
      }
      // Column-major reads are several times faster than chunk.getRows() in @duckdb/node-api 1.5.
      const vectors = chunk.getColumns();
      const n = chunk.rowCount;
      for (let r = 0; r < n; r++) {
        const row: JsonRow = {};
        for (let i = 0; i < columns.length; i++) setKey(row, columns[i]!, toJsonValue(vectors[i]![r] ?? null));
        rows.push(row);
      }
    }
    if (capped) {
      clearTimeout(timer);
      // Release the half-read streaming result (and its read transaction) before the connection is reused.
      await conn.run('SELECT 1').catch(() => undefined);
      throw new ApiError(
        'ROW_CAP',
        `The answer has more than ${opts.rowCap} rows.`,
        'Aggregate (GROUP BY), filter with a narrower WHERE (a literal timestamp bound), or add LIMIT.',
      );
    }
    return { columns, rows };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const message = err instanceof Error ? err.message : String(err);
    if (timedOut || /^INTERRUPT Error/.test(message)) {
      throw new ApiError(
        'INTERRUPT',
        `The query was interrupted after the ${opts.timeoutMs} ms time limit.`,
        'Bound `timestamp` with literals (e.g. timestamp >= TIMESTAMP \'2024-01-01 00:00:00\') so storage can skip data; a bound built from now() is evaluated per row and reads everything. Aggregate or narrow the query.',
      );
    }
    throw new ApiError('SQL_ERROR', cleanDuckDBMessage(message), sqlErrorHint(message));
  } finally {
    clearTimeout(timer);
  }
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
