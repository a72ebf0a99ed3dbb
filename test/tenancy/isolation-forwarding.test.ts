// The isolation suite (isolation-suite.ts) through a forwarding instance: two instances on one real
// PostgreSQL control plane and a shared data directory, every tenant of the suite moved to `owner`
// before any data is sent, and every request of the suite sent to `entry`, which forwards them all.
import { describe, expect, it } from 'vitest';
import { admin } from '../helpers/hosted.js';
import { startCluster, type Cluster } from './cluster.js';
import { isolationSuite } from './isolation-suite.js';

let cluster: Cluster;

isolationSuite(async (env) => {
  cluster = await startCluster({ ids: ['entry', 'owner'], shared: true, leaseTtlMs: 10_000, env });
  const entry = cluster.node('entry');
  return {
    entry,
    async tenantsCreated(ids) {
      for (const id of ids) {
        const res = await fetch(`${entry.api}/admin/tenants/${id}/move`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ to: 'owner' }) });
        if (res.status !== 200) throw new Error(`move ${id}: ${res.status} ${await res.text()}`);
      }
    },
    logs: () => [...entry.logs, ...cluster.node('owner').logs],
    stop: () => cluster.stop(),
  };
}, () =>
  describe('through the forwarding instance', () => {
    it('every tenant request was served by the owner: no store opened on the entry', async () => {
      const status = async (id: string) => ((await (await fetch(`${cluster.node(id).api}/admin/status`, { headers: admin })).json()) as { status: Record<string, any> }).status;
      const entry = await status('entry');
      const owner = await status('owner');
      const open = (s: Record<string, any>) => (s['storage']['stores'] as { tenant: string }[]).map((x) => x.tenant);
      expect(open(entry)).toEqual([]);
      expect(open(owner)).toEqual(expect.arrayContaining(['alpha', 'beta']));
      expect(entry['placement']['forwarding']['forwarded']).toBeGreaterThan(10);
      expect(owner['placement']['forwarding']['received']).toBe(entry['placement']['forwarding']['forwarded']);
      // Diagnoses are admitted where they run: on the owner, per tenant (each tenant diagnosed once, one at a time).
      expect(owner['tenants']['beta']['diagnoses']).toMatchObject({ limit: 2, running: 0, waiting: 0, busy: 0 });
      expect(entry['tenants']['beta']['diagnoses']).toBeNull();
      expect(entry['placement']['leases'].filter((l: { tenant: string }) => ['alpha', 'beta', 'greedy'].includes(l.tenant)).map((l: { owner: string }) => l.owner)).toEqual(['owner', 'owner', 'owner']);
    });
  }),
);
