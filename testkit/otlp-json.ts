// OTLP/JSON request bodies built by hand (lowerCamelCase, hex ids, string int64s), as a collector sends them.
import { randomBytes } from 'node:crypto';
import { attr, type AttrValue } from './spans.js';

export type JsonAttr = AttrValue;
const attrs = (o: Record<string, JsonAttr>) => Object.entries(o).map(([key, v]) => attr(key, v));

export interface JsonSpan {
  name: string;
  kind?: number;
  startUs: number;
  durationUs: number;
  error?: boolean;
  attributes?: Record<string, JsonAttr>;
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
}

export function tracesJson(service: string, spans: JsonSpan[], resource: Record<string, JsonAttr> = {}): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: attrs({ 'service.name': service, ...resource }) },
        scopeSpans: [
          {
            scope: { name: 'test' },
            spans: spans.map((s) => ({
              traceId: s.traceId ?? randomBytes(16).toString('hex'),
              spanId: s.spanId ?? randomBytes(8).toString('hex'),
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              name: s.name,
              kind: s.kind ?? 2,
              startTimeUnixNano: String(BigInt(s.startUs) * 1000n),
              endTimeUnixNano: String(BigInt(s.startUs + s.durationUs) * 1000n),
              attributes: attrs(s.attributes ?? {}),
              status: s.error ? { code: 2, message: 'failed' } : {},
            })),
          },
        ],
      },
    ],
  });
}

export interface JsonLog {
  timeUs: number;
  body: string;
  severity?: number;
  severityText?: string;
  attributes?: Record<string, JsonAttr>;
}

export function logsJson(service: string, logs: JsonLog[], resource: Record<string, JsonAttr> = {}): string {
  return JSON.stringify({
    resourceLogs: [
      {
        resource: { attributes: attrs({ 'service.name': service, ...resource }) },
        scopeLogs: [
          {
            scope: { name: 'test' },
            logRecords: logs.map((l) => ({
              timeUnixNano: String(BigInt(l.timeUs) * 1000n),
              severityNumber: l.severity ?? 9,
              severityText: l.severityText ?? 'INFO',
              body: { stringValue: l.body },
              attributes: attrs(l.attributes ?? {}),
            })),
          },
        ],
      },
    ],
  });
}

export interface JsonGaugePoint {
  timeUs: number;
  value: number;
  attributes?: Record<string, JsonAttr>;
}

/** One gauge metric's points, as a collector sends them in OTLP/JSON. */
export function gaugeJson(service: string, metric: string, points: JsonGaugePoint[], resource: Record<string, JsonAttr> = {}): string {
  return JSON.stringify({
    resourceMetrics: [
      {
        resource: { attributes: attrs({ 'service.name': service, ...resource }) },
        scopeMetrics: [
          {
            scope: { name: 'test' },
            metrics: [
              {
                name: metric,
                unit: '1',
                gauge: { dataPoints: points.map((p) => ({ timeUnixNano: String(BigInt(p.timeUs) * 1000n), asDouble: p.value, attributes: attrs(p.attributes ?? {}) })) },
              },
            ],
          },
        ],
      },
    ],
  });
}
