// The control plane: tenants and key hashes. Two backends hold them (a file under SVC_DATA_DIR, or
// PostgreSQL shared by several instances); this module keeps an in-memory snapshot of the active
// keys so that authenticating a request is a map lookup, never a database round trip on the ingest
// path. The snapshot is reloaded when the backend's change counter moves (polled every
// SVC_CONTROL_PLANE_REFRESH_MS, and at once after a change made through this instance): a key created
// or revoked on another instance is honoured or refused here within that interval.
import { timingSafeEqual } from 'node:crypto';
import { ApiError } from '../core/errors.js';
import { bearerToken, generateKey, hashKey, isKeyShaped, SHORT_TOKEN, tenantIdProblem } from './keys.js';

export type TenantStatus = 'active' | 'inactive';

export interface TenantRow {
  id: string;
  status: TenantStatus;
}

export interface KeyRow {
  hash: string;
  tenant: string;
}

export interface Snapshot {
  version: number;
  tenants: TenantRow[];
  /** Unrevoked keys, of every tenant (active or not). */
  keys: KeyRow[];
}

/** Where tenants and key hashes live. Every write moves the change counter. */
export interface ControlBackend {
  readonly kind: 'embedded' | 'postgres';
  /** Where it lives, with no credential (status). */
  readonly location: string;
  version(): Promise<number>;
  snapshot(): Promise<Snapshot>;
  /** Creates the tenant or reactivates it. */
  upsertTenant(id: string): Promise<TenantRow>;
  /** null when no such tenant. */
  deactivateTenant(id: string): Promise<TenantRow | null>;
  /** false when the tenant does not exist or is inactive. */
  addKey(tenant: string, hash: string): Promise<boolean>;
  /** Revokes the one unrevoked key whose hash starts with `prefix`; how many matched. */
  revokeByPrefix(prefix: string): Promise<{ matched: number; hash: string | null }>;
  close(): Promise<void>;
}

/** Characters of the hash shown as a key's short_token when it is issued. */
export const SHORT_TOKEN_CHARS = 16;

export interface IssuedKey {
  tenant: string;
  key: string;
  short_token: string;
}

export interface ControlPlane {
  readonly kind: ControlBackend['kind'];
  /** The tenant an `Authorization` header's key belongs to; throws UNAUTHORIZED otherwise (the message names no key). */
  authenticate(authorization: string | undefined): string;
  createTenant(id: string): Promise<TenantRow>;
  deactivateTenant(id: string): Promise<TenantRow>;
  issueKey(tenant: string): Promise<IssuedKey>;
  revokeKey(shortToken: string): Promise<{ revoked: boolean; short_token: string }>;
  /** Whether a tenant exists and is active, by the snapshot. */
  isActive(tenant: string): boolean;
  /** Every tenant with its count of unrevoked keys, by the snapshot. */
  tenants(): { id: string; status: TenantStatus; keys: number }[];
  status(): Record<string, unknown>;
  close(): Promise<void>;
}

interface Index {
  version: number;
  /** Active keys of active tenants by the first 16 hex characters of their hash. */
  byPrefix: Map<string, KeyRow[]>;
  tenants: Map<string, { status: TenantStatus; keys: number }>;
}

/** The lookup structure of a snapshot: keys of inactive tenants are left out, so they stop working at once. */
export function indexSnapshot(s: Snapshot): Index {
  const tenants = new Map<string, { status: TenantStatus; keys: number }>();
  for (const t of s.tenants) tenants.set(t.id, { status: t.status, keys: 0 });
  const byPrefix = new Map<string, KeyRow[]>();
  for (const k of s.keys) {
    const t = tenants.get(k.tenant);
    if (!t) continue;
    t.keys++;
    if (t.status !== 'active') continue;
    const p = k.hash.slice(0, 16);
    const list = byPrefix.get(p);
    if (list) list.push(k);
    else byPrefix.set(p, [k]);
  }
  return { version: s.version, byPrefix, tenants };
}

const UNAUTHORIZED_HINT = 'send `Authorization: Bearer <tenant key>` with an active key (keys are issued by POST /admin/tenants/{id}/keys)';

/** The tenant of a key by the index, comparing the full hash in constant time; null when none. */
export function lookupKey(index: Index, key: string): string | null {
  if (!isKeyShaped(key)) return null;
  const hash = hashKey(key);
  const candidates = index.byPrefix.get(hash.slice(0, 16));
  if (!candidates) return null;
  const want = Buffer.from(hash, 'hex');
  for (const k of candidates) if (timingSafeEqual(Buffer.from(k.hash, 'hex'), want)) return k.tenant;
  return null;
}

export interface ControlPlaneOptions {
  refreshMs: number;
  log: (f: Record<string, unknown>) => void;
}

export async function createControlPlane(backend: ControlBackend, opts: ControlPlaneOptions): Promise<ControlPlane> {
  let index = indexSnapshot(await backend.snapshot());
  let refreshedAt = Date.now();
  let lastError: string | null = null;
  // A snapshot this old is not trusted: a key revoked meanwhile on another instance would still work.
  const staleMs = Math.max(60_000, 10 * opts.refreshMs);
  let refreshing: Promise<void> | null = null;
  const refresh = (force = false): Promise<void> =>
    (refreshing ??= (async () => {
      try {
        if (force || (await backend.version()) !== index.version) index = indexSnapshot(await backend.snapshot());
        refreshedAt = Date.now();
        if (lastError) opts.log({ level: 'info', msg: 'control plane reachable again', backend: backend.kind });
        lastError = null;
      } catch (err) {
        if (!lastError) opts.log({ level: 'error', msg: 'control plane refresh failed', backend: backend.kind, error: (err as Error).message });
        lastError = (err as Error).message;
      } finally {
        refreshing = null;
      }
    })());
  const timer = setInterval(() => void refresh(), opts.refreshMs);
  timer.unref();

  const need = (id: string) => {
    const problem = tenantIdProblem(id);
    if (problem) throw new ApiError('BAD_REQUEST', problem, 'for example {"id": "acme-prod"}');
  };
  return {
    kind: backend.kind,
    authenticate(authorization) {
      const token = bearerToken(authorization);
      if (token === null) throw new ApiError('UNAUTHORIZED', 'missing bearer token', UNAUTHORIZED_HINT);
      if (Date.now() - refreshedAt > staleMs) {
        throw new ApiError('NOT_READY', 'the control plane has not been reachable for too long to trust its keys', 'retry later; the operator is told by GET /admin/status', 5);
      }
      const tenant = lookupKey(index, token);
      if (tenant === null) throw new ApiError('UNAUTHORIZED', 'invalid, revoked or deactivated bearer token', UNAUTHORIZED_HINT);
      return tenant;
    },
    async createTenant(id) {
      need(id);
      const t = await backend.upsertTenant(id);
      await refresh(true);
      return t;
    },
    async deactivateTenant(id) {
      need(id);
      const t = await backend.deactivateTenant(id);
      if (!t) throw new ApiError('NOT_FOUND', `no tenant ${id}`, 'create it with POST /admin/tenants');
      await refresh(true);
      return t;
    },
    async issueKey(tenant) {
      need(tenant);
      const key = generateKey();
      const hash = hashKey(key);
      if (!(await backend.addKey(tenant, hash))) throw new ApiError('NOT_FOUND', `no active tenant ${tenant}`, 'create or reactivate it with POST /admin/tenants');
      await refresh(true);
      return { tenant, key, short_token: hash.slice(0, SHORT_TOKEN_CHARS) };
    },
    async revokeKey(shortToken) {
      const prefix = shortToken.toLowerCase();
      if (!SHORT_TOKEN.test(prefix)) throw new ApiError('BAD_REQUEST', 'short_token is 8 to 64 hexadecimal characters', 'use the short_token printed when the key was issued');
      const r = await backend.revokeByPrefix(prefix);
      if (r.matched > 1) throw new ApiError('CONFLICT', `${r.matched} keys match this short_token; none was revoked`, 'give a longer prefix (the short_token printed when the key was issued)');
      if (r.hash) await refresh(true);
      return { revoked: r.hash !== null, short_token: shortToken };
    },
    isActive: (tenant) => index.tenants.get(tenant)?.status === 'active',
    tenants: () => [...index.tenants].map(([id, t]) => ({ id, status: t.status, keys: t.keys })),
    status: () => ({
      backend: backend.kind,
      location: backend.location,
      version: index.version,
      tenants: index.tenants.size,
      refresh_ms: opts.refreshMs,
      refreshed_at: new Date(refreshedAt).toISOString(),
      last_error: lastError,
    }),
    async close() {
      clearInterval(timer);
      await refreshing;
      await backend.close();
    },
  };
}
