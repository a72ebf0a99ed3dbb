// The slow-diagnosis log: a diagnosis that took at least SVC_DIAGNOSE_LOG_SLOW_MS is logged with its
// slowest statements by name, so an operator can tell which read a slow diagnosis spent its time in.
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';
import { postOtlp } from '../helpers/otlp.js';
import { tracesJson, type JsonSpan } from '../../testkit/otlp-json.js';
import { slowDiagnosis } from '../../src/api/routes/diagnose.js';
import { STATEMENTS } from '../../src/diagnose/reads/index.js';

const logged = useTestServer({ SVC_DIAGNOSE_LOG_SLOW_MS: '1' });
const off = useTestServer({ SVC_DIAGNOSE_LOG_SLOW_MS: '0' });
const now = Date.now() * 1000;
const MINUTE = 60_000_000;

async function diagnoseAfterTraffic(srv: typeof logged): Promise<void> {
  const spans: JsonSpan[] = [];
  for (let t = now - 30 * MINUTE, i = 0; t < now; t += 2_000_000, i++) spans.push({ name: 'GET /a', startUs: t, durationUs: 3_000 + (i % 7) * 500, error: i % 11 === 0 });
  expect((await postOtlp(srv.otlpHttp, 'traces', tracesJson('front', spans))).status).toBe(200);
  const res = await fetch(`${srv.api}/v1/diagnose`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ services: ['front'], from_ts: now - 15 * MINUTE, to_ts: now }) });
  expect(res.status).toBe(200);
  expect(Object.keys(((await res.json()) as { results: object }).results)).toEqual(['front']);
}

describe('slow-diagnosis log', () => {
  it('names the slowest statements, slowest first, with the ms each ran', async () => {
    await diagnoseAfterTraffic(logged);
    const line = logged.logs.find((l) => l['msg'] === 'slow diagnosis');
    expect(line).toMatchObject({ level: 'info', tenant: 'default', services: ['front'] });
    expect(line!['ms']).toBeGreaterThanOrEqual(1);
    const statements = Object.entries(line!['statements_ms'] as Record<string, number>);
    expect(statements.length).toBeGreaterThan(0);
    for (const [name, ms] of statements) {
      expect(Object.keys(STATEMENTS)).toContain(name);
      expect(ms).toBeGreaterThanOrEqual(0);
    }
    const times = statements.map(([, ms]) => ms);
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('logs nothing with the setting at 0', async () => {
    await diagnoseAfterTraffic(off);
    expect(off.logs.some((l) => l['msg'] === 'slow diagnosis')).toBe(false);
  });

  it('keeps the eight slowest', () => {
    const timings = new Map(Array.from({ length: 12 }, (_v, i) => [`s${i}`, i * 10.4] as [string, number]));
    const line = slowDiagnosis('t', ['a'], 500, timings);
    expect(line['statements_ms']).toEqual({ s11: 114, s10: 104, s9: 94, s8: 83, s7: 73, s6: 62, s5: 52, s4: 42 });
  });
});
