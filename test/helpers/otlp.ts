// Builds OTLP requests with protobufjs from the repo's own proto/ files: an independent encoder to
// test the service's hand-written decoder against (shared with the benchmarks).
import type protobuf from 'protobufjs';
import { protoRoot } from '../../testkit/spans.js';

export { encodeTraces, type SpanSpec } from '../../testkit/spans.js';

export function messageType(name: string): protobuf.Type {
  const root = protoRoot();
  if (name.startsWith('google.rpc.')) root.loadSync('google/rpc/status.proto');
  return root.lookupType(name);
}

export async function postOtlp(base: string, signal: string, body: Uint8Array | string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/v1/${signal}`, {
    method: 'POST',
    headers: { 'content-type': typeof body === 'string' ? 'application/json' : 'application/x-protobuf', ...headers },
    body: body as BodyInit,
  });
}

/** An OTLP/HTTP error answer's google.rpc.Status, decoded as its content type says (protobuf or JSON). */
export function statusOf(contentType: string | null, bytes: Uint8Array): { code: number; message: string } {
  if (contentType === 'application/json') return JSON.parse(Buffer.from(bytes).toString('utf8')) as { code: number; message: string };
  if (contentType !== 'application/x-protobuf') throw new Error(`not an OTLP error answer: ${contentType}`);
  const S = messageType('google.rpc.Status');
  return S.toObject(S.decode(bytes), { defaults: true }) as { code: number; message: string };
}
