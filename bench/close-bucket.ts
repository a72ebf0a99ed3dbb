// Part of npm run bench:detect — closing a busy bucket: the statements the detection pass runs to
// turn a bucket's raw telemetry into its series rows, on 4 million spans over two buckets (a flood's
// worth; bench:overload's closes aggregated about that). The series come from one scan per table
// (seriesSelect: error rate and latency together); the reference, measured in the same run, is the
// same aggregates as one query per signal joined by UNION ALL, reading the spans once for each.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/db.js';
import { SIGNALS, entityColumn, seriesSelect } from '../src/detect/signals.js';
import { SERIES, SPANS } from '../src/store/schema.js';
import { bucketIndexSql, bucketStartSql, sqlTimestamp } from '../src/store/sql.js';
import { BUCKET_US } from '../src/core/time.js';

const SPAN_COUNT = 4_000_000;
const ROUNDS = 5;

/** The reference: each signal's own aggregate, one scan of its table each (grouped the same way). */
function perSignalSelect(lo: string, hi: string): string {
  return SIGNALS.map(
    (s) =>
      `SELECT ${bucketStartSql('b')} AS timestamp, service_name, operation, '${s.name}' AS signal, value, n, k FROM (SELECT ${bucketIndexSql('timestamp')} AS b, service_name, ` +
      `${entityColumn(s)} AS operation, ${s.value} AS value, ${s.n} AS n, ${s.k} AS k ` +
      `FROM ${s.table} WHERE ${s.filter ? `${s.filter} AND ` : ''}timestamp >= ${lo} AND timestamp < ${hi} GROUP BY ALL)`,
  ).join(' UNION ALL ');
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tds-bench-close-'));
  const store = await openStore(dir);
  try {
    const w = store.writer;
    const b0 = Math.floor((Date.now() * 1000) / BUCKET_US) - 10;
    // 40 services × 10 operations, 2% errors, durations up to 100 ms, over two buckets.
    await w.run(
      `INSERT INTO ${SPANS.name} (timestamp, service_name, trace_id, span_id, span_name, status_code, duration_us, operation, is_error) ` +
        `SELECT make_timestamp(${b0 * BUCKET_US} + (i * 150000)::BIGINT % ${2 * BUCKET_US}), 'svc-' || (i % 40), md5(i::VARCHAR), left(md5((i * 7)::VARCHAR), 16), ` +
        `'GET /op/' || (i % 400), 0, (random() * 100000)::BIGINT, 'GET /op/' || (i % 400), random() < 0.02 FROM range(${SPAN_COUNT}) t(i)`,
    );
    await w.run('CHECKPOINT');
    const lo = sqlTimestamp(b0 * BUCKET_US);
    const hi = sqlTimestamp((b0 + 2) * BUCKET_US);
    const cols = SERIES.columns.map((c) => `"${c.name}"`).join(', ');
    const close = async (select: string): Promise<number> => {
      const t = performance.now();
      await w.run(`DELETE FROM ${SERIES.name}`);
      await w.run(`INSERT INTO ${SERIES.name} (${cols}) SELECT * FROM (${select})`);
      return performance.now() - t;
    };
    const best = { one: Infinity, each: Infinity };
    for (let r = 0; r < ROUNDS; r++) {
      best.each = Math.min(best.each, await close(perSignalSelect(lo, hi)));
      best.one = Math.min(best.one, await close(seriesSelect(lo, hi)));
    }
    console.log(
      `closing 2 buckets of ${SPAN_COUNT / 1e6} million spans (series rows only, best of ${ROUNDS}): one scan per table ${best.one.toFixed(0)} ms, ` +
        `one per signal (reference) ${best.each.toFixed(0)} ms — ${(best.each / best.one).toFixed(2)}x`,
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
