// The harness endpoints refuse a bad request with their documented status and a JSON error body
// {"error": {"code", "message", "hint"}}: POST /v1/snapshot's window (microseconds only, to_ts after
// from_ts, a list of names, the body limit), POST /v1/restore's body limit (SVC_RESTORE_MAX_BYTES)
// and an empty archive, and POST /admin/detect's parameters. Nothing is stored by a refused restore.
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';
import { tracesJson } from '../../testkit/otlp-json.js';
import { postOtlp } from '../helpers/otlp.js';
import { MAX_SNAPSHOT_SERVICES } from '../../src/api/routes/snapshot.js';
import { ALL_TIME, rows } from './cli.js';

const RESTORE_LIMIT = 64 * 1024;
const srv = useTestServer({ SVC_RESTORE_MAX_BYTES: String(RESTORE_LIMIT), SVC_DETECT_INTERVAL_S: '3600' });
const NOW_US = Date.now() * 1000;
const HOUR = 3_600_000_000;

interface ErrorBody {
  error: { code: string; message: string; hint?: string };
}

async function refused(res: Response, status: number, code: string): Promise<ErrorBody['error']> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as ErrorBody;
  expect(body.error).toMatchObject({ code, message: expect.any(String) });
  expect(body.error.message.length).toBeGreaterThan(0);
  return body.error;
}

const snapshot = (body: string) => fetch(`${srv.api}/v1/snapshot`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
const restore = (body: Uint8Array) => fetch(`${srv.api}/v1/restore`, { method: 'POST', headers: { 'content-type': 'application/x-tar' }, body: body as BodyInit });

describe('POST /v1/snapshot refuses a bad window', () => {
  const window = (from: unknown, to: unknown, extra: Record<string, unknown> = {}) => JSON.stringify({ from_ts: from, to_ts: to, ...extra });
  // [what, body, code, message, hint]
  const cases: [string, string, string, RegExp, RegExp?][] = [
    ['a body that is not JSON', '{"from_ts": 1', 'BAD_REQUEST', /not valid JSON/],
    ['a JSON array', '[1, 2]', 'BAD_REQUEST', /object/],
    ['no to_ts', JSON.stringify({ from_ts: NOW_US - HOUR }), 'INVALID_TIMESTAMP', /to_ts/],
    ['seconds', window(Math.floor(NOW_US / 1e6) - 3600, Math.floor(NOW_US / 1e6)), 'INVALID_TIMESTAMP', /from_ts/, /\bseconds/],
    ['milliseconds', window(Math.floor(NOW_US / 1e3) - 3_600_000, Math.floor(NOW_US / 1e3)), 'INVALID_TIMESTAMP', /from_ts/, /milliseconds/],
    ['nanoseconds', window((NOW_US - HOUR) * 1000, NOW_US * 1000), 'INVALID_TIMESTAMP', /from_ts/, /nanoseconds/],
    ['a string', window(String(NOW_US - HOUR), String(NOW_US)), 'INVALID_TIMESTAMP', /from_ts/],
    ['a fraction', window(NOW_US - HOUR + 0.5, NOW_US), 'INVALID_TIMESTAMP', /from_ts/],
    ['to_ts before from_ts', window(NOW_US, NOW_US - HOUR), 'INVALID_WINDOW', /greater than from_ts/],
    ['to_ts equal to from_ts', window(NOW_US, NOW_US), 'INVALID_WINDOW', /greater than from_ts/],
    ['services that is not a list', window(NOW_US - HOUR, NOW_US, { services: 'checkout' }), 'BAD_REQUEST', /services/],
    ['an empty service name', window(NOW_US - HOUR, NOW_US, { services: ['checkout', ''] }), 'BAD_REQUEST', /services/],
    ['too many services', window(NOW_US - HOUR, NOW_US, { services: Array.from({ length: MAX_SNAPSHOT_SERVICES + 1 }, (_, i) => `s${i}`) }), 'BAD_REQUEST', /at most/],
  ];
  for (const [what, body, code, message, hint] of cases) {
    it(`${what}: 400 ${code}`, async () => {
      const e = await refused(await snapshot(body), 400, code);
      expect(e.message).toMatch(message);
      if (hint) expect(e.hint).toMatch(hint);
    });
  }

  it('a body over its limit: 413', async () => {
    await refused(await snapshot(window(NOW_US - HOUR, NOW_US, { services: ['x'.repeat(300 * 1024)] })), 413, 'TOO_LARGE');
  });

  it('answers a window with no rows as an archive all the same', async () => {
    const res = await snapshot(window(NOW_US - 2 * HOUR, NOW_US - HOUR));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-tar');
  });
});

describe('POST /v1/restore', () => {
  const spans = () => rows(srv.api, `SELECT count(*) AS n FROM svc_spans WHERE ${ALL_TIME}`);

  it(`refuses an archive over SVC_RESTORE_MAX_BYTES with 413, and stores nothing`, async () => {
    expect((await postOtlp(srv.otlpHttp, 'traces', tracesJson('kept', [{ name: 'GET /', startUs: NOW_US - 60_000_000, durationUs: 10 }]))).status).toBe(200);
    const before = await spans();
    expect(before).toEqual([{ n: 1 }]);
    await refused(await restore(new Uint8Array(RESTORE_LIMIT + 1)), 413, 'TOO_LARGE');
    expect(await spans()).toEqual(before);
  });

  it('refuses an empty body with 400 MALFORMED', async () => {
    const e = await refused(await restore(new Uint8Array(0)), 400, 'MALFORMED');
    expect(e.hint).toMatch(/snapshot/);
  });
});

describe('POST /admin/detect refuses a bad parameter', () => {
  const cases: [string, string, string][] = [
    ['as_of_ts in seconds', `as_of_ts=${Math.floor(NOW_US / 1e6)}`, 'INVALID_TIMESTAMP'],
    ['as_of_ts that is not a number', 'as_of_ts=yesterday', 'INVALID_TIMESTAMP'],
    ['until_idle that is not a boolean', 'until_idle=maybe', 'BAD_REQUEST'],
    ['a tenant in open mode', 'tenant=acme', 'NOT_HOSTED'],
  ];
  for (const [what, query, code] of cases) {
    it(`${what}: 400 ${code}`, async () => {
      await refused(await fetch(`${srv.api}/admin/detect?${query}`, { method: 'POST' }), 400, code);
    });
  }
});
