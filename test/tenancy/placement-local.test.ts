// Two instances on one real PostgreSQL control plane, each with its own data directory (local disks):
// a tenant's data lives with its owner, so while the owner is down (SIGKILL) every request for it is
// answered 503 with Retry-After (never from an empty store) and nothing moves; when the owner returns
// with the same SVC_INSTANCE_ID and directory, the tenant is whole again through either instance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import type { ChildServer } from '../../testkit/server.js';
import { clientFor } from '../helpers/client.js';
import { encodeTraces } from '../helpers/otlp.js';
import { admin, bearer, createTenant, issueKey, within } from '../helpers/hosted.js';
import { keyEverywhere, startCluster, type Cluster } from './cluster.js';

const TTL_MS = 2000;
let cluster: Cluster;
let key: string;
const NOW_US = Date.now() * 1000;

function traces(batch: number, spans: number): string {
  const start = BigInt(NOW_US - 60e6 + batch * 1000) * 1000n;
  const list = Array.from({ length: spans }, (_, i) => ({ traceId: (batch + 1).toString(16).padStart(32, '0'), spanId: (i + 1).toString(16).padStart(16, '0'), name: 'op', kind: 2, startTimeUnixNano: String(start), endTimeUnixNano: String(start + 1000n) }));
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'local-svc' } }] }, scopeSpans: [{ spans: list }] }] });
}
const count = async (srv: ChildServer) => {
  const out = await clientFor(srv.api, { apiKey: key }).runQuery({ body: 'SELECT count(*) AS n FROM svc_spans' });
  return out.ok ? Number(out.body[0]!['n']) : -(out.status ?? 0);
};
const leaseOwner = async (srv: ChildServer) => {
  const s = (await (await fetch(`${srv.api}/admin/status`, { headers: admin })).json()) as { status: { placement: { leases: { tenant: string; owner: string }[] } } };
  return s.status.placement.leases.find((l) => l.tenant === 'kept')?.owner;
};

beforeAll(async () => {
  cluster = await startCluster({ ids: ['x', 'y'], shared: false, leaseTtlMs: TTL_MS });
  await createTenant(cluster.node('x'), 'kept');
  key = (await issueKey(cluster.node('x'), 'kept')).key;
  await keyEverywhere([cluster.node('x'), cluster.node('y')], key); // x's request first: x owns it
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('local disks: the owner down', () => {
  it('503 with Retry-After on every path until the owner returns, then whole again', async () => {
    const x = cluster.node('x');
    const y = cluster.node('y');
    expect(await leaseOwner(y)).toBe('x');
    for (let b = 0; b < 10; b++) expect((await fetch(`${[x, y][b % 2]!.otlpHttp}/v1/traces`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: traces(b, 3) })).status).toBe(200);
    expect(await count(y)).toBe(30);

    await x.kill();
    // Before and after the lease expires: never an answer from y's (empty) directory.
    const until = Date.now() + TTL_MS + 1500;
    let reads = 0;
    while (Date.now() < until) {
      const res = await fetch(`${y.api}/v1/services`, { headers: bearer(key) });
      expect(res.status).toBe(503);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('NOT_READY');
      reads++;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(reads).toBeGreaterThan(3);
    const ingest = await fetch(`${y.otlpHttp}/v1/traces`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: traces(99, 1) });
    expect(ingest.status).toBe(503); // OTLP's retryable answer: the sender keeps the batch
    expect(Number(ingest.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const client = new grpc.Client(y.otlpGrpc, grpc.credentials.createInsecure());
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${key}`);
    const err = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest('/opentelemetry.proto.collector.trace.v1.TraceService/Export', (b: Buffer) => b, (b: Buffer) => b, Buffer.from(encodeTraces('g', [{ startUs: NOW_US, durationUs: 1 }])), md, (e) => resolve(e)),
    ).finally(() => client.close());
    expect(err?.code).toBe(grpc.status.UNAVAILABLE);
    expect(await leaseOwner(y)).toBe('x'); // y did not take it: its data is on x's disk

    await cluster.start('x'); // same id, same directory, new ports
    await within(10_000, async () => (await count(y)) === 30);
    expect(await count(cluster.node('x'))).toBe(30);
    expect(await leaseOwner(y)).toBe('x');
  });
});
