// Telemetry made by the real OpenTelemetry JS SDK, sent live to a server and recorded at the same
// time as the Collector file exporter writes it (test/helpers/recording.ts): three services calling
// each other, with errors, events, links, logs tied to spans, and metrics of every kind.
import { context, trace, SpanKind, SpanStatusCode, type HrTime } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { LoggerProvider, BatchLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { recordingLogExporter, recordingMetricExporter, recordingSpanExporter } from '../helpers/recording.js';
import { rng } from '../../testkit/rng.js';

export interface Recorded {
  spans: number;
  logs: number;
  traceIds: string[];
  /** Earliest and latest span start, µs. */
  fromUs: number;
  toUs: number;
}

/** A time in µs as the SDK's HrTime (keeps the microseconds). */
const hr = (us: number): HrTime => [Math.floor(us / 1e6), (us % 1e6) * 1000];

/**
 * Records `traces` traces (and their logs and some metrics) starting at `startUs`, one every
 * `everyUs`, to `file`; live to `otlpHttp` too when given. `spanExporter` replaces the span path.
 */
export async function recordSdkTelemetry(opts: { file: string; otlpHttp?: string; startUs: number; traces: number; everyUs: number; seed?: number; spanExporter?: SpanExporter }): Promise<Recorded> {
  const { file, otlpHttp } = opts;
  const r = rng(opts.seed ?? 11);
  const out: Recorded = { spans: 0, logs: 0, traceIds: [], fromUs: Infinity, toUs: 0 };
  const provider = (service: string) => {
    const resource = resourceFromAttributes({ 'service.name': service, 'service.version': '2.1.0', 'k8s.pod.name': `${service}-7d9f-abc`, 'deployment.environment.name': 'test' });
    const spanLive = otlpHttp ? new OTLPTraceExporter({ url: `${otlpHttp}/v1/traces` }) : undefined;
    const tp = new BasicTracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor(opts.spanExporter ?? recordingSpanExporter(file, spanLive), { maxExportBatchSize: 64, maxQueueSize: 100_000, scheduledDelayMillis: 3_600_000 })],
    });
    const logLive = otlpHttp ? new OTLPLogExporter({ url: `${otlpHttp}/v1/logs` }) : undefined;
    const lp = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter: recordingLogExporter(file, logLive), maxExportBatchSize: 50, maxQueueSize: 100_000, scheduledDelayMillis: 3_600_000 } as never)] });
    return { tp, lp, tracer: tp.getTracer('shop', '1.0.0'), logger: lp.getLogger('shop', '1.0.0') };
  };
  const front = provider('frontend');
  const checkout = provider('checkout');
  const payments = provider('payments');
  for (let i = 0; i < opts.traces; i++) {
    const t0 = opts.startUs + i * opts.everyUs + Math.floor(r() * 1000);
    const failing = r() < 0.1;
    const root = front.tracer.startSpan('GET /checkout', { kind: SpanKind.SERVER, startTime: hr(t0), attributes: { 'http.request.method': 'GET', 'http.route': '/checkout', 'user.id': `u${Math.floor(r() * 50)}` } });
    const rootCtx = trace.setSpan(context.active(), root);
    const call = front.tracer.startSpan('POST', { kind: SpanKind.CLIENT, startTime: hr(t0 + 200), attributes: { 'http.request.method': 'POST', 'server.address': 'checkout', 'peer.service': 'checkout' } }, rootCtx);
    const callCtx = trace.setSpan(context.active(), call);
    const server = checkout.tracer.startSpan('POST /order', { kind: SpanKind.SERVER, startTime: hr(t0 + 400), attributes: { 'http.request.method': 'POST', 'http.route': '/order' }, links: i > 0 ? [{ context: root.spanContext(), attributes: { 'link.kind': 'same-trace' } }] : [] }, callCtx);
    const serverCtx = trace.setSpan(context.active(), server);
    const db = checkout.tracer.startSpan('SELECT orders', { kind: SpanKind.CLIENT, startTime: hr(t0 + 600), attributes: { 'db.system': 'postgresql', 'db.statement': 'SELECT * FROM orders WHERE id = $1' } }, serverCtx);
    db.end(hr(t0 + 600 + 2000 + Math.floor(r() * 3000)));
    const pay = payments.tracer.startSpan('charge', { kind: SpanKind.SERVER, startTime: hr(t0 + 5000), attributes: { 'rpc.system': 'grpc', 'rpc.service': 'Payments', 'rpc.method': 'Charge', 'amount.cents': Math.floor(r() * 10_000) } }, serverCtx);
    if (failing) {
      pay.addEvent('exception', { 'exception.type': 'CardDeclined', 'exception.message': `card ${i} declined` }, hr(t0 + 9000));
      pay.setStatus({ code: SpanStatusCode.ERROR, message: 'declined' });
    } else pay.addEvent('charged', { 'charge.id': `ch_${i}` }, hr(t0 + 8000));
    pay.end(hr(t0 + 9500 + Math.floor(r() * 2000)));
    payments.logger.emit({
      timestamp: hr(t0 + 9100),
      observedTimestamp: hr(t0 + 9200),
      severityNumber: failing ? SeverityNumber.ERROR : SeverityNumber.INFO,
      severityText: failing ? 'ERROR' : 'INFO',
      body: failing ? `charge ${i} for user u${i % 50} failed: card declined` : `charge ${i} for user u${i % 50} ok in ${Math.floor(r() * 90) + 10}ms`,
      attributes: { 'order.id': i, retry: false },
      context: trace.setSpan(context.active(), pay),
    });
    checkout.logger.emit({ timestamp: hr(t0 + 700), severityNumber: SeverityNumber.INFO, severityText: 'INFO', body: `order ${i} created with ${1 + (i % 4)} items`, context: serverCtx });
    server.end(hr(t0 + 12_000 + Math.floor(r() * 4000)));
    call.end(hr(t0 + 16_500));
    if (failing) root.setStatus({ code: SpanStatusCode.ERROR });
    root.end(hr(t0 + 17_000 + Math.floor(r() * 3000)));
    out.spans += 5;
    out.logs += 2;
    out.traceIds.push(root.spanContext().traceId);
    out.fromUs = Math.min(out.fromUs, t0);
    out.toUs = Math.max(out.toUs, t0);
  }
  for (const p of [front, checkout, payments]) {
    await p.tp.forceFlush();
    await p.tp.shutdown();
    await p.lp.forceFlush();
    await p.lp.shutdown();
  }
  if (otlpHttp) {
    const mp = new MeterProvider({
      resource: resourceFromAttributes({ 'service.name': 'checkout' }),
      readers: [new PeriodicExportingMetricReader({ exporter: recordingMetricExporter(file, new OTLPMetricExporter({ url: `${otlpHttp}/v1/metrics` })), exportIntervalMillis: 3_600_000 })],
    });
    const meter = mp.getMeter('shop');
    const requests = meter.createCounter('http.server.requests');
    const latency = meter.createHistogram('http.server.duration', { unit: 'ms' });
    const depth = meter.createGauge('queue.depth');
    const inflight = meter.createUpDownCounter('requests.inflight');
    for (let round = 0; round < 2; round++) {
      for (const route of ['/checkout', '/order', '/cart']) {
        requests.add(1 + round, { route });
        latency.record(10 + round * 5, { route });
      }
      depth.record(3 + round);
      inflight.add(round ? -1 : 2);
      await mp.forceFlush();
    }
    await mp.shutdown();
  }
  return out;
}
