// Three instances on one real PostgreSQL control plane and one shared data directory: a tenant's
// telemetry sent round-robin over all three lands in one store (its owner's), every read on every
// instance sees all of it, detection sees whole series; forged forwarded requests are refused; the
// owner killed with SIGKILL is replaced within the lease bound with every acknowledged span; a
// tenant moves between instances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import type { ChildServer } from '../../testkit/server.js';
import { signForward } from '../../src/tenancy/forward.js';
import { clientFor } from '../helpers/client.js';
import { encodeTraces } from '../helpers/otlp.js';
import { encodeProfile } from '../pipeline/decode/profiles/helpers.js';
import { ADMIN_TOKEN, admin, bearer, createTenant, issueKey, within } from '../helpers/hosted.js';
import { keyEverywhere, startCluster, type Cluster } from './cluster.js';
import { run } from '../../src/cli/main.js';

const TTL_MS = 2000;
const IDS = ['a', 'b', 'c'];
let cluster: Cluster;
let nodes: ChildServer[];
let key: string;

// Every span in one 5-minute bucket that closed well before now, so detection closes it at once.
const BUCKET_US = Math.floor((Date.now() * 1000 - 20 * 60e6) / 300e6) * 300e6;

function traces(service: string, batch: number, spans: number): string {
  const t = (i: number) => BigInt(BUCKET_US + 60e6 + batch * 1000 + i) * 1000n;
  const list = Array.from({ length: spans }, (_, i) => ({
    traceId: (batch + 1).toString(16).padStart(8, '0') + 'ab'.repeat(12),
    spanId: (i + 1).toString(16).padStart(16, '0'),
    name: 'GET /checkout',
    kind: 2,
    startTimeUnixNano: String(t(i)),
    endTimeUnixNano: String(t(i) + 2_000_000n),
  }));
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ spans: list }] }] });
}
const postTraces = (srv: ChildServer, k: string, body: string) => fetch(`${srv.otlpHttp}/v1/traces`, { method: 'POST', headers: { ...bearer(k), 'content-type': 'application/json' }, body });
/** The rows of one SELECT on `srv`, or none while it cannot answer (an owner being replaced). */
const query = async (srv: ChildServer, k: string, sql: string): Promise<Record<string, unknown>[]> => {
  const out = await clientFor(srv.api, { apiKey: k }).runQuery({ body: sql });
  return out.ok ? out.body : [];
};
const count = async (srv: ChildServer, k: string, where = '') => Number((await query(srv, k, `SELECT count(*) AS n FROM svc_spans ${where}`))[0]?.['n'] ?? -1);
const status = async (srv: ChildServer) => ((await (await fetch(`${srv.api}/admin/status`, { headers: admin })).json()) as { status: Record<string, any> }).status;

function grpcExport(srv: ChildServer, k: string, bytes: Uint8Array): Promise<grpc.ServiceError | null> {
  const client = new grpc.Client(srv.otlpGrpc, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${k}`);
  return new Promise<grpc.ServiceError | null>((resolve) =>
    client.makeUnaryRequest('/opentelemetry.proto.collector.trace.v1.TraceService/Export', (b: Buffer) => b, (b: Buffer) => b, Buffer.from(bytes), md, (e) => resolve(e)),
  ).finally(() => client.close());
}

beforeAll(async () => {
  cluster = await startCluster({ ids: IDS, shared: true, leaseTtlMs: TTL_MS, env: { SVC_DETECT_INTERVAL_S: '1', SVC_DETECT_GRACE_S: '0' } });
  nodes = IDS.map((id) => cluster.node(id));
  await createTenant(nodes[0]!, 'spread');
  key = (await issueKey(nodes[0]!, 'spread')).key;
  await keyEverywhere(nodes, key);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

const BATCHES = 30;
const SPANS = 5;
const GRPC_SPANS = 4;

describe('a tenant sent round-robin over three instances', () => {
  it('is acknowledged everywhere and stored in one place: every read on every instance sees all of it', async () => {
    for (let b = 0; b < BATCHES; b++) expect((await postTraces(nodes[b % 3]!, key, traces('rr-http', b, SPANS))).status).toBe(200);
    for (const n of nodes) {
      expect(await grpcExport(n, key, encodeTraces('rr-grpc', Array.from({ length: GRPC_SPANS }, () => ({ startUs: BUCKET_US + 90e6, durationUs: 1000 }))))).toBeNull();
      const prof = encodeProfile({ types: [['cpu', 'nanoseconds']], samples: [{ locs: [1], values: [10] }], locations: { 1: ['main'] }, timeNanos: BigInt(Date.now()) * 1_000_000n });
      expect((await fetch(`${n.api}/ingest?name=rr-prof`, { method: 'POST', headers: bearer(key), body: prof as BodyInit })).status).toBe(200);
    }
    const total = BATCHES * SPANS + 3 * GRPC_SPANS;
    for (const n of nodes) {
      expect(await count(n, key), n.api).toBe(total);
      const services = (await (await fetch(`${n.api}/v1/services`, { headers: bearer(key) })).json()) as { services: { service_name: string }[] };
      expect(services.services.map((s) => s.service_name).sort()).toEqual(['rr-grpc', 'rr-http', 'rr-prof']);
      for (const b of [0, 1, 2]) {
        const t = await fetch(`${n.api}/v1/traces/${(b + 1).toString(16).padStart(8, '0') + 'ab'.repeat(12)}`, { headers: bearer(key) });
        expect(t.status).toBe(200);
      }
    }
    // One lease, one open store (the owner's); the two others forwarded.
    const owner = await cluster.ownerOf('spread');
    expect(IDS).toContain(owner);
    for (const [i, n] of nodes.entries()) {
      const s = await status(n);
      const open = (s['storage']['stores'] as { tenant: string }[]).map((x) => x.tenant);
      expect(open.includes('spread'), IDS[i]).toBe(IDS[i] === owner);
      expect(s['placement']['leases'].filter((l: { tenant: string }) => l.tenant === 'spread')).toEqual([expect.objectContaining({ owner, here: IDS[i] === owner })]);
      if (IDS[i] !== owner) expect(s['placement']['forwarding']['forwarded']).toBeGreaterThan(0);
      else expect(s['placement']['forwarding']['received']).toBeGreaterThan(0);
      expect(s['placement']['instances'].map((x: { id: string; live: boolean }) => [x.id, x.live])).toEqual(IDS.map((id) => [id, true]));
    }
  });

  it('detection sees whole series: the closed bucket counts every call, on every instance', async () => {
    const calls = async (n: ChildServer) => {
      const r = await query(n, key, `SELECT max(n) AS n FROM svc_series_5m WHERE service_name = 'rr-http'`);
      return Number(r[0]?.['n'] ?? 0);
    };
    // A pass may close the bucket while the last batches still land; the next one (every second) reopens it.
    await within(20_000, async () => (await calls(nodes[0]!)) === BATCHES * SPANS);
    for (const n of nodes) expect(await calls(n)).toBe(BATCHES * SPANS);
  });

  it('keeps the owner answer unchanged: status, headers and body of an error', async () => {
    const owner = await cluster.ownerOf('spread');
    const ownerNode = cluster.node(owner!);
    const other = nodes.find((n) => n !== ownerNode)!;
    const direct = await fetch(`${ownerNode.api}/v1/traces/not-a-trace-id`, { headers: bearer(key) });
    const relayed = await fetch(`${other.api}/v1/traces/not-a-trace-id`, { headers: bearer(key) });
    expect(relayed.status).toBe(direct.status);
    expect(relayed.headers.get('content-type')).toBe(direct.headers.get('content-type'));
    expect(await relayed.text()).toBe(await direct.text());
  });
});

describe('forged inter-instance requests', () => {
  it('are refused (403) and store nothing, whatever else they carry', async () => {
    const owner = cluster.node((await cluster.ownerOf('spread'))!);
    const before = await count(owner, key);
    const now = Date.now();
    const forged = {
      'wrong secret': signForward('not-the-cluster-secret-at-all', 'a', 'spread', 'POST', '/v1/traces'),
      'another path signed': signForward(ADMIN_TOKEN, 'a', 'spread', 'POST', '/v1/logs'),
      'too old': signForward(ADMIN_TOKEN, 'a', 'spread', 'POST', '/v1/traces', now - 5 * 60_000),
      'tenant altered': signForward(ADMIN_TOKEN, 'a', 'spread', 'POST', '/v1/traces').replace('spread', 'other'),
      garbage: 'x y z',
    };
    for (const [why, header] of Object.entries(forged)) {
      for (const auth of [{}, bearer(key)]) {
        const res = await fetch(`${owner.otlpHttp}/v1/traces`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'x-tds-forwarded': header }, body: traces('forged', 900, 1) });
        expect(res.status, why).toBe(403);
      }
    }
    // An admin route is never taken as forwarded, even correctly signed.
    const signed = signForward(ADMIN_TOKEN, 'a', 'spread', 'GET', '/admin/status');
    expect((await fetch(`${owner.api}/admin/status`, { headers: { ...admin, 'x-tds-forwarded': signed } })).status).toBe(403);
    expect(await count(owner, key)).toBe(before);
    expect((await status(owner))['refused']['FORBIDDEN']).toBeGreaterThanOrEqual(Object.keys(forged).length * 2);
  });
});

describe('moving a tenant', () => {
  it('drains, hands over and the new owner opens the store: nothing lost, reads whole', async () => {
    const from = (await cluster.ownerOf('spread'))!;
    const to = IDS.find((id) => id !== from)!;
    const before = await count(nodes[0]!, key);
    let out = '';
    const code = await run(['admin', 'tenant', 'move', 'spread', '--to', to], { stdout: { write: (s: string) => (out += s) }, stderr: { write: () => true }, env: { SVC_URL: nodes[2]!.api, SVC_ADMIN_TOKEN: ADMIN_TOKEN } });
    expect(code, out).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ tenant: 'spread', from, to });
    expect(await cluster.ownerOf('spread')).toBe(to);
    // Requests may see 503 + Retry-After for a renewal period while the others learn the new owner.
    for (const n of nodes) await within(5000, async () => (await count(n, key)) === before);
    expect((await postTraces(cluster.node(to), key, traces('moved', 700, 2))).status).toBe(200);
    const open = (await status(cluster.node(from)))['storage']['stores'].map((x: { tenant: string }) => x.tenant);
    expect(open).not.toContain('spread');
    expect((await fetch(`${nodes[0]!.api}/admin/tenants/spread/move`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ to: 'nobody' }) })).status).toBe(404);
  });
});

describe('the owner killed (SIGKILL), shared data directory', () => {
  it('another instance serves the tenant within the lease bound, with every acknowledged span', async () => {
    const ownerId = (await cluster.ownerOf('spread'))!;
    const owner = cluster.node(ownerId);
    const survivors = nodes.filter((n) => n !== owner);
    let acked = await count(survivors[0]!, key);
    for (let b = 0; b < 10; b++) if ((await postTraces(survivors[b % 2]!, key, traces('before-kill', 1000 + b, 3))).status === 200) acked += 3;
    await owner.kill();
    const t0 = Date.now();
    // Until the lease expires the survivors cannot reach the owner: 503 with Retry-After, never a partial answer.
    const during = await fetch(`${survivors[0]!.api}/v1/services`, { headers: bearer(key) });
    if (during.status !== 200) {
      expect(during.status).toBe(503);
      expect(Number(during.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // The bound: the lease (TTL_MS), then the store's opening (WAL replay, runtime start), which takes
    // seconds on a loaded machine; slack for that, never for a partial answer (count is exact).
    await within(TTL_MS + 20_000, async () => (await count(survivors[0]!, key)) === acked);
    expect(await count(survivors[1]!, key)).toBe(acked);
    expect(IDS.filter((id) => id !== ownerId)).toContain(await cluster.ownerOf('spread'));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(TTL_MS - 1000); // not before the lease could expire
  });
});
