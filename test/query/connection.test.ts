// What locking a query connection does to the rest of the database. These settings are global in
// DuckDB: the tests pin that down so a DuckDB upgrade that changes it is noticed.
import { DuckDBInstance } from '@duckdb/node-api';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareQueryConnection } from '../../src/query/connection.js';
import { runQuery } from '../../src/query/run.js';
import { ApiError } from '../../src/core/errors.js';
import { tableFingerprint, openFixture, type Fixture } from './fixture.js';

let fx: Fixture | undefined;
afterEach(() => {
  fx?.cleanup();
  fx = undefined;
});

async function fails(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  throw new Error('expected a failure');
}

describe('prepareQueryConnection', () => {
  it('disables external access for every connection, except the spool directory', async () => {
    fx = await openFixture({ rows: false });
    const outside = mkdtempSync(join(tmpdir(), 'tds-outside-'));
    try {
      writeFileSync(join(fx.spoolDir, 'in.csv'), 'x\n1\n');
      writeFileSync(join(outside, 'out.csv'), 'x\n2\n');
      const q = await prepareQueryConnection(fx.instance, { spoolDir: fx.spoolDir });
      // The ingest writer (another connection) still loads spool files...
      const inSpool = await fx.writer.runAndReadAll(`SELECT x FROM read_csv('${join(fx.spoolDir, 'in.csv')}')`);
      expect(inSpool.getRowsJS()).toEqual([[1n]]);
      // ...but nothing else, and neither can the query connection, and `..` does not escape.
      expect(await fails(fx.writer.run(`SELECT * FROM read_csv('${join(outside, 'out.csv')}')`))).toMatch(/Permission Error/);
      expect(await fails(q.run(`SELECT * FROM read_csv('${join(outside, 'out.csv')}')`))).toMatch(/Permission Error/);
      expect(await fails(q.run(`SELECT * FROM read_csv('${join(fx.spoolDir, '..', '..', outside.split('/').pop()!, 'out.csv')}')`))).toMatch(/Permission Error/);
      expect(await fails(q.run("SELECT * FROM read_text('/etc/passwd')"))).toMatch(/Permission Error/);
      q.closeSync();
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('locks the configuration for every connection, present and future', async () => {
    fx = await openFixture({ rows: false });
    const q = await prepareQueryConnection(fx.instance, { spoolDir: fx.spoolDir });
    expect(await fails(q.run('SET threads = 1'))).toMatch(/locked/);
    expect(await fails(fx.writer.run('SET memory_limit = \'1GB\''))).toMatch(/locked/);
    expect(await fails(fx.writer.run('SET enable_external_access = true'))).toMatch(/locked/);
    const later = await fx.instance.connect();
    expect(await fails(later.run('RESET lock_configuration'))).toMatch(/locked/);
    expect(await fails(later.run('LOAD httpfs'))).toMatch(/disabled|Permission|locked/i);
    // Time zone is UTC for every connection.
    const tz = await later.runAndReadAll("SELECT current_setting('TimeZone')");
    expect(tz.getRowsJS()).toEqual([['UTC']]);
    later.closeSync();
    // A second query connection finds the instance locked and is handed out as is.
    const q2 = await prepareQueryConnection(fx.instance, { spoolDir: fx.spoolDir });
    expect(await fails(q2.run('SET threads = 1'))).toMatch(/locked/);
    q.closeSync();
    q2.closeSync();
  });

  it('still lets the engine write inside allowed directories, which is why the guard refuses ATTACH and COPY', async () => {
    fx = await openFixture({ rows: false });
    const q = await prepareQueryConnection(fx.instance, { spoolDir: fx.spoolDir });
    await q.run(`COPY (SELECT 1 AS x) TO '${join(fx.spoolDir, 'copied.csv')}'`);
    expect(existsSync(join(fx.spoolDir, 'copied.csv'))).toBe(true);
    q.closeSync();
  });

  it('refuses to hand out a connection when the configuration was locked with external access on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tds-locked-'));
    mkdirSync(join(dir, 'spool'));
    const inst = await DuckDBInstance.create(join(dir, 'lake.duckdb'));
    try {
      const c = await inst.connect();
      await c.run('SET lock_configuration = true');
      await expect(prepareQueryConnection(inst)).rejects.toThrow(/external access enabled/);
      c.closeSync();
    } finally {
      inst.closeSync();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is a second line of defence: unguarded statements on the query connection still cannot escape', async () => {
    fx = await openFixture();
    const q = await prepareQueryConnection(fx.instance, { spoolDir: fx.spoolDir });
    const before = await tableFingerprint(fx.writer);
    const opts = { timeoutMs: 5000, rowCap: 100 };
    for (const sql of ["SELECT * FROM read_text('/etc/passwd')", "SELECT * FROM read_csv('/etc/hostname')", 'SET threads = 1', "INSTALL httpfs", "SELECT * FROM glob('/etc/*')"]) {
      const err = await runQuery(q, sql, opts).then(() => undefined, (e: unknown) => e);
      expect(err, sql).toBeInstanceOf(ApiError);
    }
    expect(await tableFingerprint(fx.writer)).toEqual(before);
    // The fingerprint notices a change.
    await fx.writer.run("INSERT INTO svc_metrics_gauge (timestamp, service_name, metric_name, value) VALUES (TIMESTAMP '2024-01-02 00:00:00', 'x', 'm', 1)");
    expect(await tableFingerprint(fx.writer)).not.toEqual(before);
    q.closeSync();
  });
});
