// The one place a request's caller is decided. Every route (API, OTLP/HTTP, profiles, and any route
// added later: a route is `tenant` unless it says otherwise) and every OTLP/gRPC call asks the gate
// who the caller is before its body is read, and reaches a tenant's data only through `use`, with
// the tenant the key named: nothing in a path or body can choose another one.
//   open mode: every caller is the one tenant `default`; nothing is checked (the network is the boundary).
//   keys mode: tenant routes need an active tenant key; admin routes need SVC_ADMIN_TOKEN.
import { ApiError } from '../core/errors.js';
import type { Config } from '../core/config.js';
import type { ControlPlane } from './control-plane.js';
import { bearerToken, isKeyShaped, safeEqual } from './keys.js';
import type { TenantRegistry } from './registry.js';
import type { TenantRuntime } from './runtime.js';
import type { Forwarder } from './forward.js';
import { LOCAL, type Location, type Placement } from './placement.js';

export type Access = 'tenant' | 'admin' | 'public';

export interface Gate {
  readonly mode: Config['auth'];
  /**
   * The caller of a route of `access`: the tenant for tenant routes, null otherwise. Throws 401/403 (counted).
   * A request forwarded by another instance (`forwarded`: its x-tds-forwarded header) is the tenant its
   * signature names, or 403 when the signature does not hold.
   */
  admit(access: Access, authorization: string | undefined, forwarded?: { header: string; method: string; path: string }): string | null;
  /** Where a tenant's request is served (several instances, tenancy/placement.ts); always here otherwise. */
  place(tenant: string, forwarded: boolean): Location | Promise<Location>;
  /** Passes requests to their tenant's owner; null when this instance is alone. */
  readonly forwarder: Forwarder | null;
  /** A tenant's ingest of `bytes`: throws 507 when its store is over its limit, 429 beyond its rate (counted). */
  admitIngest(tenant: string, bytes: number): void;
  use<T>(tenant: string, fn: (rt: TenantRuntime) => Promise<T> | T): Promise<T>;
  /** Requests refused by reason (error code). */
  refused(): Record<string, number>;
}

export const OPEN_TENANT = 'default';

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Takes `bytes` from a token bucket refilled at `rate` bytes/s up to one second's worth. A full
 * bucket admits any one body (it then goes negative), so a body larger than a second's rate is not
 * refused forever. Returns 0 when admitted, else the seconds to wait.
 */
export function takeTokens(b: Bucket, bytes: number, rate: number, nowMs: number): number {
  b.tokens = Math.min(rate, b.tokens + ((nowMs - b.at) / 1000) * rate);
  b.at = nowMs;
  if (b.tokens >= rate || bytes <= b.tokens) {
    b.tokens -= bytes;
    return 0;
  }
  return Math.max(1, Math.ceil((Math.min(bytes, rate) - b.tokens) / rate));
}

export function createGate(opts: {
  config: Pick<Config, 'auth' | 'adminToken' | 'tenantIngestBytesPerS' | 'tenantMaxStoredBytes'>;
  control: ControlPlane | null;
  registry: TenantRegistry;
  placement?: Placement | null;
  forwarder?: Forwarder | null;
}): Gate {
  const { config, control, registry } = opts;
  const placement = opts.placement ?? null;
  const forwarder = opts.forwarder ?? null;
  const refusedBy: Record<string, number> = {};
  const buckets = new Map<string, Bucket>();
  const refuse = (err: ApiError): never => {
    refusedBy[err.code] = (refusedBy[err.code] ?? 0) + 1;
    throw err;
  };
  const adminHint = 'send `Authorization: Bearer <SVC_ADMIN_TOKEN>`';
  return {
    mode: config.auth,
    admit(access, authorization, forwarded) {
      if (forwarded) {
        if (!forwarder) return refuse(new ApiError('FORBIDDEN', 'this instance takes no forwarded requests', 'send the request without x-tds-forwarded'));
        if (access !== 'tenant') return refuse(new ApiError('FORBIDDEN', 'only tenant routes are forwarded between instances', 'send the request without x-tds-forwarded'));
        try {
          return forwarder.verify(forwarded.header, forwarded.method, forwarded.path);
        } catch (err) {
          return refuse(err as ApiError);
        }
      }
      if (access === 'public') return null;
      if (config.auth === 'open' || !control) return access === 'tenant' ? OPEN_TENANT : null;
      if (access === 'tenant') {
        try {
          return control.authenticate(authorization);
        } catch (err) {
          return refuse(err as ApiError);
        }
      }
      if (!config.adminToken) return refuse(new ApiError('FORBIDDEN', 'the admin endpoints are disabled on this instance', 'set SVC_ADMIN_TOKEN (at least 16 characters) in the server environment to enable them'));
      const token = bearerToken(authorization);
      if (token === null) return refuse(new ApiError('UNAUTHORIZED', 'missing admin bearer token', adminHint));
      if (safeEqual(token, config.adminToken)) return null;
      if (isKeyShaped(token)) return refuse(new ApiError('FORBIDDEN', 'a tenant key cannot call the admin endpoints', adminHint));
      return refuse(new ApiError('UNAUTHORIZED', 'invalid admin bearer token', adminHint));
    },
    admitIngest(tenant, bytes) {
      if (config.auth === 'open') return;
      const max = config.tenantMaxStoredBytes;
      if (max > 0 && registry.storedBytes(tenant) > max) {
        refuse(new ApiError('STORAGE_FULL', `this tenant's store holds more than its limit of ${max} bytes`, 'retention frees room as data ages; ask the operator to raise SVC_TENANT_MAX_STORED_BYTES', 60));
      }
      const rate = config.tenantIngestBytesPerS;
      if (rate <= 0) return;
      const now = Date.now();
      let b = buckets.get(tenant);
      if (!b) buckets.set(tenant, (b = { tokens: rate, at: now }));
      const wait = takeTokens(b, Math.max(bytes, 1), rate, now);
      if (wait) refuse(new ApiError('RATE_LIMITED', `this tenant's ingest is above its rate of ${rate} bytes/s`, 'retry after the delay in Retry-After, or send less', wait));
    },
    place: (tenant, forwarded) => (placement ? (forwarded ? placement.confirm(tenant) : placement.locate(tenant)) : LOCAL),
    forwarder,
    use: (tenant, fn) => registry.use(tenant, fn),
    refused: () => ({ ...refusedBy }),
  };
}
