// Placement: with a PostgreSQL control plane, each tenant's store is open on one instance at a time,
// its owner, so every request of a tenant reaches the same DuckDB file whichever instance it arrives
// at (tenancy/forward.ts passes it on). Ownership is a lease row (tenant, owner, expiry) taken with
// one atomic statement by the least-loaded live instance on the tenant's first request, and renewed
// by the owner's heartbeat every third of the lease (SVC_LEASE_TTL_MS, 10 s: renewed every ~3.3 s).
// Instances register themselves with the same heartbeat; one is live while its heartbeat is younger
// than a lease.
//
// An owner serves a tenant only while its own clock says the lease is valid, counted from before the
// statement that renewed it was sent (so never past the expiry the database recorded). When it stops
// renewing (killed, cut off from PostgreSQL), the lease expires and then:
//   shared volume (SVC_DATA_DIR_SHARED=true): the next request's instance lets the least-loaded live
//     one take it; that one opens the store only after it holds the lease. DuckDB locks the file while
//     a process has it open, so an old owner still holding it (paused, not dead) makes the open fail
//     (503, retried) rather than two writers: no split brain.
//   local disks: the tenant stays with its owner (its data is on its disk): 503 with Retry-After until
//     the owner, restarted with the same SVC_INSTANCE_ID, renews its leases.
import pg from 'pg';
import { ApiError } from '../core/errors.js';
import { redactUrl } from './postgres.js';

export type Location =
  | { kind: 'local' }
  | { kind: 'remote'; owner: string; apiUrl: string; otlpHttpUrl: string }
  | { kind: 'unavailable'; owner: string | null; retryAfterS: number; reason: string };

export const LOCAL: Location = { kind: 'local' };

/**
 * A store another process has open: DuckDB refuses to open a file whose lock another process holds.
 * That is the fence against two owners (an old owner still running after its lease moved); the
 * request is answered 503 and retried, by when the old owner has closed it.
 */
export function storeBusy(err: unknown): ApiError | null {
  const message = err instanceof Error ? err.message : String(err);
  if (!/Could not set lock on file/i.test(message)) return null;
  return new ApiError('NOT_READY', "this tenant's store is still open on its previous owner", 'retry after the delay in Retry-After', 1);
}

interface Lease {
  owner: string;
  epoch: number;
  apiUrl: string | null;
  otlpHttpUrl: string | null;
  /** Local clock (ms) until which the lease is surely valid. */
  validUntil: number;
  /** Local clock (ms) before the read it comes from: a newer read wins. */
  readAt: number;
}

interface LeaseRow {
  tenant_id: string;
  owner: string;
  epoch: string;
  api_url: string | null;
  otlp_http_url: string | null;
  remaining_ms: number;
}

export interface MoveResult {
  tenant: string;
  from: string | null;
  to: string;
  epoch: number;
}

export interface Placement {
  readonly shared: boolean;
  readonly ttlMs: number;
  /** This instance's name (known once started). */
  instanceId(): string;
  /** Registers this instance with the URLs the others reach it at, and starts the heartbeat. */
  start(urls: { api: string; otlpHttp: string }): Promise<void>;
  /** Where a client's request for `tenant` is served: here, at its owner, or nowhere for now. */
  locate(tenant: string): Location | Promise<Location>;
  /** For a request forwarded here: local when this instance holds the lease, else unavailable (never forwarded twice). */
  confirm(tenant: string): Location | Promise<Location>;
  /** Hands the tenant to `to` (or the least-loaded other live instance); `forward` when another instance owns it. */
  move(tenant: string, to: string | null): Promise<MoveResult | { forward: string }>;
  status(): Promise<Record<string, unknown>>;
  /** Gives up this instance's leases (after its stores closed) and stops the heartbeat. */
  stop(): Promise<void>;
}

export interface PlacementOptions {
  url: string;
  /** Empty = the instance's API URL. */
  instanceId: string;
  ttlMs: number;
  shared: boolean;
  /** Closes the store of a tenant this instance no longer owns, once its requests in flight are done. */
  release(tenant: string): Promise<void>;
  /** The tenants whose store is open here. */
  openTenants(): string[];
  log: (f: Record<string, unknown>) => void;
}

const ALL_LEASES = `
  SELECT l.tenant_id, l.owner, l.epoch, i.api_url, i.otlp_http_url,
         (extract(epoch FROM l.expires_at - now()) * 1000)::float8 AS remaining_ms
  FROM tds_leases l LEFT JOIN tds_instances i ON i.id = l.owner`;

/** The least-loaded live instance (fewest live leases; this one on a tie, then by name). $1 me, $2 ttl ms, $3 an instance to leave out. */
const LEAST_LOADED = `
  SELECT i.id FROM tds_instances i
  WHERE i.heartbeat_at > now() - $2::int * interval '1 millisecond' AND i.id IS DISTINCT FROM $3::text
  ORDER BY (SELECT count(*) FROM tds_leases x WHERE x.owner = i.id AND x.expires_at > now()), (i.id = $1) DESC, i.id
  LIMIT 1`;

/**
 * Takes the tenant's lease for the least-loaded live instance in one statement: inserted when the
 * tenant has none; taken over only when it expired and (local disks) only by its own owner.
 * $1 tenant, $2 me, $3 ttl ms, $4 shared.
 */
const TAKE = `
  WITH cand AS (
    SELECT i.id FROM tds_instances i
    WHERE i.heartbeat_at > now() - $3::int * interval '1 millisecond'
    ORDER BY (SELECT count(*) FROM tds_leases x WHERE x.owner = i.id AND x.expires_at > now()), (i.id = $2) DESC, i.id
    LIMIT 1)
  INSERT INTO tds_leases AS l (tenant_id, owner, expires_at)
  SELECT $1, cand.id, now() + $3::int * interval '1 millisecond' FROM cand
  ON CONFLICT (tenant_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at, epoch = l.epoch + 1, taken_at = now()
  WHERE l.expires_at <= now() AND ($4::boolean OR l.owner = EXCLUDED.owner)`;

export async function openPlacement(opts: PlacementOptions): Promise<Placement> {
  const pool = new pg.Pool({ connectionString: opts.url, max: 3, connectionTimeoutMillis: Math.min(5000, opts.ttlMs) });
  pool.on('error', () => {});
  const renewMs = Math.max(200, Math.floor(opts.ttlMs / 3));
  // A lease is not used in its last stretch: a request admitted then finishes before the expiry.
  const marginMs = Math.min(1000, Math.floor(opts.ttlMs / 10));
  const retryAfterS = Math.max(1, Math.ceil(renewMs / 1000));
  let me = opts.instanceId;
  let urls = { api: '', otlpHttp: '' };
  const leases = new Map<string, Lease>();
  const draining = new Set<string>();
  const acquiring = new Map<string, Promise<Location>>();
  let timer: NodeJS.Timeout | null = null;
  let lastSync = 0;
  let lastError: string | null = null;
  let ticking: Promise<void> | null = null;

  const record = (r: LeaseRow, t0: number): Lease => {
    const l: Lease = { owner: r.owner, epoch: Number(r.epoch), apiUrl: r.api_url, otlpHttpUrl: r.otlp_http_url, validUntil: t0 + Number(r.remaining_ms), readAt: t0 };
    const known = leases.get(r.tenant_id);
    if (known && known.readAt > t0) return known; // a lease taken while this read was on its way
    leases.set(r.tenant_id, l);
    return l;
  };
  const valid = (l: Lease | undefined, now = Date.now()): l is Lease => l !== undefined && l.validUntil - now > marginMs;
  const ownsHere = (tenant: string) => !draining.has(tenant) && leases.get(tenant)?.owner === me && valid(leases.get(tenant));
  const unavailable = (owner: string | null, reason: string): Location => ({ kind: 'unavailable', owner, retryAfterS, reason });

  /** Where a lease (just read) sends a request. */
  const where = (l: Lease | undefined): Location => {
    if (!l) return unavailable(null, 'no live instance can take this tenant');
    if (valid(l)) {
      if (l.owner === me) return LOCAL;
      if (l.apiUrl && l.otlpHttpUrl) return { kind: 'remote', owner: l.owner, apiUrl: l.apiUrl, otlpHttpUrl: l.otlpHttpUrl };
    }
    return unavailable(l.owner, opts.shared ? `its owner ${l.owner} stopped renewing its lease; another instance takes it once the lease expires` : `its owner ${l.owner} is down and holds its data (local disks); it is served again when that instance returns`);
  };

  // Stores of tenants this instance no longer surely owns are closed (after their requests in flight).
  const evictLost = () => {
    for (const t of opts.openTenants()) {
      if (!ownsHere(t) && !draining.has(t)) {
        opts.log({ level: 'info', msg: 'tenant store closed: lease not held', tenant: t, owner: leases.get(t)?.owner ?? null });
        void opts.release(t);
      }
    }
  };

  const tick = (): Promise<void> =>
    (ticking ??= (async () => {
      const t0 = Date.now();
      try {
        await pool.query(
          `INSERT INTO tds_instances (id, api_url, otlp_http_url, heartbeat_at) VALUES ($1, $2, $3, now())
           ON CONFLICT (id) DO UPDATE SET api_url = EXCLUDED.api_url, otlp_http_url = EXCLUDED.otlp_http_url, heartbeat_at = now()`,
          [me, urls.api, urls.otlpHttp],
        );
        await pool.query(`UPDATE tds_leases SET expires_at = now() + $2::int * interval '1 millisecond' WHERE owner = $1 AND NOT (tenant_id = ANY($3::text[]))`, [me, opts.ttlMs, [...draining]]);
        const rows = (await pool.query<LeaseRow>(ALL_LEASES)).rows;
        const seen = new Set(rows.map((r) => r.tenant_id));
        for (const [t, l] of leases) if (!seen.has(t) && l.readAt < t0) leases.delete(t);
        for (const r of rows) record(r, t0);
        lastSync = t0;
        if (lastError) opts.log({ level: 'info', msg: 'placement heartbeat works again' });
        lastError = null;
      } catch (err) {
        if (!lastError) opts.log({ level: 'error', msg: 'placement heartbeat failed', error: (err as Error).message });
        lastError = (err as Error).message;
      } finally {
        ticking = null;
      }
      evictLost();
    })());

  const readLease = async (tenant: string): Promise<Lease | undefined> => {
    const t0 = Date.now();
    const r = (await pool.query<LeaseRow>(`${ALL_LEASES} WHERE l.tenant_id = $1`, [tenant])).rows[0];
    if (!r) {
      if ((leases.get(tenant)?.readAt ?? 0) < t0) leases.delete(tenant);
      return undefined;
    }
    return record(r, t0);
  };

  const acquire = (tenant: string): Promise<Location> => {
    let p = acquiring.get(tenant);
    if (p) return p;
    p = (async () => {
      try {
        await pool.query(TAKE, [tenant, me, opts.ttlMs, opts.shared]);
        return where(await readLease(tenant));
      } catch (err) {
        return unavailable(null, `the control plane cannot place this tenant now (${(err as Error).message})`);
      } finally {
        acquiring.delete(tenant);
      }
    })();
    acquiring.set(tenant, p);
    return p;
  };

  const confirmSlow = async (tenant: string): Promise<Location> => {
    try {
      const l = await readLease(tenant);
      if (l?.owner === me && valid(l)) return LOCAL;
      return unavailable(l?.owner ?? null, 'the tenant changed owner while the request was forwarded');
    } catch (err) {
      return unavailable(null, `the control plane is not reachable (${(err as Error).message})`);
    }
  };

  return {
    shared: opts.shared,
    ttlMs: opts.ttlMs,
    instanceId: () => me,
    async start(u) {
      urls = u;
      if (!me) me = u.api;
      await tick();
      if (lastError) throw new Error(`placement in ${redactUrl(opts.url)}: ${lastError}`);
      timer = setInterval(() => void tick(), renewMs);
      timer.unref();
    },
    locate(tenant) {
      if (draining.has(tenant)) return unavailable(me, 'this tenant is being moved to another instance');
      const l = leases.get(tenant);
      if (valid(l) && (l.owner === me || l.apiUrl)) return where(l);
      return acquire(tenant);
    },
    confirm(tenant) {
      if (ownsHere(tenant)) return LOCAL;
      if (draining.has(tenant)) return unavailable(me, 'this tenant is being moved to another instance');
      return confirmSlow(tenant);
    },
    async move(tenant, to) {
      if (!opts.shared) {
        throw new ApiError('CONFLICT', 'a tenant can only move between instances that share SVC_DATA_DIR', 'with local disks its data stays on its owner; set SVC_DATA_DIR_SHARED=true on instances that mount one volume');
      }
      const current = await readLease(tenant);
      const held = current && current.validUntil > Date.now() ? current.owner : null;
      const target = to ?? (await pool.query<{ id: string }>(LEAST_LOADED, [me, opts.ttlMs, held])).rows[0]?.id;
      if (!target) throw new ApiError('CONFLICT', 'no other live instance to move the tenant to', 'start another instance on the same control plane and volume');
      const live = await pool.query(`SELECT 1 FROM tds_instances WHERE id = $1 AND heartbeat_at > now() - $2::int * interval '1 millisecond'`, [target, opts.ttlMs]);
      if (!live.rowCount) throw new ApiError('NOT_FOUND', `no live instance ${target}`, 'GET /admin/status lists the instances (placement.instances)');
      if (held === target) return { tenant, from: held, to: target, epoch: current!.epoch };
      if (held && held !== me) {
        if (!current!.apiUrl) throw new ApiError('NOT_READY', `the owner ${held} has no address`, 'retry shortly', retryAfterS);
        return { forward: current!.apiUrl };
      }
      const t0 = Date.now();
      const give = async (sql: string, params: unknown[]) => {
        const r = await pool.query<{ epoch: string }>(sql, params);
        if (!r.rowCount) throw new ApiError('CONFLICT', 'the tenant changed owner during the move', 'retry the move', 1);
        await readLease(tenant);
        return { tenant, from: held, to: target, epoch: Number(r.rows[0]!.epoch) };
      };
      if (!held) {
        // Nobody holds it: the lease goes to the target, unless someone took it meanwhile.
        return give(
          `INSERT INTO tds_leases AS l (tenant_id, owner, expires_at) VALUES ($1, $2, now() + $3::int * interval '1 millisecond')
           ON CONFLICT (tenant_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at, epoch = l.epoch + 1, taken_at = now()
           WHERE l.expires_at <= now() RETURNING l.epoch`,
          [tenant, target, opts.ttlMs],
        );
      }
      // Ours: drain (new requests answer 503 for the moment), close the store, then hand the lease
      // over, so the target opens the file only after this instance closed it.
      draining.add(tenant);
      try {
        await opts.release(tenant);
        opts.log({ level: 'info', msg: 'tenant moved', tenant, to: target, after_ms: Date.now() - t0 });
        return await give(
          `UPDATE tds_leases SET owner = $2, expires_at = now() + $3::int * interval '1 millisecond', epoch = epoch + 1, taken_at = now()
           WHERE tenant_id = $1 AND owner = $4 RETURNING epoch`,
          [tenant, target, opts.ttlMs, me],
        );
      } finally {
        draining.delete(tenant);
      }
    },
    async status() {
      const base = {
        instance: me,
        api_url: urls.api,
        otlp_http_url: urls.otlpHttp,
        storage: opts.shared ? 'shared' : 'local',
        lease_ttl_ms: opts.ttlMs,
        renew_ms: renewMs,
        last_sync: lastSync ? new Date(lastSync).toISOString() : null,
        last_error: lastError,
      };
      try {
        const inst = await pool.query<{ id: string; api_url: string; live: boolean; leases: string }>(
          `SELECT i.id, i.api_url, i.heartbeat_at > now() - $1::int * interval '1 millisecond' AS live,
                  (SELECT count(*) FROM tds_leases x WHERE x.owner = i.id AND x.expires_at > now()) AS leases
           FROM tds_instances i ORDER BY i.id`,
          [opts.ttlMs],
        );
        const rows = (await pool.query<LeaseRow>(`${ALL_LEASES} ORDER BY l.tenant_id`)).rows;
        return {
          ...base,
          instances: inst.rows.map((r) => ({ id: r.id, api_url: r.api_url, live: r.live, leases: Number(r.leases) })),
          leases: rows.map((r) => ({ tenant: r.tenant_id, owner: r.owner, epoch: Number(r.epoch), expires_in_ms: Math.round(Number(r.remaining_ms)), here: r.owner === me })),
        };
      } catch (err) {
        return { ...base, error: (err as Error).message };
      }
    },
    async stop() {
      if (timer) clearInterval(timer);
      await ticking;
      try {
        // Our stores are closed: let another instance take our tenants now rather than after the lease.
        if (opts.shared) await pool.query('UPDATE tds_leases SET expires_at = now() WHERE owner = $1', [me]);
        await pool.query(`UPDATE tds_instances SET heartbeat_at = '-infinity' WHERE id = $1`, [me]);
      } catch (err) {
        opts.log({ level: 'error', msg: 'placement: leases not released at shutdown', error: (err as Error).message });
      }
      await pool.end();
    },
  };
}
