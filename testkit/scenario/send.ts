// Sends a generated scenario to a running server the way agents' collectors would: OTLP/HTTP
// protobuf (traces, logs, metrics) and raw pprof on the profile ingest path, 5-minute bucket by
// bucket in time order, a few requests in flight.
import { gzipSync } from 'node:zlib';
import { Function as PFunction, Line, Location, Profile, Sample, StringTable, ValueType } from 'pprof-format';
import { anyValue, protoRoot } from '../spans.js';
import { poster } from '../post.js';
import type { AttrVal, GenLog, GenMetric, GenProfile, GenSpan, ScenarioData } from './traffic.js';
import { BUCKET_US } from './faults.js';

const kvs = (o: Record<string, AttrVal>) => Object.entries(o).map(([key, v]) => ({ key, value: anyValue(v) }));
const nanos = (us: number) => String(BigInt(Math.round(us)) * 1000n);
const bytes = (hex: string) => Buffer.from(hex, 'hex');

function groupBy<T>(items: T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of items) {
    const k = key(x);
    const a = m.get(k);
    if (a) a.push(x);
    else m.set(k, [x]);
  }
  return m;
}

const SCOPE = { name: 'scenario-generator', version: '1' };

export function encodeSpans(resources: ScenarioData['resources'], spans: GenSpan[]): Uint8Array {
  const T = protoRoot().lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  const resourceSpans = [...groupBy(spans, (s) => s.resource)].map(([res, list]) => ({
    resource: { attributes: kvs(resources[res]!) },
    scopeSpans: [
      {
        scope: SCOPE,
        spans: list.map((s) => ({
          traceId: bytes(s.traceId),
          spanId: bytes(s.spanId),
          parentSpanId: s.parentSpanId ? bytes(s.parentSpanId) : new Uint8Array(0),
          name: s.name,
          kind: s.kind,
          startTimeUnixNano: nanos(s.startUs),
          endTimeUnixNano: nanos(s.startUs + s.durationUs),
          attributes: kvs(s.attributes),
          events: s.events.map((e) => ({ name: e.name, timeUnixNano: nanos(e.timeUs), attributes: kvs(e.attributes) })),
          status: s.error ? { code: 2, message: s.statusMessage } : { code: 0 },
        })),
      },
    ],
  }));
  return T.encode(T.fromObject({ resourceSpans })).finish();
}

export function encodeLogs(resources: ScenarioData['resources'], logs: GenLog[]): Uint8Array {
  const T = protoRoot().lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
  const resourceLogs = [...groupBy(logs, (l) => l.resource)].map(([res, list]) => ({
    resource: { attributes: kvs(resources[res]!) },
    scopeLogs: [
      {
        scope: SCOPE,
        logRecords: list.map((l) => ({
          timeUnixNano: nanos(l.timeUs),
          observedTimeUnixNano: nanos(l.timeUs + 1_000),
          severityNumber: l.severityNumber,
          severityText: l.severityText,
          body: { stringValue: l.body },
          ...(l.traceId ? { traceId: bytes(l.traceId), spanId: bytes(l.spanId!) } : {}),
        })),
      },
    ],
  }));
  return T.encode(T.fromObject({ resourceLogs })).finish();
}

export function encodeMetrics(resources: ScenarioData['resources'], metrics: GenMetric[]): Uint8Array {
  const T = protoRoot().lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest');
  const resourceMetrics = [...groupBy(metrics, (m) => m.resource)].map(([res, list]) => ({
    resource: { attributes: kvs(resources[res]!) },
    scopeMetrics: [
      {
        scope: SCOPE,
        metrics: list.map((m) => {
          const point = { startTimeUnixNano: nanos(m.timeUs), timeUnixNano: nanos(m.timeUs + 60_000_000) };
          return m.histogram
            ? {
                name: m.name,
                unit: m.unit,
                histogram: {
                  aggregationTemporality: 1, // delta: each point covers its own minute
                  dataPoints: [{ ...point, count: String(m.histogram.count), sum: m.histogram.sum, bucketCounts: m.histogram.counts.map(String), explicitBounds: m.histogram.bounds }],
                },
              }
            : { name: m.name, unit: m.unit, gauge: { dataPoints: [{ ...point, asDouble: m.gauge ?? 0 }] } };
        }),
      },
    ],
  }));
  return T.encode(T.fromObject({ resourceMetrics })).finish();
}

/** A CPU pprof profile (samples/count and cpu/nanoseconds at 100 Hz) with one sample per stack. */
export function encodePprof(p: GenProfile): Uint8Array {
  const st = new StringTable();
  const fnIds = new Map<string, number>();
  const functions: PFunction[] = [];
  const locations: Location[] = [];
  const locOf = (name: string): number => {
    let id = fnIds.get(name);
    if (id === undefined) {
      id = fnIds.size + 1;
      fnIds.set(name, id);
      functions.push(new PFunction({ id, name: st.dedup(name), systemName: st.dedup(name), filename: st.dedup(name.split(/[.:(]/)[0] + '.src') }));
      locations.push(new Location({ id, address: 0x1000 + id * 16, line: [new Line({ functionId: id, line: 10 + id })] }));
    }
    return id;
  };
  const period = 10_000_000;
  const samples = p.samples.map(
    (s) => new Sample({ locationId: [...s.stack].reverse().map(locOf), value: [Math.max(1, Math.round(s.cpuNs / period)), s.cpuNs] }), // pprof stacks are leaf first
  );
  const profile = new Profile({
    sampleType: [new ValueType({ type: st.dedup('samples'), unit: st.dedup('count') }), new ValueType({ type: st.dedup('cpu'), unit: st.dedup('nanoseconds') })],
    sample: samples,
    location: locations,
    function: functions,
    stringTable: st,
    timeNanos: BigInt(p.startUs) * 1000n,
    durationNanos: BigInt(p.durationUs) * 1000n,
    periodType: new ValueType({ type: st.dedup('cpu'), unit: st.dedup('nanoseconds') }),
    period,
  });
  return profile.encode();
}

/** Sends of one request before a refusal (429, 503) fails the run. */
const RETRIES = 20;

/** Runs `jobs` with at most `width` in flight; rejects on the first failure. */
async function inFlight(jobs: (() => Promise<void>)[], width: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, worker));
}

export interface SendTargets {
  otlpHttp: string;
  api: string;
}

export interface SendCounts {
  spans: number;
  logs: number;
  metrics: number;
  profiles: number;
  requests: number;
}

/** Sends everything, bucket by bucket; throws when the server refuses a request. */
export async function sendScenario(srv: SendTargets, data: ScenarioData, opts: { width?: number; gzipProfiles?: boolean } = {}): Promise<SendCounts> {
  const post = {
    traces: poster(srv.otlpHttp, '/v1/traces', 'application/x-protobuf', 4),
    logs: poster(srv.otlpHttp, '/v1/logs', 'application/x-protobuf', 4),
    metrics: poster(srv.otlpHttp, '/v1/metrics', 'application/x-protobuf', 4),
  };
  const counts: SendCounts = { spans: 0, logs: 0, metrics: 0, profiles: 0, requests: 0 };
  // As an OpenTelemetry exporter does: 429 and 503 (the server's admission under a loaded machine)
  // and a reset connection (a keep-alive socket the server closed as idle while the machine was
  // slow: "socket hang up") are sent again after a pause; anything else but 200 fails the run.
  const check = async (what: string, send: () => Promise<number>) => {
    for (let attempt = 1; ; attempt++) {
      const status = await send().catch((err: NodeJS.ErrnoException) => {
        if (attempt >= RETRIES || (err.code !== 'ECONNRESET' && err.code !== 'EPIPE')) throw err;
        return -1;
      });
      counts.requests++;
      if (status === 200) return;
      if ((status !== 429 && status !== 503 && status !== -1) || attempt >= RETRIES) throw new Error(`${what}: HTTP ${status}${attempt > 1 ? ` after ${attempt} attempts` : ''}`);
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  };
  const bucket = (us: number) => String(Math.floor(us / BUCKET_US));
  const spans = groupBy(data.spans, (s) => bucket(s.startUs));
  const logs = groupBy(data.logs, (l) => bucket(l.timeUs));
  const metrics = groupBy(data.metrics, (m) => bucket(m.timeUs));
  const profiles = groupBy(data.profiles, (p) => bucket(p.startUs));
  const buckets = [...new Set([...spans.keys(), ...logs.keys(), ...metrics.keys(), ...profiles.keys()])].sort();
  for (const b of buckets) {
    const jobs: (() => Promise<void>)[] = [];
    // A collector batches by size: up to ~2,000 spans a request.
    const bs = spans.get(b) ?? [];
    for (let i = 0; i < bs.length; i += 2000) {
      const part = bs.slice(i, i + 2000);
      jobs.push(() => check('traces', () => post.traces(encodeSpans(data.resources, part))).then(() => void (counts.spans += part.length)));
    }
    const bl = logs.get(b) ?? [];
    for (let i = 0; i < bl.length; i += 2000) {
      const part = bl.slice(i, i + 2000);
      jobs.push(() => check('logs', () => post.logs(encodeLogs(data.resources, part))).then(() => void (counts.logs += part.length)));
    }
    const bm = metrics.get(b);
    if (bm) jobs.push(() => check('metrics', () => post.metrics(encodeMetrics(data.resources, bm))).then(() => void (counts.metrics += bm.length)));
    for (const p of profiles.get(b) ?? []) {
      jobs.push(async () => {
        const res = data.resources[p.resource]!;
        const name = `${p.service}{pod="${res['k8s.pod.name']}",namespace="${res['k8s.namespace.name']}",version="${res['service.version']}"}`;
        const q = new URLSearchParams({ name, from: String(Math.floor(p.startUs / 1e6)), until: String(Math.floor((p.startUs + p.durationUs) / 1e6)) });
        const raw = encodePprof(p);
        const body = Buffer.from(opts.gzipProfiles === false ? raw : gzipSync(raw));
        await check(`profile ${p.service}`, async () => {
          const r = await fetch(`${srv.api}/ingest?${q}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
          await r.arrayBuffer();
          return r.status;
        });
        counts.profiles++;
      });
    }
    await inFlight(jobs, opts.width ?? 4);
  }
  return counts;
}
