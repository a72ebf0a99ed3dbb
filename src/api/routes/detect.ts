// POST /admin/detect: detection on demand (detect/on-demand.ts) for one tenant's store. An admin
// route: open mode checks nothing and has one tenant; with SVC_AUTH=keys it takes the admin token
// and names the tenant, and several instances pass the call to the tenant's owner (one hop).
import { ApiError } from '../../core/errors.js';
import { detectOnDemand } from '../../detect/on-demand.js';
import { OPEN_TENANT, type Gate } from '../../tenancy/gate.js';
import type { ControlPlane } from '../../tenancy/control-plane.js';
import { tenantIdProblem } from '../../tenancy/keys.js';
import { unavailableError } from '../../tenancy/forward.js';
import { ok } from '../http.js';
import { API } from '../endpoints.js';
import { route, type RouteSpec } from '../route.js';

/** Marks the one hop a call takes to the tenant's owner (never a second). */
const HOP_HEADER = 'x-tds-detect-hop';

function tenantOfCall(named: string | undefined, control: ControlPlane | null): string {
  if (!control) {
    if (named !== undefined && named !== OPEN_TENANT) throw new ApiError('NOT_HOSTED', `this server runs in open mode: its one tenant is \`${OPEN_TENANT}\``, 'leave out the tenant parameter');
    return OPEN_TENANT;
  }
  if (named === undefined) throw new ApiError('BAD_REQUEST', 'missing the tenant parameter', 'with SVC_AUTH=keys name the tenant: POST /admin/detect?tenant=<id>');
  const problem = tenantIdProblem(named);
  if (problem) throw new ApiError('BAD_REQUEST', problem);
  if (!control.isActive(named)) throw new ApiError('NOT_FOUND', `no active tenant ${named}`, 'create or reactivate it with POST /admin/tenants');
  return named;
}

export function detectRoute(opts: { gate: Gate; control: ControlPlane | null }): RouteSpec {
  const { gate, control } = opts;
  return route(API.detectNow, async (req) => {
    const tenant = tenantOfCall(req.valid.tenant, control);
    const where = await gate.place(tenant, false);
    if (where.kind === 'unavailable') throw unavailableError(where);
    if (where.kind === 'remote') {
      if (req.headers[HOP_HEADER] || !gate.forwarder) throw new ApiError('NOT_READY', "the tenant's owner changed during the call", 'retry after the delay in Retry-After', 1);
      const headers: Record<string, string> = { [HOP_HEADER]: '1' };
      if (req.headers['authorization']) headers['authorization'] = req.headers['authorization'];
      const query = req.query.toString();
      const a = await gate.forwarder.send(`${where.apiUrl}${req.path}${query ? `?${query}` : ''}`, 'POST', headers, req.body, null);
      return { status: a.status, headers: a.headers, body: a.body };
    }
    const report = await gate.use(tenant, (rt) => detectOnDemand(rt.detection.turn, { asOfUs: req.valid.as_of_ts, untilIdle: req.valid.until_idle }));
    return ok(API.detectNow, { tenant, ...report });
  });
}
