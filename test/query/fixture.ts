// A real DuckDB store in a temp dir (SVC_DATA_DIR layout: <dir>/lake.duckdb, <dir>/spool) with every
// table of the schema and a few known rows, for the query tests.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALL_TABLES, createTableSql } from '../../src/store/schema.js';

export interface Fixture {
  dir: string;
  spoolDir: string;
  instance: DuckDBInstance;
  writer: DuckDBConnection;
  cleanup(): void;
}

export const SPAN_ROWS = `
INSERT INTO svc_spans (timestamp, service_name, trace_id, span_id, parent_span_id, span_name, span_kind, status_code,
  duration_us, operation, is_error, error_type, http_route, span_attributes) VALUES
 (TIMESTAMP '2024-01-01 00:00:00',        'frontend', 't1', 's1', NULL, 'GET /',          2, 0, 1000, 'GET /',          false, NULL,      '/',         '{"http.route":"/","user":{"id":7}}'),
 (TIMESTAMP '2024-01-01 00:00:00.000100', 'checkout', 't1', 's2', 's1', 'POST /checkout', 2, 0,  800, 'POST /checkout', false, NULL,      '/checkout', '{"http.route":"/checkout","items":[1,2,3]}'),
 (TIMESTAMP '2024-01-01 00:00:00.000200', 'payment',  't1', 's3', 's2', 'charge',         3, 2,  600, 'charge',         true,  'timeout', NULL,        '{"error.type":"timeout"}'),
 (TIMESTAMP '2024-01-01 00:05:00',        'frontend', 't2', 's4', NULL, 'GET /',          2, 0, 2000, 'GET /',          false, NULL,      '/',         '{"http.route":"/"}'),
 (TIMESTAMP '2024-01-01 00:05:00.5',      'checkout', 't2', 's5', 's4', 'POST /checkout', 2, 2, 3000, 'POST /checkout', true,  'http_500','/checkout', '{"http.route":"/checkout","items":[]}'),
 (TIMESTAMP '2024-01-01 00:10:00',        'payment',  't3', 's6', NULL, 'charge',         3, 0,  400, 'charge',         false, NULL,      NULL,        '{}')`;

export const OTHER_ROWS = [
  `INSERT INTO svc_logs (timestamp, service_name, severity_text, body, trace_id, is_error, template_id) VALUES
   (TIMESTAMP '2024-01-01 00:00:01', 'checkout', 'INFO',  'order 17 placed', 't1', false, 1),
   (TIMESTAMP '2024-01-01 00:05:01', 'checkout', 'ERROR', 'payment failed for order 18', 't2', true, 2),
   (TIMESTAMP '2024-01-01 00:05:02', 'payment',  'ERROR', 'card declined', NULL, true, 3)`,
  `INSERT INTO svc_anomalies (timestamp, service_name, operation, signal, kind, direction, before, after, ts_shift_us, detected_at, drill_down_sql) VALUES
   (TIMESTAMP '2024-01-01 00:05:00', 'checkout', 'POST /checkout', 'error_rate', 'changepoint', 'worsening', 0.0, 50.0, 1704067500000000, TIMESTAMP '2024-01-01 00:12:00',
    'SELECT * FROM svc_spans WHERE service_name = ''checkout'' AND timestamp >= TIMESTAMP ''2024-01-01 00:05:00'' ORDER BY timestamp')`,
  `INSERT INTO svc_metrics_gauge (timestamp, service_name, metric_name, value) VALUES
   (TIMESTAMP '2024-01-01 00:00:00', 'checkout', 'queue_depth', 3.5),
   (TIMESTAMP '2024-01-01 00:01:00', 'checkout', 'queue_depth', 4.5)`,
  `INSERT INTO svc_metrics_histogram (timestamp, service_name, metric_name, metric_type, count, sum, bucket_counts, explicit_bounds) VALUES
   (TIMESTAMP '2024-01-01 00:00:00', 'checkout', 'latency', 'histogram', 10, 55.5, [1, 4, 5]::UBIGINT[], [10.0, 100.0])`,
];

export async function openFixture(opts: { rows?: boolean } = {}): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'tds-query-'));
  const spoolDir = join(dir, 'spool');
  mkdirSync(spoolDir);
  const instance = await DuckDBInstance.create(join(dir, 'lake.duckdb'));
  const writer = await instance.connect();
  for (const t of ALL_TABLES) await writer.run(createTableSql(t));
  if (opts.rows !== false) {
    await writer.run(SPAN_ROWS);
    for (const sql of OTHER_ROWS) await writer.run(sql);
  }
  return {
    dir,
    spoolDir,
    instance,
    writer,
    cleanup() {
      try {
        writer.closeSync();
        instance.closeSync();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Every file under `dir` with its size, for "no file was created or changed" checks (the WAL excluded). */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (!name.endsWith('.wal') && !name.endsWith('.duckdb')) out.push(`${p}:${st.size}`);
      else out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** A fingerprint of every table's contents. */
export async function tableFingerprint(conn: DuckDBConnection): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const t of ALL_TABLES) {
    const r = await conn.runAndReadAll(`SELECT count(*)::VARCHAR || ':' || coalesce(sum(hash(t))::VARCHAR, '0') FROM ${t.name} AS t`);
    out[t.name] = String(r.getRows()[0]![0]);
  }
  const tables = await conn.runAndReadAll(
    "SELECT string_agg(database_name || '.' || schema_name || '.' || table_name, ',' ORDER BY 1) FROM duckdb_tables()",
  );
  out['<catalog>'] = String(tables.getRows()[0]![0]);
  const dbs = await conn.runAndReadAll("SELECT string_agg(database_name, ',' ORDER BY 1) FROM duckdb_databases()");
  out['<databases>'] = String(dbs.getRows()[0]![0]);
  return out;
}

/** Every setting's value, for "no setting changed" checks. */
export async function settingsSnapshot(conn: DuckDBConnection): Promise<Record<string, string>> {
  const r = await conn.runAndReadAll('SELECT name, value FROM duckdb_settings() ORDER BY name');
  const out: Record<string, string> = {};
  for (const [name, value] of r.getRowsJS()) out[String(name)] = String(value);
  return out;
}
