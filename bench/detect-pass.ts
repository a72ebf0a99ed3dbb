// Part of npm run bench:detect — the wall time of real detection passes over 10,000 series (the
// issue's target: under 1 second), on a store built here: 5,000 operations × 2 span signals with
// 24 h of 5-minute history in svc_series_5m, and raw spans for the newest bucket. Pass 1 feeds every
// series its whole history (the cost after a restart or first start); pass 2 is the steady state:
// one new bucket, each series resumes from its saved detector state.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/db.js';
import { createWriter } from '../src/store/writer.js';
import { openReadPool } from '../src/store/readers.js';
import { createDecodePool } from '../src/compute/pool.js';
import { runPass } from '../src/detect/pass.js';
import { BUCKET_US } from '../src/core/time.js';

const OPS = 5000;
const HISTORY = 287;
const SPANS_PER_OP = 10;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tds-bench-pass-'));
  const store = await openStore(dir);
  try {
    const w = store.writer;
    const newest = Math.floor(Date.now() * 1000 / BUCKET_US) - 2; // a closed bucket
    const first = newest - HISTORY;
    // History: error_rate (n calls, k errors) and latency_p95 per operation, one row per bucket.
    await w.run(`INSERT INTO svc_series_5m SELECT make_timestamp((${first} + b) * ${BUCKET_US}), 'svc-' || (o % 50), 'GET /op/' || o, s,
      CASE WHEN s = 'error_rate' THEN 100.0 * ((o * 7 + b) % 3) / 100 ELSE 20000 + ((o * 13 + b * 7) % 1000) END, 100,
      CASE WHEN s = 'error_rate' THEN (o * 7 + b) % 3 END
      FROM range(${OPS}) t(o), range(${HISTORY}) u(b), (VALUES ('error_rate'), ('latency_p95')) v(s)`);
    const spans = async (bucket: number) => {
      await w.run(`INSERT INTO svc_spans (timestamp, service_name, trace_id, span_id, span_name, status_code, duration_us, operation, is_error)
        SELECT make_timestamp(${bucket * BUCKET_US} + o * 50 + i), 'svc-' || (o % 50), md5((o * 100 + i)::VARCHAR), left(md5((o * 100 + i + 7)::VARCHAR), 16),
        'GET /op/' || o, CASE WHEN i = 0 THEN 2 ELSE 0 END, 20000 + (o % 1000), 'GET /op/' || o, i = 0
        FROM range(${OPS}) t(o), range(${SPANS_PER_OP}) u(i)`);
      await w.run(`INSERT OR IGNORE INTO svc_dirty_buckets VALUES (${bucket})`);
    };
    await spans(newest);
    const writer = createWriter(store, { flushIntervalMs: 5 });
    const reads = await openReadPool(store, { size: 4 });
    const pool = createDecodePool(2);
    const deps = { store, writer, reads, pool, graceS: 0, cache: new Map() };
    await pool.run({ kind: 'detect', signal: 'latency_p95', series: [{ points: '[]', from: 0, length: 4, missing: 'none' }] }); // start the threads
    console.log(`store: ${OPS * 2} series (${OPS} operations × error_rate, latency_p95), ${HISTORY + 1} buckets each; ${OPS * SPANS_PER_OP} raw spans per new bucket`);
    const p1 = await runPass(deps, { asOfUs: (newest + 1) * BUCKET_US + 1 });
    console.log(`pass 1 (every series fed its whole history): ${p1.duration_ms.toFixed(0)} ms — ${p1.series_updated} series, ${p1.points_fed} points, ${p1.buckets_closed} bucket closed, ${p1.anomalies_written} anomalies`);
    await spans(newest + 1);
    const p2 = await runPass(deps, { asOfUs: (newest + 2) * BUCKET_US + 1 });
    console.log(`pass 2 (one new bucket, states resumed):     ${p2.duration_ms.toFixed(0)} ms — ${p2.series_updated} series, ${p2.points_fed} points (target: a pass over 10,000 series under 1 s)`);
    await pool.destroy();
    reads.close();
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
