// npm run bench:writer — does the writer keep its pace as the store grows? A checkpoint writes
// metadata of the whole table besides folding in the WAL, so its time grows with the store; few
// senders never fill a row group, their commits go through the WAL, and the writer checkpoints it
// (store/commit-policy.ts). For each store size: a fresh store filled with that many spans by SQL
// (checkpointed), then 8 closed-loop submitters of 1,000 spans each through the real writer for
// BENCH_SECONDS (20); spans/s, acknowledgement p50 / p99, checkpoints and the last one's time. The
// reference is the smallest store, measured in the same run: the ratio says what growth costs.
// BENCH_STORE_SPANS picks the sizes (default 1000000,10000000,40000000). Heavy lock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/db.js';
import { createWriter, type Submission } from '../src/store/writer.js';
import { encodeCsv } from '../src/store/csv.js';
import { SPANS } from '../src/store/schema.js';
import { serviceSpans, type CellValue, type ColumnBatch } from '../src/store/batch.js';
import { quantile } from './lib/sustain.js';

const SIZES = (process.env['BENCH_STORE_SPANS'] ?? '1000000,10000000,40000000').split(',').map(Number);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 20);
const SUBMITTERS = 8;
const ROWS = 1000;
const T0_US = 1_764_400_000_000_000; // spans a millisecond apart from here

/** One submitter's batch of spans after the store's `stored` spans (the same rows each time: no key to collide). */
function submission(k: number, stored: number): Submission {
  const columns: Record<string, CellValue[]> = {};
  for (const c of SPANS.columns) columns[c.name] = new Array<CellValue>(ROWS).fill(null);
  for (let i = 0; i < ROWS; i++) {
    const n = k * ROWS + i;
    columns['timestamp']![i] = T0_US + (stored + n) * 1000;
    columns['service_name']![i] = `svc-${i % 10}`;
    columns['trace_id']![i] = n.toString(16).padStart(32, '0');
    columns['span_id']![i] = n.toString(16).padStart(16, '0');
    columns['span_name']![i] = columns['operation']![i] = 'GET /cart';
    columns['status_code']![i] = 0;
    columns['duration_us']![i] = 1000 + i;
    columns['is_error']![i] = false;
  }
  const batch: ColumnBatch = { table: SPANS.name, rows: ROWS, columns };
  return { parts: [{ table: SPANS.name, rows: ROWS, csv: Buffer.from(encodeCsv(SPANS, batch)) }], services: serviceSpans([batch]) };
}

async function run(stored: number): Promise<{ rate: number; p50: number; p99: number; checkpoints: number; lastCheckpointMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'tds-writer-growth-'));
  const store = await openStore(dir);
  try {
    for (let done = 0; done < stored; done += 2_000_000) {
      const n = Math.min(2_000_000, stored - done);
      await store.writer.run(
        `INSERT INTO ${SPANS.name} (timestamp, service_name, trace_id, span_id, span_name, status_code, duration_us, operation, is_error) ` +
          `SELECT make_timestamp(${T0_US} + (${done} + range) * 1000), 'svc-' || (hash(range) % 10), md5((${done} + range)::VARCHAR), ` +
          `md5((${done} + range + 1)::VARCHAR)[1:16], 'GET /cart', 0, (hash(range) % 100000)::BIGINT, 'GET /cart', false FROM range(${n})`,
      );
    }
    await store.writer.run('CHECKPOINT');
    const subs = Array.from({ length: SUBMITTERS }, (_v, k) => submission(k, stored));
    const writer = createWriter(store, { flushIntervalMs: 150 }); // SVC_FLUSH_INTERVAL_MS's default
    const waits: number[] = [];
    const end = performance.now() + SECONDS * 1000;
    await Promise.all(
      subs.map(async (sub) => {
        while (performance.now() < end) {
          const t = performance.now();
          await writer.submit(sub);
          waits.push(performance.now() - t);
        }
      }),
    );
    await writer.flush();
    const st = writer.stats();
    return { rate: (waits.length * ROWS) / SECONDS, p50: quantile(waits, 0.5), p99: quantile(waits, 0.99), checkpoints: st.checkpoints, lastCheckpointMs: st.lastCheckpointMs };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`bench:writer — ${SUBMITTERS} closed-loop submitters of ${ROWS} spans through the writer, ${SECONDS} s, on stores of ${SIZES.join(', ')} spans`);
let reference: number | null = null;
for (const size of SIZES) {
  const r = await run(size);
  reference ??= r.rate;
  console.log(
    `${(size / 1e6).toFixed(0).padStart(4)} M spans stored: ${Math.round(r.rate).toLocaleString('en-US').padStart(8)} spans/s (${(r.rate / reference).toFixed(2)}x the smallest store), ` +
      `ack p50 ${r.p50.toFixed(0)} ms p99 ${r.p99.toFixed(0)} ms; ${r.checkpoints} checkpoints, the last ${r.lastCheckpointMs.toFixed(0)} ms`,
  );
}
