// A lean HTTP/1.1 sender for load generation: node:http over keep-alive sockets. Measured here with
// 12 senders of 350 KB bodies, fetch (undici) used ~0.23 of a core to send what node:http sends with
// 0.07 — CPU the server under test loses on a 2-core machine.
import http from 'node:http';
import http2 from 'node:http2';

/** Sends one request over `agent`; resolves with the status once the answer is drained. */
function statusOf(agent: http.Agent, u: URL, method: string, headers: http.OutgoingHttpHeaders, body?: Uint8Array): Promise<number> {
  return new Promise((resolve, reject) => {
    let status = 0;
    const req = http.request({ agent, host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers }, (res) => {
      status = res.statusCode ?? 0;
      res.resume();
      res.on('end', () => resolve(status));
      res.on('error', () => resolve(status));
    });
    // A refusal may close the connection while the body is still being sent: the answer came first.
    req.on('error', (e) => (status ? resolve(status) : reject(e)));
    req.end(body);
  });
}

/**
 * GETs base+path over one keep-alive socket; resolves with the status. For pollers that run beside
 * a load: fetch here cost the load generator ~0.1 of a core for 20 requests a second, and with it
 * the closed-loop senders fell behind (OTLP/gRPC at 32 senders: 50,000-79,000 spans/s against
 * 81,000-90,000 unpolled; with this getter 76,000-80,000).
 */
export function getter(base: string, path: string): () => Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1, timeout: IDLE_CLOSE_MS });
  const u = new URL(path, base);
  return () => statusOf(agent, u, 'GET', {});
}

/**
 * A socket left idle is closed by the sender before the server's 10 s idle timeout does it (as
 * undici's 4 s keep-alive does): else a request sent on it as the server closes it meets a reset
 * (a few an hour in the soak), a race of the load generator's, not an answer of the server's.
 */
const IDLE_CLOSE_MS = 4000;

/** POSTs bodies to base+path with the given content type; resolves with the status (body drained). */
export function poster(base: string, path: string, contentType: string, sockets: number): (body: Uint8Array) => Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets, timeout: IDLE_CLOSE_MS });
  const u = new URL(path, base);
  return (body) => statusOf(agent, u, 'POST', { 'content-type': contentType, 'content-length': body.byteLength }, body);
}

/** Each distinct message framed once (the senders cycle through the same bodies): 5-byte prefix, then the message. */
const frames = new WeakMap<Uint8Array, Buffer>();
function framed(message: Uint8Array): Buffer {
  let frame = frames.get(message);
  if (!frame) {
    frame = Buffer.allocUnsafe(5 + message.byteLength);
    frame[0] = 0; // not compressed
    frame.writeUInt32BE(message.byteLength, 1);
    frame.set(message, 5);
    frames.set(message, frame);
  }
  return frame;
}

/**
 * A lean gRPC unary sender over node:http2 (one stream per call): the 5-byte length prefix, the
 * request, and the grpc-status trailer. @grpc/grpc-js as a client used ~0.23 of a core for what
 * this sends with a fraction of it. Resolves with the grpc-status (0 = OK). `connections` HTTP/2
 * connections, calls dealt out in turn: a fleet of exporters has one each, and 400 senders on one
 * connection queued each 350 KB message behind the others' in the client, before the server saw
 * it — a wait the server's admission cannot bound, counted in the ack latency.
 */
export function grpcUnary(target: string, path: string, connections = 1): { send(message: Uint8Array): Promise<number>; close(): void } {
  // Node's default 10 MB of session memory would refuse (ENHANCE_YOUR_CALM) a few dozen 350 KB calls in flight.
  // A connection the server ends (GOAWAY) fails the calls on it (each counts as an error answer) and
  // is replaced by a new one at the next call, as an exporter reconnects.
  const connect = () => {
    const session = http2.connect(`http://${target}`, { maxSessionMemory: 1024 });
    session.on('error', () => {}); // its streams fail with it
    return session;
  };
  const sessions = Array.from({ length: Math.max(1, connections) }, connect);
  let next = 0;
  return {
    send: (message) =>
      new Promise((resolve, reject) => {
        const frame = framed(message);
        const i = next++ % sessions.length;
        if (sessions[i]!.closed || sessions[i]!.destroyed) sessions[i] = connect();
        const session = sessions[i]!;
        const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
        let status = -1;
        stream.on('response', (headers) => {
          if (headers['grpc-status'] !== undefined) status = Number(headers['grpc-status']); // trailers-only answer
        });
        stream.on('trailers', (trailers) => (status = Number(trailers['grpc-status'])));
        stream.on('error', reject);
        stream.resume();
        stream.on('end', () => resolve(status));
        stream.end(frame);
      }),
    close: () => sessions.forEach((s) => s.close()),
  };
}
