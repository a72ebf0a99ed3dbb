// POST /admin/tenants/{id}/move: hands a tenant to another instance (several instances on one
// PostgreSQL control plane and one shared volume; tenancy/placement.ts). Any instance takes the call
// and passes it to the tenant's owner, which drains the tenant's requests, closes its store and then
// hands the lease over; the new owner opens the store on the tenant's next request.
import { ApiError } from '../../core/errors.js';
import { ok } from '../http.js';
import { route, type RouteSpec } from '../route.js';
import { API } from '../endpoints.js';
import { tenantIdProblem } from '../../tenancy/keys.js';
import type { Placement } from '../../tenancy/placement.js';
import type { Forwarder } from '../../tenancy/forward.js';
import type { ControlPlane } from '../../tenancy/control-plane.js';

/** Marks the one hop a move takes to the tenant's owner (never a second). */
const HOP_HEADER = 'x-tds-move-hop';

function targetOf(body: Buffer): string | null {
  if (!body.length) return null;
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ApiError('BAD_REQUEST', 'the body is not JSON', 'send {"to": "<instance id>"}, or no body for the least-loaded instance');
  }
  if (!v || typeof v !== 'object') throw new ApiError('BAD_REQUEST', 'the body is not a JSON object', 'send {"to": "<instance id>"}');
  const to = (v as { to?: unknown }).to;
  if (to === undefined || to === null) return null;
  if (typeof to !== 'string' || !to) throw new ApiError('BAD_REQUEST', '`to` must be an instance id', 'GET /admin/status lists them under placement.instances');
  return to;
}

export function moveRoute(opts: { control: ControlPlane | null; placement: Placement | null; forwarder: Forwarder | null }): RouteSpec {
  return route(
    API.moveTenant,
    async (req) => {
      const id = req.valid.id;
      const { control, placement, forwarder } = opts;
      if (!control || !placement || !forwarder) {
        throw new ApiError('CONFLICT', 'this instance runs alone: there is no other instance to move a tenant to', 'moving needs SVC_AUTH=keys, SVC_CONTROL_PLANE_URL and SVC_DATA_DIR_SHARED=true on several instances');
      }
      const problem = tenantIdProblem(id);
      if (problem) throw new ApiError('BAD_REQUEST', problem);
      if (!control.isActive(id)) throw new ApiError('NOT_FOUND', `no active tenant ${id}`, 'create or reactivate it with POST /admin/tenants');
      const to = targetOf(req.body);
      const r = await placement.move(id, to);
      if (!('forward' in r)) return ok(API.moveTenant, r);
      if (req.headers[HOP_HEADER]) throw new ApiError('CONFLICT', 'the tenant changed owner during the move', 'retry the move', 1);
      const headers: Record<string, string> = { [HOP_HEADER]: '1', 'content-type': 'application/json' };
      if (req.headers['authorization']) headers['authorization'] = req.headers['authorization'];
      const a = await forwarder.send(r.forward + req.path, 'POST', headers, req.body, null);
      return { status: a.status, headers: a.headers, body: a.body };
    },
    { maxBody: 4096 },
  );
}
