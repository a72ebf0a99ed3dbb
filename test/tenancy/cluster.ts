// Several instances of the hosted variant on one real PostgreSQL control plane (tenancy/placement.ts),
// as child processes on their own ports, for the placement and forwarding tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildServer, type ChildServer } from '../../testkit/server.js';
import { startPostgres, type Postgres } from '../helpers/postgres.js';
import { ADMIN_TOKEN, admin, within } from '../helpers/hosted.js';

export interface Cluster {
  db: Postgres;
  /** The shared data directory (shared volume), or null (each instance its own). */
  sharedDir: string | null;
  /** Starts (or restarts, same id and directory) the instance `id`. */
  start(id: string): Promise<ChildServer>;
  node(id: string): ChildServer;
  /** The id of the instance owning `tenant`, by the placement tables (as any instance reports them). */
  ownerOf(tenant: string): Promise<string | null>;
  stop(): Promise<void>;
}

export async function startCluster(opts: { ids: string[]; shared: boolean; leaseTtlMs: number; env?: Record<string, string> }): Promise<Cluster> {
  const db = await startPostgres();
  const sharedDir = opts.shared ? mkdtempSync(join(tmpdir(), 'tds-shared-')) : null;
  const dirs = new Map<string, string>();
  const nodes = new Map<string, ChildServer>();
  const dirOf = (id: string) => sharedDir ?? dirs.get(id) ?? (dirs.set(id, mkdtempSync(join(tmpdir(), `tds-${id}-`))), dirs.get(id)!);
  const start = async (id: string) => {
    const srv = await startChildServer(
      {
        SVC_AUTH: 'keys',
        SVC_ADMIN_TOKEN: ADMIN_TOKEN,
        SVC_CONTROL_PLANE_URL: db.url,
        SVC_CONTROL_PLANE_REFRESH_MS: '300',
        SVC_INSTANCE_ID: id,
        SVC_LEASE_TTL_MS: String(opts.leaseTtlMs),
        SVC_DATA_DIR_SHARED: String(opts.shared),
        ...opts.env,
      },
      dirOf(id),
    );
    nodes.set(id, srv);
    return srv;
  };
  try {
    // One at a time: the first creates the schema (the others would wait on its lock anyway).
    for (const id of opts.ids) await start(id);
  } catch (err) {
    await Promise.all([...nodes.values()].map((n) => n.kill()));
    db.stop();
    throw err;
  }
  const anyLive = () => [...nodes.values()].find((n) => n.child.exitCode === null && n.child.signalCode === null)!;
  return {
    db,
    sharedDir,
    start,
    node: (id) => nodes.get(id)!,
    async ownerOf(tenant) {
      const s = (await (await fetch(`${anyLive().api}/admin/status`, { headers: admin })).json()) as { status: { placement: { leases: { tenant: string; owner: string; expires_in_ms: number }[] } } };
      const l = s.status.placement.leases.find((x) => x.tenant === tenant);
      return l && l.expires_in_ms > 0 ? l.owner : null;
    },
    async stop() {
      await Promise.all([...nodes.values()].map((n) => n.stop()));
      db.stop();
      for (const d of [sharedDir, ...dirs.values()]) if (d) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** Waits until `key` is accepted by every instance (keys reach the others within the refresh interval). */
export async function keyEverywhere(nodes: ChildServer[], key: string): Promise<void> {
  for (const n of nodes) await within(10_000, async () => (await fetch(`${n.api}/v1/services`, { headers: { authorization: `Bearer ${key}` } })).status === 200);
}
