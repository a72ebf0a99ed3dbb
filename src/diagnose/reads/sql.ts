// The pieces every statement is made of: time bounds as TIMESTAMP literals, the statement type with
// its decoder, lists per group, and decoders of NULLs and common rows.
import { sqlTimestamp } from '../../store/sql.js';
import type { CountRow, Row } from './rows.js';

export const between = (lo: number, hi: number, col = 'timestamp') => `${col} >= ${sqlTimestamp(lo)} AND ${col} < ${sqlTimestamp(hi)}`;

/** A statement of the diagnosis: its SQL text and the decoder of its rows, the aliases named once, here. */
export interface Statement<P extends unknown[], T> {
  sql: (...p: P) => string;
  decode: (r: Row) => T;
}

export const statement = <P extends unknown[], T>(sql: (...p: P) => string, decode: (r: Row) => T): Statement<P, T> => ({ sql, decode });

/** NULL (or absent) as null, else the value as text. */
export const textOrNull = (v: unknown) => (v === null || v === undefined ? null : String(v));
/** NULL (or absent) as `d`, else the value as a number. */
export const num = (v: unknown, d = 0) => (v === null || v === undefined ? d : Number(v));
export const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

// A group's per-bin values come back as lists, one row per group: a row per bin costs more to decode
// (its strings, and their garbage) than to compute.
// As DOUBLE: lists of BIGINT and HUGEINT reach JavaScript as BigInts, several times dearer to decode
// for the call tree's values than doubles (exact: µs times and counts stay far below 2^53).
/** `list(c::DOUBLE) AS c` for each column. */
export const asLists = (cols: readonly string[]) => cols.map((c) => `list(${c}::DOUBLE) AS ${c}`).join(', ');
/** A listed row's list columns, in the order of `cols`. */
export const listed = (r: Row, cols: readonly string[]) => cols.map((c) => (r[c] as unknown[] | null) ?? []);

export const emptyAsNull = (v: unknown) => (v === null || v === undefined || v === '' ? null : String(v));
export const count = (r: Row): CountRow => ({ n: num(r['n']) });

