// A window of a tenant's store as Parquet, and back (POST /v1/snapshot, POST /v1/restore).
//
// Export: the window's rows of every table (the telemetry, the log templates, the anomalies, and
// what detection and diagnosis keep beside them: series, rollups, detector states, alerts, the
// buckets not closed yet), one zstd Parquet file per table written by DuckDB, all read in one
// transaction so the files agree with each other.
//
// Import: rows the store holds already are not stored twice (a multiset difference against the
// store's rows in the same time range, by row hashes, or the primary key); a template id the store uses for another
// template is given a fresh id (reserved from the miner by the caller) in the templates and the logs
// alike; buckets that end up holding both restored and earlier rows are marked for the detection
// pass, which rebuilds their series and rollups from the merged rows. All in one transaction: a bad
// file stores nothing.
import type { DuckDBConnection } from '@duckdb/node-api';
import { BUCKET_US } from '../core/time.js';
import { readRows } from './readers.js';
import {
  ALERTS,
  ANOMALIES,
  DETECTOR_STATE,
  DIRTY_BUCKETS,
  ERROR_TYPES_5M,
  GEN_AI_5M,
  LOG_LEVELS_10S,
  LOG_TEMPLATES,
  LOGS,
  MERGE_CHAIN_SQL,
  METRICS_EXP_HISTOGRAM,
  METRICS_GAUGE,
  METRICS_HISTOGRAM,
  METRICS_SUM,
  PROFILES,
  RESOURCES_5M,
  SERIES,
  SERVICES,
  SPANS,
  type Table,
} from './schema.js';
import { bucketIndexSql, sqlString, sqlTimestamp } from './sql.js';

/** The snapshot format; a reader refuses a newer one. */
export const SNAPSHOT_FORMAT = 1;

export interface SnapshotWindow {
  fromUs: number;
  toUs: number;
  /** Only these services; null for all. */
  services: readonly string[] | null;
}

const cols = (t: Table) => t.columns.map((c) => `"${c.name}"`).join(', ');

/** `service_name IN (...)`, or nothing without a services filter. */
function servicesIn(w: SnapshotWindow, col = 'service_name'): string {
  return w.services ? ` AND ${col} IN (${w.services.length ? w.services.map(sqlString).join(', ') : 'NULL'})` : '';
}

function inWindow(w: SnapshotWindow, col = 'timestamp'): string {
  return `${col} >= ${sqlTimestamp(w.fromUs)} AND ${col} < ${sqlTimestamp(w.toUs)}`;
}

/** A bucket index lies in the window when its start does (the series' own rule: a row's timestamp is its bucket's start). */
const bucketInWindow = (w: SnapshotWindow, col: string) => `${col} >= ${Math.ceil(w.fromUs / BUCKET_US)} AND ${col} < ${Math.ceil(w.toUs / BUCKET_US)}`;

/** One table of a snapshot: which of its rows belong to a window. */
interface SnapshotTable {
  table: Table;
  where(w: SnapshotWindow): string;
  /** The time column a restore compares with the store's rows over (its range in the file); null: by primary key. */
  rangeColumn: string | null;
}

const byTimestamp = (table: Table): SnapshotTable => ({ table, where: (w) => inWindow(w) + servicesIn(w), rangeColumn: 'timestamp' });

/**
 * The templates a window needs: those seen in it, those its log lines name (however long ago they
 * were first seen), and the ends of their merge chains (svc_logs_resolved reads through them).
 */
function templatesWhere(w: SnapshotWindow): string {
  const named = `SELECT DISTINCT template_id FROM ${LOGS.name} WHERE ${inWindow(w)}${servicesIn(w)} AND template_id IS NOT NULL`;
  const seen = `first_seen < ${sqlTimestamp(w.toUs)} AND last_seen >= ${sqlTimestamp(w.fromUs)}`;
  const chainEnds = `SELECT resolved_template_id FROM (${MERGE_CHAIN_SQL}) WHERE template_id IN (SELECT template_id FROM ${LOG_TEMPLATES.name} WHERE ${seen}) OR template_id IN (${named})`;
  return `(${seen} OR template_id IN (${named}) OR template_id IN (${chainEnds}))${servicesIn(w)}`;
}

/** Every table a snapshot holds, in the order a restore loads them (templates before the logs that name them). */
export const SNAPSHOT_TABLES: readonly SnapshotTable[] = [
  { table: LOG_TEMPLATES, where: templatesWhere, rangeColumn: null },
  byTimestamp(SPANS),
  byTimestamp(LOGS),
  byTimestamp(METRICS_GAUGE),
  byTimestamp(METRICS_SUM),
  byTimestamp(METRICS_HISTOGRAM),
  byTimestamp(METRICS_EXP_HISTOGRAM),
  byTimestamp(PROFILES),
  byTimestamp(ANOMALIES),
  // What GET /v1/services lists: merged into the store's bounds on restore, not inserted.
  { table: SERVICES, where: (w) => `last_seen >= ${sqlTimestamp(w.fromUs)} AND first_seen < ${sqlTimestamp(w.toUs)}${servicesIn(w)}`, rangeColumn: null },
  byTimestamp(SERIES),
  byTimestamp(RESOURCES_5M),
  byTimestamp(ERROR_TYPES_5M),
  byTimestamp(GEN_AI_5M),
  byTimestamp(LOG_LEVELS_10S),
  // Detector states whose every point is in the window (a state fed outside it would not match the series restored).
  { table: DETECTOR_STATE, where: (w) => `${bucketInWindow(w, 'first_bucket')} AND ${bucketInWindow(w, 'last_bucket')}${servicesIn(w)}`, rangeColumn: null },
  { table: ALERTS, where: (w) => inWindow(w, 'starts_at') + servicesIn(w), rangeColumn: null },
  // Buckets not closed yet: a diagnosis reads them raw, so after a restore it must too. Not by service (a bucket is every service's).
  { table: DIRTY_BUCKETS, where: (w) => bucketInWindow(w, 'bucket'), rangeColumn: null },
];

export function snapshotTable(name: string): SnapshotTable | undefined {
  return SNAPSHOT_TABLES.find((s) => s.table.name === name);
}

/** The SELECT of a table's window rows, in the table's column order. */
export function snapshotSelect(s: SnapshotTable, w: SnapshotWindow): string {
  return `SELECT ${cols(s.table)} FROM ${s.table.name} WHERE ${s.where(w)}`;
}

export interface ExportedTable {
  table: Table;
  file: string;
  rows: number;
}

/**
 * Writes every table's window rows to `file(table)` as zstd Parquet, in one read transaction on
 * `conn` (the files agree with each other whatever commits meanwhile). The files must be where the
 * store's DuckDB may write (its spool directory).
 */
export async function exportWindow(conn: DuckDBConnection, w: SnapshotWindow, file: (table: Table) => string): Promise<ExportedTable[]> {
  const out: ExportedTable[] = [];
  await conn.run('BEGIN TRANSACTION');
  try {
    for (const s of SNAPSHOT_TABLES) {
      const path = file(s.table);
      const r = await conn.run(`COPY (${snapshotSelect(s, w)}) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION zstd)`);
      out.push({ table: s.table, file: path, rows: Number(r.rowsChanged) });
    }
  } finally {
    await conn.run('COMMIT').catch(() => conn.run('ROLLBACK').catch(() => {}));
  }
  return out;
}

/** A template of a snapshot: what decides whether the store's template with the same id is the same one. */
export interface SnapshotTemplate {
  template_id: number;
  service_name: string;
  pattern: string;
}

/**
 * `read_parquet` of a staged file with the table's columns cast to its types. A column the file was
 * written without (`present` lacks it: a snapshot older than the column) reads as NULL; one it names
 * but lacks fails the statement.
 */
function fromParquet(t: Table, file: string, present?: ReadonlySet<string>): string {
  const col = (c: Table['columns'][number]) => (present && !present.has(c.name) ? `NULL::${c.type}` : `CAST("${c.name}" AS ${c.type})`);
  return `SELECT ${t.columns.map((c) => `${col(c)} AS "${c.name}"`).join(', ')} FROM read_parquet(${sqlString(file)})`;
}

/** The snapshot's templates (id, service, pattern), read from its staged file. */
export async function readSnapshotTemplates(conn: DuckDBConnection, file: string): Promise<SnapshotTemplate[]> {
  const rows = await readRows(conn, `SELECT template_id, service_name, pattern FROM (${fromParquet(LOG_TEMPLATES, file)})`);
  return rows.map((r) => ({ template_id: Number(r['template_id']), service_name: String(r['service_name']), pattern: String(r['pattern']) }));
}

/** The snapshot's template ids the store uses for another template (another service or pattern). */
export async function conflictingTemplates(conn: DuckDBConnection, templates: readonly SnapshotTemplate[]): Promise<number[]> {
  if (!templates.length) return [];
  const ids = templates.map((t) => t.template_id);
  const stored = await readRows(conn, `SELECT template_id, service_name, pattern FROM ${LOG_TEMPLATES.name} WHERE template_id IN (${ids.join(', ')})`);
  const byId = new Map(stored.map((r) => [Number(r['template_id']), r]));
  return templates.filter((t) => {
    const s = byId.get(t.template_id);
    return s !== undefined && (s['service_name'] !== t.service_name || s['pattern'] !== t.pattern);
  }).map((t) => t.template_id);
}

export interface RestoredTable {
  /** Rows in the file. */
  rows: number;
  /** Rows stored (or, for svc_services, services whose bounds were merged). */
  inserted: number;
  /** Rows the store held already. */
  duplicates: number;
}

export interface RestoreOutcome {
  tables: Record<string, RestoredTable>;
  /** Buckets now holding restored and earlier rows alike, marked for the detection pass. */
  bucketsReopened: number;
  /** Each restored service's first and last time seen (µs), for the services list. */
  services: Record<string, [number, number]>;
}

const ADDED = 'tds_restore_added';
const RENUMBER = 'tds_restore_renumber';

/** Columns that hold a template id: renumbered with the templates. */
const TEMPLATE_ID_COLUMNS: ReadonlyMap<Table, readonly string[]> = new Map([
  [LOG_TEMPLATES, ['template_id', 'merged_into', 'split_from']],
  [LOGS, ['template_id']],
]);

/** A file's rows as the table's columns, its template ids renumbered (a join with the small renumbering table). */
function source(t: Table, file: string, present: ReadonlySet<string> | undefined, renumbering: boolean): string {
  const from = fromParquet(t, file, present);
  const mapped = renumbering ? (TEMPLATE_ID_COLUMNS.get(t) ?? []) : [];
  if (!mapped.length) return from;
  const joins = mapped.map((c, i) => `LEFT JOIN ${RENUMBER} AS m${i} ON m${i}.old = src."${c}"`).join(' ');
  const select = t.columns.map((c) => (mapped.includes(c.name) ? `coalesce(m${mapped.indexOf(c.name)}.new, src."${c.name}") AS "${c.name}"` : `src."${c.name}"`)).join(', ');
  return `SELECT ${select} FROM (${from}) AS src ${joins}`;
}

/**
 * Loads staged Parquet files (table name → path) into the store on `conn`, inside the caller's
 * transaction. `renumber`: the snapshot's template ids → the fresh ids they take; `present`: the
 * columns each file was written with (its manifest's).
 */
export async function restoreTables(
  conn: DuckDBConnection,
  files: ReadonlyMap<string, string>,
  renumber: ReadonlyMap<number, number>,
  present: ReadonlyMap<string, ReadonlySet<string>> = new Map(),
): Promise<RestoreOutcome> {
  const out: RestoreOutcome = { tables: {}, bucketsReopened: 0, services: {} };
  await conn.run(`CREATE OR REPLACE TEMP TABLE ${RENUMBER} (old BIGINT PRIMARY KEY, new BIGINT)`);
  if (renumber.size) await conn.run(`INSERT INTO ${RENUMBER} VALUES ${[...renumber].map(([a, b]) => `(${a}, ${b})`).join(', ')}`);
  const reopened = new Set<number>();
  try {
    for (const s of SNAPSHOT_TABLES) {
      const file = files.get(s.table.name);
      if (file === undefined) continue;
      const t = s.table;
      const rows = Number((await readRows(conn, `SELECT sum(num_rows) AS n FROM parquet_file_metadata(${sqlString(file)})`))[0]!['n'] ?? 0);
      const src = source(t, file, present.get(t.name), renumber.size > 0);
      let inserted: number;
      if (t === SERVICES) {
        for (const r of await readRows(conn, `SELECT service_name, epoch_us(first_seen) AS a, epoch_us(last_seen) AS b FROM (${src})`)) {
          out.services[String(r['service_name'])] = [Number(r['a']), Number(r['b'])];
        }
        inserted = Object.keys(out.services).length;
      } else if (s.rangeColumn === null) {
        inserted = Number((await conn.run(`INSERT OR IGNORE INTO ${t.name} (${cols(t)}) SELECT ${cols(t)} FROM (${src})`)).rowsChanged);
      } else {
        inserted = await insertNew(conn, t, src, s.rangeColumn, reopened);
      }
      out.tables[t.name] = { rows, inserted, duplicates: t === SERVICES ? 0 : rows - inserted };
    }
    if (reopened.size) await conn.run(`INSERT OR IGNORE INTO ${DIRTY_BUCKETS.name} VALUES ${[...reopened].map((b) => `(${b})`).join(', ')}`);
    out.bucketsReopened = reopened.size;
  } finally {
    for (const tmp of [ADDED, RENUMBER]) await conn.run(`DROP TABLE IF EXISTS ${tmp}`).catch(() => {});
  }
  return out;
}

/** Tables whose rows the detection pass aggregates into series and rollups. */
const AGGREGATED: ReadonlySet<Table> = new Set([SPANS, LOGS, PROFILES]);

/** Two 64-bit hashes of a row, its columns in both orders (a row is taken for another only when both agree). */
function rowHashes(t: Table): string {
  const names = t.columns.map((c) => `"${c.name}"`);
  return `hash(${names.join(', ')}) AS tds_h1, hash(${[...names].reverse().join(', ')}) AS tds_h2`;
}

/**
 * Inserts the rows of `src` the store does not hold yet: all of them when the store has no row in
 * their time range (a straight INSERT), else the multiset difference (a row the store holds k times
 * and the file n times is added n − k times), rows compared by two 64-bit hashes of all their
 * columns: EXCEPT ALL over whole rows holds every column of both sides in memory and spills, which
 * is slow on a million spans. Buckets of aggregated tables that held rows before and got new ones go to
 * `reopened`.
 */
async function insertNew(conn: DuckDBConnection, t: Table, src: string, col: string, reopened: Set<number>): Promise<number> {
  const range = (await readRows(conn, `SELECT epoch_us(min("${col}")) AS lo, epoch_us(max("${col}")) AS hi FROM (${src})`))[0]!;
  if (range['lo'] === null) return 0;
  const within = `"${col}" >= ${sqlTimestamp(Number(range['lo']))} AND "${col}" <= ${sqlTimestamp(Number(range['hi']))}`;
  const held = await readRows(conn, `SELECT DISTINCT ${bucketIndexSql('timestamp')} AS b FROM ${t.name} WHERE ${within}`);
  if (!held.length) return Number((await conn.run(`INSERT INTO ${t.name} (${cols(t)}) SELECT ${cols(t)} FROM (${src})`)).rowsChanged);
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE ${ADDED} AS SELECT ${cols(t)} FROM (` +
      `SELECT *, row_number() OVER (PARTITION BY tds_h1, tds_h2) AS tds_nth FROM (SELECT *, ${rowHashes(t)} FROM (${src}))` +
      `) AS n LEFT JOIN (SELECT tds_h1, tds_h2, count(*) AS tds_held FROM (SELECT ${rowHashes(t)} FROM ${t.name} WHERE ${within}) GROUP BY ALL) AS o USING (tds_h1, tds_h2) ` +
      `WHERE n.tds_nth > coalesce(o.tds_held, 0)`,
  );
  if (AGGREGATED.has(t)) {
    const before = new Set(held.map((r) => Number(r['b'])));
    for (const r of await readRows(conn, `SELECT DISTINCT ${bucketIndexSql('timestamp')} AS b FROM ${ADDED}`)) if (before.has(Number(r['b']))) reopened.add(Number(r['b']));
  }
  return Number((await conn.run(`INSERT INTO ${t.name} (${cols(t)}) SELECT ${cols(t)} FROM ${ADDED}`)).rowsChanged);
}
