// End to end through the query pool on a real store: every hostile statement refused with a 400 and
// nothing changed (table contents, catalog, settings, files); every valid statement answered right.
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import { openQueryPool, type QueryPool } from '../../src/query/run.js';
import { HOSTILE, VALID } from './corpus.js';
import { listFiles, openFixture, settingsSnapshot, tableFingerprint, type Fixture } from './fixture.js';

let fx: Fixture;
let pool: QueryPool;
const OUT = join(tmpdir(), `tds-query-must-not-exist-${process.pid}.csv`);

beforeAll(async () => {
  fx = await openFixture();
  writeFileSync(join(fx.spoolDir, 'data.csv'), 'a,b\n1,2\n');
  pool = await openQueryPool(fx.instance, { spoolDir: fx.spoolDir, size: 2, timeoutMs: 10_000, rowCap: 1000 });
});
afterAll(() => {
  pool.close();
  fx.cleanup();
});

const fill = (sql: string): string => sql.replaceAll('{SPOOL}', fx.spoolDir).replaceAll('{OUT}', OUT);

async function refusal(sql: string): Promise<ApiError> {
  try {
    await pool.query(sql);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error(`accepted: ${sql.slice(0, 200)}`);
}

describe('hostile corpus through the pool', () => {
  it('refuses every statement with a 400 and changes nothing', async () => {
    const tablesBefore = await tableFingerprint(fx.writer);
    const settingsBefore = await settingsSnapshot(fx.writer);
    const filesBefore = listFiles(fx.dir);
    for (const h of HOSTILE) {
      const err = await refusal(fill(h.sql));
      expect(err.status, h.why).toBe(400);
      if (h.code) expect(err.code, h.why).toBe(h.code);
      expect(err.toBody().error.hint.length, h.why).toBeGreaterThan(0);
    }
    expect(await tableFingerprint(fx.writer)).toEqual(tablesBefore);
    expect(await settingsSnapshot(fx.writer)).toEqual(settingsBefore);
    expect(listFiles(fx.dir)).toEqual(filesBefore);
    expect(existsSync(OUT)).toBe(false);
    // The pool still answers after the whole corpus.
    expect((await pool.query('SELECT count(*) AS n FROM svc_spans')).rows).toEqual([{ n: 6 }]);
  });
});

describe('valid corpus through the pool', () => {
  it.each(VALID.map((v) => [v.why, v] as const))('answers right: %s', async (_why, v) => {
    const { rows } = await pool.query(v.sql);
    expect(rows).toEqual(v.rows);
  });

  it('runs drill_down_sql stored by the service verbatim', async () => {
    const { rows } = await pool.query('SELECT drill_down_sql FROM svc_anomalies');
    const sql = rows[0]!.drill_down_sql as string;
    const answer = await pool.query(sql);
    expect(answer.rows.map((r) => r.span_id)).toEqual(['s5']);
    expect(answer.columns).toContain('timestamp');
  });

  it('keys duplicate column names apart', async () => {
    const { rows, columns } = await pool.query("SELECT 1 AS a, 2 AS a, 'x' AS \"__proto__\"");
    expect(columns).toEqual(['a', 'a:1', '__proto__']);
    expect(Object.keys(rows[0]!)).toEqual(['a', 'a:1', '__proto__']);
    expect(JSON.parse(JSON.stringify(rows[0]))).toEqual(JSON.parse('{"a":1,"a:1":2,"__proto__":"x"}'));
  });

  it('reports binder errors as SQL_ERROR with a hint', async () => {
    const err = await refusal('SELECT no_such_column FROM svc_spans');
    expect(err.code).toBe('SQL_ERROR');
    expect(err.message).toMatch(/no_such_column/);
    expect(err.hint.length).toBeGreaterThan(0);
  });
});
