// Third-party corpora (../shared/corpora/otlp): both encodings of the same data give the same rows;
// the invalid payloads get the MALFORMED error; the protos in proto/ read real payloads.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  MalformedError,
  decodeLogs,
  decodeLogsJson,
  decodeMetrics,
  decodeMetricsJson,
  decodeTraces,
  decodeTracesJson,
  type DecodeResult,
} from '../../../../src/pipeline/decode/otlp/index.js';
import { SPANS, LOGS, tableByName } from '../../../../src/store/schema.js';
import {
  HAVE_CORPUS,
  LOGS_REQ,
  METRICS_REQ,
  OTLP_CORPUS,
  TRACE_REQ,
  canon,
  encode,
  merge,
  otlpJsonToPbjs,
  tables,
  type,
} from './helpers.js';

const d = describe.skipIf(!HAVE_CORPUS);
const NOW = 1_700_000_000_000_000;
const opts = { nowUs: NOW };
const O2P = join(OTLP_CORPUS, 'smithclay-otlp2parquet', 'testdata');
const read = (p: string) => readFileSync(p);
const jsonl = (p: string) => readFileSync(p, 'utf8').split('\n').filter((l) => l.trim() !== '');

function expectSchemaShaped(r: DecodeResult): void {
  for (const b of r.batches) {
    const t = tableByName(b.table);
    expect(Object.keys(b.columns)).toEqual(t.columns.map((c) => c.name));
    for (const c of t.columns) {
      expect(b.columns[c.name]!.length).toBe(b.rows);
      if (c.required) expect(b.columns[c.name]!.every((v) => v !== null && v !== undefined), c.name).toBe(true);
    }
  }
}

d('otlp2parquet testdata: protobuf and JSON/JSONL decode to the same rows', () => {
  it('trace.pb == trace.json (base64 ids in the JSON)', () => {
    const pb = decodeTraces(read(join(O2P, 'trace.pb')), opts);
    const js = decodeTracesJson(read(join(O2P, 'trace.json')), opts);
    expect(pb.rejected).toBe(0);
    expect(pb.batches[0]!.rows).toBeGreaterThan(0);
    expect(canon(tables(pb))).toBe(canon(tables(js)));
    expectSchemaShaped(pb);
    const r = tables(pb)[SPANS.name]![0]!;
    expect(r['trace_id']).toMatch(/^[0-9a-f]{32}$/);
    expect(r['service_name']).toBe('frontend-proxy');
  });

  it('traces.pb == traces.jsonl', () => {
    const pb = decodeTraces(read(join(O2P, 'traces.pb')), opts);
    const js = merge(jsonl(join(O2P, 'traces.jsonl')).map((l) => decodeTracesJson(l, opts)));
    expect(canon(tables(pb))).toBe(canon(js));
    expect(pb.batches[0]!.rows).toBeGreaterThanOrEqual(19);
    expectSchemaShaped(pb);
  });

  it('logs.pb == logs.jsonl', () => {
    const pb = decodeLogs(read(join(O2P, 'logs.pb')), opts);
    const js = merge(jsonl(join(O2P, 'logs.jsonl')).map((l) => decodeLogsJson(l, opts)));
    expect(pb.batches[0]!.rows).toBeGreaterThanOrEqual(81);
    expect(canon(tables(pb))).toBe(canon(js));
    expectSchemaShaped(pb);
  });

  it('log.json decodes', () => {
    const r = decodeLogsJson(read(join(O2P, 'log.json')), opts);
    expect(r.batches[0]!.rows).toBeGreaterThan(0);
    expect(tables(r)[LOGS.name]![0]!['service_name']).toBe('frontend-proxy');
    expectSchemaShaped(r);
  });

  for (const kind of ['gauge', 'sum', 'histogram', 'exponential_histogram', 'summary', 'mixed']) {
    it(`metrics_${kind}: .pb == .json == .jsonl`, () => {
      const pb = decodeMetrics(read(join(O2P, `metrics_${kind}.pb`)), opts);
      const js = decodeMetricsJson(read(join(O2P, `metrics_${kind}.json`)), opts);
      const jl = merge(jsonl(join(O2P, `metrics_${kind}.jsonl`)).map((l) => decodeMetricsJson(l, opts)));
      expect(pb.rejected).toBe(0);
      expect(pb.batches.length).toBeGreaterThan(0);
      expect(canon(tables(pb))).toBe(canon(tables(js)));
      expect(canon(tables(pb))).toBe(canon(jl));
      expectSchemaShaped(pb);
      const want = { gauge: 'svc_metrics_gauge', sum: 'svc_metrics_sum', histogram: 'svc_metrics_histogram', summary: 'svc_metrics_histogram', exponential_histogram: 'svc_metrics_exp_histogram' }[kind];
      if (want) expect(pb.batches.map((b) => b.table)).toContain(want);
      if (kind === 'mixed') expect(pb.batches.length).toBeGreaterThan(1);
    });
  }

  it('every invalid payload gets the MALFORMED error', () => {
    const dir = join(O2P, 'invalid');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const f of files) {
      const body = read(join(dir, f));
      const dec = f.startsWith('log') ? decodeLogsJson : f.startsWith('metrics') ? decodeMetricsJson : f.startsWith('trace') ? decodeTracesJson : decodeLogsJson;
      let err: unknown;
      try {
        dec(body, opts);
      } catch (e) {
        err = e;
      }
      expect(err, f).toBeInstanceOf(MalformedError);
      expect((err as MalformedError).code).toBe('MALFORMED');
    }
  });
});

d('opentelemetry-proto examples', () => {
  const EX = join(OTLP_CORPUS, 'opentelemetry-proto', 'examples');
  const cases: [string, string, (b: Uint8Array | string, o?: { nowUs?: number }) => DecodeResult, (b: Uint8Array, o?: { nowUs?: number }) => DecodeResult][] = [
    ['trace.json', TRACE_REQ, decodeTracesJson, decodeTraces],
    ['logs.json', LOGS_REQ, decodeLogsJson, decodeLogs],
    ['events.json', LOGS_REQ, decodeLogsJson, decodeLogs],
    ['metrics.json', METRICS_REQ, decodeMetricsJson, decodeMetrics],
  ];
  for (const [file, req, fromJson, fromPb] of cases) {
    it(`${file}: JSON and the same request re-encoded by protobufjs give the same rows`, () => {
      const text = readFileSync(join(EX, file), 'utf8');
      const js = fromJson(text, opts);
      expect(js.rejected).toBe(0);
      expect(js.batches.length).toBeGreaterThan(0);
      expectSchemaShaped(js);
      const pb = fromPb(encode(req, otlpJsonToPbjs(JSON.parse(text)) as Record<string, unknown>), opts);
      expect(canon(tables(pb))).toBe(canon(tables(js)));
    });
  }

  it('trace.json: upper-case hex ids come out lower-case, kind and times are kept', () => {
    const r = tables(decodeTracesJson(readFileSync(join(EX, 'trace.json')), opts))[SPANS.name]![0]!;
    expect(r['trace_id']).toBe('5b8efff798038103d269b633813fc60c');
    expect(r['span_id']).toBe('eee19b7ec3c1b174');
    expect(r['parent_span_id']).toBe('eee19b7ec3c1b173');
    expect(r['span_kind']).toBe(2);
    expect(r['timestamp']).toBe(1544712660000000);
    expect(r['duration_us']).toBe(1_000_000);
    expect(r['scope_name']).toBe('my.library');
    expect(JSON.parse(r['span_attributes'] as string)).toEqual({ 'my.span.attr': 'some value' });
  });

  it('events.json: event_name and a kvlist body', () => {
    const r = tables(decodeLogsJson(readFileSync(join(EX, 'events.json')), opts))[LOGS.name]![0]!;
    expect(r['event_name']).toBe('browser.page_view');
    expect(JSON.parse(r['body'] as string)).toMatchObject({ type: 0 });
  });

  it('metrics.json: all kinds land in their tables', () => {
    const r = decodeMetricsJson(readFileSync(join(EX, 'metrics.json')), opts);
    expect(r.batches.map((b) => b.table).sort()).toEqual(['svc_metrics_exp_histogram', 'svc_metrics_gauge', 'svc_metrics_histogram', 'svc_metrics_sum']);
  });
});

d('profiles proto (v1development) reads a real eBPF profiler export', () => {
  it('decodes otel-ebpf-profile.pb.bin to the same content as its JSON twin', () => {
    const dir = join(OTLP_CORPUS, 'grafana-pyroscope');
    const t = type('opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest');
    const obj = t.toObject(t.decode(readFileSync(join(dir, 'otel-ebpf-profile.pb.bin'))), { longs: String, bytes: String });
    const twin = JSON.parse(readFileSync(join(dir, 'otel-ebpf-profile.pb.json'), 'utf8'));
    expect(obj['resourceProfiles'].length).toBe(twin.resourceProfiles.length);
    expect(obj['dictionary'].stringTable).toEqual(twin.dictionary.stringTable);
    expect(obj['dictionary'].stackTable.length).toBe(twin.dictionary.stackTable.length);
    const s0 = obj['resourceProfiles'][0].scopeProfiles[0].profiles[0].samples[0];
    const t0 = twin.resourceProfiles[0].scopeProfiles[0].profiles[0].samples[0];
    expect(s0.stackIndex).toBe(t0.stackIndex);
    expect(s0.values).toEqual(t0.values);
    expect(s0.attributeIndices).toEqual(t0.attributeIndices);
    expect(s0.timestampsUnixNano).toEqual(t0.timestampsUnixNano);
  });
});
