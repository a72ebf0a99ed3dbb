// The shared control plane: a real PostgreSQL server (started here) and two service instances on
// it. A key created through one is honoured by the other, and refused there once revoked or its
// tenant deactivated, within the refresh bound, with no restart. The tds CLI drives the admin side.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { ChildServer } from '../../testkit/server.js';
import { startPostgres, type Postgres } from '../helpers/postgres.js';
import { ADMIN_TOKEN, bearer, startHosted, within } from '../helpers/hosted.js';
import { run } from '../../src/cli/main.js';

const REFRESH_MS = 500;
let db: Postgres;
let one: ChildServer, two: ChildServer;

beforeAll(async () => {
  db = await startPostgres();
  const env = { SVC_CONTROL_PLANE_URL: db.url, SVC_CONTROL_PLANE_REFRESH_MS: String(REFRESH_MS) };
  // Started together: the schema migration runs once, under its advisory lock.
  [one, two] = await Promise.all([startHosted(env), startHosted(env)]);
}, 120_000);

afterAll(async () => {
  await Promise.all([one?.stop(), two?.stop()]);
  one?.cleanup();
  two?.cleanup();
  db?.stop();
});

async function tds(srv: ChildServer, ...argv: string[]): Promise<{ code: number; out: any }> {
  let text = '';
  const code = await run(argv, { stdout: { write: (s: string) => (text += s) }, stderr: { write: () => true }, env: { SVC_URL: srv.api, SVC_ADMIN_TOKEN: ADMIN_TOKEN } });
  return { code, out: JSON.parse(text) };
}
const services = async (srv: ChildServer, key: string) => (await fetch(`${srv.api}/v1/services`, { headers: bearer(key) })).status;

describe('two instances sharing a PostgreSQL control plane', () => {
  it('created the schema once and records its version', async () => {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const r = await c.query('SELECT version FROM tds_schema_migrations ORDER BY version');
      expect(r.rows).toEqual([{ version: 1 }, { version: 2 }]);
    } finally {
      await c.end();
    }
  });

  it('create on one, use on the other; revoke on one, refused on the other', async () => {
    expect(await tds(one, 'admin', 'tenant', 'create', 'shared')).toEqual({ code: 0, out: { id: 'shared', status: 'active' } });
    const issued = await tds(one, 'admin', 'key', 'create', 'shared');
    expect(issued.code).toBe(0);
    const { key, short_token } = issued.out as { key: string; short_token: string };
    expect(key).toMatch(/^tds_/);
    expect(await within(REFRESH_MS + 3000, async () => (await services(two, key)) === 200)).toBeLessThan(REFRESH_MS + 3000);

    // Ingest through the second instance, read through the same one.
    const otlp = JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc-two' } }] }, scopeSpans: [{ spans: [{ traceId: '12'.repeat(16), spanId: '12'.repeat(8), name: 'x', startTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n), endTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n + 1000n) }] }] }] });
    expect((await fetch(`${two.otlpHttp}/v1/traces`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: otlp })).status).toBe(200);

    expect(await tds(two, 'admin', 'key', 'revoke', short_token)).toEqual({ code: 0, out: { revoked: true, short_token } });
    expect(await services(two, key)).toBe(401); // at once on the instance that revoked it
    await within(REFRESH_MS + 3000, async () => (await services(one, key)) === 401);
    expect(await tds(one, 'admin', 'key', 'revoke', short_token)).toEqual({ code: 0, out: { revoked: false, short_token } });
  });

  it('deactivating a tenant on one stops its keys on the other; reactivating restores them', async () => {
    await tds(two, 'admin', 'tenant', 'create', 'pausable');
    const { key } = (await tds(two, 'admin', 'key', 'create', 'pausable')).out as { key: string };
    await within(REFRESH_MS + 3000, async () => (await services(one, key)) === 200);
    expect((await tds(two, 'admin', 'tenant', 'deactivate', 'pausable')).out).toEqual({ id: 'pausable', status: 'inactive' });
    await within(REFRESH_MS + 3000, async () => (await services(one, key)) === 401);
    await tds(one, 'admin', 'tenant', 'create', 'pausable');
    await within(REFRESH_MS + 3000, async () => (await services(two, key)) === 200);
  });

  it('status shows the control plane without its credentials, and the CLI refuses without the admin token', async () => {
    const s = await tds(one, 'status');
    expect(s.code).toBe(0);
    expect(s.out.status.control_plane).toMatchObject({ backend: 'postgres', last_error: null });
    expect(s.out.status.tenants.shared).toMatchObject({ status: 'active', key_count: 0 });
    let text = '';
    const code = await run(['admin', 'tenant', 'create', 'x'], { stdout: { write: (t: string) => (text += t) }, stderr: { write: () => true }, env: { SVC_URL: one.api } });
    expect(code).toBe(2);
    expect(text).toMatch(/SVC_ADMIN_TOKEN/);
  });
});
