// A recording as the OpenTelemetry Collector's file exporter writes it, made by the real JS SDK: each
// export the SDK makes goes to its live exporter and, serialized by the SDK's own OTLP/JSON
// serializer (@opentelemetry/otlp-transformer), as one line to a file. The same batches reach the
// server live and the file, so a replay of the file can be compared with the live store.
import { appendFileSync } from 'node:fs';
import { JsonLogsSerializer, JsonMetricsSerializer, JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { LogRecordExporter, ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';

const line = (path: string, bytes: Uint8Array) => appendFileSync(path, Buffer.concat([bytes, Buffer.from('\n')]));

type Done = Parameters<SpanExporter['export']>[1];
/** ExportResultCode.SUCCESS (0) of @opentelemetry/core. */
const ok = (cb: Done) => cb({ code: 0 });

/** Spans: a line of OTLP/JSON per export to `path`, then the live exporter (if any). */
export function recordingSpanExporter(path: string, live?: SpanExporter): SpanExporter {
  return {
    export(spans: ReadableSpan[], cb) {
      line(path, JsonTraceSerializer.serializeRequest(spans)!);
      if (live) live.export(spans, cb);
      else ok(cb);
    },
    shutdown: () => live?.shutdown() ?? Promise.resolve(),
    forceFlush: () => live?.forceFlush?.() ?? Promise.resolve(),
  };
}

export function recordingLogExporter(path: string, live?: LogRecordExporter): LogRecordExporter {
  return {
    export(logs: ReadableLogRecord[], cb) {
      line(path, JsonLogsSerializer.serializeRequest(logs)!);
      if (live) live.export(logs, cb);
      else ok(cb);
    },
    shutdown: () => live?.shutdown() ?? Promise.resolve(),
    forceFlush: () => live?.forceFlush() ?? Promise.resolve(),
  };
}

export function recordingMetricExporter(path: string, live: PushMetricExporter): PushMetricExporter {
  return {
    export(metrics: ResourceMetrics, cb) {
      line(path, JsonMetricsSerializer.serializeRequest(metrics)!);
      live.export(metrics, cb);
    },
    shutdown: () => live.shutdown(),
    forceFlush: () => live.forceFlush(),
    ...(live.selectAggregationTemporality ? { selectAggregationTemporality: (t) => live.selectAggregationTemporality!(t) } : {}),
    ...(live.selectAggregation ? { selectAggregation: (t) => live.selectAggregation!(t) } : {}),
  };
}

/** The same spans as OTLP protobuf export requests (the SDK's own protobuf serializer). */
export function protobufSpans(spans: ReadableSpan[]): Uint8Array {
  return ProtobufTraceSerializer.serializeRequest(spans)!;
}

/** An exporter that keeps the spans it is given (to serialize them afterwards in other framings). */
export function collectingSpanExporter(into: ReadableSpan[][]): SpanExporter {
  return {
    export(spans, cb) {
      into.push(spans);
      ok(cb);
    },
    shutdown: () => Promise.resolve(),
  };
}
