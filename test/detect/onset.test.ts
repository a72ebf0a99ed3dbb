// From a fault's onset to its anomaly row, end to end: spans sent over OTLP, then passes as the
// scheduler runs them at the default settings — one as each bucket's default grace ends, closing
// that bucket — driven through POST /admin/detect with an explicit as-of, so the lag is read from the
// pass that wrote the row, not from the wall clock. Three hours of normal traffic come first. The
// server's own grace keeps every bucket open so that only these passes close them. (The lag's
// distribution over onsets inside a bucket is measured by bench/detect-lag.ts.)
import { afterAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { postOtlp } from '../helpers/otlp.js';
import { tracesJson, type JsonSpan } from '../../testkit/otlp-json.js';
import { tempDir } from '../helpers/tmp.js';
import { rng } from '../../testkit/rng.js';
import { settingDefault } from '../../src/core/config.js';
import { BUCKET_US } from '../../src/core/time.js';

const dir = tempDir('tds-onset-');
let srv: TestServer | undefined;
afterAll(async () => {
  await srv?.stop();
  dir.cleanup();
});

const TEN_MINUTES_US = 600_000_000;

it('a fault is written within 10 minutes of its onset by the pass that runs when a bucket past it meets the default grace', async () => {
  const graceUs = Number(settingDefault('SVC_DETECT_GRACE_S')) * 1_000_000;
  const onset = Math.floor(Date.now() * 1000 / BUCKET_US) - 4; // the fault starts at this bucket's start: its worst case
  const onsetUs = onset * BUCKET_US;
  const history = 36;
  srv = await startTestServer({ SVC_DETECT_GRACE_S: '86400' }, dir.dir); // no scheduled pass closes these buckets
  const r = rng(44);
  const spans: JsonSpan[] = [];
  for (let b = onset - history; b < onset + 3; b++) {
    for (let i = 0; i < 60; i++) {
      const ts = b * BUCKET_US + i * 4_000_000;
      const faulty = ts >= onsetUs;
      spans.push({ name: 'GET /cart', startUs: ts, durationUs: Math.floor((faulty ? 90_000 : 30_000) * (0.9 + 0.2 * r())), attributes: { 'http.request.method': 'GET', 'http.route': '/cart' } });
      spans.push({ name: 'POST /pay', startUs: ts + 1000, durationUs: 20_000, error: r() < (faulty ? 0.2 : 0.01), attributes: { 'http.request.method': 'POST', 'http.route': '/pay' } });
    }
  }
  expect((await postOtlp(srv.otlpHttp, 'traces', tracesJson('shop', spans))).status).toBe(200);

  const detect = async (asOfUs: number) => expect((await fetch(`${srv!.api}/admin/detect?as_of_ts=${asOfUs}`, { method: 'POST' })).status).toBe(200);
  const rowsOf = async () =>
    ((await (await fetch(`${srv!.api}/v1/anomalies?from_ts=${(onset - history) * BUCKET_US}&to_ts=${(onset + 3) * BUCKET_US}`)).json()) as { anomalies: Array<{ signal: string; operation: string; ts_shift_us: number; before: number; after: number }> }).anomalies;
  await detect(onsetUs); // the history, closed
  expect(await rowsOf()).toEqual([]);
  const writtenAt = new Map<string, number>(); // signal -> as-of of the pass that wrote its row
  for (let b = onset; b < onset + 3; b++) {
    const asOf = (b + 1) * BUCKET_US + graceUs;
    await detect(asOf);
    for (const row of await rowsOf()) if (!writtenAt.has(row.signal) && row.ts_shift_us === onsetUs) writtenAt.set(row.signal, asOf);
  }
  const rows = await rowsOf();
  const latency = rows.find((a) => a.signal === 'latency_p95' && a.operation === 'GET /cart');
  expect(latency, JSON.stringify(rows)).toBeDefined();
  expect(latency!.after / latency!.before).toBeGreaterThan(2.5);
  expect(writtenAt.get('latency_p95')! - onsetUs).toBeLessThanOrEqual(TEN_MINUTES_US);
  const errors = rows.find((a) => a.signal === 'error_rate' && a.operation === 'POST /pay');
  expect(errors, JSON.stringify(rows)).toBeDefined();
  expect(writtenAt.get('error_rate')! - onsetUs).toBeLessThanOrEqual(TEN_MINUTES_US);
});
