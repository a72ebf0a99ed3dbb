// Storage pruning: a narrow literal bound on `timestamp` reads a small fraction of a wide, time-ordered
// table (DuckDB zone maps skip whole row groups), while the same rows selected through a function of
// the column read everything. Rows scanned come from EXPLAIN ANALYZE's operator_rows_scanned metric.
import type { DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openQueryPool } from '../../src/query/run.js';
import { openFixture, type Fixture } from './fixture.js';

const N = 1_000_000; // about 8 row groups of 122,880 rows, one span every 21.6 ms over 6 hours
let fx: Fixture;

beforeAll(async () => {
  fx = await openFixture({ rows: false });
  await fx.writer.run(`
    INSERT INTO svc_spans (timestamp, service_name, trace_id, span_id, span_name, status_code, duration_us, operation, is_error)
    SELECT TIMESTAMP '2024-01-01 00:00:00' + to_microseconds(i * 21600), 'svc-' || (i % 5)::VARCHAR, 't', 's', 'op', 0, i % 1000, 'op', false
    FROM range(${N}) t(i)`);
  await fx.writer.run('CHECKPOINT');
  await fx.writer.run(`SET custom_profiling_settings = '{"OPERATOR_ROWS_SCANNED": "true", "OPERATOR_CARDINALITY": "true", "OPERATOR_TYPE": "true"}'`);
});
afterAll(() => fx.cleanup());

async function rowsScanned(conn: DuckDBConnection, sql: string): Promise<{ scanned: number; matched: number }> {
  const r = await conn.runAndReadAll(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`);
  const plan = JSON.parse(String(r.getRows()[0]![1])) as Record<string, unknown>;
  let scanned = 0;
  let matched = 0;
  const walk = (node: Record<string, unknown>): void => {
    if (node.operator_type === 'TABLE_SCAN') {
      scanned += Number(node.operator_rows_scanned);
      matched += Number(node.operator_cardinality);
    }
    for (const c of (node.children as Record<string, unknown>[] | undefined) ?? []) walk(c);
  };
  walk(plan);
  return { scanned, matched };
}

describe('zone maps', () => {
  it('a narrow literal timestamp bound reads a small fraction of the rows', async () => {
    const narrow = await rowsScanned(
      fx.writer,
      "SELECT count(*) FROM svc_spans WHERE timestamp >= TIMESTAMP '2024-01-01 03:00:00' AND timestamp < TIMESTAMP '2024-01-01 03:01:00'",
    );
    const unprunable = await rowsScanned(
      fx.writer,
      "SELECT count(*) FROM svc_spans WHERE epoch_us(timestamp) >= epoch_us(TIMESTAMP '2024-01-01 03:00:00') AND epoch_us(timestamp) < epoch_us(TIMESTAMP '2024-01-01 03:01:00')",
    );
    expect(narrow.matched).toBe(unprunable.matched);
    expect(narrow.matched).toBeGreaterThan(0);
    expect(unprunable.scanned).toBe(N);
    expect(narrow.scanned).toBeLessThanOrEqual(N / 4);
  });

  it('the same bounded query answers right through the guarded pool', async () => {
    const pool = await openQueryPool(fx.instance, { spoolDir: fx.spoolDir, timeoutMs: 10_000, rowCap: 10 });
    try {
      const { rows } = await pool.query(
        "SELECT count(*) AS n FROM svc_spans WHERE timestamp >= TIMESTAMP '2024-01-01 03:00:00' AND timestamp < TIMESTAMP '2024-01-01 03:01:00'",
      );
      expect(rows).toEqual([{ n: Math.ceil(60_000_000 / 21600) }]);
    } finally {
      pool.close();
    }
  });
});
