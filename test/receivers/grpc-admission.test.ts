// OTLP/gRPC exports are admitted by the length their message declares, before grpc-js reads the
// message (receivers/otlp-grpc.ts admitAtMessage), as OTLP/HTTP requests are by Content-Length, and
// each admission is let go when its stream closes. Here the bytes in flight decide (SVC_MAX_INFLIGHT_BYTES
// 4 MB; the acknowledgement wait is set far beyond the test's waits): an export whose message has not
// arrived counts with its declared length, so one of 3 MB beside it is refused before its message
// arrives and a small one is taken. An admission never let go would count against every later export:
// after whole, abandoned, oversized, message-less and cut-short exports nothing is left in flight; a
// message the server gathers from pieces (otlp-grpc.ts gatherMessage) is decoded whole.
import { describe, expect, it } from 'vitest';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { useTestServer } from '../helpers/server.js';
import { realisticBatch } from '../../testkit/spans.js';

const srv = useTestServer({ SVC_MAX_BODY_BYTES: String(4 << 20), SVC_MAX_INFLIGHT_BYTES: '4000000', SVC_MAX_ACK_WAIT_MS: '600000' });
const EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

const inflightBytes = async () =>
  ((await (await fetch(`${srv.api}/admin/status`)).json()) as { status: { memory: { inflight_bytes: number } } }).status.memory.inflight_bytes;

function exportOnce(client: grpc.Client, body: Uint8Array): Promise<grpc.ServiceError | null> {
  return new Promise((resolve) => client.makeUnaryRequest(EXPORT, (b: Buffer) => b, (b: Buffer) => b, Buffer.from(body), (e) => resolve(e)));
}

interface Partial {
  session: http2.ClientHttp2Session;
  /** The grpc-status the server answered with, once it has. */
  status: Promise<number>;
}

/** Opens an export whose prefix declares `declared` bytes and sends `sent` bytes of the message (ending the stream if `end`; `cut` sends only that much of the prefix). */
function partialExport(declared: number, sent: number, end = false, cut = 5): Partial {
  const session = http2.connect(`http://${srv.otlpGrpc}`);
  session.on('error', () => {});
  const stream = session.request({ ':method': 'POST', ':path': EXPORT, 'content-type': 'application/grpc', te: 'trailers' });
  stream.on('error', () => {});
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(declared, 1);
  const data = Buffer.concat([prefix.subarray(0, cut), Buffer.alloc(sent, 0x0a)]);
  if (end) stream.end(data);
  else stream.write(data);
  const status = new Promise<number>((resolve) => {
    stream.on('response', (h) => h['grpc-status'] !== undefined && resolve(Number(h['grpc-status'])));
    stream.on('trailers', (t) => resolve(Number(t['grpc-status'])));
  });
  stream.resume();
  return { session, status };
}

async function settled(): Promise<number> {
  for (let i = 0; i < 50 && (await inflightBytes()) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
  return inflightBytes();
}

describe('OTLP/gRPC admission at the message prefix', () => {
  it('counts an export by its declared length from its first bytes: a large one beside it is refused before its message arrives, a small one is taken', async () => {
    const arriving = partialExport(3_000_000, 32 * 1024);
    try {
      // It is admitted: its 3 MB count in flight though only 32 KiB have arrived.
      for (let i = 0; i < 50 && (await inflightBytes()) < 3_000_000; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await inflightBytes()).toBe(3_000_000);
      const large = partialExport(3_000_000, 32 * 1024);
      expect(await large.status).toBe(grpc.status.UNAVAILABLE);
      large.session.destroy();
      const client = new grpc.Client(srv.otlpGrpc, grpc.credentials.createInsecure());
      try {
        expect(await exportOnce(client, realisticBatch(64, Date.now() * 1000))).toBeNull();
      } finally {
        client.close();
      }
    } finally {
      arriving.session.destroy();
    }
    expect(await settled()).toBe(0);
  });

  it('lets every admission go: after whole, abandoned, oversized and message-less exports, nothing is in flight and exports are accepted', async () => {
    const client = new grpc.Client(srv.otlpGrpc, grpc.credentials.createInsecure());
    try {
      const start = Date.now() * 1000;
      for (let round = 0; round < 10; round++) {
        const errors = await Promise.all(Array.from({ length: 8 }, (_, i) => exportOnce(client, realisticBatch(64, start + (round * 8 + i) * 1000))));
        expect(errors.filter((e) => e !== null).map((e) => e!.message)).toEqual([]);
      }
      expect(await settled()).toBe(0);
      // Streams dropped mid-message.
      for (let i = 0; i < 10; i++) {
        const p = partialExport(500_000, 16 * 1024);
        await new Promise((resolve) => setTimeout(resolve, 50)); // the server has the prefix and part of the message
        p.session.destroy();
      }
      expect(await settled()).toBe(0);
      // A message over the size limit: refused by grpc-js itself, by its prefix.
      const tooLarge = await exportOnce(client, new Uint8Array(5 << 20));
      expect(tooLarge?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      // A stream that ends before a whole prefix, or before its whole message: nothing to decode.
      const short = partialExport(100, 0, true, 3);
      expect(await short.status).toBe(grpc.status.INVALID_ARGUMENT);
      short.session.destroy();
      const cutShort = partialExport(100_000, 1_000, true);
      expect(await cutShort.status).toBe(grpc.status.INVALID_ARGUMENT);
      cutShort.session.destroy();
      expect(await settled()).toBe(0);
      // And ingest still takes exports.
      expect(await exportOnce(client, realisticBatch(64, start + 999_000))).toBeNull();
    } finally {
      client.close();
    }
  });

  it('takes a message that arrives in pieces, its prefix split too: decoded whole, nothing rejected', async () => {
    const body = realisticBatch(200, Date.now() * 1000);
    const framed = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), body]);
    framed.writeUInt32BE(body.length, 1);
    const session = http2.connect(`http://${srv.otlpGrpc}`);
    session.on('error', () => {});
    try {
      const stream = session.request({ ':method': 'POST', ':path': EXPORT, 'content-type': 'application/grpc', te: 'trailers' });
      const status = new Promise<number>((resolve) => {
        stream.on('response', (h) => h['grpc-status'] !== undefined && resolve(Number(h['grpc-status'])));
        stream.on('trailers', (t) => resolve(Number(t['grpc-status'])));
      });
      const reply: Buffer[] = [];
      stream.on('data', (d: Buffer) => reply.push(d));
      const cuts = [3, 4_000, Math.floor(framed.length / 2), framed.length];
      for (let i = 0; i < cuts.length; i++) {
        stream.write(framed.subarray(i === 0 ? 0 : cuts[i - 1], cuts[i]));
        await new Promise((resolve) => setTimeout(resolve, 30)); // each piece its own DATA frames
      }
      stream.end();
      expect(await status).toBe(grpc.status.OK);
      // The answer is an ExportTraceServiceResponse with nothing rejected: an empty message.
      expect(Buffer.concat(reply)).toEqual(Buffer.from([0, 0, 0, 0, 0]));
    } finally {
      session.destroy();
    }
    expect(await settled()).toBe(0);
  });
});
