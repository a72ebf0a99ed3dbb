// Real OpenTelemetry JS SDK exporters against the real server: spans over gRPC, protobuf and JSON,
// logs and metrics over HTTP and gRPC; everything sent is read back with the right values.
import { describe, expect, it } from 'vitest';
import { context, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { LoggerProvider, BatchLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { OTLPLogExporter as HttpLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { OTLPMetricExporter as GrpcMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPMetricExporter as HttpMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { useTestServer } from '../helpers/server.js';
import { queryStopped } from '../helpers/db.js';

const srv = useTestServer();

async function sendTrace(exporter: SpanExporter, service: string): Promise<{ traceId: string; rootId: string; childId: string }> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'service.version': '1.4.2', 'k8s.pod.name': `${service}-pod-1` }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('itest', '0.1.0');
  const root = tracer.startSpan('GET /checkout', {
    kind: SpanKind.SERVER,
    attributes: { 'http.request.method': 'GET', 'http.route': '/checkout', 'http.response.status_code': 500 },
  });
  const child = tracer.startSpan('SELECT orders', { kind: SpanKind.CLIENT, attributes: { 'db.system': 'postgresql' } }, trace.setSpan(context.active(), root));
  child.addEvent('exception', { 'exception.type': 'TimeoutError', 'exception.message': 'took too long' });
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'db timeout' });
  child.end();
  root.setStatus({ code: SpanStatusCode.ERROR });
  root.end();
  await provider.forceFlush();
  await provider.shutdown();
  return { traceId: root.spanContext().traceId, rootId: root.spanContext().spanId, childId: child.spanContext().spanId };
}

describe('OpenTelemetry SDK exporters', () => {
  const cases: [string, () => SpanExporter][] = [
    ['grpc', () => new GrpcTraceExporter({ url: `http://${srv.otlpGrpc}` })],
    ['grpc+gzip', () => new GrpcTraceExporter({ url: `http://${srv.otlpGrpc}`, compression: 'gzip' as never })],
    ['http/protobuf', () => new ProtoTraceExporter({ url: `${srv.otlpHttp}/v1/traces` })],
    ['http/json', () => new JsonTraceExporter({ url: `${srv.otlpHttp}/v1/traces` })],
    ['http/json+gzip', () => new JsonTraceExporter({ url: `${srv.otlpHttp}/v1/traces`, compression: 'gzip' as never })],
  ];
  for (const [name, make] of cases) {
    it(`spans over ${name} come back as a whole trace`, async () => {
      const service = `svc-${name.replace(/[^a-z]/g, '')}`;
      const ids = await sendTrace(make(), service);
      const res = await fetch(`${srv.api}/v1/traces/${ids.traceId}`);
      expect(res.status).toBe(200);
      const t = (await res.json()) as Record<string, any>;
      expect(t['trace_id']).toBe(ids.traceId);
      expect(t['span_count']).toBe(2);
      expect(t['error_count']).toBe(2);
      expect(t['root_span'].span_id).toBe(ids.rootId);
      expect(t['services']).toEqual([service]);
      const child = t['spans'].find((s: any) => s.span_id === ids.childId);
      expect(child).toMatchObject({ parent_span_id: ids.rootId, span_name: 'SELECT orders', span_kind: 3, status_code: 2, scope_name: 'itest', scope_version: '0.1.0' });
      expect(JSON.parse(child.span_attributes)).toEqual({ 'db.system': 'postgresql' });
      expect(JSON.parse(child.events_json)[0].name).toBe('exception');
      expect(JSON.parse(child.resource_attributes)['service.version']).toBe('1.4.2');
      expect(t['critical_path'][0]).toBe(ids.rootId);
    });
  }

  // A message over 4 KiB moves to the decode worker rather than being copied (receivers/ingest.ts),
  // over gRPC as a view past its 5-byte frame header: every byte of it must arrive.
  for (const [name, make] of cases.filter(([n]) => n.startsWith('grpc'))) {
    it(`a 300-span export over ${name} arrives whole`, async () => {
      const service = `svc-big-${name.replace(/[^a-z]/g, '')}`;
      const provider = new BasicTracerProvider({
        resource: resourceFromAttributes({ 'service.name': service }),
        spanProcessors: [new BatchSpanProcessor(make(), { maxExportBatchSize: 512, maxQueueSize: 1024, scheduledDelayMillis: 60_000 })],
      });
      const tracer = provider.getTracer('itest');
      const root = tracer.startSpan('GET /bulk', { kind: SpanKind.SERVER });
      const ctx = trace.setSpan(context.active(), root);
      for (let i = 0; i < 299; i++) tracer.startSpan(`step ${i}`, { attributes: { 'step.index': i, 'step.note': `note ${i} ${'x'.repeat(i % 40)}` } }, ctx).end();
      root.end();
      await provider.forceFlush();
      await provider.shutdown();
      const t = (await (await fetch(`${srv.api}/v1/traces/${root.spanContext().traceId}`)).json()) as Record<string, any>;
      expect(t['span_count']).toBe(300);
      const last = t['spans'].find((s: any) => s.span_name === 'step 298');
      expect(JSON.parse(last.span_attributes)).toEqual({ 'step.index': 298, 'step.note': `note 298 ${'x'.repeat(298 % 40)}` });
    });
  }

  it('lists every reporting service with first and last seen', async () => {
    const res = await fetch(`${srv.api}/v1/services`);
    const body = (await res.json()) as { services: any[] };
    const names = body.services.map((s) => s.service_name);
    expect(names).toEqual(expect.arrayContaining(['svc-grpc', 'svc-httpprotobuf', 'svc-httpjson']));
    for (const s of body.services) {
      expect(String(s.first_seen_ts)).toMatch(/^\d{16}$/);
      expect(s.last_seen_ts).toBeGreaterThanOrEqual(s.first_seen_ts);
      expect(new Date(s.first_seen).getTime()).toBe(Math.floor(s.first_seen_ts / 1000));
    }
  });

  it('logs and metrics over HTTP and gRPC are stored with their values', async () => {
    for (const [service, exporter] of [
      ['logs-http', new HttpLogExporter({ url: `${srv.otlpHttp}/v1/logs` })],
      ['logs-grpc', new GrpcLogExporter({ url: `http://${srv.otlpGrpc}` })],
    ] as const) {
      const lp = new LoggerProvider({ resource: resourceFromAttributes({ 'service.name': service }), processors: [new BatchLogRecordProcessor({ exporter })] });
      const logger = lp.getLogger('itest');
      logger.emit({ severityNumber: SeverityNumber.ERROR, severityText: 'ERROR', body: 'payment 42 failed: card declined', attributes: { 'order.id': 42 } });
      logger.emit({ severityNumber: SeverityNumber.INFO, severityText: 'INFO', body: 'payment 43 ok' });
      await lp.forceFlush();
      await lp.shutdown();
    }
    for (const [service, exporter] of [
      ['metrics-http', new HttpMetricExporter({ url: `${srv.otlpHttp}/v1/metrics` })],
      ['metrics-grpc', new GrpcMetricExporter({ url: `http://${srv.otlpGrpc}` })],
    ] as const) {
      const mp = new MeterProvider({
        resource: resourceFromAttributes({ 'service.name': service }),
        readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })],
      });
      const meter = mp.getMeter('itest');
      meter.createCounter('requests').add(7, { route: '/a' });
      const h = meter.createHistogram('latency', { unit: 'ms' });
      for (const v of [3, 30, 300]) h.record(v);
      meter.createGauge('queue.depth').record(12);
      await mp.forceFlush();
      await mp.shutdown();
    }
    expect(await srv.stop()).toBe(0);
    const logs = await queryStopped(srv.dataDir, `SELECT service_name, body, severity_text, is_error, log_attributes FROM svc_logs ORDER BY service_name, body`);
    expect(logs.map((r) => [r['service_name'], r['body'], r['is_error']])).toEqual([
      ['logs-grpc', 'payment 42 failed: card declined', true],
      ['logs-grpc', 'payment 43 ok', false],
      ['logs-http', 'payment 42 failed: card declined', true],
      ['logs-http', 'payment 43 ok', false],
    ]);
    expect(JSON.parse(String(logs[0]!['log_attributes']))).toEqual({ 'order.id': 42 });
    for (const service of ['metrics-http', 'metrics-grpc']) {
      // Cumulative temporality: forceFlush and shutdown each export the same running total.
      const sum = await queryStopped(srv.dataDir, `SELECT DISTINCT value, is_monotonic, aggregation_temporality, attributes FROM svc_metrics_sum WHERE service_name = '${service}' AND metric_name = 'requests'`);
      expect(sum).toHaveLength(1);
      expect(sum[0]).toMatchObject({ value: 7, is_monotonic: true, aggregation_temporality: 2 });
      expect(JSON.parse(String(sum[0]!['attributes']))).toEqual({ route: '/a' });
      const hist = await queryStopped(srv.dataDir, `SELECT DISTINCT count, sum, min, max, metric_unit FROM svc_metrics_histogram WHERE service_name = '${service}'`);
      expect(hist[0]).toMatchObject({ count: 3n, sum: 333, min: 3, max: 300, metric_unit: 'ms' });
      const gauge = await queryStopped(srv.dataDir, `SELECT DISTINCT value FROM svc_metrics_gauge WHERE service_name = '${service}'`);
      expect(gauge.map((g) => g['value'])).toEqual([12]);
    }
  });
});
