// The edges of the two modes: open mode answers tenant and key administration with 400 and a hint
// (its status stays open, as before); keys mode without SVC_ADMIN_TOKEN disables the admin endpoints
// (403 with a hint); a tenant over its stored-bytes limit gets 507 while another tenant does not.
import { afterAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../../testkit/server.js';
import { createControlPlane } from '../../src/tenancy/control-plane.js';
import { openEmbeddedBackend } from '../../src/tenancy/embedded.js';
import { bearer } from '../helpers/hosted.js';
import { tempDir } from '../helpers/tmp.js';

const servers: ChildServer[] = [];
const tmp = tempDir();
afterAll(async () => {
  for (const s of servers) await s.stop();
  for (const s of servers) s.cleanup();
  tmp.cleanup();
});

const trace = (service: string) =>
  JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ spans: [{ traceId: '34'.repeat(16), spanId: '34'.repeat(8), name: 'x', startTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n), endTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n + 1000n) }] }] }] });

describe('open mode', () => {
  it('answers tenant and key administration with 400 and a hint; status and reads need no key', async () => {
    const srv = await startChildServer({ SVC_ADMIN_TOKEN: 'ignored-in-open-mode-000' });
    servers.push(srv);
    for (const [method, path] of [['POST', '/admin/tenants'], ['POST', '/admin/tenants/a/keys'], ['POST', '/admin/tenants/a/deactivate'], ['DELETE', '/admin/keys/abcdef0123']] as const) {
      const res = await fetch(srv.api + path, { method, headers: { 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{"id":"a"}' } : {}) });
      expect(res.status, path).toBe(400);
      const body = (await res.json()) as { error: { code: string; hint: string } };
      expect(body.error.code).toBe('NOT_HOSTED');
      expect(body.error.hint).toMatch(/SVC_AUTH=keys/);
    }
    expect((await fetch(`${srv.api}/admin/status`)).status).toBe(200);
    expect((await fetch(`${srv.api}/v1/services`)).status).toBe(200);
  });
});

describe('keys mode without SVC_ADMIN_TOKEN, with a stored-bytes limit', () => {
  it('disables the admin endpoints (403 with a hint) and refuses ingest with 507 for the full tenant only', async () => {
    // Tenants and keys made in the embedded control plane's file before the server starts.
    const cp = await createControlPlane(openEmbeddedBackend(tmp.dir), { refreshMs: 1000, log: () => {} });
    await cp.createTenant('full');
    await cp.createTenant('roomy');
    const full = (await cp.issueKey('full')).key;
    const roomy = (await cp.issueKey('roomy')).key;
    await cp.close();
    const srv = await startChildServer({ SVC_AUTH: 'keys', SVC_TENANT_MAX_STORED_BYTES: '1' }, tmp.dir);
    servers.push(srv);

    const res = await fetch(`${srv.api}/admin/status`, { headers: { authorization: 'Bearer anything-at-all-0000' } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { hint: string } }).error.hint).toMatch(/SVC_ADMIN_TOKEN/);

    const post = (key: string) => fetch(`${srv.otlpHttp}/v1/traces`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: trace('s') });
    expect((await post(full)).status).toBe(200); // nothing stored yet
    const refused = await fetch(`${srv.api}/ingest?name=p`, { method: 'POST', headers: bearer(full), body: new Uint8Array([1, 2, 3]) });
    expect(refused.status).toBe(507);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await post(roomy)).status).toBe(200); // another tenant is not affected
    expect((await fetch(`${srv.api}/v1/services`, { headers: bearer(full) })).status).toBe(200); // reads still work
  });
});
