// A fault's onset sent over OTLP becomes an anomaly row as soon as two buckets of it are past their
// grace, with the service's default detection settings: the pass that runs when a bucket's grace
// ends (here the one at start) writes it. Three hours of normal traffic come first, loaded by a
// server whose grace keeps every bucket open. (The time from onset to row, which depends on where
// in its bucket the fault starts, is measured by bench/detect-lag.ts.)
import { afterAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { postOtlp } from '../helpers/otlp.js';
import { tracesJson, type JsonSpan } from '../helpers/otlp-json.js';
import { tempDir } from '../helpers/tmp.js';
import { rng } from '../../bench/lib/rng.js';
import { settingDefault } from '../../src/core/config.js';
import { BUCKET_US } from '../../src/core/time.js';

const dir = tempDir('tds-onset-');
let srv: TestServer | undefined;
afterAll(async () => {
  await srv?.stop();
  dir.cleanup();
});

it('an onset is written once two of its buckets are past the default grace, by the pass the scheduler runs then', async () => {
  const graceUs = Number(settingDefault('SVC_DETECT_GRACE_S')) * 1_000_000;
  const onset = Math.floor((Date.now() * 1000 - graceUs) / BUCKET_US) - 2; // it and the next bucket are past their grace
  const history = 36;
  const loader = await startTestServer({ SVC_DETECT_GRACE_S: '86400' }, dir.dir); // nothing closes while it loads
  const r = rng(44);
  const spans: JsonSpan[] = [];
  for (let b = onset - history; b < onset + 2; b++) {
    for (let i = 0; i < 60; i++) {
      const ts = b * BUCKET_US + i * 4_000_000;
      spans.push({ name: 'GET /cart', startUs: ts, durationUs: Math.floor((b >= onset ? 90_000 : 30_000) * (0.9 + 0.2 * r())), attributes: { 'http.request.method': 'GET', 'http.route': '/cart' } });
    }
  }
  expect((await postOtlp(loader.otlpHttp, 'traces', tracesJson('cart', spans))).status).toBe(200);
  expect(await loader.stop()).toBe(0);

  srv = await startTestServer({}, dir.dir); // the default detection settings
  const status = async () => ((await (await fetch(`${srv!.api}/admin/status`)).json()) as { status: { detection: { passes: number; grace_s: number } } }).status.detection;
  while ((await status()).passes < 1) await new Promise((res) => setTimeout(res, 100));
  expect((await status()).grace_s * 1_000_000).toBe(graceUs);
  const res = await fetch(`${srv.api}/v1/anomalies?from_ts=${(onset - history) * BUCKET_US}&to_ts=${(onset + 2) * BUCKET_US}`);
  const rows = ((await res.json()) as { anomalies: Array<{ signal: string; operation: string; ts_shift_us: number; before: number; after: number }> }).anomalies;
  const row = rows.find((a) => a.signal === 'latency_p95' && a.operation === 'GET /cart');
  expect(row, JSON.stringify(rows)).toBeDefined();
  expect(row!.ts_shift_us).toBe(onset * BUCKET_US);
  expect(row!.after / row!.before).toBeGreaterThan(2.5);
});
