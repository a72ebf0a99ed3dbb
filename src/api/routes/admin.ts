// The admin endpoints: instance status, and in the hosted variant (SVC_AUTH=keys) tenant and key
// administration. Who may call them is the gate's decision (tenancy/gate.ts: SVC_ADMIN_TOKEN); in
// open mode tenant and key administration does not apply and answers 400 with a hint.
import { ApiError } from '../../core/errors.js';
import { ok } from '../http.js';
import { API } from '../endpoints.js';
import type { ControlPlane } from '../../tenancy/control-plane.js';
import type { Status } from '../status-schema.js';
import { route, type Request, type RouteSpec } from '../route.js';

/** Each part of GET /admin/status, read when asked (the hosted variant's parts only there). */
export type StatusSources = { [K in keyof Status]: () => Promise<NonNullable<Status[K]>> | NonNullable<Status[K]> };

export function statusRoute(sources: StatusSources): RouteSpec {
  return route(API.getAdminStatus, async () => {
    const status: Record<string, unknown> = {};
    for (const [name, get] of Object.entries(sources)) status[name] = await get!();
    return ok(API.getAdminStatus, { status: status as Status });
  });
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
    route(
      API.createTenant,
      async (req) => {
        const cp = hosted(control);
        const id = tenantIdFromBody(req);
        return ok(API.createTenant, await cp.createTenant(id as string));
      },
      { maxBody: 4096 },
    ),
    route(API.issueKey, async (req) => ok(API.issueKey, await hosted(control).issueKey(req.valid.id)), { maxBody: 4096 }),
    route(API.deactivateTenant, async (req) => ok(API.deactivateTenant, await hosted(control).deactivateTenant(req.valid.id)), { maxBody: 4096 }),
    route(API.revokeKey, async (req) => ok(API.revokeKey, await hosted(control).revokeKey(req.valid.short_token))),
  ];
}
