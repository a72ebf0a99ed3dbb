// An OTLP/gRPC export let through at its stream's headers holds room in the ack-wait admission until
// its message arrives or its call ends (receivers/otlp-grpc.ts). A hold that were never let go would
// count against every later export, and enough of them would refuse ingest for good: after whole
// exports, a stream abandoned mid-message and one whose message is over the size limit, nothing is
// left held and exports are still accepted. Holds also stop counting after SVC_MAX_ACK_WAIT_MS, a
// backstop that would hide a leak here: it is set far beyond the test's waits.
import { describe, expect, it } from 'vitest';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { useTestServer } from '../helpers/server.js';
import { realisticBatch } from '../../bench/lib/spans.js';

const srv = useTestServer({ SVC_MAX_BODY_BYTES: String(1 << 20), SVC_MAX_ACK_WAIT_MS: '600000' });
const EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

const arriving = async () =>
  ((await (await fetch(`${srv.api}/admin/status`)).json()) as { status: { ingest: { arriving_exports: number } } }).status.ingest.arriving_exports;

function exportOnce(client: grpc.Client, body: Uint8Array): Promise<grpc.ServiceError | null> {
  return new Promise((resolve) => client.makeUnaryRequest(EXPORT, (b: Buffer) => b, (b: Buffer) => b, Buffer.from(body), (e) => resolve(e)));
}

/** Opens an export of a `declared`-byte message, sends `sent` bytes of it, then drops the connection. */
async function abandonedExport(declared: number, sent: number): Promise<void> {
  const session = http2.connect(`http://${srv.otlpGrpc}`);
  const stream = session.request({ ':method': 'POST', ':path': EXPORT, 'content-type': 'application/grpc', te: 'trailers' });
  stream.on('error', () => {});
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(declared, 1);
  await new Promise<void>((resolve) => stream.write(Buffer.concat([prefix, Buffer.alloc(sent, 0x0a)]), () => resolve()));
  await new Promise((resolve) => setTimeout(resolve, 100)); // the server has the headers and part of the message
  session.destroy();
}

async function settled(): Promise<number> {
  for (let i = 0; i < 50 && (await arriving()) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
  return arriving();
}

describe('OTLP/gRPC holds at the headers', () => {
  it('lets every hold go: after whole, abandoned and oversized exports, none is left and exports are accepted', async () => {
    const client = new grpc.Client(srv.otlpGrpc, grpc.credentials.createInsecure());
    try {
      // 200 whole exports, 8 at a time: far more than the holds that fit the trusted burst at once.
      const start = Date.now() * 1000;
      for (let round = 0; round < 25; round++) {
        const errors = await Promise.all(Array.from({ length: 8 }, (_, i) => exportOnce(client, realisticBatch(64, start + (round * 8 + i) * 1000))));
        expect(errors.filter((e) => e !== null).map((e) => e!.message)).toEqual([]);
      }
      expect(await settled()).toBe(0);
      // Streams dropped mid-message.
      for (let i = 0; i < 20; i++) await abandonedExport(500_000, 16 * 1024);
      expect(await settled()).toBe(0);
      // A message over the size limit: refused by grpc-js itself, before the service sees it.
      const tooLarge = await exportOnce(client, new Uint8Array(2 << 20));
      expect(tooLarge?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(await settled()).toBe(0);
      // And ingest still takes exports.
      expect(await exportOnce(client, realisticBatch(64, start + 999_000))).toBeNull();
    } finally {
      client.close();
    }
  });
});
