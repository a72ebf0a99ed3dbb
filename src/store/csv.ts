// Column batches → UTF-8 CSV that DuckDB's parallel CSV reader loads on its own threads: built in a
// worker and loaded by `INSERT … read_csv` off the event loop, which on span rows outpaces DuckDB's JS
// appender, whose work is all on the event loop.
// Encoding: NULL is an empty unquoted field; every string is quoted, so an empty string stays
// distinct from NULL (the reader runs with allow_quoted_nulls=false). The quote is the control
// byte U+0001, doubled to escape it: attribute JSON and log bodies are full of '"', which as the
// quote would be doubled in JS and un-doubled by DuckDB (a large part of both the encode and the
// load); U+0001 almost never occurs in telemetry. Timestamps travel as integer
// microseconds, lists as JSON text; `loadSql` converts both back.
import type { ColumnBatch, CellValue } from './batch.js';
import type { Column, Table } from './schema.js';
import { ByteSink } from './byte-sink.js';

// NUL cannot live in a DuckDB CSV field; it is replaced, like other undecodable input, by U+FFFD.
// Only VARCHAR cells can hold it: JSON text escapes every control character.
const NUL = '\u0000';
const Q = '\u0001';

function quoteJson(v: unknown): string {
  const json = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : typeof x === 'number' && !Number.isFinite(x) ? null : x));
  return Q + (json.indexOf(Q) === -1 ? json : json.replaceAll(Q, Q + Q)) + Q;
}

function double(n: number): string {
  return Number.isFinite(n) ? String(n) : Number.isNaN(n) ? 'nan' : n > 0 ? 'inf' : '-inf';
}

/** A VARCHAR cell's text: the quote doubled, NUL replaced (both rare, so tested before any copy). */
function text(v: string): string {
  if (v.indexOf(Q) !== -1) v = v.replaceAll(Q, Q + Q);
  return v.indexOf(NUL) === -1 ? v : v.replaceAll(NUL, '\uFFFD');
}

/**
 * The output bytes. Cells are written straight into one buffer: building the CSV as a JS string and
 * encoding it costs more than twice as much on realistic spans, mostly in flattening a string of
 * tens of thousands of pieces.
 */
export class CsvSink extends ByteSink {
  /** A string as UTF-8 (lone surrogates become U+FFFD, as TextEncoder does). */
  utf8(s: string): void {
    this.ensure(s.length * 3);
    this.n += this.b.utf8Write(s, this.n);
  }

  quoted(s: string): void {
    this.ensure(s.length * 3 + 2);
    const b = this.b;
    b[this.n++] = 1;
    this.n += b.utf8Write(s, this.n);
    b[this.n++] = 1;
  }

  /** A number that should be an integer, in decimal; anything else as JS prints it. */
  int(v: unknown): void {
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) return this.utf8(String(v));
    this.decimal(v);
  }

  /** The bytes written, as their own exact-size copy (a view would drag the whole buffer along). */
  take(): Uint8Array {
    const out = new Uint8Array(this.n);
    out.set(this.b.subarray(0, this.n));
    this.n = 0;
    this.shrink();
    return out;
  }
}

const sink = new CsvSink(1 << 16, 1 << 24);

/** JS for one cell of column `col` (its value read by `read`), written to `s`. */
function cellCode(col: Column, read: string): string {
  const v = `v = ${read};`;
  switch (col.type) {
    case 'VARCHAR':
      return `${v} if (v != null) s.quoted(text(v));`;
    case 'TIMESTAMP':
      return `${v} if (v != null) s.int(typeof v === 'number' ? Math.trunc(v) : v);`;
    case 'BOOLEAN':
      return `${v} if (v != null) s.utf8(v ? 'true' : 'false');`;
    case 'DOUBLE':
      return `${v} if (v != null) s.utf8(double(v));`;
    case 'VARCHAR[]':
    case 'DOUBLE[]':
    case 'UBIGINT[]':
      return `${v} if (v != null) s.utf8(quoteJson(v));`;
    default:
      return `${v} if (v != null) s.int(v);`;
  }
}

type RowEncoder = (s: CsvSink, arrays: readonly (readonly unknown[] | undefined)[], n: number) => void;
const encoders = new Map<string, RowEncoder>();

/**
 * A function specialised to the table's columns (no per-cell type dispatch): on realistic spans a
 * generic per-cell encoder costs several times the protobuf decode; this one a fraction of it.
 */
function encoderFor(table: Table): RowEncoder {
  let enc = encoders.get(table.name);
  if (enc) return enc;
  const cols = table.columns;
  const header = cols.map((_c, j) => `const a${j} = arrays[${j}] ?? EMPTY;`).join('\n');
  const row = cols.map((c, j) => (j ? `s.byte(44);\n` : '') + cellCode(c, `a${j}[i]`)).join('\n');
  const src = `${header}\nlet v;\nfor (let i = 0; i < n; i++) {\n${row}\ns.byte(10);\n}`;
  const make = new Function('double', 'quoteJson', 'text', 'EMPTY', `return function encodeRows(s, arrays, n) {\n${src}\n};`) as (
    d: typeof double,
    q: typeof quoteJson,
    t: typeof text,
    e: readonly unknown[],
  ) => RowEncoder;
  enc = make(double, quoteJson, text, []);
  encoders.set(table.name, enc);
  return enc;
}

export type CellsEncoder = (s: CsvSink, values: Readonly<Record<string, unknown>>) => void;

/**
 * Encodes the cells of `names` (columns of `table`, in that order, comma-separated, no line end)
 * from an object keyed by column name: for rows assembled from parts (pipeline/decode/otlp/spans-wasm.ts),
 * with the same cell encoding as encodeCsv.
 */
export function cellsEncoder(table: Table, names: readonly string[]): CellsEncoder {
  const cols = names.map((n) => {
    const c = table.columns.find((x) => x.name === n);
    if (!c) throw new Error(`${table.name} has no column ${n}`);
    return c;
  });
  const body = cols.map((c, j) => (j ? `s.byte(44);\n` : '') + cellCode(c, `o[${JSON.stringify(c.name)}]`)).join('\n');
  const make = new Function('double', 'quoteJson', 'text', `return function encodeCells(s, o) {\nlet v;\n${body}\n};`) as (
    d: typeof double,
    q: typeof quoteJson,
    t: typeof text,
  ) => CellsEncoder;
  return make(double, quoteJson, text);
}

/** Encodes a batch as UTF-8 CSV rows (no header) in the table's column order. */
export function encodeCsv(table: Table, batch: ColumnBatch): Uint8Array {
  sink.n = 0; // nothing left over from a batch whose encoding threw
  encoderFor(table)(sink, table.columns.map((c) => batch.columns[c.name] as readonly CellValue[] | undefined), batch.rows);
  return sink.take();
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
 * statement for a whole commit: each statement has a fixed cost in DuckDB however few its rows, and log
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
