// runQuery and the pool: JSON conversion rules, the row cap, the time limit (INTERRUPT, connection
// still usable), parallel queries and an event loop that stays free.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import { prepareQueryConnection } from '../../src/query/connection.js';
import { openQueryPool, runQuery } from '../../src/query/run.js';
import { isoFromMicros } from '../../src/core/time.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openFixture, type Fixture } from './fixture.js';

let fx: Fixture;
let conn: DuckDBConnection;
const opts = { timeoutMs: 10_000, rowCap: 100_000 };

beforeAll(async () => {
  fx = await openFixture();
  conn = await prepareQueryConnection(fx.instance, { spoolDir: fx.spoolDir });
});
afterAll(() => {
  conn.closeSync();
  fx.cleanup();
});

const one = async (sql: string): Promise<unknown> => (await runQuery(conn, sql, opts))[0];

describe('JSON conversion', () => {
  it('keeps integers as numbers up to 2^53 and turns larger ones into exact strings', async () => {
    expect(
      await one(
        'SELECT 9007199254740991::BIGINT AS max_safe, -9007199254740991::BIGINT AS min_safe, 9007199254740992::BIGINT AS over, ' +
          '(-9223372036854775807::BIGINT - 1) AS min64, 18446744073709551615::UBIGINT AS u64, 170141183460469231731687303715884105727::HUGEINT AS h, ' +
          '42::HUGEINT AS small_huge, 7::TINYINT AS t, 65535::USMALLINT AS us, 4294967295::UINTEGER AS ui',
      ),
    ).toEqual({
      max_safe: 9007199254740991,
      min_safe: -9007199254740991,
      over: '9007199254740992',
      min64: '-9223372036854775808',
      u64: '18446744073709551615',
      h: '170141183460469231731687303715884105727',
      small_huge: 42,
      t: 7,
      us: 65535,
      ui: 4294967295,
    });
  });

  it('renders NaN and infinities as strings, finite floats as numbers', async () => {
    expect(await one("SELECT 'nan'::DOUBLE AS a, 'inf'::DOUBLE AS b, '-inf'::DOUBLE AS c, 1.5::FLOAT AS d, 0.1::DOUBLE AS e")).toEqual({
      a: 'NaN',
      b: 'Infinity',
      c: '-Infinity',
      d: 1.5,
      e: 0.1,
    });
  });

  it('renders DECIMAL as a number when lossless, else as the exact string', async () => {
    expect(
      await one(
        'SELECT 1.10::DECIMAL(10,2) AS a, -0.30::DECIMAL(4,2) AS b, 12345678901234567.89::DECIMAL(19,2) AS c, ' +
          '123456789012345678901234567890::DECIMAL(38,0) AS d, 0::DECIMAL(5,3) AS e, 100.0 * 1 AS f',
      ),
    ).toEqual({ a: 1.1, b: -0.3, c: '12345678901234567.89', d: '123456789012345678901234567890', e: 0, f: 100 });
  });

  it('renders timestamps as UTC ISO strings with microseconds, dates as YYYY-MM-DD', async () => {
    expect(
      await one(
        "SELECT TIMESTAMP '2024-01-01 00:00:00.123456' AS ts, TIMESTAMP '1969-12-31 23:59:59.999999' AS before_epoch, " +
          "'2024-01-01 00:00:01.5'::TIMESTAMP_MS AS ms, '2024-01-01 00:00:01'::TIMESTAMP_S AS s, " +
          "'2024-01-01 00:00:00.123456789'::TIMESTAMP_NS AS ns, TIMESTAMPTZ '2024-01-01 02:00:00+02' AS tz, " +
          "DATE '2024-02-29' AS d, TIME '12:34:56.5' AS t, 'infinity'::TIMESTAMP AS inf, '-infinity'::TIMESTAMP AS ninf",
      ),
    ).toEqual({
      ts: '2024-01-01T00:00:00.123456Z',
      before_epoch: '1969-12-31T23:59:59.999999Z',
      ms: '2024-01-01T00:00:01.500000Z',
      s: '2024-01-01T00:00:01.000000Z',
      ns: '2024-01-01T00:00:00.123456789Z',
      tz: '2024-01-01T00:00:00.000000Z',
      d: '2024-02-29',
      t: '12:34:56.5',
      inf: 'infinity',
      ninf: '-infinity',
    });
    expect(isoFromMicros(-1n)).toBe('1969-12-31T23:59:59.999999Z');
    expect(isoFromMicros(1_704_067_200_000_100n)).toBe('2024-01-01T00:00:00.000100Z');
  });

  it('renders nested types as JSON arrays and objects, BLOB as base64, UUID and INTERVAL as text', async () => {
    expect(
      await one(
        "SELECT [1, NULL, 3] AS l, [[1], []] AS ll, {'a': 1, 'b': {'c': [TIMESTAMP '2024-01-01 00:00:00']}} AS s, " +
          "MAP {'x': 1, 'y': 2} AS m, MAP {1: 'one'} AS mi, [1, 2]::INTEGER[2] AS arr, '\\xDE\\xAD'::BLOB AS b, " +
          "'00000000-0000-0000-0000-000000000001'::UUID AS u, INTERVAL 90 MINUTE AS i, NULL AS n, true AS t, " +
          "union_value(k := 5) AS un, [9007199254740993]::BIGINT[] AS big",
      ),
    ).toEqual({
      l: [1, null, 3],
      ll: [[1], []],
      s: { a: 1, b: { c: ['2024-01-01T00:00:00.000000Z'] } },
      m: { x: 1, y: 2 },
      mi: { '1': 'one' },
      arr: [1, 2],
      b: Buffer.from([0xde, 0xad]).toString('base64'),
      u: '00000000-0000-0000-0000-000000000001',
      i: '01:30:00',
      n: null,
      t: true,
      un: 5,
      big: ['9007199254740993'],
    });
  });

  it('produces values that survive JSON.stringify unchanged', async () => {
    const rows = await runQuery(conn, 'SELECT * FROM svc_spans ORDER BY timestamp', opts);
    expect(rows).toHaveLength(6);
    expect(JSON.parse(JSON.stringify(rows))).toEqual(rows);
    expect(rows[0]!.timestamp).toBe('2024-01-01T00:00:00.000000Z');
  });
});

describe('row cap', () => {
  it('stops with ROW_CAP instead of materialising a huge answer, and the connection stays usable', async () => {
    const err = await runQuery(conn, 'SELECT range AS i FROM range(100000000)', { timeoutMs: 10_000, rowCap: 5000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('ROW_CAP');
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).hint).toMatch(/LIMIT/);
    expect(await runQuery(conn, 'SELECT 1 AS x', opts)).toEqual([{ x: 1 }]);
  });

  it('returns exactly rowCap rows when the answer has that many', async () => {
    const rows = await runQuery(conn, 'SELECT range AS i FROM range(5000)', { timeoutMs: 10_000, rowCap: 5000 });
    expect(rows).toHaveLength(5000);
    expect(rows[4999]).toEqual({ i: 4999 });
  });
});

describe('time limit', () => {
  const slow = 'SELECT count(*) AS n FROM range(100000000000) a WHERE a.range % 7 = 3';

  it('interrupts a slow query with INTERRUPT within the limit plus a margin; the next query works', async () => {
    const limit = 500;
    const t0 = performance.now();
    const err = await runQuery(conn, slow, { timeoutMs: limit, rowCap: 10 }).catch((e: unknown) => e);
    const elapsed = performance.now() - t0;
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('INTERRUPT');
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).toBody().error.hint).toMatch(/literal/);
    expect(elapsed).toBeLessThan(limit + 1500);
    expect(await runQuery(conn, 'SELECT count(*) AS n FROM svc_spans', opts)).toEqual([{ n: 6 }]);
  });

  it('interrupts a slow streamed answer too', async () => {
    const err = await runQuery(conn, 'SELECT a.range FROM range(100000000000) a WHERE a.range % 1000000007 = 1000000006', { timeoutMs: 300, rowCap: 10 }).catch((e: unknown) => e);
    expect((err as ApiError).code).toBe('INTERRUPT');
    expect(await runQuery(conn, 'SELECT 2 AS x', opts)).toEqual([{ x: 2 }]);
  });
});

describe('pool', () => {
  it('runs queries in parallel, keeps the event loop free, and one time-out does not disturb the others', async () => {
    const pool = await openQueryPool(fx.instance, { size: 2, timeoutMs: 800, rowCap: 1000 });
    try {
      let ticks = 0;
      const timer = setInterval(() => ticks++, 10);
      const slow = pool.query('SELECT count(*) AS n FROM range(100000000000) a WHERE a.range % 7 = 3').catch((e: unknown) => e);
      const fast = await Promise.all(Array.from({ length: 5 }, (_, i) => pool.query(`SELECT ${i} AS i, count(*) AS n FROM svc_spans`)));
      expect(fast.map((a) => a.rows[0])).toEqual(Array.from({ length: 5 }, (_, i) => ({ i, n: 6 })));
      const err = await slow;
      clearInterval(timer);
      expect((err as ApiError).code).toBe('INTERRUPT');
      // The timer kept firing while DuckDB worked: the event loop was never blocked for the whole query.
      expect(ticks).toBeGreaterThan(10);
      expect((await pool.query('SELECT 1 AS x')).rows).toEqual([{ x: 1 }]);
    } finally {
      pool.close();
    }
  });

  it('does not block ingest: the writer commits while a slow query runs', async () => {
    const pool = await openQueryPool(fx.instance, { size: 1, timeoutMs: 1500, rowCap: 10 });
    try {
      let slowDone = false;
      const slow = pool
        .query('SELECT count(*) AS n FROM range(100000000000) a WHERE a.range % 7 = 3')
        .catch((e: unknown) => e)
        .finally(() => {
          slowDone = true;
        });
      await fx.writer.run(
        "INSERT INTO svc_metrics_sum (timestamp, service_name, metric_name, value) VALUES (TIMESTAMP '2024-01-01 00:00:00', 'checkout', 'requests', 1)",
      );
      expect(slowDone).toBe(false);
      expect(((await slow) as ApiError).code).toBe('INTERRUPT');
      expect((await pool.query('SELECT count(*) AS n FROM svc_metrics_sum')).rows).toEqual([{ n: 1 }]);
    } finally {
      pool.close();
    }
  });

  it('refuses with OVERLOADED beyond the queue and NOT_READY once closed', async () => {
    const pool = await openQueryPool(fx.instance, { size: 1, maxQueue: 1, timeoutMs: 500, rowCap: 10 });
    const slow = 'SELECT count(*) AS n FROM range(100000000000) a WHERE a.range % 7 = 3';
    const a = pool.query(slow).catch((e: unknown) => e);
    const b = pool.query('SELECT 1 AS x').catch((e: unknown) => e);
    const c = await pool.query('SELECT 2 AS x').catch((e: unknown) => e);
    expect((c as ApiError).code).toBe('OVERLOADED');
    expect((await a as ApiError).code).toBe('INTERRUPT');
    expect(await b).toMatchObject({ rows: [{ x: 1 }] });
    pool.close();
    expect(((await pool.query('SELECT 1').catch((e: unknown) => e)) as ApiError).code).toBe('NOT_READY');
  });
});
