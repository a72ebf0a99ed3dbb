// The admin endpoints: instance status, and in the hosted variant (SVC_AUTH=keys) tenant and key
// administration. Who may call them is the gate's decision (tenancy/gate.ts: SVC_ADMIN_TOKEN); in
// open mode tenant and key administration does not apply and answers 400 with a hint.
import { ApiError } from '../../core/errors.js';
import { json } from '../http.js';
import { DOCS } from '../docs.js';
import type { ControlPlane, IssuedKey, TenantRow } from '../../tenancy/control-plane.js';
import { type Request, type RouteSpec } from '../route.js';

/** The 200 answer of GET /admin/status. */
export interface StatusResponse {
  status: Record<string, unknown>;
}
/** The body of POST /admin/tenants. */
export interface CreateTenantBody {
  id: string;
}
/** The 200 answers of tenant and key administration. */
export type TenantResponse = TenantRow;
export type IssuedKeyResponse = IssuedKey;
export type RevokeKeyResponse = Awaited<ReturnType<ControlPlane['revokeKey']>>;

export type StatusSource = () => Promise<Record<string, unknown>> | Record<string, unknown>;

export function statusRoute(sources: Record<string, StatusSource>): RouteSpec {
  return {
    method: 'GET',
    path: '/admin/status',
    doc: DOCS.getAdminStatus,
    async handler() {
      const status: Record<string, unknown> = {};
      for (const [name, get] of Object.entries(sources)) status[name] = await get();
      return json(200, { status } satisfies StatusResponse);
    },
  };
}

function hosted(control: ControlPlane | null): ControlPlane {
  if (!control) {
    throw new ApiError('NOT_HOSTED', 'this server runs in open mode (self-hosted, one tenant): tenants and API keys belong to the hosted variant', 'start the server with SVC_AUTH=keys and SVC_ADMIN_TOKEN to administer tenants and keys');
  }
  return control;
}

function tenantIdFromBody(req: Request): unknown {
  let body: unknown;
  try {
    body = JSON.parse(req.body.toString('utf8'));
  } catch {
    throw new ApiError('BAD_REQUEST', 'the body is not JSON', 'send {"id": "<tenant id>"} with Content-Type: application/json');
  }
  if (!body || typeof body !== 'object' || !('id' in body)) throw new ApiError('BAD_REQUEST', 'the body has no `id`', 'send {"id": "<tenant id>"}');
  return (body as { id: unknown }).id;
}

/** POST /admin/tenants, POST /admin/tenants/{id}/keys, POST /admin/tenants/{id}/deactivate, DELETE /admin/keys/{short_token}. */
export function adminRoutes(control: ControlPlane | null): RouteSpec[] {
  return [
    {
      method: 'POST',
      path: '/admin/tenants',
      doc: DOCS.createTenant,
      maxBody: 4096,
      async handler(req) {
        const cp = hosted(control);
        const id = tenantIdFromBody(req);
        return json(200, await cp.createTenant(id as string));
      },
    },
    {
      method: 'POST',
      path: '/admin/tenants/{id}/keys',
      doc: DOCS.issueKey,
      maxBody: 4096,
      handler: async (req) => json(200, await hosted(control).issueKey(req.params['id']!)),
    },
    {
      method: 'POST',
      path: '/admin/tenants/{id}/deactivate',
      doc: DOCS.deactivateTenant,
      maxBody: 4096,
      handler: async (req) => json(200, await hosted(control).deactivateTenant(req.params['id']!)),
    },
    {
      method: 'DELETE',
      path: '/admin/keys/{short_token}',
      doc: DOCS.revokeKey,
      handler: async (req) => json(200, await hosted(control).revokeKey(req.params['short_token']!)),
    },
  ];
}
