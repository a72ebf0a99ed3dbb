// The hosted variant within its memory budget: at most SVC_TENANT_MAX_OPEN tenant stores are open at
// once, each DuckDB under its share of the budget's DuckDB part, and a tenant whose store was closed
// to make room for another is reopened by its next request with everything it had.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildServer } from '../../bench/lib/server.js';
import { clientFor, queryRows } from '../helpers/client.js';
import { admin, bearer, createTenant, issueKey, startHosted } from '../helpers/hosted.js';

const MiB = 1024 * 1024;
let srv: ChildServer;
beforeAll(async () => {
  srv = await startHosted({ SVC_MEMORY_BUDGET: String(512 * MiB), SVC_TENANT_MAX_OPEN: '2' });
}, 60_000);
afterAll(async () => {
  await srv?.stop();
  srv?.cleanup();
});

const trace = (service: string, i: number) =>
  JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [{ spans: [{ traceId: String(i).padStart(32, '7'), spanId: String(i).padStart(16, '7'), name: 'x', startTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n), endTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n + 1000n) }] }],
      },
    ],
  });

describe('a hosted server holding at most two stores open', () => {
  it('gives each store half of the DuckDB part, keeps two open, and reopens a closed tenant with its data', async () => {
    const keys: Record<string, string> = {};
    for (const t of ['t1', 't2', 't3']) {
      await createTenant(srv, t);
      keys[t] = (await issueKey(srv, t)).key;
    }
    const status = async () => ((await (await fetch(`${srv.api}/admin/status`, { headers: admin })).json()) as { status: Record<string, Record<string, any>> }).status;
    // Each tenant writes in turn, twice round: every write opens its store, closing the idlest one.
    for (let round = 0; round < 2; round++) {
      for (const t of ['t1', 't2', 't3']) {
        const res = await fetch(`${srv.otlpHttp}/v1/traces`, { method: 'POST', headers: { ...bearer(keys[t]!), 'content-type': 'application/json' }, body: trace(`svc-${t}`, round) });
        expect(res.status, `${t} round ${round}`).toBe(200);
        const st = await status();
        expect(st['storage']!['open']).toBeLessThanOrEqual(2);
      }
    }
    const st = await status();
    expect(st['storage']!['max_open']).toBe(2);
    expect(st['memory']!['max_open_stores']).toBe(2);
    expect(st['memory']!['duckdb_memory_limit_per_store']).toBe(`${((512 * MiB) * 3) / 8 / 2}B`);
    // Nothing was lost by closing: each tenant reads its own two spans, and only its own.
    for (const t of ['t1', 't2', 't3']) {
      const rows = await queryRows(clientFor(srv.api, { apiKey: keys[t]! }), 'SELECT service_name, count(*) AS n FROM svc_spans GROUP BY ALL');
      expect(rows).toEqual([{ service_name: `svc-${t}`, n: 2 }]);
    }
  });
});
