// OTLP/gRPC on :4317: the collector services' Export methods. Messages stay raw bytes here
// (identity (de)serialisers) and are decoded in the worker pool like OTLP/HTTP bodies; grpc-js
// handles gzip message compression and enforces the size limit.
import * as grpc from '@grpc/grpc-js';
import { constants as h2, type Http2Server, type ServerHttp2Stream, type ServerOptions } from 'node:http2';
import { ApiError, grpcCode, toApiError } from '../core/errors.js';
import type { Signal } from '../pipeline/tasks.js';
import { admitIngest, admitInstance, ingest, type Admitted, type IngestContext } from './ingest.js';
import { encodeExportResponse } from './otlp-responses.js';
import { ForwardedGrpcError, unavailableError } from '../tenancy/forward.js';

const SERVICES: Record<Signal | 'profiles', string> = {
  traces: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
  logs: '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
  metrics: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
  profiles: '/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export',
};

/** Where a forwarded export goes on its tenant's owner (tenancy/forward.ts: as OTLP/HTTP). */
const HTTP_PATHS: Record<Signal | 'profiles', string> = { traces: '/v1/traces', logs: '/v1/logs', metrics: '/v1/metrics', profiles: '/v1development/profiles' };

const raw = (b: Buffer) => b;

/**
 * HTTP/2 receive windows. A stream's is what a refused export may push while its refusal waits its
 * turn (refusal-pace.ts), held in this process: 64 KiB (Node's default) kept a flood of 400 held
 * 2.6 MB exports to 1.2 GiB peak RSS where 1 MiB reached 1.6 GiB, with the same accepted rate, and
 * 64 senders of bench:ingest were not slower (bench/README.md, bench:overload). The connection's is
 * where grpc-go's BDP estimator tops out, so one connection's many streams do not wait on each other.
 * grpc-js has no option for them, so bindGrpc sets them on its HTTP/2 server options and sessions.
 */
export const GRPC_STREAM_WINDOW = 64 << 10;
export const GRPC_CONNECTION_WINDOW = 16 << 20;

interface GrpcServerInternals {
  commonServerOptions?: ServerOptions;
  http2Servers?: Map<Http2Server, unknown>;
}

/** A status to answer, Retry-After in the metadata when there is one. */
function grpcStatus(code: number, details: string, retryAfter: string | number | undefined): grpc.StatusObject {
  const metadata = new grpc.Metadata();
  if (retryAfter !== undefined) metadata.set('retry-after', String(retryAfter));
  return { code, details, metadata };
}

/** The status a refusal or failure of ours answers. */
const statusOf = (e: ApiError): grpc.StatusObject => grpcStatus(grpcCode(e), e.message, e.retryAfter);

/** Answers a stream grpc-js has not seen with a trailers-only status, then resets it with NO_ERROR so the client stops sending. */
function answerAtStream(stream: ServerHttp2Stream, e: ApiError): void {
  stream.once('error', () => {}); // a client gone before the answer: nothing to tell it
  if (stream.destroyed) return;
  const status = statusOf(e); // trailers-only: the status and its metadata in the headers
  stream.respond(
    {
      [h2.HTTP2_HEADER_STATUS]: 200,
      [h2.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc+proto',
      'grpc-status': String(status.code),
      'grpc-message': encodeURI(status.details),
      ...status.metadata.toHttp2Headers(),
    },
    { endStream: true },
  );
  stream.close(h2.NGHTTP2_NO_ERROR);
  stream.resume(); // what the client pushed before the reset is dropped as it comes, not buffered
}

/** The gRPC message prefix: a compressed flag byte, then the message's length (4 bytes, big-endian). */
const PREFIX_BYTES = 5;

/**
 * Reads the stream into `into` until it is full, then leaves it, and whatever came beyond it, at the
 * head of the stream, paused, for the next reader; `then(false)` when the stream ended first. A reset
 * by the client ends the reading and nothing else (the stream's close tells the rest).
 */
function readInto(stream: ServerHttp2Stream, into: Buffer, then: (full: boolean) => void): void {
  let got = 0;
  const onData = (chunk: Buffer) => {
    const take = Math.min(chunk.length, into.length - got);
    chunk.copy(into, got, 0, take);
    got += take;
    if (got < into.length) return;
    detach();
    stream.pause();
    if (take < chunk.length) stream.unshift(chunk.subarray(take));
    stream.unshift(into);
    then(true);
  };
  const onEnd = () => {
    detach();
    then(false);
  };
  const detach = () => {
    stream.off('data', onData);
    stream.off('end', onEnd);
    stream.off('close', detach);
  };
  stream.on('data', onData);
  stream.once('end', onEnd);
  stream.once('close', detach);
  stream.resume();
}

/** Calls `then` with the length the stream's message declares once its prefix has arrived, `null` when the stream ended before a whole prefix. */
function messageLength(stream: ServerHttp2Stream, then: (length: number | null) => void): void {
  const prefix = Buffer.alloc(PREFIX_BYTES);
  readInto(stream, prefix, (full) => then(full ? prefix.readUInt32BE(1) : null));
}

/**
 * Reads an admitted export's message, as it arrives, into one buffer of the length its prefix
 * declared, and leaves it whole for grpc-js; `then(false)` when the stream ended first. grpc-js would
 * keep the HTTP/2 chunks (16 KiB each, from glibc's main heap) until the message is complete and
 * then join them: at the peak of bench:overload's flood of 2.6 MB exports glibc's main heap held
 * 160-220 MiB, against 40-50 for OTLP/HTTP, whose receiver copies a body into one buffer of its
 * declared length (api/http.ts); gathered, 94-102 MiB. A buffer this large is mapped on its own and
 * given back whole when freed; the copy costs ~0.3 ms a 2.6 MB export.
 */
function gatherMessage(stream: ServerHttp2Stream, length: number, then: (whole: boolean) => void): void {
  readInto(stream, Buffer.allocUnsafeSlow(PREFIX_BYTES + length), then); // not zeroed: handed on only once every byte is written
}

/**
 * Decides an export before grpc-js makes a call of it, by the length its message declares, as
 * OTLP/HTTP decides by Content-Length: the disk, the bytes in flight and the acknowledgement wait
 * (admitInstance). Refused: a trailers-only status, then RST_STREAM (NO_ERROR) asks the client to
 * stop sending the body (RFC 9113 §8.1); what it has pushed meanwhile is at most the stream's window.
 * Admitted: the export counts in flight from now, its transfer included, until its stream closes
 * (answered, or abandoned by the client), and its call then admits it for its tenant only.
 * Deciding at the headers instead had to guess the size (as large as recent exports): a flood of
 * exports four times larger than the steady load's was let through four times over, and waited
 * far past the bound (bench/README.md, bench:overload). Waiting for grpc-js to read the whole message would cost each refused one its receipt.
 * With several instances an export may be forwarded to its tenant's owner, whose admission decides:
 * it goes to grpc-js at once, and the refusal waits for the message.
 */
export function admitAtMessage(ctx: IngestContext): (stream: ServerHttp2Stream, handOver: () => void) => void {
  return (stream, handOver) => {
    if (ctx.gate.forwarder) return handOver();
    messageLength(stream, (length) => {
      if (length === null) return answerAtStream(stream, new ApiError('BAD_REQUEST', 'the request ended before its gRPC message', 'send one length-prefixed message'));
      if (length > ctx.maxBodyBytes) return handOver(); // grpc-js refuses it by its prefix (RESOURCE_EXHAUSTED)
      let admitted: Admitted;
      try {
        admitted = admitInstance(ctx, length);
      } catch (err) {
        // Its turn in the refusals' pace (refusal-pace.ts); the stream stays paused meanwhile.
        return ctx.pace.hold(() => answerAtStream(stream, toApiError(err)));
      }
      stream.once('end', () => admitted.arrived());
      stream.once('close', () => admitted.release());
      gatherMessage(stream, length, (whole) => (whole ? handOver() : answerAtStream(stream, new ApiError('BAD_REQUEST', 'the request ended before its whole gRPC message', 'send the length-prefixed message whole'))));
    });
  };
}

export function createOtlpGrpcServer(ctx: IngestContext): grpc.Server {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': ctx.maxBodyBytes,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
    'grpc.enable_channelz': 0, // per-call bookkeeping nothing here reads
  });
  for (const [signal, path] of Object.entries(SERVICES) as [Signal | 'profiles', string][]) {
    const def: grpc.ServiceDefinition = {
      Export: { path, requestStream: false, responseStream: false, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw },
    };
    const impl: grpc.UntypedServiceImplementation = {
      Export(call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) {
        let admitted: Admitted | undefined;
        Promise.resolve()
          .then(async () => {
            // The same gate as every HTTP route: the `authorization` metadata's key decides the tenant.
            const md = call.metadata.get('authorization')[0];
            const auth = typeof md === 'string' ? md : undefined;
            const tenant = ctx.gate.admit('tenant', auth);
            const where = await ctx.gate.place(tenant!, false);
            if (where.kind === 'unavailable') throw unavailableError(where);
            if (where.kind === 'remote') return { forwarded: await ctx.gate.forwarder!.grpcExport(where, HTTP_PATHS[signal], auth, call.request, tenant!) };
            // The instance admitted the export at its message's prefix (admitAtMessage) unless a forwarder may send it elsewhere.
            if (ctx.gate.forwarder) {
              admitted = admitIngest(ctx, tenant, call.request.length);
              admitted.arrived();
            } else ctx.gate.admitIngest(tenant!, call.request.length);
            return ctx.gate.use(tenant!, (rt) =>
              signal === 'profiles'
                ? ingest(ctx, rt, { kind: 'profile', source: 'otlp', body: call.request, contentType: 'application/x-protobuf', query: {} })
                : ingest(ctx, rt, { kind: 'otlp', signal, encoding: 'protobuf', gzip: false, body: call.request }),
            );
          })
          .then(
            (r) => callback(null, 'forwarded' in r ? r.forwarded : Buffer.from(encodeExportResponse(signal, r.rejected, r.errorMessage))),
            (err) => {
              if (err instanceof ForwardedGrpcError) {
                return callback(grpcStatus(err.code, err.message, err.retryAfter)); // the owner's answer, as it gave it
              }
              callback(statusOf(toApiError(err)));
            },
          )
          .finally(() => admitted?.release());
      },
    };
    server.addService(def, impl);
  }
  return server;
}

/**
 * Binds the server, with the receive windows above (the stream's in the settings its HTTP/2 server
 * is made with, the connection's on each session) and `gate` deciding each stream before grpc-js's
 * own handler sees it (`handOver` gives it to grpc-js).
 */
export async function bindGrpc(server: grpc.Server, host: string, port: number, gate: (stream: ServerHttp2Stream, handOver: () => void) => void): Promise<number> {
  const internals = server as unknown as GrpcServerInternals;
  const options = internals.commonServerOptions;
  if (options) options.settings = { ...options.settings, initialWindowSize: GRPC_STREAM_WINDOW };
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  for (const h2server of internals.http2Servers?.keys() ?? []) {
    h2server.on('session', (session) => session.setLocalWindowSize(GRPC_CONNECTION_WINDOW));
    const grpcHandlers = h2server.listeners('stream') as ((...args: unknown[]) => void)[];
    if (!grpcHandlers.length) throw new Error('grpc-js registered no HTTP/2 stream handler: its internals changed, bindGrpc needs updating');
    h2server.removeAllListeners('stream');
    h2server.on('stream', (stream: ServerHttp2Stream, ...rest: unknown[]) => {
      gate(stream, () => {
        for (const handle of grpcHandlers) handle.call(h2server, stream, ...rest);
      });
    });
  }
  return bound;
}
