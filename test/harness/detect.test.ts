// Detection on demand. A history with an incident is sent live to one server, whose scheduled pass
// detects it; the same requests, recorded as they were sent, are replayed into a fresh server and
// `tds detect --wait --until-idle --as-of` is run: both stores then hold the same anomalies (all but
// the time each pass wrote them) and answer the same diagnoses. Also: the "as of" rule, idempotence,
// and SVC_AUTH's rules (the admin token, the tenant named, a tenant key refused).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { postOtlp } from '../helpers/otlp.js';
import { ADMIN_TOKEN, admin, bearer, createTenant, issueKey, startHosted, within } from '../helpers/hosted.js';
import { cli } from './cli.js';

import { B, BUCKETS, SHIFT_AT, history } from '../../testkit/incident.js';

const first = Math.floor((Date.now() * 1000) / B) - BUCKETS - 3; // the history ends three buckets before now
const dir = mkdtempSync(join(tmpdir(), 'tds-detect-'));
const file = join(dir, 'history.jsonl');
const fromTs = first * B;
const toTs = (first + BUCKETS) * B;

let live: TestServer;
let replayed: TestServer;
let closeLimitUs: number;
let detected: { code: number; out: any };

const anomalies = async (srv: TestServer) => {
  const res = await fetch(`${srv.api}/v1/anomalies?from_ts=${fromTs - B}&to_ts=${toTs + B}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { anomalies: Record<string, unknown>[] }).anomalies;
};
/** The rows without the time their pass wrote them, in one order (the endpoint leaves exact ties in any order). */
const withoutTime = (rows: Record<string, unknown>[]) =>
  rows.map(({ detected_at: _, ...rest }) => rest).sort((x, y) => JSON.stringify([x['service_name'], x['operation'], x['signal'], x['ts_shift_us']]).localeCompare(JSON.stringify([y['service_name'], y['operation'], y['signal'], y['ts_shift_us']])));
const diagnose = async (srv: TestServer, service: string) => {
  const res = await fetch(`${srv.api}/v1/diagnose`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ services: [service], from_ts: (first + SHIFT_AT - 2) * B, to_ts: toTs }) });
  expect(res.status).toBe(200);
  return res.json();
};

beforeAll(async () => {
  // Live: the history arrives while detection waits, then the scheduler's pass (the one at start) takes it in.
  const loader = await startTestServer({ SVC_DETECT_INTERVAL_S: '3600', SVC_DETECT_GRACE_S: '0' });
  for (const req of history(first)) {
    expect((await postOtlp(loader.otlpHttp, req.signal, req.body)).status).toBe(200);
    appendFileSync(file, req.body + '\n');
  }
  expect(await loader.stop()).toBe(0);
  live = await startTestServer({ SVC_DETECT_INTERVAL_S: '3600', SVC_DETECT_GRACE_S: '0' }, loader.dataDir);
  await within(30_000, async () => {
    const st = (await (await fetch(`${live.api}/admin/status`)).json()) as { status: { detection: { passes: number; last: { closed_before_bucket: number } | null } } };
    if (!st.status.detection.passes || !st.status.detection.last) return false;
    closeLimitUs = st.status.detection.last.closed_before_bucket * B;
    return true;
  });
  // Replayed: the recording into a fresh server, then detection on demand as of the same instant.
  replayed = await startTestServer({ SVC_DETECT_INTERVAL_S: '3600' });
  const r = await cli(['replay', file, '--url', replayed.api, '--otlp-url', replayed.otlpHttp]);
  expect(r.code, JSON.stringify(r.out)).toBe(0);
  detected = await cli(['detect', '--wait', '--until-idle', '--as-of', String(closeLimitUs), '--url', replayed.api]);
}, 120_000);

afterAll(async () => {
  for (const s of [live, replayed]) {
    await s?.stop();
    if (s) rmSync(s.dataDir, { recursive: true, force: true });
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('tds detect --wait on a replayed history', () => {
  it('closes every bucket of the history in passes until one finds nothing, and says what it wrote', () => {
    expect(detected.code, JSON.stringify(detected.out)).toBe(0);
    expect(detected.out).toMatchObject({ tenant: 'default', as_of_us: closeLimitUs, idle: true, buckets_closed: BUCKETS, closed_from_us: fromTs, closed_to_us: toTs });
    expect(detected.out.passes).toBeGreaterThanOrEqual(2);
    expect(detected.out.anomalies_written).toBeGreaterThan(0);
  });

  it('finds the same anomalies as the scheduler did live, stamped as of the given time', async () => {
    const [a, b] = await Promise.all([anomalies(live), anomalies(replayed)]);
    expect(a.length).toBeGreaterThan(0);
    expect(a.some((x) => x['service_name'] === 'payments' && x['signal'] === 'error_rate')).toBe(true);
    expect(withoutTime(b)).toEqual(withoutTime(a));
    expect(b.length).toBe(detected.out.anomalies_written);
    expect(new Set(b.map((x) => x['detected_at']))).toEqual(new Set([new Date(closeLimitUs / 1000).toISOString().replace('Z', '000Z')]));
  });

  it('answers the same diagnoses', async () => {
    for (const service of ['frontend', 'checkout', 'payments']) expect(await diagnose(replayed, service), service).toEqual(await diagnose(live, service));
  });

  it('is idempotent: a second call closes nothing and writes nothing', async () => {
    const before = await anomalies(replayed);
    const again = await cli(['detect', '--url', replayed.api]);
    expect(again.code).toBe(0);
    expect(again.out).toMatchObject({ passes: 1, idle: true, buckets_closed: 0, anomalies_written: 0, closed_from_us: null });
    expect(await anomalies(replayed)).toEqual(before);
  });
});

describe('the "as of" rule', () => {
  it('closes only the buckets that end by then, and the rest on the next call', async () => {
    const srv = await startTestServer({ SVC_DETECT_INTERVAL_S: '3600' });
    try {
      expect((await cli(['replay', file, '--url', srv.api, '--otlp-url', srv.otlpHttp])).code).toBe(0);
      const mid = (first + 10) * B + B / 3; // inside bucket 10: buckets 0-9 end by then
      const early = await cli(['detect', '--as-of', String(mid), '--url', srv.api]);
      expect(early.out).toMatchObject({ buckets_closed: 10, closed_from_us: fromTs, closed_to_us: (first + 10) * B, as_of_us: mid });
      const rest = await cli(['detect', '--url', srv.api]);
      expect(rest.out).toMatchObject({ buckets_closed: BUCKETS - 10, closed_from_us: (first + 10) * B, closed_to_us: toTs });
    } finally {
      await srv.stop();
      srv.cleanup();
    }
  });
});

describe('SVC_AUTH=keys', () => {
  let hosted: TestServer;
  let key: string;
  beforeAll(async () => {
    hosted = await startHosted({ SVC_DETECT_INTERVAL_S: '3600' });
    await createTenant(hosted, 'acme');
    key = (await issueKey(hosted, 'acme')).key;
  }, 60_000);
  afterAll(async () => {
    await hosted?.stop();
    hosted?.cleanup();
  });

  it('takes the admin token and the tenant, and detects on that tenant only', async () => {
    const r = await cli(['replay', file, '--url', hosted.api, '--otlp-url', hosted.otlpHttp, '--api-key', key]);
    expect(r.code, JSON.stringify(r.out)).toBe(0);
    const d = await cli(['detect', '--tenant', 'acme', '--url', hosted.api], { SVC_ADMIN_TOKEN: ADMIN_TOKEN });
    expect(d.code, JSON.stringify(d.out)).toBe(0);
    expect(d.out).toMatchObject({ tenant: 'acme', buckets_closed: BUCKETS });
  });

  it.each([
    ['no token', '?tenant=acme', {}, 401],
    ['a tenant key', '?tenant=acme', 'key', 403],
    ['no tenant named', '', admin, 400],
    ['an unknown tenant', '?tenant=nobody', admin, 404],
    ['a malformed tenant id', '?tenant=..%2Fx', admin, 400],
  ] as const)('refuses %s', async (_what, query, headers, status) => {
    const res = await fetch(`${hosted.api}/admin/detect${query}`, { method: 'POST', headers: headers === 'key' ? bearer(key) : headers });
    expect(res.status).toBe(status);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBeTruthy();
  });
});
