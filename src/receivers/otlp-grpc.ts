// OTLP/gRPC on :4317: the collector services' Export methods. Messages stay raw bytes here
// (identity (de)serialisers) and are decoded in the worker pool like OTLP/HTTP bodies; grpc-js
// handles gzip message compression and enforces the size limit.
import * as grpc from '@grpc/grpc-js';
import { constants as h2, type Http2Server, type ServerHttp2Stream, type ServerOptions } from 'node:http2';
import { grpcCode, toApiError, type ApiError } from '../core/errors.js';
import type { Signal } from '../pipeline/tasks.js';
import { admitIngest, ingest, type IngestContext } from './ingest.js';
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
 * HTTP/2 receive windows where grpc-go's BDP estimator tops out: with Node's 64 KiB a 350 KB export
 * takes a dozen window round trips (+25-35% spans/s at 64 senders). grpc-js has no option for them,
 * so bindGrpc sets them on its HTTP/2 server options and sessions.
 */
export const GRPC_STREAM_WINDOW = 1 << 20;
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

/**
 * Decides an export at its stream's headers, before grpc-js makes a call of it; true lets it through.
 * Refused when the instance would refuse even the smallest export (disk, bytes in flight) or one as
 * large as recent ones (the acknowledgement wait): a trailers-only status, then RST_STREAM (NO_ERROR)
 * asks the client to stop sending the body (RFC 9113 §8.1). Waiting for grpc-js to read the message
 * cost each refused 350 KB its receipt on the event loop under 400 senders that ignore refusals, and
 * the accepted exports waited behind them; answering here, before grpc-js builds a call (metadata,
 * deadline, interceptors), is cheaper again.
 * An export let through holds room as large as recent ones until its message has arrived (the
 * stream's end: the service then admits it by its size) or the stream closes: the streams let
 * through together are bounded by the wait they would add, not only those already admitted.
 * With several instances an export may be forwarded to its tenant's owner, whose admission decides:
 * there the refusal waits for the message.
 */
export function refuseAtHeaders(ctx: IngestContext): (stream: ServerHttp2Stream) => boolean {
  return (stream) => {
    if (ctx.gate.forwarder) return true;
    let refused = ctx.admission.refusesAny();
    if (!refused) {
      try {
        const letGo = ctx.latency.hold();
        stream.once('end', letGo);
        stream.once('close', letGo);
        return true;
      } catch (err) {
        refused = toApiError(err);
      }
    }
    stream.once('error', () => {}); // a client gone before the answer: nothing to tell it
    if (stream.destroyed) return false;
    const status = statusOf(refused); // trailers-only: the status and its metadata in the headers
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
    return false;
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
        let release: (() => void) | undefined;
        Promise.resolve()
          .then(async () => {
            // The same gate as every HTTP route: the `authorization` metadata's key decides the tenant.
            const md = call.metadata.get('authorization')[0];
            const auth = typeof md === 'string' ? md : undefined;
            const tenant = ctx.gate.admit('tenant', auth);
            const where = await ctx.gate.place(tenant!, false);
            if (where.kind === 'unavailable') throw unavailableError(where);
            if (where.kind === 'remote') return { forwarded: await ctx.gate.forwarder!.grpcExport(where, HTTP_PATHS[signal], auth, call.request, tenant!) };
            release = admitIngest(ctx, tenant, call.request.length);
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
          .finally(() => release?.());
      },
    };
    server.addService(def, impl);
  }
  return server;
}

/**
 * Binds the server, with the receive windows above (the stream's in the settings its HTTP/2 server
 * is made with, the connection's on each session) and `atHeaders` deciding each stream before
 * grpc-js's own handler sees it.
 */
export async function bindGrpc(server: grpc.Server, host: string, port: number, atHeaders: (stream: ServerHttp2Stream) => boolean): Promise<number> {
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
      if (atHeaders(stream)) for (const handle of grpcHandlers) handle.call(h2server, stream, ...rest);
    });
  }
  return bound;
}
