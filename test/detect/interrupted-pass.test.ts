// A detection pass stopped between closing its buckets and saving the detector states (a crash: the
// buckets' dirty marks are gone, the detector never saw their points) must not leave a shift in those
// points undetected until its series gets new data, which may never come. The store is brought to
// exactly that state (the pass's later writes removed from a stopped server's file), and the next
// start must find the shift again on its own.
import { afterAll, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { postOtlp } from '../helpers/otlp.js';
import { tracesJson, type JsonSpan } from '../../testkit/otlp-json.js';
import { tempDir } from '../helpers/tmp.js';
import { rng } from '../../testkit/rng.js';
import { BUCKET_US } from '../../src/core/time.js';

const BUCKETS = 24;
const SHIFT_AT = 16;
const nowUs = Date.now() * 1000;
const firstBucket = Math.floor(nowUs / BUCKET_US) - BUCKETS;
const ENV = { SVC_DETECT_INTERVAL_S: '1', SVC_DETECT_GRACE_S: '0' };
const dir = tempDir('tds-interrupted-');
afterAll(() => dir.cleanup());

interface Anomaly {
  operation: string;
  signal: string;
  ts_shift_us: number;
}

const passes = async (srv: TestServer) =>
  ((await (await fetch(`${srv.api}/admin/status`)).json()) as { status: { detection: { passes: number } } }).status.detection.passes;

/** The anomalies once the passes took in every bucket: two more passes than `after` with no ingest leave nothing dirty. */
async function settledAnomalies(srv: TestServer, after = 0): Promise<Anomaly[]> {
  while ((await passes(srv)) < after + 2) await new Promise((r) => setTimeout(r, 100));
  const res = await fetch(`${srv.api}/v1/anomalies?from_ts=${firstBucket * BUCKET_US}&to_ts=${nowUs}`);
  return ((await res.json()) as { anomalies: Anomaly[] }).anomalies;
}

it('finds a shift again after a pass was interrupted between closing its buckets and saving the detector states', async () => {
  const srv = await startTestServer(ENV, dir.dir);
  const r = rng(11);
  const spans: JsonSpan[] = [];
  for (let b = 0; b < BUCKETS; b++) {
    for (let i = 0; i < 60; i++) {
      const slow = b >= SHIFT_AT ? 3 : 1;
      spans.push({ name: 'GET /search', startUs: (firstBucket + b) * BUCKET_US + i * 1_000_000, durationUs: Math.floor(20_000 * slow * (0.9 + 0.2 * r())) });
    }
  }
  expect((await postOtlp(srv.otlpHttp, 'traces', tracesJson('shop', spans))).status).toBe(200);
  const before = await settledAnomalies(srv, await passes(srv)); // passes that started after the data came
  const shift = before.find((a) => a.signal === 'latency_p95' && a.operation === 'GET /search');
  expect(shift, JSON.stringify(before)).toBeDefined();
  expect(await srv.stop()).toBe(0);

  // What a kill after the pass's first transaction leaves: series written and dirty marks deleted,
  // but no detector state, anomaly or alert yet.
  const inst = await DuckDBInstance.create(join(dir.dir, 'lake.duckdb'));
  const conn = await inst.connect();
  for (const t of ['svc_detector_state', 'svc_anomalies', 'svc_alerts']) await conn.run(`DELETE FROM ${t}`);
  expect(Number((await conn.runAndReadAll('SELECT count(*) FROM svc_dirty_buckets')).getRows()[0]![0])).toBe(0);
  expect(Number((await conn.runAndReadAll('SELECT count(*) FROM svc_series_5m')).getRows()[0]![0])).toBeGreaterThan(0);
  conn.closeSync();
  inst.closeSync();

  const again = await startTestServer(ENV, dir.dir);
  try {
    const after = await settledAnomalies(again);
    expect(after.find((a) => a.signal === 'latency_p95' && a.operation === 'GET /search')?.ts_shift_us).toBe(shift!.ts_shift_us);
    expect(again.logs.some((l) => l['msg'] === 'detection resumes an interrupted pass')).toBe(true);
  } finally {
    await again.stop();
  }
});
