// Byte budgets of the MCP tools' answers: an agent pays for every byte a tool returns with context,
// so the row lists of `query` and `get_anomalies` are cut to fit a budget, in their order, with
// `truncated` and the SQL that fetches the rows after the last one returned.
// The budgets count UTF-8 bytes of the answer's JSON, which is the tool result's text.
import { jsonBytes } from '../diagnose/compact.js';

/** Bytes of answer JSON a token: o200k_base's count on the diagnosis answers of bench:answers (bench:diagnose's store and a recorded fault), rounded down so that the estimate does not flatter. */
const BYTES_PER_TOKEN = 3;

/** About how many tokens `bytes` of answer JSON take, rounded to hundreds, for the tools' descriptions. */
export const approxTokens = (bytes: number): string => (Math.round(bytes / BYTES_PER_TOKEN / 100) * 100).toLocaleString('en');

/** The default budget of `diagnose` (the compact view): about 11,000 tokens, under half of the 25,000 at which Claude Code cuts a tool result by default. */
export const DIAGNOSE_MAX_BYTES = 32 * 1024;
/** The default budget of `query` and `get_anomalies`: rows are for reading a few at a time. */
export const ROWS_MAX_BYTES = 16 * 1024;
/** The smallest budget a tool accepts: a row list's envelope and a page's SQL fit many times over. */
export const MIN_TOOL_BYTES = 2048;
/** The largest: about 87,000 tokens, past which a row list belongs in a file rather than a context. */
export const MAX_TOOL_BYTES = 256 * 1024;

/**
 * The answer `envelope(k)` for the largest `k <= rows.length` whose JSON fits `maxBytes` (0 when not
 * even one row fits). Rows are measured one by one; the envelope is measured whole for the `k` found,
 * since what it adds (counts, a page's SQL) grows with `k`.
 */
export function fitRows<T>(rows: readonly unknown[], maxBytes: number, envelope: (kept: number) => T): { kept: number; answer: T } {
  let kept = rows.length;
  let answer = envelope(kept);
  let bytes = jsonBytes(answer);
  if (bytes <= maxBytes) return { kept, answer };
  // Estimate from the rows' own sizes, then step down until the whole answer fits.
  const empty = jsonBytes(envelope(0));
  let room = maxBytes - empty;
  kept = 0;
  while (kept < rows.length) {
    const size = jsonBytes(rows[kept]) + (kept > 0 ? 1 : 0);
    if (size > room) break;
    room -= size;
    kept++;
  }
  for (;;) {
    answer = envelope(kept);
    bytes = jsonBytes(answer);
    if (bytes <= maxBytes || kept === 0) return { kept, answer };
    kept--;
  }
}

export interface Cut {
  truncated: boolean;
  /** The statement that fetches the rows after the last one returned, in the same order. */
  next_sql?: string;
  /** Why no row was returned, when none fit. */
  hint?: string;
}

/**
 * An answer listing `rows` (`body(kept)` with `kept` its first ones) within `maxBytes`: `truncated`
 * when any were left out here or before (`cutBefore`), with `next_sql` from `page(offset)` (every row
 * from the first one left out: the tool that runs it cuts it to its own budget in turn), or a hint
 * when not even the first row fits.
 */
export function rowsWithin<R, B extends object>(rows: readonly R[], maxBytes: number, cutBefore: boolean, body: (kept: R[]) => B, page: (offset: number) => string): B & Cut {
  return fitRows(rows, maxBytes, (kept): B & Cut => {
    const truncated = cutBefore || kept < rows.length;
    const cut: Cut = { truncated };
    if (truncated && kept > 0) cut.next_sql = page(kept);
    if (kept === 0 && rows.length > 0) cut.hint = `the first row alone takes ${jsonBytes(rows[0])} bytes, over max_bytes (${maxBytes}): select fewer or shorter columns, or raise max_bytes`;
    return { ...body(rows.slice(0, kept)), ...cut };
  }).answer;
}

/** A page SQL this module wrote: the statement it pages and where the page starts. */
const PAGE = /^SELECT \* FROM \(\n([\s\S]*)\n\) AS page OFFSET (\d+)$/;

/**
 * `sql`'s rows from the `offset`-th on, as one SELECT (a derived table, as POST /v1/query allows).
 * Paging a page moves its offset instead of nesting it. The order is the statement's own: stable
 * when it has an ORDER BY that leaves no ties.
 */
export function pageSql(sql: string, offset: number): string {
  const m = PAGE.exec(sql.trim());
  const inner = m ? m[1]! : sql.trim().replace(/;\s*$/, '');
  const start = m ? Number(m[2]) + offset : offset;
  // The statement goes on lines of its own, so a trailing line comment cannot swallow the wrapper.
  return `SELECT * FROM (\n${inner}\n) AS page OFFSET ${start}`;
}
