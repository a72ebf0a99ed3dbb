// Query-path benchmark: latency of typical drill-down queries through the guard + runner (the
// `/v1/query` path minus HTTP) against the same SQL run directly on DuckDB, in the same run, over a
// store of millions of spans; plus a demonstration that a narrow literal `timestamp` bound lets
// DuckDB's zone maps skip most of the table.
//
//   node dist/bench/query.js [--spans 5000000] [--iterations 30] [--dir /tmp/tds-bench-query] [--http URL] [--json]
//
// The store is opened as the server opens it (its row group size included) and generated with
// DuckDB SQL into <dir>/lake.duckdb (reused when it holds the requested number of spans). Runners
// share one interface: `raw` (runAndReadAll + DuckDB's own JSON conversion), `guarded`
// (QueryPool.query: guard + streamed run + JSON conversion), and, with `--http URL`, `http` (POST
// URL/v1/query, text/plain; the server must serve the same store, e.g. started in this process).
import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../src/server.js';
import { loadConfig } from '../src/core/config.js';
import { checkSelect } from '../src/query/guard.js';
import { openQueryPool, type QueryPool } from '../src/query/run.js';
import { openStore, type Store } from '../src/store/db.js';

interface Args {
  spans: number;
  iterations: number;
  dir: string;
  http?: string;
  json: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { spans: 5_000_000, iterations: 30, dir: '/tmp/tds-bench-query', json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--spans') args.spans = Number(next());
    else if (a === '--iterations') args.iterations = Number(next());
    else if (a === '--dir') args.dir = next();
    else if (a === '--http') args.http = next().replace(/\/$/, '');
    else if (a === '--json') args.json = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

const START = '2024-01-01 00:00:00';
const HOURS = 6;

/** Spans in time order (as ingest appends them): 20 services x 7 routes, 2% errors, an incident on svc-3. */
function generateSql(n: number): string {
  const step = Math.max(1, Math.floor((HOURS * 3600 * 1e6) / n));
  return `
INSERT INTO svc_spans (timestamp, service_name, trace_id, span_id, parent_span_id, span_name, span_kind, status_code,
  status_message, duration_us, end_timestamp, operation, is_error, error_type, http_method, http_route, http_status_code,
  span_attributes, resource_attributes, service_version, k8s_pod_name)
SELECT ts, svc, trace_id, span_id, parent, op, 2, CASE WHEN err THEN 2 ELSE 0 END,
  CASE WHEN err THEN 'upstream failed' END, dur, ts + to_microseconds(dur), op, err,
  CASE WHEN err THEN (['timeout', 'http_500', 'conn_reset'])[1 + (h % 3)::INTEGER] END,
  'GET', route, CASE WHEN err THEN 500 ELSE 200 END,
  '{"http.route":"' || route || '","user.id":' || (h % 1000)::VARCHAR || '}',
  '{"service.name":"' || svc || '"}', 'v1', svc || '-pod-' || (h % 3)::VARCHAR
FROM (
  SELECT TIMESTAMP '${START}' + to_microseconds(i * ${step}) AS ts,
    'svc-' || (i % 20)::VARCHAR AS svc,
    '/api/v1/r' || ((i // 20) % 7)::VARCHAR AS route,
    'GET /api/v1/r' || ((i // 20) % 7)::VARCHAR AS op,
    lpad(to_hex(i // 8), 32, '0') AS trace_id,
    lpad(to_hex(i), 16, '0') AS span_id,
    CASE WHEN i % 8 = 0 THEN NULL ELSE lpad(to_hex(i - 1), 16, '0') END AS parent,
    hash(i) AS h,
    (i % 20 = 3 AND i * ${step} BETWEEN 10800000000 AND 12600000000) AS incident,
    CASE WHEN incident THEN hash(i) % 10 < 3 ELSE hash(i) % 50 = 0 END AS err,
    (200 + (hash(i * 7) % 5000) + CASE WHEN incident THEN 20000 ELSE 0 END)::BIGINT AS dur
  FROM range(${n}) t(i)
)`;
}

/** Typical drill-downs, shaped like the SQL /v1/diagnose hands out: literal time bounds, one service. */
const QUERIES: Record<string, string> = {
  error_spans: `SELECT timestamp, trace_id, span_id, operation, error_type, duration_us FROM svc_spans
    WHERE service_name = 'svc-3' AND timestamp >= TIMESTAMP '2024-01-01 03:00:00' AND timestamp < TIMESTAMP '2024-01-01 03:15:00'
      AND status_code = 2 ORDER BY timestamp LIMIT 100`,
  operation_summary: `SELECT operation, count(*) AS count, count(*) FILTER (WHERE status_code = 2) AS error_count,
      round(100.0 * count(*) FILTER (WHERE status_code = 2) / count(*), 2) AS error_pct,
      quantile_cont(duration_us, 0.5) AS p50_us, quantile_cont(duration_us, 0.95) AS p95_us
    FROM svc_spans WHERE service_name = 'svc-3' AND timestamp >= TIMESTAMP '2024-01-01 03:00:00' AND timestamp < TIMESTAMP '2024-01-01 03:15:00'
    GROUP BY ALL ORDER BY count DESC`,
  buckets_5m: `SELECT time_bucket(INTERVAL 5 MINUTE, timestamp) AS bucket, count(*) AS n, count_if(is_error) AS errors,
      quantile_cont(duration_us, 0.95) AS p95_us
    FROM svc_spans WHERE service_name = 'svc-3' AND timestamp >= TIMESTAMP '2024-01-01 02:30:00' AND timestamp < TIMESTAMP '2024-01-01 03:30:00'
    GROUP BY ALL ORDER BY bucket`,
  error_breakdown: `SELECT operation, error_type, count(*) AS n, arg_max(trace_id, duration_us) AS exemplar
    FROM lake.svc_spans WHERE service_name = 'svc-3' AND is_error AND timestamp >= TIMESTAMP '2024-01-01 03:00:00' AND timestamp < TIMESTAMP '2024-01-01 03:30:00'
    GROUP BY ALL ORDER BY n DESC LIMIT 20`,
  slowest: `SELECT span_id, trace_id, operation, duration_us, span_attributes->>'$."user.id"' AS user_id FROM main.svc_spans
    WHERE service_name = 'svc-7' AND timestamp >= TIMESTAMP '2024-01-01 01:00:00' AND timestamp < TIMESTAMP '2024-01-01 01:15:00'
    ORDER BY duration_us DESC LIMIT 20`,
  trace: `SELECT * EXCLUDE (resource_attributes) FROM svc_spans
    WHERE timestamp >= TIMESTAMP '2024-01-01 03:05:00' AND timestamp < TIMESTAMP '2024-01-01 03:06:00'
      AND trace_id = (SELECT trace_id FROM svc_spans WHERE timestamp >= TIMESTAMP '2024-01-01 03:05:00' AND timestamp < TIMESTAMP '2024-01-01 03:05:01' LIMIT 1)
    ORDER BY timestamp`,
};

interface Runner {
  name: string;
  run(sql: string): Promise<number>; // returns the row count, so work cannot be optimised away
}

function rawRunner(conn: DuckDBConnection): Runner {
  return {
    name: 'raw',
    async run(sql) {
      const reader = await conn.runAndReadAll(sql);
      return reader.getRowObjectsJson().length;
    },
  };
}

function guardedRunner(pool: QueryPool): Runner {
  return {
    name: 'guarded',
    async run(sql) {
      return (await pool.query(sql)).rows.length;
    },
  };
}

function httpRunner(base: string): Runner {
  return {
    name: 'http',
    async run(sql) {
      const res = await fetch(`${base}/v1/query`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: sql });
      const body = (await res.json()) as unknown;
      if (!res.ok || !Array.isArray(body)) throw new Error(`HTTP ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
      return body.length;
    },
  };
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

const ms = (x: number): string => x.toFixed(2);

/** The store as the server opens it (its row group size included), with the generated spans. */
async function openBenchStore(args: Args): Promise<{ store: Store; generatedMs: number | null }> {
  mkdirSync(args.dir, { recursive: true });
  const fresh = !existsSync(join(args.dir, 'lake.duckdb'));
  const store = await openStore(args.dir);
  const writer = store.writer;
  const count = Number((await writer.runAndReadAll('SELECT count(*) FROM svc_spans')).getRows()[0]![0]);
  if (!fresh && count === args.spans) return { store, generatedMs: null };
  const t0 = performance.now();
  await writer.run('DELETE FROM svc_spans');
  await writer.run(generateSql(args.spans));
  await writer.run('CHECKPOINT');
  return { store, generatedMs: performance.now() - t0 };
}

interface ScanFigures {
  rowsInTable: number;
  rowsScanned: number;
  rowsMatched: number;
  ms: number;
}

/** Rows the table scan read (DuckDB's operator_rows_scanned metric from EXPLAIN ANALYZE). */
async function scanFigures(conn: DuckDBConnection, sql: string, total: number): Promise<ScanFigures> {
  const t0 = performance.now();
  const r = await conn.runAndReadAll(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`);
  const elapsed = performance.now() - t0;
  const plan = JSON.parse(String(r.getRows()[0]![1])) as Record<string, unknown>;
  let scanned = 0;
  let matched = 0;
  const walk = (node: Record<string, unknown>): void => {
    if (node.operator_type === 'TABLE_SCAN') {
      scanned += Number(node.operator_rows_scanned ?? 0);
      matched += Number(node.operator_cardinality ?? 0);
    }
    for (const child of (node.children as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(plan);
  return { rowsInTable: total, rowsScanned: scanned, rowsMatched: matched, ms: elapsed };
}

type Results = Record<string, Record<string, { p50: number; p95: number; rows: number }>>;

/** Every query through every runner, alternating the order, after warm-up; p50/p95 per runner. */
async function measure(runners: Runner[], iterations: number): Promise<Results> {
  const results: Results = {};
  for (const [name, sql] of Object.entries(QUERIES)) {
    const times: Record<string, number[]> = Object.fromEntries(runners.map((r) => [r.name, []]));
    const rows: Record<string, number> = {};
    for (const r of runners) for (let i = 0; i < 3; i++) rows[r.name] = await r.run(sql); // warm-up
    for (let i = 0; i < iterations; i++) {
      // Alternate the order so neither runner always benefits from the other's cache warming.
      const order = i % 2 === 0 ? runners : [...runners].reverse();
      for (const r of order) {
        const t0 = performance.now();
        await r.run(sql);
        times[r.name]!.push(performance.now() - t0);
      }
    }
    results[name] = {};
    for (const r of runners) {
      const sorted = times[r.name]!.sort((a, b) => a - b);
      results[name]![r.name] = { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), rows: rows[r.name]! };
    }
  }
  return results;
}

/**
 * The real server, in this process, on the same store: raw SQL on the server's own DuckDB instance
 * against the same SQL through POST /v1/query (guard + uWebSockets.js + JSON), alternating.
 */
async function measureServer(dir: string, iterations: number): Promise<Results> {
  const config = loadConfig({
    SVC_DATA_DIR: dir,
    SVC_API_PORT: '0',
    SVC_OTLP_HTTP_PORT: '0',
    SVC_OTLP_GRPC_PORT: '0',
    SVC_RETENTION_HOURS: '87600', // the generated spans are from 2024
    SVC_DETECT_INTERVAL_S: '86400',
    SVC_QUERY_ROW_CAP: '100000',
    SVC_QUERY_TIMEOUT_MS: '60000',
  });
  const running = await startServer(config, () => {});
  const raw = await running.local!.store.connect();
  try {
    return await measure([rawRunner(raw), httpRunner(`http://127.0.0.1:${running.ports.api}`)], iterations);
  } finally {
    raw.closeSync();
    await running.stop();
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const { store, generatedMs } = await openBenchStore(args);
  // A connection of its own for the profiling settings (on the writer, its closing CHECKPOINT printed a profile).
  const probe = await store.connect();
  const total = Number((await probe.runAndReadAll('SELECT count(*) FROM svc_spans')).getRows()[0]![0]);

  // Zone maps: a narrow literal bound vs the same rows selected through a function of the column.
  await probe.run(`SET custom_profiling_settings = '{"OPERATOR_ROWS_SCANNED": "true", "OPERATOR_CARDINALITY": "true", "OPERATOR_TYPE": "true"}'`);
  const narrow = await scanFigures(
    probe,
    "SELECT count(*) FROM svc_spans WHERE timestamp >= TIMESTAMP '2024-01-01 03:00:00' AND timestamp < TIMESTAMP '2024-01-01 03:01:00'",
    total,
  );
  const unprunable = await scanFigures(
    probe,
    "SELECT count(*) FROM svc_spans WHERE epoch_us(timestamp) >= epoch_us(TIMESTAMP '2024-01-01 03:00:00') AND epoch_us(timestamp) < epoch_us(TIMESTAMP '2024-01-01 03:01:00')",
    total,
  );

  // The query path as the server runs it (this locks the instance's configuration).
  const pool = await openQueryPool(store, { size: 2, timeoutMs: 60_000, rowCap: 100_000, spoolDir: store.spoolDir });
  const raw = await store.connect();
  const runners: Runner[] = [rawRunner(raw), guardedRunner(pool)];
  if (args.http) runners.push(httpRunner(args.http));

  const results = await measure(runners, args.iterations);

  // The guard alone (parse via json_serialize_sql + AST walk).
  const guardTimes: number[] = [];
  await pool.use(async (conn) => {
    for (let i = 0; i < args.iterations; i++) {
      for (const sql of Object.values(QUERIES)) {
        const t0 = performance.now();
        const v = await checkSelect(conn, sql);
        guardTimes.push(performance.now() - t0);
        if (!v.ok) throw new Error(`guard refused a bench query: ${v.message}`);
      }
    }
  });
  guardTimes.sort((a, b) => a - b);

  pool.close();
  raw.closeSync();
  probe.closeSync();
  await store.close();
  const served = await measureServer(args.dir, args.iterations);

  if (args.json) {
    console.log(JSON.stringify({ spans: total, generatedMs, results, served, guard: { p50: quantile(guardTimes, 0.5), p95: quantile(guardTimes, 0.95) }, zoneMaps: { narrow, unprunable } }, null, 2));
    return;
  }
  console.log(`store: ${total.toLocaleString()} spans over ${HOURS} h in ${args.dir}${generatedMs !== null ? ` (generated in ${(generatedMs / 1000).toFixed(1)} s)` : ' (reused)'}`);
  console.log(`iterations per query and runner: ${args.iterations} (after 3 warm-up runs); times in ms\n`);
  const names = runners.map((r) => r.name);
  console.log(['query'.padEnd(18), 'rows'.padStart(5), ...names.flatMap((n) => [`${n} p50`.padStart(12), `${n} p95`.padStart(12)]), 'overhead p50'.padStart(13), 'ratio'.padStart(7)].join(' '));
  for (const [name, r] of Object.entries(results)) {
    const base = r.raw!;
    const g = r.guarded!;
    console.log(
      [
        name.padEnd(18),
        String(base.rows).padStart(5),
        ...names.flatMap((n) => [ms(r[n]!.p50).padStart(12), ms(r[n]!.p95).padStart(12)]),
        `${ms(g.p50 - base.p50)}`.padStart(13),
        (g.p50 / base.p50).toFixed(2).padStart(7),
      ].join(' '),
    );
  }
  console.log('\nthrough the real server (POST /v1/query: guard + HTTP + JSON) against raw SQL on its own DuckDB instance:');
  console.log(['query'.padEnd(18), 'raw p50'.padStart(10), 'http p50'.padStart(10), 'overhead'.padStart(10), 'ratio'.padStart(7), 'raw p95'.padStart(10), 'http p95'.padStart(10)].join(' '));
  for (const [name, r] of Object.entries(served)) {
    const base = r['raw']!;
    const h = r['http']!;
    console.log([name.padEnd(18), ms(base.p50).padStart(10), ms(h.p50).padStart(10), ms(h.p50 - base.p50).padStart(10), (h.p50 / base.p50).toFixed(2).padStart(7), ms(base.p95).padStart(10), ms(h.p95).padStart(10)].join(' '));
  }
  console.log('target: HTTP + guard add under 5 ms or 5% at p50, whichever is more');
  console.log(`\nguard alone (json_serialize_sql + AST walk): p50 ${ms(quantile(guardTimes, 0.5))} ms, p95 ${ms(quantile(guardTimes, 0.95))} ms`);
  console.log('\nzone maps (EXPLAIN ANALYZE, operator_rows_scanned of the table scan):');
  const line = (label: string, f: ScanFigures): string =>
    `  ${label.padEnd(48)} scanned ${f.rowsScanned.toLocaleString().padStart(11)} of ${f.rowsInTable.toLocaleString()} rows (${((100 * f.rowsScanned) / f.rowsInTable).toFixed(2)}%), matched ${f.rowsMatched.toLocaleString()}, ${ms(f.ms)} ms`;
  console.log(line("timestamp >= TIMESTAMP '03:00' AND < '03:01'", narrow));
  console.log(line('same minute via epoch_us(timestamp) (no pruning)', unprunable));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
