// The detection pass on a real store (no server): runPass closes what its time and grace say and
// counts what it did; fed in passes, with a restart between them, it writes the rows the embeddable
// detector gives for the same timestamped series in one run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/db.js';
import { createWriter, type Writer } from '../../src/store/writer.js';
import { openReadPool, readRows, type ReadPool } from '../../src/store/readers.js';
import { createPool, type Pool } from '../../src/compute/pool.js';
import { flushStates, runPass, type PassDeps } from '../../src/detect/pass.js';
import type { StateCache } from '../../src/detect/states.js';
import { BocpdDetector, worsening } from '../../src/detect/bocpd/index.js';
import { BUCKET_US } from '../../src/core/time.js';
import { tempDir } from '../helpers/tmp.js';
import { rng } from '../../testkit/rng.js';
import { spanBatch, submitOf } from '../store/fixtures.js';
import { beforeEachRun } from '../helpers/db.js';

const DAY = 288;
const dir = tempDir('tds-pass-');
let store: Store;
let writer: Writer;
let reads: ReadPool;
let pool: Pool;
const deps = (cache?: StateCache): PassDeps => ({ store, writer, reads, pool, graceS: 60, ...(cache ? { cache } : {}) });

beforeAll(async () => {
  store = await openStore(dir.dir);
  writer = createWriter(store, { flushIntervalMs: 5 });
  reads = await openReadPool(store, { size: 2 });
  pool = createPool(1);
});

afterAll(async () => {
  await pool.destroy();
  await reads.close();
  await store.close();
  dir.cleanup();
});

/** Spans of one operation in buckets [from, to): 20 a bucket, durations around latency(bucket) µs; the buckets marked dirty as ingest does. */
async function spans(service: string, from: number, to: number, latency: (bucket: number) => number): Promise<void> {
  const r = rng(from);
  const rows: string[] = [];
  for (let b = from; b < to; b++) {
    for (let i = 0; i < 20; i++) {
      const ts = b * BUCKET_US + i * 10_000_000;
      rows.push(`(make_timestamp(${ts}), '${service}', '${b}-${i}', '${i}', 'GET /a', 0, ${Math.round(latency(b) * (0.9 + 0.2 * r()))}, 'GET /a', false)`);
    }
  }
  for (let k = 0; k < rows.length; k += 5000) {
    await store.writer.run(`INSERT INTO svc_spans (timestamp, service_name, trace_id, span_id, span_name, status_code, duration_us, operation, is_error) VALUES ${rows.slice(k, k + 5000).join(', ')}`);
  }
  await store.writer.run(`INSERT OR IGNORE INTO svc_dirty_buckets SELECT range FROM range(${from}, ${to})`);
}

const dirtyBuckets = async () => Number((await reads.use((c) => readRows(c, 'SELECT count(*) AS n FROM svc_dirty_buckets')))[0]!['n']);

describe('runPass as of a time, with a grace', () => {
  const b0 = Math.floor(Date.now() * 1000 / BUCKET_US) - 40;

  it('closes the buckets that ended before as-of minus grace, and counts them and the rows written', async () => {
    await spans('asof', b0, b0 + 6, () => 20_000);
    const a = await runPass(deps(), { asOfUs: (b0 + 3) * BUCKET_US + 30_000_000, graceUs: 60_000_000 });
    expect(a.closed_before_bucket).toBe(b0 + 2); // bucket b0+2 ended 30 s before as-of: still in its grace
    expect(a.buckets_closed).toBe(2);
    const b = await runPass(deps(), { asOfUs: (b0 + 3) * BUCKET_US + 30_000_000, graceUs: 0 });
    expect(b.buckets_closed).toBe(1);
    expect(await dirtyBuckets()).toBe(3);
    const c = await runPass(deps(), { graceUs: 0 }); // now, whatever the grace: every bucket whose data has arrived
    expect(c.buckets_closed).toBe(3);
    expect(await dirtyBuckets()).toBe(0);
    expect(c.anomalies_written).toBe(0);
  });

  it('closes a replayed window in the past whatever the wall clock, and writes its shift', async () => {
    const old = b0 - 200;
    await spans('replay', old, old + 30, (b) => (b >= old + 20 ? 60_000 : 20_000));
    const r = await runPass(deps(), { asOfUs: (old + 30) * BUCKET_US, graceUs: 0 });
    expect(r.buckets_closed).toBe(30);
    expect(r.anomalies_written).toBe(1);
    const rows = await reads.use((c) => readRows(c, `SELECT ts_shift_us FROM svc_anomalies WHERE service_name = 'replay'`));
    expect(rows.map((x) => Number(x['ts_shift_us']))).toEqual([(old + 20) * BUCKET_US]);
  });
});

describe('the aggregation beside the commits', () => {
  const b0 = Math.floor(Date.now() * 1000 / BUCKET_US) - 80;
  const calls = async () =>
    Number((await reads.use((c) => readRows(c, `SELECT n FROM svc_series_5m WHERE service_name = 'late' AND signal = 'error_rate' AND timestamp = make_timestamp(${b0 * BUCKET_US})`)))[0]?.['n'] ?? 0);
  const marked = async () => (await reads.use((c) => readRows(c, `SELECT bucket FROM svc_dirty_buckets WHERE bucket = ${b0}`))).length > 0;

  it('keeps the mark of a bucket that a commit reached while it was aggregated, and the next pass counts that commit', async () => {
    await spans('late', b0, b0 + 1, () => 20_000);
    // The pass's aggregation is held after its first statement (its snapshot is taken) while a late
    // span of the same bucket commits through the writer.
    let held = false;
    const late = { ...submitOf(spanBatch(1, () => ({ timestamp: b0 * BUCKET_US + 1_000_000, service_name: 'late', operation: 'GET /a', span_id: 'late' }))), buckets: [b0] };
    const holding: Store = {
      ...store,
      connect: async () =>
        beforeEachRun(await store.connect(), async (sql) => {
          if (held || !sql.startsWith('INSERT INTO svc_series_5m')) return;
          held = true;
          await writer.submit(late);
        }),
    };
    const asOf = { asOfUs: (b0 + 2) * BUCKET_US, graceUs: 0 };
    await runPass({ ...deps(), store: holding }, asOf);
    expect(held).toBe(true);
    expect(await calls()).toBe(20); // the snapshot did not hold the late span
    expect(await marked()).toBe(true);
    await runPass(deps(), asOf);
    expect(await calls()).toBe(21);
    expect(await marked()).toBe(false);
  });
});

describe('the pass and the embeddable detector', () => {
  it('passes over three days of a daily cycle, with a restart between them, write the rows one run of the detector gives', async () => {
    const first = Math.floor(Date.now() * 1000 / BUCKET_US / DAY) * DAY - 4 * DAY; // midnight four days ago
    const shiftAt = first + 3 * DAY + 150;
    const latency = (b: number) => 20_000 * Math.exp(0.6 * Math.sin((2 * Math.PI * (b % DAY)) / DAY)) * (b >= shiftAt && b < shiftAt + 30 ? 2.5 : 1);
    const end = first + 3 * DAY + 220;
    let cache: StateCache = new Map();
    for (let at = first + 90; at < end + 90; at += 90) {
      await spans('cycle', at - 90, Math.min(at, end), latency);
      await runPass(deps(cache), { asOfUs: Math.min(at, end) * BUCKET_US, graceUs: 0 });
      if (at === first + 2 * DAY) {
        await flushStates({ writer, cache }); // a restart: the states go to the store, the next process reads them
        cache = new Map();
      }
    }
    const series = await reads.use((c) => readRows(c, `SELECT epoch_us(timestamp) // ${BUCKET_US} AS b, value FROM svc_series_5m WHERE service_name = 'cycle' AND signal = 'latency_p95' ORDER BY b`));
    const values = new Float64Array(end - first).fill(NaN);
    for (const r of series) values[Number(r['b']) - first] = Number(r['value']);
    const expected = worsening(new BocpdDetector('latency_p95').run({ values, start: first * BUCKET_US }).changes);
    const rows = await reads.use((c) => readRows(c, `SELECT ts_shift_us, before, after FROM svc_anomalies WHERE service_name = 'cycle' AND signal = 'latency_p95' ORDER BY ts_shift_us`));
    expect(expected.map((c) => (first + c.index) * BUCKET_US)).toContain(shiftAt * BUCKET_US);
    expect(rows.map((r) => Number(r['ts_shift_us']))).toEqual(expected.map((c) => (first + c.index) * BUCKET_US));
    rows.forEach((r, i) => expect(Number(r['before'])).toBeCloseTo(expected[i]!.before, 6));
    // no row for the daily peaks: only the shift
    expect(rows.length).toBeLessThanOrEqual(2);
  });
});
