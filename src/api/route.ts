// What a route is: its request, its reply, its handler and its description. Shared by the HTTP shell
// (http.ts), the served description (openapi.ts, docs.ts) and every route, with no import between them.
import type { Access } from '../tenancy/gate.js';
import type { TenantRuntime } from '../tenancy/runtime.js';
import type { Reply } from '../core/http.js';

export interface Request {
  method: string;
  path: string;
  query: URLSearchParams;
  /** Lower-case header names. */
  headers: Record<string, string>;
  params: Record<string, string>;
  body: Buffer;
  /** Query and path parameters checked and typed against the route's doc (see api/openapi.ts). */
  valid?: Record<string, unknown>;
  /** A tenant route's tenant, as the gate decided it from the key (open mode: `default`), open for the handler's whole run. */
  tenant?: TenantRuntime;
}

/** The tenant of a tenant route's request (set by mountRoutes before the handler runs). */
export function tenantOf(req: Request): TenantRuntime {
  if (!req.tenant) throw new Error(`${req.method} ${req.path} reached its handler without a tenant`);
  return req.tenant;
}

export type { Reply };


export type Handler = (req: Request) => Promise<Reply> | Reply;

/** The route's description for openapi.json and request validation (see api/openapi.ts, api/docs.ts). */
export interface RouteDoc {
  operationId: string;
  summary: string;
  /** True when the route declares the bearer requirement in open mode's description (the spec's list). */
  auth?: boolean;
  /** Who may call it (see tenancy/gate.ts); absent = `tenant`, so a new route is never open by mistake. */
  access?: Access;
  tags?: string[];
  /** OpenAPI parameter objects for the query string and path. */
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
}

export interface RouteSpec {
  method: string;
  doc?: RouteDoc;
  /** Literal segments and `{name}` parameters, e.g. /v1/traces/{trace_id}. */
  path: string;
  handler: Handler;
  /** Largest body this route reads; larger gets 413 before it is read. Default 1 MiB. */
  maxBody?: number;
  /** Who may call it when it has no doc (OTLP/HTTP); absent = the doc's, else `tenant`. */
  access?: Access;
  /** Called before the body is read with its declared length and the caller's tenant; may throw an ApiError (e.g. 429). */
  admit?(declaredBytes: number, tenant: string | null): (() => void) | void;
  /**
   * The answer for an error once the route is matched, for a protocol with its own error shape
   * (JSON-RPC at /mcp, google.rpc.Status on the OTLP/HTTP port), given the request's headers. Default: the error body.
   */
  errorReply?(err: unknown, headers?: Record<string, string>): Reply;
}

export function routeAccess(spec: Pick<RouteSpec, 'access' | 'doc'>): Access {
  return spec.access ?? spec.doc?.access ?? 'tenant';
}
