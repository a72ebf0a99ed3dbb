// A server of the hosted variant (SVC_AUTH=keys) for tests, and the admin calls the tests make to it.
import { startChildServer, type ChildServer } from '../../testkit/server.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

export function startHosted(env: Record<string, string> = {}): Promise<ChildServer> {
  return startChildServer({ SVC_AUTH: 'keys', SVC_ADMIN_TOKEN: ADMIN_TOKEN, ...env });
}

export async function createTenant(srv: ChildServer, id: string): Promise<void> {
  const res = await fetch(`${srv.api}/admin/tenants`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ id }) });
  if (res.status !== 200) throw new Error(`create tenant ${id}: ${res.status} ${await res.text()}`);
}

export async function issueKey(srv: ChildServer, tenant: string): Promise<{ key: string; short_token: string }> {
  const res = await fetch(`${srv.api}/admin/tenants/${tenant}/keys`, { method: 'POST', headers: admin });
  if (res.status !== 200) throw new Error(`issue key for ${tenant}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { key: string; short_token: string };
}

/** Polls `fn` until it returns true or `ms` passes; resolves to the time it took, or throws. */
export async function within(ms: number, fn: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await fn()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
