// The recorded-incident eval's reader (bench/recorded): the CSV splitter on hostile lines, and the
// Nezha layout read from a small recording written here (never the corpus itself).
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { splitCsvLine } from '../../bench/recorded/csv.js';
import { readNezha, serviceOfPod } from '../../bench/recorded/nezha.js';
import { rankOf } from '../../bench/recorded/ask.js';
import type { ScenarioData } from '../../testkit/scenario/traffic.js';

describe('splitCsvLine', () => {
  it('splits plain, quoted, doubled-quote and empty fields', () => {
    expect(splitCsvLine('a,b,c')).toEqual(['a', 'b', 'c']);
    expect(splitCsvLine('a,"b,c",d')).toEqual(['a', 'b,c', 'd']);
    expect(splitCsvLine('"say ""hi""",x')).toEqual(['say "hi"', 'x']);
    expect(splitCsvLine(',,')).toEqual(['', '', '']);
    expect(splitCsvLine('')).toEqual(['']);
  });
  it('keeps the rest of a line whose quote never closes, and never throws on junk', () => {
    expect(splitCsvLine('a,"open, never closed')).toEqual(['a', 'open, never closed']);
    for (const junk of ['"', '""', '"""', ',"",', '\u0000,\uFFFF', '"a"b,c']) expect(() => splitCsvLine(junk)).not.toThrow();
  });
});

describe('readNezha', () => {
  let root: string;
  const day = '2030-01-02';
  const sec = (hms: string) => Date.parse(`${day}T${hms}Z`) / 1000;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'tds-nezha-'));
    const d = join(root, 'rca_data', day);
    for (const sub of ['trace', 'log', 'metric']) mkdirSync(join(d, sub), { recursive: true });
    writeFileSync(
      join(d, `${day}-fault_list.json`),
      JSON.stringify({
        '10': [
          { inject_time: `${day} 10:05:00`, inject_timestamp: String(sec('10:05:00')), inject_pod: 'cart-service-5f6585d649-abcde', inject_type: 'network_delay' },
          { inject_time: `${day} 10:20:00`, inject_timestamp: String(sec('10:20:00')), inject_pod: 'web-579b9bff58-t2dbm', inject_type: 'exception' },
        ],
      }),
    );
    const ns = (hms: string, extraMs = 0) => String(BigInt(sec(hms)) * 1_000_000_000n + BigInt(extraMs) * 1_000_000n);
    const trace = [
      'TraceID,SpanID,ParentID,PodName,OperationName,StartTimeUnixNano,EndTimeUnixNano,Duration',
      `${'a'.repeat(32)},${'1'.repeat(16)},root,web-579b9bff58-t2dbm,Web/Recv.,${ns('10:05:30')},${ns('10:05:30', 40)},40000`,
      `${'a'.repeat(32)},${'2'.repeat(16)},${'1'.repeat(16)},cart-service-5f6585d649-abcde,Cart/Get,${ns('10:05:30', 5)},${ns('10:05:30', 30)},25000`,
    ].join('\n');
    writeFileSync(join(d, 'trace', '10_06_trace.csv.gz'), gzipSync(trace + '\n'));
    const inner = JSON.stringify({ severity: 'ERROR', message: 'charge failed' });
    const runtime = JSON.stringify({ log: inner + '\n', stream: 'stdout', time: '2030-01-02T10:05:31Z' });
    const log = [
      'Timestamp,TimeUnixNano,Node,PodName,Container,TraceID,SpanID,Log',
      `x,${ns('10:05:31')},10.0.0.1,web-579b9bff58-t2dbm,server,${'a'.repeat(32)},${'1'.repeat(16)},"${runtime.replace(/"/g, '""')}"`,
      `x,${ns('10:05:32')},10.0.0.1,web-579b9bff58-t2dbm,server,not-an-id,,"plain line, not JSON"`,
    ].join('\n');
    writeFileSync(join(d, 'log', '10_06_log.csv.gz'), gzipSync(log + '\n'));
    const metric = (pod: string) =>
      [
        'Time,TimeStamp,PodName,CpuUsageRate(%),MemoryUsage(Mi),SyscallRead',
        `${day} 10:00:19.5 +0000 UTC m=+0.3,${sec('10:00:19')},${pod},10,100,5`,
        // A TimeStamp two years off, as a real recording has: the Time text wins.
        `${day} 10:30:19.5 +0000 UTC m=+1800.3,${sec('10:30:19') + 63_072_000},${pod},12,,x`,
      ].join('\n');
    writeFileSync(join(d, 'metric', 'web-579b9bff58-t2dbm_metric.csv'), metric('web-579b9bff58-t2dbm') + '\n');
    writeFileSync(join(d, 'metric', 'cart-service-5f6585d649-abcde_metric.csv'), metric('cart-service-5f6585d649-abcde') + '\n');
    mkdirSync(join(root, 'nezha-results'));
    writeFileSync(
      join(root, 'nezha-results', 'run.log'),
      [
        `[INFO] x.py:1: ${day} 10:05:00 Inject Ground Truth: cart-service-5f6585d649-abcde, network_delay`,
        `[INFO] x.py:2: ${day} 10:05:00 Inject Ground Truth: cart-service-5f6585d649-abcde, network_delay score 2`,
        `[INFO] x.py:3: ${day} 10:20:00 Inject Ground Truth: web-579b9bff58-t2dbm, exception`,
      ].join('\n'),
    );
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('names a pod\'s service without its last two parts, keeping dashes inside the name', () => {
    expect(serviceOfPod('cart-service-5f6585d649-abcde')).toBe('cart-service');
    expect(serviceOfPod('solo')).toBe('solo');
  });

  it('reads the faults with their truth and the published ranks, unranked ones as null', () => {
    const rec = readNezha(root);
    expect(rec.splits.map((s) => s.name)).toEqual([day]);
    const [a, b] = rec.splits[0]!.faults;
    expect(a).toMatchObject({ id: `${day}/10:05:00`, service: 'cart-service', type: 'network_delay', injectUs: sec('10:05:00') * 1e6, publishedRank: 2 });
    expect(b).toMatchObject({ service: 'web', type: 'exception', publishedRank: null });
    expect(rec.published).toMatchObject({ as1: 0, as3: 0.5 });
    // The last timestamp is the metric rows' Time text, not the broken TimeStamp.
    expect(rec.splits[0]!.lastUs).toBe(Date.parse(`${day}T10:30:19.5Z`) * 1000);
  });

  it('yields spans, logs and gauges in time order, with the app line out of the runtime JSON', async () => {
    const chunks: ScenarioData[] = [];
    for await (const c of readNezha(root).splits[0]!.chunks()) chunks.push(c);
    const spans = chunks.flatMap((c) => c.spans);
    expect(spans.map((s) => [s.service, s.parentSpanId, s.durationUs, s.kind])).toEqual([
      ['web', null, 40_000, 0],
      ['cart-service', '1'.repeat(16), 25_000, 0],
    ]);
    const logs = chunks.flatMap((c) => c.logs);
    expect(logs.map((l) => [l.body, l.traceId])).toEqual([
      ['{"severity":"ERROR","message":"charge failed"}', 'a'.repeat(32)],
      ['plain line, not JSON', null],
    ]);
    const metrics = chunks.flatMap((c) => c.metrics);
    // Non-numeric and empty cells are skipped; units come out of the header.
    expect(metrics.filter((m) => m.service === 'web').map((m) => [m.name, m.unit, m.gauge])).toEqual([
      ['CpuUsageRate', '%', 10],
      ['MemoryUsage', 'Mi', 100],
      ['SyscallRead', '', 5],
      ['CpuUsageRate', '%', 12],
    ]);
    const times = chunks.flatMap((c) => [...c.metrics.map((m) => m.timeUs)]);
    expect([...times].sort((x, y) => x - y)).toEqual(times);
    expect(chunks[0]!.resources['web-579b9bff58-t2dbm']).toEqual({ 'service.name': 'web', 'k8s.pod.name': 'web-579b9bff58-t2dbm' });
  });

  it('keeps only the stretches asked for', async () => {
    const keep = (s: number, e: number) => e >= sec('10:25:00') * 1e6 && s <= sec('10:31:00') * 1e6;
    const chunks: ScenarioData[] = [];
    for await (const c of readNezha(root).splits[0]!.chunks({ keep })) chunks.push(c);
    expect(chunks.flatMap((c) => c.spans)).toEqual([]);
    expect(chunks.flatMap((c) => c.metrics).every((m) => m.gauge === 12)).toBe(true);
  });

  it('ranks the truth by its first finding', () => {
    expect(rankOf(['a', 'b', 'a', 'c'], 'c')).toBe(4);
    expect(rankOf(['a', 'b'], 'b')).toBe(2);
    expect(rankOf([], 'b')).toBeNull();
  });
});
