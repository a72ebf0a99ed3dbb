// Diagnosis admission on a real server (one diagnosis at a time, one waiting): a burst of different
// calls is answered, every one with 200, the ones that found no room with every service busy in
// `errors` and a Retry-After; two identical calls at once share one run; /admin/status counts it all.
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';
import { postOtlp } from '../helpers/otlp.js';
import { tracesJson, type JsonSpan } from '../../testkit/otlp-json.js';
import { checkResponse } from '../helpers/api.js';

const srv = useTestServer({ SVC_DIAGNOSE_CONCURRENCY: '1', SVC_DIAGNOSE_QUEUE: '1' });
const SERVICES = ['front', 'back'];
const now = Date.now() * 1000;
const MINUTE = 60_000_000;

/** 40 minutes of a front service calling a back service, a request every 2 s. */
async function sendTraffic() {
  for (const service of SERVICES) {
    const spans: JsonSpan[] = [];
    for (let t = now - 40 * MINUTE, i = 0; t < now; t += 2_000_000, i++) {
      spans.push({ name: `GET /${service}`, startUs: t, durationUs: 3_000 + (i % 7) * 500, error: i % 11 === 0, attributes: { 'http.request.method': 'GET', 'http.route': `/${service}` } });
    }
    expect((await postOtlp(srv.otlpHttp, 'traces', tracesJson(service, spans))).status).toBe(200);
  }
}

async function diagnose(body: unknown) {
  const res = await fetch(`${srv.api}/v1/diagnose`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { results: Record<string, unknown>; errors: Record<string, string> } };
}

const diagnoses = async () => ((await (await fetch(`${srv.api}/admin/status`)).json()) as { status: { diagnoses: Record<string, number> } }).status.diagnoses;

describe('diagnosis admission end to end', () => {
  it('answers a burst of different calls with 200: some with results, the rest busy with Retry-After', async () => {
    await sendTraffic();
    // Different windows, so that no two calls are identical.
    const answers = await Promise.all(Array.from({ length: 8 }, (_v, i) => diagnose({ services: SERVICES, from_ts: now - 15 * MINUTE - i * 1_000_000, to_ts: now - i * 1_000_000 })));
    for (const a of answers) {
      expect(a.status).toBe(200);
      checkResponse('POST', '/v1/diagnose', 200, a.body);
    }
    const busy = answers.filter((a) => a.retryAfter !== null);
    expect(busy.length).toBeGreaterThan(0);
    for (const a of busy) {
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(Number(a.retryAfter))).toBe(true);
      expect(a.body.results).toEqual({});
      expect(Object.keys(a.body.errors)).toEqual(SERVICES);
      for (const s of SERVICES) expect(a.body.errors[s]).toMatch(/^the server is busy: .*retry in \d+ s$/);
    }
    const ran = answers.filter((a) => a.retryAfter === null);
    expect(ran.length).toBeGreaterThan(0);
    for (const a of ran) expect(Object.keys(a.body.results)).toEqual(SERVICES);

    const status = await diagnoses();
    expect(status).toMatchObject({ limit: 1, max_waiting: 1, running: 0, waiting: 0, busy: busy.length });
    expect(srv.logs.some((l) => l['msg'] === 'diagnosis answered busy')).toBe(true);
  });

  it('runs two identical calls once and gives both the same answer', async () => {
    const before = await diagnoses();
    const body = { services: SERVICES, from_ts: now - 20 * MINUTE, to_ts: now - 5 * MINUTE };
    const [a, b] = await Promise.all([diagnose(body), diagnose(body)]);
    expect(a.status).toBe(200);
    expect(b.body).toEqual(a.body);
    expect(Object.keys(a.body.results)).toEqual(SERVICES);
    const after = await diagnoses();
    expect(after.coalesced).toBe(before.coalesced! + 1);
    expect(after).toMatchObject({ running: 0, waiting: 0 });
  });
});
