// OTLP/gRPC refuses an export at its stream's headers when even the smallest one would be refused
// (receivers/otlp-grpc.ts): the status comes before the message has arrived, and the stream is then
// reset with NO_ERROR so that the client stops sending it. Here the disk is "full" for good
// (SVC_MIN_FREE_DISK_BYTES beyond any disk), and the client sends only the first 32 KiB of a 3 MB
// message: a refusal that waited for the whole message, as grpc-js's own reading does, never comes.
import { describe, expect, it } from 'vitest';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { useTestServer } from '../helpers/server.js';

const srv = useTestServer({ SVC_MIN_FREE_DISK_BYTES: String(Number.MAX_SAFE_INTEGER) });
const EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

interface Answer {
  headers: http2.IncomingHttpHeaders;
  rstCode: number | undefined;
}

/** Opens an export of a `declared`-byte message, sends `sent` bytes of it and waits (at most 5 s) for the server to end the stream. */
async function partialExport(declared: number, sent: number): Promise<Answer | 'no answer'> {
  const session = http2.connect(`http://${srv.otlpGrpc}`);
  try {
    const stream = session.request({ ':method': 'POST', ':path': EXPORT, 'content-type': 'application/grpc', te: 'trailers' });
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(declared, 1);
    stream.write(Buffer.concat([prefix, Buffer.alloc(sent, 0x0a)]));
    let headers: http2.IncomingHttpHeaders = {};
    stream.on('response', (h) => (headers = h));
    stream.on('error', () => {}); // the reset shows in rstCode
    stream.resume();
    return await Promise.race([
      new Promise<Answer>((resolve) => stream.on('close', () => resolve({ headers, rstCode: stream.rstCode }))),
      new Promise<'no answer'>((resolve) => setTimeout(() => resolve('no answer'), 5000)),
    ]);
  } finally {
    session.destroy();
  }
}

describe('OTLP/gRPC refusal at the headers', () => {
  it('answers UNAVAILABLE with Retry-After before the message has arrived, then resets the stream without error', async () => {
    const answer = await partialExport(3_000_000, 32 * 1024);
    expect(answer).not.toBe('no answer');
    const { headers, rstCode } = answer as Answer;
    // A trailers-only answer: the status is in the response headers.
    expect(Number(headers['grpc-status'])).toBe(grpc.status.UNAVAILABLE);
    expect(decodeURIComponent(String(headers['grpc-message']))).toMatch(/free in the data directory/);
    expect(Number(headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR);
  });

  it('gives a whole export the same answer, which clients see as a retryable status', async () => {
    const client = new grpc.Client(srv.otlpGrpc, grpc.credentials.createInsecure());
    const err = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(EXPORT, (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(200_000, 0x0a), (e) => resolve(e)),
    );
    client.close();
    expect(err?.code).toBe(grpc.status.UNAVAILABLE);
    expect(Number(err?.metadata.get('retry-after')[0])).toBeGreaterThanOrEqual(1);
  });
});
