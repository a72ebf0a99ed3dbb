// OTLP/gRPC on :4317: the collector services' Export methods. Messages stay raw bytes here
// (identity (de)serialisers) and are decoded in the worker pool like OTLP/HTTP bodies; grpc-js
// handles gzip message compression and enforces the size limit.
import * as grpc from '@grpc/grpc-js';
import { toApiError } from '../api/errors.js';
import type { Signal } from '../pipeline/tasks.js';
import { ingest, type IngestContext } from './ingest.js';
import { grpcCode } from './outcome.js';
import { encodeExportResponse } from './otlp/index.js';

const SERVICES: Record<Signal | 'profiles', string> = {
  traces: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
  logs: '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
  metrics: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
  profiles: '/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export',
};

const raw = (b: Buffer) => b;

export function createOtlpGrpcServer(ctx: IngestContext): grpc.Server {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': ctx.maxBodyBytes,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
  });
  for (const [signal, path] of Object.entries(SERVICES) as [Signal | 'profiles', string][]) {
    const def: grpc.ServiceDefinition = {
      Export: { path, requestStream: false, responseStream: false, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw },
    };
    const impl: grpc.UntypedServiceImplementation = {
      Export(call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) {
        let release: (() => void) | undefined;
        Promise.resolve()
          .then(() => {
            release = ctx.admission.admit(call.request.length);
            return signal === 'profiles'
              ? ingest(ctx, { kind: 'profile', source: 'otlp', body: call.request, contentType: 'application/x-protobuf', query: {} })
              : ingest(ctx, { kind: 'otlp', signal, encoding: 'protobuf', gzip: false, body: call.request });
          })
          .then(
            (r) => callback(null, Buffer.from(encodeExportResponse(signal, r.rejected, r.errorMessage))),
            (err) => {
              const e = toApiError(err);
              const metadata = new grpc.Metadata();
              if (e.retryAfter !== undefined) metadata.set('retry-after', String(e.retryAfter));
              callback({ code: grpcCode(e), details: e.message, metadata });
            },
          )
          .finally(() => release?.());
      },
    };
    server.addService(def, impl);
  }
  return server;
}

export function bindGrpc(server: grpc.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
}
