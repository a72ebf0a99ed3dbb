// Column batches → CSV text that DuckDB's parallel CSV reader loads on its own threads. Measured here
// on 200k span rows (20 columns): the JS appender ~85k rows/s on the event loop; CSV built in a
// worker ~100k rows/s per core plus `INSERT … read_csv` ~200k rows/s off the event loop.
// Encoding: NULL is an empty unquoted field; every string is quoted, so an empty string stays
// distinct from NULL (the reader runs with allow_quoted_nulls=false). The quote is the control
// byte U+0001, doubled to escape it: attribute JSON and log bodies are full of '"', which as the
// quote would be doubled in JS and un-doubled by DuckDB (measured: ~20% of the encode and ~2 µs a
// row of the load); U+0001 almost never occurs in telemetry. Timestamps travel as integer
// microseconds, lists as JSON text; `loadSql` converts both back.
import type { ColumnBatch, CellValue } from './batch.js';
import type { Column, Table } from './schema.js';

// NUL cannot live in a DuckDB CSV field; it is replaced, like other undecodable input, by U+FFFD.
// Checked once over a whole batch's text rather than per cell: NUL is rare and one scan is cheap.
const NUL = '\u0000';
const Q = '\u0001';

function quoteJson(v: unknown): string {
  const json = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : typeof x === 'number' && !Number.isFinite(x) ? null : x));
  return Q + (json.indexOf(Q) === -1 ? json : json.replaceAll(Q, Q + Q)) + Q;
}

function double(n: number): string {
  return Number.isFinite(n) ? String(n) : Number.isNaN(n) ? 'nan' : n > 0 ? 'inf' : '-inf';
}

/** JS for one cell of column j (value in `v`), appended to `out`. */
function cellCode(col: Column, j: number): string {
  const v = `v = a${j}[i];`;
  switch (col.type) {
    case 'VARCHAR':
      return `${v} if (v != null) out += v.indexOf(Q) === -1 ? Q + v + Q : Q + v.replaceAll(Q, Q + Q) + Q;`;
    case 'TIMESTAMP':
      return `${v} if (v != null) out += typeof v === 'number' ? Math.trunc(v) : String(v);`;
    case 'BOOLEAN':
      return `${v} if (v != null) out += v ? 'true' : 'false';`;
    case 'DOUBLE':
      return `${v} if (v != null) out += double(v);`;
    case 'VARCHAR[]':
    case 'DOUBLE[]':
    case 'UBIGINT[]':
      return `${v} if (v != null) out += quoteJson(v);`;
    default:
      return `${v} if (v != null) out += v;`;
  }
}

type RowEncoder = (arrays: readonly (readonly unknown[] | undefined)[], n: number) => string;
const encoders = new Map<string, RowEncoder>();

/**
 * A function specialised to the table's columns (no per-cell type dispatch): measured here on
 * realistic spans, the generic per-cell encoder spent ~4x the protobuf decode time; this one a
 * fraction of it.
 */
function encoderFor(table: Table): RowEncoder {
  let enc = encoders.get(table.name);
  if (enc) return enc;
  const cols = table.columns;
  const header = cols.map((_c, j) => `const a${j} = arrays[${j}] ?? EMPTY;`).join('\n');
  const row = cols.map((c, j) => (j ? `out += ',';\n` : '') + cellCode(c, j)).join('\n');
  const src = `${header}\nlet out = ''; let v;\nfor (let i = 0; i < n; i++) {\n${row}\nout += '\\n';\n}\nreturn out;`;
  const make = new Function('double', 'quoteJson', 'EMPTY', 'Q', `return function encodeRows(arrays, n) {\n${src}\n};`) as (
    d: typeof double,
    q: typeof quoteJson,
    e: readonly unknown[],
    q1: string,
  ) => RowEncoder;
  enc = make(double, quoteJson, [], Q);
  encoders.set(table.name, enc);
  return enc;
}

/** Encodes a batch as CSV rows (no header) in the table's column order. */
export function encodeCsv(table: Table, batch: ColumnBatch): string {
  const out = encoderFor(table)(table.columns.map((c) => batch.columns[c.name] as readonly CellValue[] | undefined), batch.rows);
  return out.indexOf(NUL) === -1 ? out : out.replaceAll(NUL, '\uFFFD');
}

function readType(col: Column): string {
  if (col.type === 'TIMESTAMP') return 'BIGINT';
  if (col.type.endsWith('[]')) return 'VARCHAR';
  return col.type;
}

function selectExpr(col: Column): string {
  const q = `"${col.name}"`;
  if (col.type === 'TIMESTAMP') return `make_timestamp(${q})`;
  if (col.type.endsWith('[]')) return `CAST(CAST(${q} AS JSON) AS ${col.type})`;
  return q;
}

function readCsv(table: Table, files: readonly string[], extra = ''): string {
  const columns = table.columns.map((c) => `'${c.name}': '${readType(c)}'`).join(', ');
  return (
    `read_csv(${fileList(files)}, header = false, delim = ',', quote = '${Q}', escape = '${Q}', ` +
    `allow_quoted_nulls = false, null_padding = false, auto_detect = false, columns = {${columns}}${extra})`
  );
}

const fileList = (files: readonly string[]) => '[' + files.map((f) => `'${f.replace(/'/g, "''")}'`).join(', ') + ']';
const columnNames = (table: Table) => table.columns.map((c) => `"${c.name}"`).join(', ');

/** The statement that appends CSV files written by encodeCsv to their table. */
export function loadSql(table: Table, files: readonly string[]): string {
  return `INSERT INTO ${table.name} (${columnNames(table)}) SELECT ${table.columns.map(selectExpr).join(', ')} FROM ${readCsv(table, files)}`;
}

/**
 * The statement that upserts CSV files into a table with a primary key: for a key in several files
 * the row of the last file wins (files in submission order; a file holds a key at most once). One
 * statement for a whole commit: each statement costs DuckDB ~4 ms however few its rows, and log
 * ingest brought one set of template rows per request.
 */
export function upsertSql(table: Table, files: readonly string[]): string {
  const key = table.primaryKey;
  if (!key?.length) throw new Error(`${table.name} has no primary key to upsert on`);
  const order = `list_position(${fileList(files)}, filename)`;
  return (
    `INSERT OR REPLACE INTO ${table.name} (${columnNames(table)}) SELECT ${table.columns.map(selectExpr).join(', ')} FROM ${readCsv(table, files, ', filename = true')} ` +
    `QUALIFY row_number() OVER (PARTITION BY ${key.map((k) => `"${k}"`).join(', ')} ORDER BY ${order} DESC) = 1`
  );
}
