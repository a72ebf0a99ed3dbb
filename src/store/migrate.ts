// Brings a database file to the current schema. Adding a table or a column is automatic (the schema
// in schema.ts is the truth); anything else is a numbered step in MIGRATIONS. The version reached is
// recorded in svc_meta, and a file written by a newer version is refused rather than damaged.
import type { DuckDBConnection } from '@duckdb/node-api';
import { ALL_TABLES, DIRTY_BUCKETS, QUERYABLE_VIEWS, ROLLUP_TABLES, SERIES, SCHEMA_VERSION, createTableSql, createViewSql } from './schema.js';
import { bucketIndexSql, inTransaction } from './sql.js';

interface Migration {
  /** The version this step brings the database to. */
  to: number;
  statements: readonly string[];
}

/** Non-additive steps, oldest first. Version 1 is the first schema: nothing to migrate from. */
export const MIGRATIONS: readonly Migration[] = [];

async function scalar(conn: DuckDBConnection, sql: string): Promise<unknown> {
  const r = await conn.runAndReadAll(sql);
  return r.getRows()[0]?.[0];
}

export async function migrate(conn: DuckDBConnection): Promise<{ from: number; to: number; addedColumns: string[] }> {
  await conn.run('CREATE TABLE IF NOT EXISTS svc_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)');
  const raw = await scalar(conn, "SELECT value FROM svc_meta WHERE key = 'schema_version'");
  const hasTables = Number(await scalar(conn, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'svc_spans'")) > 0;
  const from = raw === undefined ? (hasTables ? 0 : SCHEMA_VERSION) : Number(raw);
  if (from > SCHEMA_VERSION) {
    throw new Error(`the database was written by a newer version (schema ${from}; this build knows ${SCHEMA_VERSION}); refusing to open it`);
  }
  const existing = new Set((await conn.runAndReadAll('SELECT table_name FROM duckdb_tables()')).getRows().map((r) => String(r[0])));
  return inTransaction(conn, async () => {
    for (const t of ALL_TABLES) await conn.run(createTableSql(t));
    // Rollups new to a store that already has closed buckets: mark those buckets for the detection
    // pass to close again, which writes their rollups (and rewrites the same series).
    if (existing.has(SERIES.name) && ROLLUP_TABLES.some((t) => !existing.has(t.name))) {
      await conn.run(`INSERT OR IGNORE INTO ${DIRTY_BUCKETS.name} SELECT DISTINCT ${bucketIndexSql('timestamp')} FROM ${SERIES.name}`);
    }
    const addedColumns: string[] = [];
    for (const t of ALL_TABLES) {
      const have = new Set(
        (await conn.runAndReadAll(`SELECT column_name FROM duckdb_columns() WHERE table_name = '${t.name}'`)).getRows().map((r) => String(r[0])),
      );
      for (const col of t.columns) {
        if (have.has(col.name)) continue;
        // New columns cannot be NOT NULL on existing rows; the writer always fills them.
        await conn.run(`ALTER TABLE ${t.name} ADD COLUMN "${col.name}" ${col.type}`);
        addedColumns.push(`${t.name}.${col.name}`);
      }
    }
    for (const m of MIGRATIONS) if (m.to > from) for (const s of m.statements) await conn.run(s);
    // views last, over the columns just added; replaced every start so a changed definition applies
    for (const v of QUERYABLE_VIEWS) await conn.run(createViewSql(v));
    await conn.run(`INSERT OR REPLACE INTO svc_meta VALUES ('schema_version', '${SCHEMA_VERSION}')`);
    return { from, to: SCHEMA_VERSION, addedColumns };
  });
}
