// `tds replay` on malformed, truncated and hostile recordings: every bad line or file is reported
// with its file and line and skipped, the good records around it are all acknowledged, the server's
// refusals are counted as rejected with their reason, and the store holds exactly the good records.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { encode, TRACE_REQ } from '../pipeline/decode/otlp/helpers.js';
import { useTestServer } from '../helpers/server.js';
import { ALL_TIME, cli, rows } from './cli.js';

const srv = useTestServer({ SVC_DETECT_INTERVAL_S: '3600' });
const dir = mkdtempSync(join(tmpdir(), 'tds-replay-bad-'));
const T = BigInt(Date.UTC(2026, 1, 1)) * 1_000_000n; // ns

const hex = (n: number, bytes: number) => n.toString(16).padStart(bytes * 2, '0');
const spansJson = (service: string, n: number, traceId = (i: number) => hex(1000 + i, 16)) =>
  JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [{ spans: Array.from({ length: n }, (_, i) => ({ traceId: traceId(i), spanId: hex(i + 1, 8), name: 'op', startTimeUnixNano: String(T + BigInt(i) * 1000n), endTimeUnixNano: String(T + BigInt(i) * 1000n + 500n) })) }],
      },
    ],
  });
const logsJson = (service: string, n: number) =>
  JSON.stringify({ resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeLogs: [{ logRecords: Array.from({ length: n }, (_, i) => ({ timeUnixNano: String(T + BigInt(i)), body: { stringValue: `line ${i}` } })) }] }] });
const spansProto = (service: string, n: number, first: number) =>
  encode(TRACE_REQ, {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [{ spans: Array.from({ length: n }, (_, i) => ({ traceId: Buffer.from(hex(first + i, 16), 'hex'), spanId: Buffer.from(hex(first + i, 8), 'hex'), name: 'op', startTimeUnixNano: String(T), endTimeUnixNano: String(T + 5n) })) }],
      },
    ],
  });
const be = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);

let result: { code: number; out: any; err: string[] };

beforeAll(async () => {
  const mixed = [
    spansJson('good', 3), // 1
    '{not json', // 2
    '{"foo": 1}', // 3: JSON, not OTLP
    '{"resourceSpans": 5}', // 4: the wrong shape
    logsJson('good', 2), // 5
    spansJson('good', 1).replace(/"startTimeUnixNano":"\d+"/, '"startTimeUnixNano":"soon"'), // 6: not a timestamp
    spansJson('refused', 1, () => 'zz'), // 7: well-formed, but the server refuses its trace id
    '', // 8: blank, skipped silently
    '['.repeat(100_000), // 9: hostile nesting, never closed
    spansJson('good', 2, (i) => hex(2000 + i, 16)).slice(0, 60), // 10: cut short at the end of the file
  ];
  writeFileSync(join(dir, 'a-mixed.jsonl'), mixed.join('\n'));
  writeFileSync(join(dir, 'b-garbage.bin'), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 251)));
  const p1 = spansProto('good', 4, 3000);
  const p2 = spansProto('good', 5, 4000);
  const p3 = spansProto('good', 6, 5000);
  writeFileSync(join(dir, 'c-cut.pb'), Buffer.concat([be(p1.length), p1, be(p2.length), p2, be(p3.length), p3.subarray(0, p3.length - 7)]));
  writeFileSync(join(dir, 'd-broken.jsonl.gz'), Buffer.concat([gzipSync(spansJson('good', 1)).subarray(0, 20), Buffer.from('not the rest of a gzip stream')]));
  writeFileSync(join(dir, 'e-empty.jsonl'), '');
  const zstdFrame = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4]);
  writeFileSync(join(dir, 'f-zstd.traces.pb'), Buffer.concat([be(zstdFrame.length), zstdFrame]));
  result = await cli(['replay', dir, '--url', srv.api, '--otlp-url', srv.otlpHttp]);
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tds replay of bad recordings', () => {
  it('acknowledges every good record and counts the refused ones with the reason', () => {
    expect(result.code).toBe(1);
    const good = 3 + 2 + 4 + 5;
    expect(result.out.records).toEqual({ sent: good + 1, acknowledged: good, rejected: 1 });
    expect(result.out.rejected).toEqual([{ reason: expect.stringMatching(/^HTTP 400/), records: 1, requests: 1, first: `${join(dir, 'a-mixed.jsonl')}:7` }]);
  });

  it('reports each malformed line or file with where it is, and skips it', () => {
    const where = (m: { file: string; line?: number }) => `${m.file.slice(dir.length + 1)}${m.line === undefined ? '' : `:${m.line}`}`;
    expect(result.out.malformed.map(where)).toEqual(['a-mixed.jsonl:2', 'a-mixed.jsonl:3', 'a-mixed.jsonl:4', 'a-mixed.jsonl:6', 'a-mixed.jsonl:9', 'a-mixed.jsonl:10', 'b-garbage.bin', 'c-cut.pb:3', 'd-broken.jsonl.gz', 'f-zstd.traces.pb:1']);
    expect(result.out.malformed_count).toBe(10);
    const byWhere = Object.fromEntries(result.out.malformed.map((m: { file: string; line?: number; error: string }) => [where(m), m.error]));
    expect(byWhere['a-mixed.jsonl:2']).toMatch(/invalid JSON/);
    expect(byWhere['a-mixed.jsonl:3']).toMatch(/not an OTLP export request/);
    expect(byWhere['a-mixed.jsonl:6']).toMatch(/not a timestamp/);
    expect(byWhere['c-cut.pb:3']).toMatch(/truncated/);
    expect(byWhere['f-zstd.traces.pb:1']).toMatch(/zstd/);
    // Each was also told on stderr as it happened (not a terminal: JSON lines).
    const told = result.err.map((l) => JSON.parse(l)).filter((e) => e.event === 'malformed');
    expect(told.length).toBe(10);
  });

  it('stores exactly the good records', async () => {
    expect(await rows(srv.api, `SELECT service_name, count(*) AS n FROM svc_spans WHERE ${ALL_TIME} GROUP BY ALL ORDER BY ALL`)).toEqual([{ service_name: 'good', n: 3 + 4 + 5 }]);
    expect(await rows(srv.api, `SELECT count(*) AS n FROM svc_logs WHERE ${ALL_TIME}`)).toEqual([{ n: 2 }]);
  });

  it('stops with the reason when no server answers, counting nothing as acknowledged', async () => {
    const r = await cli(['replay', join(dir, 'a-mixed.jsonl'), '--url', srv.api, '--otlp-url', 'http://127.0.0.1:9', '--concurrency', '4']);
    expect(r.code).toBe(1);
    expect(r.out.stopped).toMatch(/no answer from http:\/\/127\.0\.0\.1:9/);
    expect(r.out.records.acknowledged).toBe(0);
  }, 30_000);

  it.each([
    [[], /no file or directory/],
    [['x', '--rate', '10', '--speed', '2'], /cannot be combined/],
    [['x', '--signal', 'events'], /--signal/],
    [['x', '--shift-to', '1700000000'], /looks like seconds/],
    [['/nonexistent/recording.jsonl'], /cannot read/],
  ])('usage error %j', async (args, message) => {
    const r = await cli(['replay', ...args, '--url', srv.api]);
    expect(r.code).toBe(2);
    expect(r.out.error.message).toMatch(message);
  });
});
