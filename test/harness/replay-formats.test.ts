// `tds replay` reads a recording in every form it comes in — OTLP/JSON lines (plain and gzipped),
// protobuf as the Collector file exporter frames it (4-byte big-endian lengths), protobuf varint
// length-delimited, one request per file — and each gives the same rows; --service-prefix keeps
// the cases apart in one store, --shift-to moves every timestamp by one constant.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { useTestServer } from '../helpers/server.js';
import { collectingSpanExporter, protobufSpans } from '../helpers/recording.js';
import { recordSdkTelemetry, type Recorded } from './sdk-recording.js';
import { ALL_TIME, cli, rows as query } from './cli.js';

const srv = useTestServer({ SVC_DETECT_INTERVAL_S: '3600' });
const dir = mkdtempSync(join(tmpdir(), 'tds-replay-formats-'));
const batches: ReadableSpan[][] = [];
let rec: Recorded;
const startUs = Date.UTC(2026, 0, 5, 10, 0, 0) * 1000;

const varint = (n: number) => {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 128) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
};
const u32be = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

beforeAll(async () => {
  rec = await recordSdkTelemetry({ file: join(dir, 'unused-logs.jsonl'), startUs, traces: 60, everyUs: 5_000_000, spanExporter: collectingSpanExporter(batches) });
  const jsonLines = batches.map((b) => Buffer.from(JsonTraceSerializer.serializeRequest(b)!).toString('utf8')).join('\n') + '\n';
  const protos = batches.map(protobufSpans);
  writeFileSync(join(dir, 'spans.jsonl'), jsonLines);
  writeFileSync(join(dir, 'spans.jsonl.gz'), gzipSync(jsonLines));
  writeFileSync(join(dir, 'collector.pb'), Buffer.concat(protos.flatMap((p) => [u32be(p.length), p])));
  writeFileSync(join(dir, 'recording.bin'), Buffer.concat(protos.flatMap((p) => [varint(p.length), p]))); // no signal in the name: told by the bytes
  mkdirSync(join(dir, 'one-per-file'));
  protos.forEach((p, i) => writeFileSync(join(dir, 'one-per-file', `export-${String(i).padStart(3, '0')}.pb`), p));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rows = (sql: string) => query(srv.api, sql);

/** Each service's spans, as a prefix of the case sees them: counts, durations, errors, times and attributes. */
const digest = (prefix: string, shiftUs = 0) =>
  rows(
    `SELECT substr(service_name, ${prefix.length + 1}) AS service, operation, count(*) AS n, sum(duration_us) AS d, count_if(is_error) AS e, ` +
      `min(epoch_us(timestamp)) - ${shiftUs} AS first, max(epoch_us(end_timestamp)) - ${shiftUs} AS last, ` +
      `sum(length(span_attributes)) AS attrs, sum(length(events_json)) AS events, sum(length(links_json)) AS links ` +
      `FROM svc_spans WHERE ${ALL_TIME} AND starts_with(service_name, '${prefix}') GROUP BY ALL ORDER BY ALL`,
  );

describe('tds replay formats', () => {
  const cases: [string, string][] = [
    ['json/', 'spans.jsonl'],
    ['gz/', 'spans.jsonl.gz'],
    ['u32be/', 'collector.pb'],
    ['varint/', 'recording.bin'],
    ['dir/', 'one-per-file'],
  ];
  for (const [prefix, path] of cases) {
    it(`${path}: every span acknowledged`, async () => {
      const r = await cli(['replay', join(dir, path), '--url', srv.api, '--otlp-url', srv.otlpHttp, '--service-prefix', prefix]);
      expect(r.code, JSON.stringify(r.out)).toBe(0);
      expect(r.out.records).toEqual({ sent: rec.spans, acknowledged: rec.spans, rejected: 0 });
      expect(r.out.requests.sent).toBe(batches.length);
    });
  }

  it('every form stores the same spans', async () => {
    const want = await digest('json/');
    expect(want.reduce((a, r) => a + Number(r['n']), 0)).toBe(rec.spans);
    for (const [prefix] of cases.slice(1)) expect(await digest(prefix), prefix).toEqual(want);
  });

  it.each([
    ['--rate', '100000'],
    ['--speed', '100000'],
  ])('%s %s paces the replay and still sends every record', async (option, value) => {
    const r = await cli(['replay', join(dir, 'spans.jsonl'), '--url', srv.api, '--otlp-url', srv.otlpHttp, '--service-prefix', `paced${option}/`, option, value]);
    expect(r.code, JSON.stringify(r.out)).toBe(0);
    expect(r.out.records).toEqual({ sent: rec.spans, acknowledged: rec.spans, rejected: 0 });
    expect(await digest(`paced${option}/`)).toEqual(await digest('json/'));
  });

  it('--shift-to moves every timestamp by one constant, the last one landing on the target', async () => {
    const target = startUs + 86_400_000_000 + 123_456;
    const r = await cli(['replay', join(dir, 'collector.pb'), '--url', srv.api, '--otlp-url', srv.otlpHttp, '--service-prefix', 'shifted/', '--shift-to', String(target)]);
    expect(r.code, JSON.stringify(r.out)).toBe(0);
    const [last] = await rows(`SELECT max(epoch_us(end_timestamp)) AS t FROM svc_spans WHERE timestamp >= TIMESTAMP '2000-01-01' AND starts_with(service_name, 'shifted/')`);
    expect(Number(last!['t'])).toBe(target);
    expect(r.out.last_ts).toBe(target);
    const shift = r.out.shift_us;
    expect(await digest('shifted/', shift)).toEqual(await digest('json/'));
    // Event times inside the spans moved with them.
    const ev = await rows(
      `SELECT a.events_json AS a, b.events_json AS b FROM svc_spans a JOIN svc_spans b USING (span_id) WHERE a.timestamp >= TIMESTAMP '2000-01-01' AND b.timestamp >= TIMESTAMP '2000-01-01' ` +
        `AND starts_with(a.service_name, 'json/') AND starts_with(b.service_name, 'shifted/') AND a.events_json IS NOT NULL LIMIT 5`,
    );
    expect(ev.length).toBe(5);
    for (const e of ev) {
      const [a, b] = [JSON.parse(String(e['a'])), JSON.parse(String(e['b']))];
      expect(b[0].timestamp_us - a[0].timestamp_us).toBe(shift);
    }
  });

  it('--shift-to now lands the last timestamp on the client clock', async () => {
    const nowMs = Date.UTC(2026, 5, 1, 12, 0, 0);
    const r = await cli(['replay', join(dir, 'spans.jsonl'), '--url', srv.api, '--otlp-url', srv.otlpHttp, '--service-prefix', 'now/', '--shift-to', 'now'], {}, () => nowMs);
    expect(r.code).toBe(0);
    expect(r.out.last_ts).toBe(nowMs * 1000);
    const [last] = await rows(`SELECT max(epoch_us(end_timestamp)) AS t FROM svc_spans WHERE timestamp >= TIMESTAMP '2000-01-01' AND starts_with(service_name, 'now/')`);
    expect(Number(last!['t'])).toBe(nowMs * 1000);
  });
});
