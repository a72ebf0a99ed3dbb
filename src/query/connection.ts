// Defence in depth for `/v1/query`: the query connections run with external access disabled and the
// configuration locked, so even a guard bug cannot read or write a file, load an extension or change
// a setting.
//
// Measured with DuckDB 1.5.6 (see test/query/connection.test.ts): these settings are DATABASE-GLOBAL.
// Setting them on the query connection applies at once to every connection of the instance, the
// ingest writer included, and to connections opened later:
//   - enable_external_access=false stops the writer's `read_csv` of spool files too, unless the spool
//     directory is in `allowed_directories` (then files inside it stay readable AND writable, for every
//     connection; `..` escapes are refused). DuckDB adds its own temp directory by itself.
//   - lock_configuration=true makes every later SET/RESET fail on every connection ("the configuration
//     has been locked"), except session-local ones such as search_path. So all global settings
//     (threads, memory_limit, TimeZone...) must be applied BEFORE prepareQueryConnection is called.
//   - ATTACH of a file inside an allowed directory, and COPY TO into it, still work: refusing those
//     statements is the guard's job.
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Connector } from '../store/db.js';
import { resolve, sep } from 'node:path';
import { sqlString } from '../store/sql.js';

export interface PrepareOptions {
  /** Directory the ingest writer must still read (and write) with external access disabled. */
  spoolDir?: string;
  /** Global TimeZone set before locking, so now()::TIMESTAMP and TIMESTAMPTZ render in UTC. Default 'UTC'; null leaves it. */
  timeZone?: string | null;
}

async function setting(conn: DuckDBConnection, name: 'lock_configuration' | 'enable_external_access'): Promise<unknown> {
  // current_setting() needs a constant name, so it cannot be a bound parameter; the names are fixed here.
  const r = await conn.runAndReadAll(`SELECT current_setting(${sqlString(name)})`);
  return r.getRowsJS()[0]?.[0];
}

/**
 * Opens a connection for `/v1/query` on the store. The first call locks its DuckDB instance down
 * (external access off except `spoolDir`, extension auto-install/auto-load off, configuration locked);
 * later calls find it locked, check it is locked down as expected and just connect.
 */
export async function prepareQueryConnection(store: Connector, opts: PrepareOptions = {}): Promise<DuckDBConnection> {
  const conn = await store.connect();
  try {
    if ((await setting(conn, 'lock_configuration')) !== true) {
      if (opts.spoolDir !== undefined) {
        const dir = resolve(opts.spoolDir) + sep;
        await conn.run(`SET allowed_directories = [${sqlString(dir)}]`);
      }
      const tz = opts.timeZone === undefined ? 'UTC' : opts.timeZone;
      if (tz !== null) await conn.run(`SET GLOBAL TimeZone = ${sqlString(tz)}`);
      await conn.run('SET autoinstall_known_extensions = false');
      await conn.run('SET autoload_known_extensions = false');
      await conn.run('SET allow_community_extensions = false');
      await conn.run('SET enable_external_access = false');
      await conn.run('SET lock_configuration = true');
    }
    if ((await setting(conn, 'enable_external_access')) !== false) {
      throw new Error('the DuckDB configuration is locked with external access enabled; the query connection cannot be secured');
    }
    return conn;
  } catch (err) {
    conn.closeSync();
    throw err;
  }
}
