// What a route is: its request, its reply, its handler and its entry of the route table. Shared by
// the HTTP shell (http.ts), the served description (openapi.ts) and every route, with no import between them.
import type { Access } from '../tenancy/gate.js';
import type { Endpoint, ParamsOf } from './endpoint.js';
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
  /** Query and path parameters checked and typed against the route's entry (see api/validate.ts). */
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

export interface RouteSpec {
  method: string;
  /** The route's entry of the route table (endpoints.ts): its description and checked parameters. */
  doc?: Endpoint;
  /** Literal segments and `{name}` parameters, e.g. /v1/traces/{trace_id}. */
  path: string;
  handler: Handler;
  /** Largest body this route reads; larger gets 413 before it is read. Default 1 MiB. */
  maxBody?: number;
  /** Who may call it when it has no doc (OTLP/HTTP); absent = the doc's, else `tenant`. */
  access?: Access;
  /**
   * Called before the body is read with its declared length and the caller's tenant; may throw an
   * ApiError (e.g. 429). What it admits is told when the body has arrived, and released once answered.
   */
  admit?(declaredBytes: number, tenant: string | null): { arrived(): void; release(): void } | void;
  /** Where `admit` refused with 429: answers the refusal (`answer`) when its turn comes, the body unread meanwhile (receivers/refusal-pace.ts). */
  holdRefusal?(answer: () => void): void;
  /**
   * The answer for an error once the route is matched, for a protocol with its own error shape
   * (JSON-RPC at /mcp, google.rpc.Status on the OTLP/HTTP port), given the request's headers. Default: the error body.
   */
  errorReply?(err: unknown, headers?: Record<string, string>): Reply;
}

export function routeAccess(spec: Pick<RouteSpec, 'access' | 'doc'>): Access {
  return spec.access ?? spec.doc?.access ?? 'tenant';
}

/** A request to a route of the table: its parameters checked and typed. */
export type RouteRequest<E> = Request & { valid: ParamsOf<E> };

/** A route of the table: its method, path and description from its entry; the handler sees the typed parameters. */
export function route<E extends Endpoint>(endpoint: E, handler: (req: RouteRequest<E>) => Promise<Reply> | Reply, extra: Omit<RouteSpec, 'method' | 'path' | 'doc' | 'handler'> = {}): RouteSpec {
  return { method: endpoint.method, path: endpoint.path, doc: endpoint, handler: handler as Handler, ...extra };
}
