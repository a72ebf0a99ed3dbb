// The diagnosis's per-bucket rollups: the detection pass's rebuild writes exactly what the same
// aggregate gives over raw spans, and a store that predates them has its closed buckets reopened
// so the next pass fills them in.
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/db.js';
import { rebuildSeriesSql } from '../../src/detect/signals.js';
import { ERROR_TYPES_ROLLUP, ROLLUPS } from '../../src/detect/rollups.js';
import { STATEMENTS } from '../../src/diagnose/reads/index.js';
import { readRows } from '../../src/store/readers.js';
import { DIRTY_BUCKETS, LOGS, PROFILES, ROLLUP_TABLES, SERIES, SPANS } from '../../src/store/schema.js';
import { tempDir } from '../helpers/tmp.js';
import { sqlTimestamp } from '../../src/store/sql.js';

const B = 300_000_000;
const B0 = Math.floor(1_790_000_000_000_000 / B);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function storeWithSpans(): Promise<{ store: Store; dir: string }> {
  const t = tempDir();
  const store = await openStore(t.dir);
  cleanups.push(t.cleanup);
  // 3 buckets of spans from two services: a version change and a new instance in the third, errors, model calls.
  await store.writer.run(
    `INSERT INTO ${SPANS.name} (timestamp, service_name, trace_id, span_id, span_name, status_code, duration_us, operation, is_error, error_type, service_version, service_instance_id, k8s_pod_name, gen_ai_model, gen_ai_finish_reasons) ` +
      `SELECT make_timestamp(${B0 * B} + i * 1000000), CASE WHEN i % 3 = 0 THEN 'llm' ELSE 'pay' END, md5(i::VARCHAR), left(md5((i + 1)::VARCHAR), 16), 'op', ` +
      `CASE WHEN i % 7 = 0 THEN 2 ELSE 0 END, 1000 + i, 'GET /x', i % 7 = 0, CASE WHEN i % 7 = 0 THEN (CASE WHEN i > 600 THEN 'Timeout' END) END, ` +
      `CASE WHEN i > 600 THEN '2.0' ELSE '1.0' END, CASE WHEN i > 600 THEN 'pod-b' ELSE 'pod-a' END, CASE WHEN i > 600 THEN 'pod-b' ELSE 'pod-a' END, ` +
      `CASE WHEN i % 3 = 0 THEN 'gpt' END, CASE WHEN i % 3 = 0 THEN (CASE WHEN i % 2 = 0 THEN '["stop"]' ELSE '["length"]' END) END FROM range(900) AS t(i)`,
  );
  // Their logs: one record a second and service, an ERROR every 7th, a WARN every 5th.
  await store.writer.run(
    `INSERT INTO ${LOGS.name} (timestamp, service_name, severity_number, is_error) SELECT make_timestamp(${B0 * B} + i * 1000000), CASE WHEN i % 3 = 0 THEN 'llm' ELSE 'pay' END, ` +
      `CASE WHEN i % 7 = 0 THEN 17 WHEN i % 5 = 0 THEN 13 ELSE 9 END, i % 7 = 0 FROM range(900) AS t(i)`,
  );
  return { store, dir: t.dir };
}

const sorted = (rows: readonly object[]) => rows.map((r) => JSON.stringify(Object.values(r), (_k, v) => (typeof v === 'bigint' ? Number(v) : v))).sort();

describe('rollups', () => {
  it('the pass writes what the aggregate gives over raw spans', async () => {
    const { store } = await storeWithSpans();
    cleanups.push(() => store.close());
    for (const s of rebuildSeriesSql(B0, B0 + 2)) await store.writer.run(s);
    for (const r of ROLLUPS) {
      const stored = await readRows(store.writer, `SELECT * FROM ${r.table.name}`);
      const raw = await readRows(store.writer, r.aggregate(sqlTimestamp(B0 * B), sqlTimestamp((B0 + 3) * B)));
      expect(stored.length, r.table.name).toBeGreaterThan(0);
      expect(sorted(stored)).toEqual(sorted(raw));
    }
    const versions = await readRows(store.writer, `SELECT DISTINCT service_version FROM svc_resources_5m ORDER BY 1`);
    expect(versions.map((r) => r['service_version'])).toEqual(['1.0', '2.0']);
    // Rebuilding the same buckets again replaces, never duplicates.
    for (const s of rebuildSeriesSql(B0, B0 + 2)) await store.writer.run(s);
    expect(sorted(await readRows(store.writer, `SELECT * FROM svc_error_types_5m`))).toEqual(sorted(await readRows(store.writer, ERROR_TYPES_ROLLUP.aggregate(sqlTimestamp(B0 * B), sqlTimestamp((B0 + 3) * B)))));
  });

  it('the series of a bucket, every signal from one scan of its table, are what counting by hand gives', async () => {
    const { store } = await storeWithSpans();
    cleanups.push(() => store.close());
    // profile cost counts only time-valued samples: 5 of 2,000 ns, and a byte sample that is not cost
    await store.writer.run(
      `INSERT INTO ${PROFILES.name} (timestamp, service_name, profile_type, unit, function, value, sample_count) ` +
        `SELECT make_timestamp(${B0 * B} + i * 1000000), 'llm', 'cpu', 'nanoseconds', 'f', 2000, 2 FROM range(5) AS t(i) ` +
        `UNION ALL SELECT make_timestamp(${B0 * B}), 'llm', 'alloc_space', 'bytes', 'f', 999999, 1`,
    );
    for (const s of rebuildSeriesSql(B0, B0 + 2)) await store.writer.run(s);
    const rows = await readRows(store.writer, `SELECT service_name, operation, signal, value, n, k FROM ${SERIES.name} WHERE timestamp = ${sqlTimestamp(B0 * B)}`);
    const at = (service: string, signal: string) => rows.find((r) => r['service_name'] === service && r['signal'] === signal);
    // The first bucket holds i = 0..299; 'llm' has every third, i = 3j: 100 spans and logs, an error
    // where i is a multiple of 21 (15 of them), durations 1000 + 3j.
    const durations = Array.from({ length: 100 }, (_, j) => 1000 + 3 * j);
    const pos = 0.95 * (durations.length - 1); // quantile_cont: linear between the neighbours
    const p95 = durations[Math.floor(pos)]! + (pos - Math.floor(pos)) * (durations[Math.ceil(pos)]! - durations[Math.floor(pos)]!);
    expect(at('llm', 'error_rate')).toMatchObject({ operation: 'GET /x', value: 15, n: 100n, k: 15n });
    expect(at('llm', 'latency_p95')).toMatchObject({ operation: 'GET /x', n: 100n, k: null });
    expect(at('llm', 'latency_p95')!['value']).toBeCloseTo(p95, 9);
    expect(at('llm', 'log_volume')).toMatchObject({ operation: 'llm', value: 100, n: 100n, k: null });
    expect(at('llm', 'error_log_rate')).toMatchObject({ operation: 'llm', value: 15, n: 100n, k: 15n });
    expect(at('llm', 'profile_cost')).toMatchObject({ operation: 'llm', value: 10_000, n: 10n, k: null });
    expect(rows.filter((r) => r['service_name'] === 'llm').map((r) => r['signal']).sort()).toEqual(['error_log_rate', 'error_rate', 'latency_p95', 'log_volume', 'profile_cost']);
    // 'pay' has the other 200: errors where i is a multiple of 7 but not of 3 (43 - 15 = 28)
    expect(at('pay', 'error_rate')).toMatchObject({ value: 14, n: 200n, k: 28n });
    expect(at('pay', 'profile_cost')).toBeUndefined();
  });

  it('the diagnosis reads log levels from the rollup of closed buckets and from raw rows of open ones, as raw rows alone give them', async () => {
    const { store } = await storeWithSpans();
    cleanups.push(() => store.close());
    for (const s of rebuildSeriesSql(B0, B0 + 2)) await store.writer.run(s);
    // Records arrive late for the last bucket: it is open again, its rollup stale.
    await store.writer.run(`INSERT INTO ${LOGS.name} (timestamp, service_name, severity_number, is_error) SELECT make_timestamp(${(B0 + 2) * B} + i * 3000000), 'pay', 17, true FROM range(50) AS t(i)`);
    const lo = B0 * B + 40_000_000; // not on a bucket's edge
    const hi = (B0 + 3) * B;
    const levels = (sql: string) => readRows(store.writer, sql).then((rows) => sorted(rows.map(STATEMENTS.logLevels.decode)));
    // The truth, written out: records, errors and WARN (severity 13–16) per service and 10 s bin.
    const raw =
      `SELECT service_name, epoch_us(timestamp) // 10000000 * 10000000 AS bin, count(*) AS n, count_if(is_error) AS k, count_if(severity_number BETWEEN 13 AND 16) AS w ` +
      `FROM ${LOGS.name} WHERE timestamp >= ${sqlTimestamp(lo)} AND timestamp < ${sqlTimestamp(hi)} GROUP BY ALL`;
    expect(await levels(STATEMENTS.logLevels.sql(lo, hi, [B0 + 2]))).toEqual(await levels(raw));
    // Without the bucket marked open, the stale rollup would be read: the late records are missing.
    expect(await levels(STATEMENTS.logLevels.sql(lo, hi, []))).not.toEqual(await levels(STATEMENTS.logLevels.sql(lo, hi, [B0 + 2])));
  });

  it('the diagnosis reads a reopened bucket of the series once: raw, not also from its stale stored rows', async () => {
    const { store } = await storeWithSpans();
    cleanups.push(() => store.close());
    for (const s of rebuildSeriesSql(B0, B0 + 2)) await store.writer.run(s);
    // Spans arrive late for the middle bucket: it is open again until the next pass.
    await store.writer.run(
      `INSERT INTO ${SPANS.name} (timestamp, service_name, trace_id, span_id, span_name, status_code, duration_us, operation, is_error) ` +
        `SELECT make_timestamp(${(B0 + 1) * B} + i * 2000000), 'pay', md5(i::VARCHAR), left(md5(i::VARCHAR), 16), 'op', 2, 9000, 'GET /x', true FROM range(40) AS t(i)`,
    );
    const bounds = { from: (B0 + 3) * B + 60_000_000, to: (B0 + 4) * B, lookFrom: B0 * B, newSince: B0 * B };
    const read = async (open: number[]) => {
      const rows = (await readRows(store.writer, STATEMENTS.series.sql(bounds, open))).map(STATEMENTS.series.decode);
      for (const b of open) rows.push(...(await readRows(store.writer, STATEMENTS.rawSeries.sql(b * B, (b + 1) * B))).map(STATEMENTS.rawSeries.decode));
      const per = new Map<string, { t: number; n: number | null }[]>();
      for (const r of rows) per.set(`${r.service_name}/${r.operation}/${r.signal}`, [...(per.get(`${r.service_name}/${r.operation}/${r.signal}`) ?? []), ...r.buckets.map((x) => ({ t: x.t, n: x.n }))]);
      return [...per].map(([k, bs]) => [k, bs.sort((a, b) => a.t - b.t)] as const).sort(([a], [b]) => a.localeCompare(b));
    };
    const whileOpen = await read([B0 + 1]);
    const errors = whileOpen.find(([k]) => k === 'pay/GET /x/error_rate')![1];
    expect(errors.map((x) => x.t)).toEqual([B0 * B, (B0 + 1) * B, (B0 + 2) * B]);
    // What the next pass stores for it, read back from the series alone.
    for (const s of rebuildSeriesSql(B0 + 1, B0 + 1)) await store.writer.run(s);
    expect(whileOpen).toEqual(await read([]));
  });

  it('a store from before the rollups gets its closed buckets reopened for the next pass', async () => {
    const { store, dir } = await storeWithSpans();
    for (const s of rebuildSeriesSql(B0, B0 + 2)) await store.writer.run(s);
    await store.writer.run(`DELETE FROM ${DIRTY_BUCKETS.name}`);
    for (const t of ROLLUP_TABLES) await store.writer.run(`DROP TABLE ${t.name}`);
    await store.close();
    const reopened = await openStore(dir);
    cleanups.push(() => reopened.close());
    const dirty = await readRows(reopened.writer, `SELECT bucket FROM ${DIRTY_BUCKETS.name} ORDER BY bucket`);
    expect(dirty.map((r) => Number(r['bucket']))).toEqual([B0, B0 + 1, B0 + 2]);
    // Opening it again marks nothing more: the tables exist now.
    await reopened.writer.run(`DELETE FROM ${DIRTY_BUCKETS.name}`);
    await reopened.close();
    const third = await openStore(dir);
    cleanups.push(() => third.close());
    expect(Number((await readRows(third.writer, `SELECT count(*) AS n FROM ${DIRTY_BUCKETS.name}`))[0]!["n"])).toBe(0);
  });
});
