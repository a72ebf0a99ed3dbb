// Admission by the wait for an acknowledgement (receivers/latency-admission.ts) on a real server.
// SVC_MAX_ACK_WAIT_MS=1 makes any request that would queue behind another one too slow, so a burst
// of concurrent senders on both receivers is refused in part however fast this machine commits; the
// refused get 429 / UNAVAILABLE with Retry-After, and every request answered 200 is stored once.
import { describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { useTestServer } from '../helpers/server.js';
import { encodeTraces, postOtlp, statusOf } from '../helpers/otlp.js';
import { clientFor, queryRows } from '../helpers/client.js';
import { availableParallelism } from 'node:os';
import { refusalBurst, refusalsPerSecond } from '../../src/receivers/refusal-pace.js';

const srv = useTestServer({ SVC_MAX_ACK_WAIT_MS: '1' });
// Recent timestamps: the server deletes data older than its retention at start.
const NOW_US = Date.now() * 1000 - 60_000_000;
const PER_TRACE = 500;

function traceBody(): { id: string; body: Uint8Array } {
  const traceId = randomBytes(16);
  const spans = Array.from({ length: PER_TRACE }, (_v, i) => ({ traceId, startUs: NOW_US + i, durationUs: 10, attributes: { i, pad: 'x'.repeat(200) } }));
  return { id: traceId.toString('hex'), body: encodeTraces('flood', spans) };
}

function grpcExport(bytes: Uint8Array): Promise<grpc.ServiceError | null> {
  const client = new grpc.Client(srv.otlpGrpc, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest('/opentelemetry.proto.collector.trace.v1.TraceService/Export', (b: Buffer) => b, (b: Buffer) => b, Buffer.from(bytes), (err) => {
      client.close();
      resolve(err);
    });
  });
}

const query = (sql: string) => queryRows<Record<string, unknown>>(clientFor(srv.api), sql);

describe('admission by the wait for an acknowledgement', () => {
  it('refuses part of a burst with Retry-After, and stores every acknowledged request exactly once', async () => {
    // The first request finds nothing in flight and no history: admitted, and it gives the estimate a rate.
    const first = traceBody();
    expect((await postOtlp(srv.otlpHttp, 'traces', first.body)).status).toBe(200);

    const http = Array.from({ length: 24 }, traceBody);
    const viaGrpc = Array.from({ length: 8 }, traceBody);
    const [httpAnswers, grpcAnswers] = await Promise.all([
      Promise.all(http.map(async (t) => {
        const res = await postOtlp(srv.otlpHttp, 'traces', t.body);
        return { id: t.id, status: res.status, retryAfter: res.headers.get('retry-after'), type: res.headers.get('content-type'), body: new Uint8Array(await res.arrayBuffer()) };
      })),
      Promise.all(viaGrpc.map(async (t) => ({ id: t.id, err: await grpcExport(t.body) }))),
    ]);

    const refused = httpAnswers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) {
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
      // OTLP/HTTP: a google.rpc.Status encoded like the request, even for a refusal before the body is read.
      expect(a.type).toBe('application/x-protobuf');
      const st = statusOf(a.type, a.body);
      expect(st.code).toBe(grpc.status.UNAVAILABLE);
      expect(st.message).toMatch(/wait/);
      expect(st.message).toMatch(/Retry-After/); // the hint
    }
    for (const a of httpAnswers) expect([200, 429]).toContain(a.status);
    const grpcRefused = grpcAnswers.filter((a) => a.err !== null);
    expect(grpcRefused.length).toBeGreaterThan(0);
    for (const a of grpcRefused) {
      expect(a.err!.code).toBe(grpc.status.UNAVAILABLE);
      expect(Number(a.err!.metadata.get('retry-after')[0])).toBeGreaterThanOrEqual(1);
    }

    // Acknowledged means committed: each acknowledged trace is there whole and once, each refused one not at all.
    const acked = [first.id, ...httpAnswers.filter((a) => a.status === 200).map((a) => a.id), ...grpcAnswers.filter((a) => a.err === null).map((a) => a.id)];
    const rows = await query(`SELECT trace_id, count(*) AS n, count(DISTINCT span_id) AS spans FROM svc_spans WHERE service_name = 'flood' GROUP BY trace_id`);
    const stored = new Map(rows.map((r) => [String(r['trace_id']), { n: Number(r['n']), spans: Number(r['spans']) }]));
    for (const id of acked) expect(stored.get(id)).toEqual({ n: PER_TRACE, spans: PER_TRACE });
    expect(stored.size).toBe(acked.length);

    const status = (await (await fetch(`${srv.api}/admin/status`)).json()) as { status: { ingest: Record<string, number> & { observed_ack_wait: Record<string, number> } } };
    expect(status.status.ingest['max_ack_wait_ms']).toBe(1);
    expect(status.status.ingest['refused_for_wait']).toBe(refused.length + grpcRefused.length);
    expect(status.status.ingest['inflight_bytes']).toBe(0);
    // What came of admission: every acknowledged request, none refused; a commit takes longer than 1 ms.
    const observed = status.status.ingest.observed_ack_wait;
    expect(observed['requests']).toBe(acked.length);
    expect(observed['over_limit']).toBeGreaterThan(0);
    expect(observed['over_limit']).toBeLessThanOrEqual(acked.length);
    expect(observed['p99_ms']).toBeGreaterThanOrEqual(observed['p50_ms']!);
    expect(observed['arrival_p99_ms']).toBeLessThanOrEqual(observed['p99_ms']!);
  });

  it('paces gRPC refusals beyond the burst: each held stream still gets UNAVAILABLE with Retry-After', async () => {
    const before = (await (await fetch(`${srv.api}/admin/status`)).json()) as { status: { ingest: Record<string, number> } };
    const burst = refusalBurst(refusalsPerSecond(availableParallelism()));
    const answers = await Promise.all(Array.from({ length: burst + 60 }, () => grpcExport(traceBody().body)));
    const refused = answers.filter((e) => e !== null);
    expect(refused.length).toBeGreaterThan(burst);
    for (const e of refused) {
      expect(e!.code).toBe(grpc.status.UNAVAILABLE);
      expect(Number(e!.metadata.get('retry-after')[0])).toBeGreaterThanOrEqual(1);
    }
    const after = (await (await fetch(`${srv.api}/admin/status`)).json()) as { status: { ingest: Record<string, number> } };
    expect(after.status.ingest['refusals_paced']!).toBeGreaterThan(before.status.ingest['refusals_paced']!);
    expect(after.status.ingest['refusals_waiting']).toBe(0);
  });
});
