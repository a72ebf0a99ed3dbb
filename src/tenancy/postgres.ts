// The shared control plane in PostgreSQL (SVC_CONTROL_PLANE_URL). The service creates and migrates
// its tables itself, under an advisory lock so that instances starting together do not race. Every
// change bumps one counter row in the same transaction; instances poll that counter and reload
// their key snapshot when it moved (see control-plane.ts).
import pg from 'pg';
import type { ControlBackend, Snapshot, TenantRow, TenantStatus } from './control-plane.js';

/** Applied in order, once each; a new version appends, never edits. */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE tds_tenants (
     id text PRIMARY KEY,
     status text NOT NULL CHECK (status IN ('active', 'inactive')),
     created_at timestamptz NOT NULL DEFAULT now(),
     updated_at timestamptz NOT NULL DEFAULT now());
   CREATE TABLE tds_keys (
     hash char(64) PRIMARY KEY,
     tenant_id text NOT NULL REFERENCES tds_tenants (id),
     created_at timestamptz NOT NULL DEFAULT now(),
     revoked_at timestamptz);
   CREATE INDEX tds_keys_tenant ON tds_keys (tenant_id);
   CREATE TABLE tds_changes (id int PRIMARY KEY CHECK (id = 1), version bigint NOT NULL);
   INSERT INTO tds_changes VALUES (1, 0);`,
  // Placement (tenancy/placement.ts): the live instances and each tenant's lease on its owner.
  `CREATE TABLE tds_instances (
     id text PRIMARY KEY,
     api_url text NOT NULL,
     otlp_http_url text NOT NULL,
     heartbeat_at timestamptz NOT NULL);
   CREATE TABLE tds_leases (
     tenant_id text PRIMARY KEY,
     owner text NOT NULL,
     epoch bigint NOT NULL DEFAULT 1,
     taken_at timestamptz NOT NULL DEFAULT now(),
     expires_at timestamptz NOT NULL);
   CREATE INDEX tds_leases_owner ON tds_leases (owner);`,
];

/** An arbitrary constant: the advisory lock taken while migrating. */
const MIGRATION_LOCK = 7_210_021;

/** The URL without its password, for status and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

export async function openPostgresBackend(url: string): Promise<ControlBackend> {
  const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5000 });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const tx = async <T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> => {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      c.release();
    }
  };
  const bump = (c: pg.PoolClient) => c.query('UPDATE tds_changes SET version = version + 1 WHERE id = 1');
  try {
    await tx(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await c.query('CREATE TABLE IF NOT EXISTS tds_schema_migrations (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
      const done = new Set((await c.query<{ version: number }>('SELECT version FROM tds_schema_migrations')).rows.map((r) => r.version));
      for (let v = 1; v <= MIGRATIONS.length; v++) {
        if (done.has(v)) continue;
        await c.query(MIGRATIONS[v - 1]!);
        await c.query('INSERT INTO tds_schema_migrations (version) VALUES ($1)', [v]);
      }
    });
  } catch (err) {
    await pool.end().catch(() => {});
    throw new Error(`control plane ${redactUrl(url)}: ${(err as Error).message}`);
  }
  return {
    kind: 'postgres',
    location: redactUrl(url),
    async version() {
      const r = await pool.query<{ version: string }>('SELECT version FROM tds_changes WHERE id = 1');
      return Number(r.rows[0]!.version);
    },
    async snapshot(): Promise<Snapshot> {
      // One transaction, so the counter and the rows agree.
      return tx(async (c) => {
        await c.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
        const v = await c.query<{ version: string }>('SELECT version FROM tds_changes WHERE id = 1');
        const t = await c.query<{ id: string; status: TenantStatus }>('SELECT id, status FROM tds_tenants');
        const k = await c.query<{ hash: string; tenant_id: string }>('SELECT hash, tenant_id FROM tds_keys WHERE revoked_at IS NULL');
        return { version: Number(v.rows[0]!.version), tenants: t.rows, keys: k.rows.map((r) => ({ hash: r.hash, tenant: r.tenant_id })) };
      });
    },
    upsertTenant: (id) =>
      tx(async (c): Promise<TenantRow> => {
        await c.query(
          `INSERT INTO tds_tenants (id, status) VALUES ($1, 'active')
           ON CONFLICT (id) DO UPDATE SET status = 'active', updated_at = now()`,
          [id],
        );
        await bump(c);
        return { id, status: 'active' };
      }),
    deactivateTenant: (id) =>
      tx(async (c): Promise<TenantRow | null> => {
        const r = await c.query(`UPDATE tds_tenants SET status = 'inactive', updated_at = now() WHERE id = $1`, [id]);
        if (!r.rowCount) return null;
        await bump(c);
        return { id, status: 'inactive' };
      }),
    addKey: (tenant, hash) =>
      tx(async (c) => {
        const t = await c.query(`SELECT 1 FROM tds_tenants WHERE id = $1 AND status = 'active' FOR SHARE`, [tenant]);
        if (!t.rowCount) return false;
        await c.query('INSERT INTO tds_keys (hash, tenant_id) VALUES ($1, $2)', [hash, tenant]);
        await bump(c);
        return true;
      }),
    revokeByPrefix: (prefix) =>
      tx(async (c) => {
        // The prefix is checked to be hex (no LIKE wildcard can reach here).
        const r = await c.query<{ hash: string }>(`SELECT hash FROM tds_keys WHERE revoked_at IS NULL AND hash LIKE $1 FOR UPDATE`, [prefix + '%']);
        if (r.rows.length !== 1) return { matched: r.rows.length, hash: null };
        await c.query('UPDATE tds_keys SET revoked_at = now() WHERE hash = $1', [r.rows[0]!.hash]);
        await bump(c);
        return { matched: 1, hash: r.rows[0]!.hash };
      }),
    close: () => pool.end(),
  };
}
