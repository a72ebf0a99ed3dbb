// Malformed, truncated, oversized and gzip-bomb bodies: the right status, the server keeps serving,
// nothing already stored is lost.
import { beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import http2 from 'node:http2';
import { GRPC_CONNECTION_WINDOW, GRPC_STREAM_WINDOW } from '../../src/receivers/otlp-grpc.js';
import { useTestServer } from '../helpers/server.js';
import { encodeTraces, messageType, postOtlp, statusOf } from '../helpers/otlp.js';

// Recent timestamps: the server deletes data older than its retention (72 h) at start.
const NOW_US = Date.now() * 1000 - 60_000_000;
const srv = useTestServer({ SVC_MAX_BODY_BYTES: String(1024 * 1024) });
const T0 = NOW_US;
const traceId = Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex');

beforeAll(async () => {
  const good = encodeTraces('keeper', [{ traceId, startUs: T0, durationUs: 5 }]);
  expect((await postOtlp(srv.otlpHttp, 'traces', good)).status).toBe(200);
});

async function stillServing(): Promise<void> {
  const res = await fetch(`${srv.api}/v1/traces/${traceId.toString('hex')}`);
  expect(res.status).toBe(200);
  expect(((await res.json()) as { span_count: number }).span_count).toBe(1);
}

function decodeStatus(bytes: ArrayBuffer): { code: number; message: string } {
  const S = messageType('google.rpc.Status');
  return S.toObject(S.decode(new Uint8Array(bytes))) as { code: number; message: string };
}

describe('hostile OTLP/HTTP bodies', () => {
  it('random bytes are 400 with a google.rpc.Status body in protobuf', async () => {
    const res = await postOtlp(srv.otlpHttp, 'traces', randomBytes(4096));
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/x-protobuf');
    const st = decodeStatus(await res.arrayBuffer());
    expect(st.code).toBe(3);
    expect(st.message.length).toBeGreaterThan(0);
    await stillServing();
  });

  it('a valid message truncated at many offsets is 400, never 500', async () => {
    const full = encodeTraces('trunc', [{ startUs: T0, durationUs: 1, attributes: { a: 'b', n: 3 } }]);
    for (let cut = 1; cut < full.length; cut += 7) {
      const res = await postOtlp(srv.otlpHttp, 'traces', full.subarray(0, cut));
      expect([200, 400]).toContain(res.status); // some prefixes are themselves valid messages
    }
    await stillServing();
  });

  it('malformed JSON is 400 with a JSON Status', async () => {
    const res = await postOtlp(srv.otlpHttp, 'traces', '{"resourceSpans": [');
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: number; message: string };
    expect(body.code).toBe(3);
  });

  it('an empty request is 200', async () => {
    expect((await postOtlp(srv.otlpHttp, 'traces', new Uint8Array(0))).status).toBe(200);
    expect((await postOtlp(srv.otlpHttp, 'logs', '{}')).status).toBe(200);
  });

  it('other content types are 415', async () => {
    const res = await postOtlp(srv.otlpHttp, 'metrics', 'x', { 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
  });

  it('a body over the limit is 413 and is not read to the end', async () => {
    const res = await postOtlp(srv.otlpHttp, 'traces', new Uint8Array(2 * 1024 * 1024));
    expect(res.status).toBe(413);
    await stillServing();
  });

  it('a refusal before the body is read is a google.rpc.Status encoded like the request', async () => {
    for (const [body, type] of [[new Uint8Array(2 * 1024 * 1024), 'application/x-protobuf'], ['{"resourceSpans":[]}'.padEnd(2 * 1024 * 1024), 'application/json']] as const) {
      const res = await postOtlp(srv.otlpHttp, 'traces', body);
      expect(res.status).toBe(413);
      expect(res.headers.get('content-type')).toBe(type);
      const st = statusOf(res.headers.get('content-type'), new Uint8Array(await res.arrayBuffer()));
      expect(st.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(st.message).toMatch(/exceeds the limit of 1048576 bytes \(send smaller batches\)/);
    }
  });

  it('a chunked body without a length is read whole, in pieces of any size, and over the limit is 413', async () => {
    const id = randomBytes(16);
    const spans = Array.from({ length: 300 }, (_v, i) => ({ traceId: id, startUs: T0 + i, durationUs: 1, attributes: { pad: 'x'.repeat(200 + i) } }));
    const body = encodeTraces('chunked', spans);
    expect(body.length).toBeGreaterThan(64 * 1024); // grows the buffer a few times
    const send = async (payload: Uint8Array, pieces: number[]) => {
      const { request } = await import('node:http');
      return new Promise<number>((resolve, reject) => {
        const req = request(`${srv.otlpHttp}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'transfer-encoding': 'chunked' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        void (async () => {
          let at = 0;
          for (const n of pieces) {
            if (at >= payload.length) break;
            req.write(payload.subarray(at, (at += n)));
            await new Promise((r) => setTimeout(r, 2)); // separate reads on the server
          }
          if (at < payload.length) req.write(payload.subarray(at));
          req.end();
        })();
      });
    };
    expect(await send(body, [1, 7, 1000, 3, 40_000, 17])).toBe(200);
    const res = await fetch(`${srv.api}/v1/traces/${id.toString('hex')}`);
    expect(((await res.json()) as { span_count: number }).span_count).toBe(300);
    expect(await send(new Uint8Array(1024 * 1024 + 1), [300_000, 300_000, 300_000])).toBe(413);
    await stillServing();
  });

  it('a gzip bomb is 413 without exhausting memory', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024)); // ~64 KB that inflates to 64 MiB, 64x the limit
    expect(bomb.length).toBeLessThan(128 * 1024);
    const res = await postOtlp(srv.otlpHttp, 'traces', bomb, { 'content-encoding': 'gzip' });
    expect(res.status).toBe(413);
    await stillServing();
  });

  it('a body that is not gzip but says so is 400', async () => {
    const res = await postOtlp(srv.otlpHttp, 'traces', randomBytes(100), { 'content-encoding': 'gzip' });
    expect(res.status).toBe(400);
  });

  it('records with invalid ids are a partial success', async () => {
    const body = encodeTraces('partial', [
      { startUs: T0, durationUs: 1 },
      { traceId: Buffer.alloc(16), startUs: T0, durationUs: 1 },
    ]);
    const res = await postOtlp(srv.otlpHttp, 'traces', body);
    expect(res.status).toBe(200);
    const R = messageType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');
    const r = R.toObject(R.decode(new Uint8Array(await res.arrayBuffer())), { longs: Number }) as { partialSuccess?: { rejectedSpans: number; errorMessage: string } };
    expect(r.partialSuccess?.rejectedSpans).toBe(1);
    expect(r.partialSuccess?.errorMessage).toBeTruthy();
  });
});

describe('hostile OTLP/gRPC messages', () => {
  function exportRaw(bytes: Uint8Array): Promise<grpc.ServiceError | null> {
    const client = new grpc.Client(srv.otlpGrpc, grpc.credentials.createInsecure());
    return new Promise((resolve) => {
      client.makeUnaryRequest(
        '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from(bytes),
        (err) => {
          client.close();
          resolve(err);
        },
      );
    });
  }

  it('random bytes are INVALID_ARGUMENT', async () => {
    const err = await exportRaw(randomBytes(2048));
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    await stillServing();
  });

  it('a message over the limit is RESOURCE_EXHAUSTED', async () => {
    const err = await exportRaw(new Uint8Array(2 * 1024 * 1024));
    expect(err?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    await stillServing();
  });

  it('a valid message is OK', async () => {
    expect(await exportRaw(encodeTraces('grpc-raw', [{ startUs: T0, durationUs: 3 }]))).toBeNull();
  });
});

// Not hostile, but on the same server: the receive windows grpc-js has no option for.
describe('OTLP/gRPC flow control', () => {
  it('lets a client send 1 MiB on a stream and 16 MiB on the connection before a window update', async () => {
    const session = http2.connect(`http://${srv.otlpGrpc}`);
    try {
      await new Promise<void>((resolve, reject) => {
        session.once('remoteSettings', () => resolve());
        session.once('error', reject);
      });
      expect(session.remoteSettings.initialWindowSize).toBe(GRPC_STREAM_WINDOW);
      // The connection's window comes as a WINDOW_UPDATE after the settings.
      for (let i = 0; i < 200 && session.state.remoteWindowSize !== GRPC_CONNECTION_WINDOW; i++) await new Promise((r) => setTimeout(r, 10));
      expect(session.state.remoteWindowSize).toBe(GRPC_CONNECTION_WINDOW);
    } finally {
      session.close();
    }
  });
});
