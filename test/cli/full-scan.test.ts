import { describe, expect, it } from 'vitest';
import { checkFullScan, rewriteDuckDbIsms, timestampTables } from '../../src/cli/full-scan.js';
import { QUERYABLE_TABLES } from '../../src/store/schema.js';

const LO = "TIMESTAMP '2025-01-01 00:00:00'";
const HI = "TIMESTAMP '2025-01-01 01:00:00'";

function status(sql: string): string {
  return checkFullScan(sql).status;
}

function unboundedTables(sql: string): string[] {
  const r = checkFullScan(sql);
  if (r.status !== 'unbounded') return [];
  return r.unbounded.map((u) => (u.alias ? `${u.table} AS ${u.alias}` : u.table)).sort();
}

describe('timestampTables', () => {
  it('covers every queryable table of the schema (all have a timestamp column)', () => {
    const t = timestampTables();
    for (const table of QUERYABLE_TABLES) expect(t.has(table.name)).toBe(true);
    expect(t.has('svc_spans')).toBe(true);
  });
});

describe('checkFullScan: bounded statements pass', () => {
  it.each([
    [`SELECT * FROM svc_spans WHERE timestamp >= ${LO}`],
    [`SELECT count(*) FROM svc_spans WHERE service_name = 'a' AND timestamp >= ${LO} AND timestamp < ${HI}`],
    [`SELECT * FROM svc_spans WHERE timestamp BETWEEN '2025-01-01' AND '2025-01-02'`],
    [`SELECT * FROM svc_logs WHERE timestamp > '2025-01-01 00:00:00'`],
    [`SELECT * FROM svc_logs WHERE ${LO} <= timestamp`], // literal on the left
    [`SELECT * FROM svc_logs WHERE "timestamp" > ${LO}`], // quoted column
    [`SELECT * FROM svc_logs WHERE timestamp > CAST('2025-01-01' AS TIMESTAMP)`],
    [`SELECT * FROM svc_logs WHERE timestamp > '2025-01-01'::TIMESTAMP`],
    [`SELECT * FROM svc_logs WHERE timestamp > DATE '2025-01-01'`],
    [`SELECT * FROM svc_logs WHERE timestamp > ${HI} - INTERVAL '1 hour'`],
    [`SELECT * FROM svc_logs WHERE timestamp > make_timestamp(1735689600000000)`],
    [`SELECT * FROM svc_logs WHERE timestamp > epoch_ms(1735689600000)`],
    [`SELECT * FROM svc_logs WHERE timestamp > '2025-01-01T00:00:00Z'`], // a plain string is cast to TIMESTAMP: pushed down
    [`SELECT * FROM svc_logs WHERE timestamp = ${LO}`],
    [`SELECT * FROM svc_logs WHERE timestamp IN (${LO}, ${HI})`],
    [`SELECT * FROM svc_anomalies WHERE timestamp > 1735689600`], // a number counts (the server judges the type)
    [`SELECT * FROM lake.svc_spans WHERE timestamp > ${LO}`],
    [`SELECT * FROM main.svc_spans s WHERE s.timestamp > ${LO}`],
    [`SELECT * FROM lake.main.svc_spans WHERE timestamp > ${LO}`],
    [`SELECT * FROM svc_spans WHERE svc_spans.timestamp > ${LO}`], // qualified by table name
    [`SELECT * FROM svc_spans WHERE (timestamp > ${LO} AND is_error) OR (timestamp > ${HI} AND status_code = 2)`], // both OR branches bounded
    [`SELECT * FROM svc_spans WHERE (((timestamp > ${LO})))`],
    [`SELECT 1 AS x`], // no table
    [`SELECT * FROM (SELECT 1 AS a) t`],
    [`SELECT * FROM some_other_table`], // not a timestamp table: the server decides
  ])('%s', (sql) => {
    expect(checkFullScan(sql)).toMatchObject({ status: 'ok' });
  });
});

describe('checkFullScan: unbounded statements are refused', () => {
  it.each([
    [`SELECT * FROM svc_spans`],
    [`SELECT * FROM svc_spans WHERE service_name = 'a'`],
    [`SELECT * FROM svc_spans WHERE timestamp IS NOT NULL`],
    [`SELECT * FROM svc_spans WHERE timestamp <> ${LO}`], // not a bound
    [`SELECT * FROM svc_spans WHERE timestamp NOT BETWEEN ${LO} AND ${HI}`],
    [`SELECT * FROM svc_spans WHERE NOT (timestamp < ${LO})`], // NOT never counts
    [`SELECT * FROM svc_spans WHERE timestamp > ${LO} OR service_name = 'a'`], // only one OR branch
    [`SELECT * FROM svc_spans WHERE duration_us > 5`],
    [`SELECT * FROM svc_spans WHERE CAST(timestamp AS DATE) = DATE '2025-01-01'`], // column wrapped
    [`SELECT * FROM svc_spans WHERE date_trunc('hour', timestamp) = ${LO}`],
    [`SELECT * FROM svc_spans WHERE timestamp > (SELECT max(timestamp) FROM svc_logs WHERE timestamp > ${LO})`], // subquery is not a literal
    [`SELECT * FROM svc_spans WHERE timestamp > some_column`],
    [`SELECT * FROM svc_metrics_gauge`],
    [`SELECT * FROM svc_log_templates`],
    [`SELECT * FROM svc_profiles`],
    [`SELECT * FROM svc_metrics_exp_histogram`],
  ])('%s', (sql) => {
    expect(status(sql)).toBe('unbounded');
  });

  it.each([
    [`SELECT * FROM svc_spans WHERE timestamp > now() - INTERVAL '1 hour'`],
    [`SELECT * FROM svc_spans WHERE timestamp > now()::TIMESTAMP - INTERVAL 1 HOUR`],
    [`SELECT * FROM svc_spans WHERE timestamp > CAST(now() AS TIMESTAMP) - INTERVAL '15 minutes'`],
    [`SELECT * FROM svc_spans WHERE timestamp > current_timestamp - INTERVAL '1 hour'`],
    [`SELECT * FROM svc_spans WHERE timestamp >= current_date`],
    [`SELECT * FROM svc_spans WHERE timestamp BETWEEN now() - INTERVAL '1 hour' AND now()`],
  ])('now()-based bounds do not count: %s', (sql) => {
    const r = checkFullScan(sql);
    expect(r.status).toBe('unbounded');
    if (r.status === 'unbounded') expect(r.unbounded[0]!.now_based).toBe(true);
  });

  it('a now()-based bound is reported as such only when present', () => {
    const r = checkFullScan('SELECT * FROM svc_spans');
    expect(r).toEqual({ status: 'unbounded', unbounded: [{ table: 'svc_spans', alias: null, now_based: false, tz_aware: false }] });
  });

  it.each([
    [`SELECT * FROM svc_spans WHERE timestamp > '2025-01-01 00:00:00+00'::TIMESTAMPTZ`],
    [`SELECT * FROM svc_spans WHERE timestamp > CAST('2025-01-01 00:00:00+00' AS TIMESTAMP WITH TIME ZONE)`],
    [`SELECT * FROM svc_spans WHERE timestamp > to_timestamp(1735689600)`],
  ])('time-zone-aware bounds do not count (the column is cast per row): %s', (sql) => {
    const r = checkFullScan(sql);
    expect(r.status).toBe('unbounded');
    if (r.status === 'unbounded') expect(r.unbounded[0]!.tz_aware).toBe(true);
  });
});

describe('checkFullScan: every table reference needs its own bound', () => {
  it('subquery in FROM: the inner SELECT needs the bound; an outer bound does not count', () => {
    expect(status(`SELECT * FROM (SELECT * FROM svc_spans WHERE timestamp > ${LO}) t`)).toBe('ok');
    expect(unboundedTables(`SELECT * FROM (SELECT * FROM svc_spans) t WHERE t.timestamp > ${LO}`)).toEqual(['svc_spans']);
  });

  it('scalar, IN and EXISTS subqueries are checked', () => {
    expect(unboundedTables(`SELECT (SELECT count(*) FROM svc_logs) AS n FROM svc_spans WHERE timestamp > ${LO}`)).toEqual(['svc_logs']);
    expect(unboundedTables(`SELECT * FROM svc_spans WHERE timestamp > ${LO} AND trace_id IN (SELECT trace_id FROM svc_logs)`)).toEqual(['svc_logs']);
    expect(unboundedTables(`SELECT * FROM svc_spans WHERE timestamp > ${LO} AND EXISTS (SELECT 1 FROM svc_logs l WHERE l.trace_id = svc_spans.trace_id)`)).toEqual(['svc_logs AS l']);
    expect(status(`SELECT * FROM svc_spans WHERE timestamp > ${LO} AND trace_id IN (SELECT trace_id FROM svc_logs WHERE timestamp > ${LO})`)).toBe('ok');
  });

  it('joins: each side needs a bound, in WHERE (qualified) or in its ON condition', () => {
    const base = `SELECT * FROM svc_spans s JOIN svc_logs l ON l.trace_id = s.trace_id`;
    expect(unboundedTables(base)).toEqual(['svc_logs AS l', 'svc_spans AS s']);
    expect(unboundedTables(`${base} WHERE s.timestamp > ${LO}`)).toEqual(['svc_logs AS l']);
    expect(status(`${base} WHERE s.timestamp > ${LO} AND l.timestamp > ${LO}`)).toBe('ok');
    expect(status(`SELECT * FROM svc_spans s LEFT JOIN svc_logs l ON l.trace_id = s.trace_id AND l.timestamp BETWEEN ${LO} AND ${HI} WHERE s.timestamp > ${LO}`)).toBe('ok');
    // a bound qualified with the other table's alias does not bound this one
    expect(unboundedTables(`${base} WHERE s.timestamp > ${LO} AND s.timestamp < ${HI}`)).toEqual(['svc_logs AS l']);
    // comma join
    expect(unboundedTables(`SELECT * FROM svc_spans a, svc_spans b WHERE a.timestamp > ${LO}`)).toEqual(['svc_spans AS b']);
  });

  it('lateral joins and UNION branches are checked', () => {
    expect(unboundedTables(`SELECT * FROM svc_spans s, LATERAL (SELECT 1 FROM svc_logs WHERE trace_id = s.trace_id) x WHERE s.timestamp > ${LO}`)).toEqual(['svc_logs']);
    expect(unboundedTables(`SELECT service_name FROM svc_spans WHERE timestamp > ${LO} UNION ALL SELECT service_name FROM svc_logs`)).toEqual(['svc_logs']);
    expect(status(`SELECT service_name FROM svc_spans WHERE timestamp > ${LO} UNION SELECT service_name FROM svc_logs WHERE timestamp > ${LO}`)).toBe('ok');
  });

  it('every statement of a multi-statement input is checked', () => {
    expect(unboundedTables(`SELECT 1 FROM svc_spans WHERE timestamp > ${LO}; SELECT 1 FROM svc_logs`)).toEqual(['svc_logs']);
  });
});

describe('checkFullScan: DuckDB syntax', () => {
  it('clauses that cannot change FROM/WHERE are rewritten so the check still runs', () => {
    expect(status(`SELECT service_name, count(*) FROM svc_spans WHERE timestamp > ${LO} GROUP BY ALL ORDER BY ALL`)).toBe('ok');
    expect(status(`SELECT service_name, count(*) FROM svc_spans GROUP BY ALL`)).toBe('unbounded');
    expect(status(`SELECT * EXCLUDE (span_attributes, events_json) FROM svc_spans WHERE timestamp > ${LO}`)).toBe('ok');
    expect(status(`SELECT * EXCLUDE (span_attributes) FROM svc_spans`)).toBe('unbounded');
    expect(status(`SELECT span_name FROM svc_spans WHERE timestamp > ${LO} QUALIFY row_number() OVER (PARTITION BY span_name ORDER BY duration_us DESC) = 1`)).toBe('ok');
    expect(status(`SELECT [1, 2, 3] AS l FROM svc_spans WHERE timestamp > ${LO}`)).toBe('ok');
  });

  it('rewrites never touch string literals', () => {
    expect(rewriteDuckDbIsms(`SELECT 'GROUP BY ALL' AS s FROM t GROUP BY ALL`)).toBe(`SELECT 'GROUP BY ALL' AS s FROM t GROUP BY 1`);
    expect(rewriteDuckDbIsms(`SELECT '[x]' AS s, [1] AS l`)).toBe(`SELECT '[x]' AS s, ARRAY[1] AS l`);
    expect(rewriteDuckDbIsms(`SELECT a[1] FROM t -- GROUP BY ALL`)).toBe(`SELECT a[1] FROM t -- GROUP BY ALL`);
  });

  it('statements the parser cannot read are reported as unparseable', () => {
    for (const sql of [
      `SELECT {'a': 1} AS s FROM svc_spans`,
      `FROM svc_spans SELECT *`,
      `SELECT * FROM svc_spans USING SAMPLE 10%`,
      `SELEKT * FROM svc_spans`,
    ]) {
      const r = checkFullScan(sql);
      expect(r.status, sql).toBe('unparseable');
      if (r.status === 'unparseable') expect(r.error.length).toBeGreaterThan(0);
    }
  });
});
