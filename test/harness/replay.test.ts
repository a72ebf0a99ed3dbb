// `tds replay` of a recording the real OpenTelemetry SDK wrote in the Collector file exporter's
// format (OTLP/JSON lines), against the same telemetry sent live by the same SDK: the replay
// acknowledges exactly what was recorded, and the replayed store answers like the live one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALL_TIME, cli, rows as query } from './cli.js';
import { startTestServer, useTestServer, type TestServer } from '../helpers/server.js';
import { recordSdkTelemetry, type Recorded } from './sdk-recording.js';

const live = useTestServer({ SVC_DETECT_INTERVAL_S: '3600' });
const dir = mkdtempSync(join(tmpdir(), 'tds-replay-'));
const file = join(dir, 'recording.jsonl');
let rec: Recorded;
let target: TestServer;

const COUNTS =
  `SELECT (SELECT count(*) FROM svc_spans WHERE ${ALL_TIME}) AS spans, (SELECT count(*) FROM svc_logs WHERE ${ALL_TIME}) AS logs, ` +
  `(SELECT count(*) FROM svc_metrics_sum WHERE ${ALL_TIME}) + (SELECT count(*) FROM svc_metrics_gauge WHERE ${ALL_TIME}) + (SELECT count(*) FROM svc_metrics_histogram WHERE ${ALL_TIME}) AS points`;

beforeAll(async () => {
  rec = await recordSdkTelemetry({ file, otlpHttp: live.otlpHttp, startUs: Date.now() * 1000 - 2 * 3_600_000_000, traces: 400, everyUs: 10_000_000 });
  target = await startTestServer({ SVC_DETECT_INTERVAL_S: '3600' });
}, 120_000);

afterAll(async () => {
  await target?.stop();
  target?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('tds replay of an SDK recording', () => {
  let result: any;
  it('acknowledges exactly what was recorded, signal by signal', async () => {
    const [counts] = await query(live.api, COUNTS);
    const r = await cli(['replay', file, '--url', target.api, '--otlp-url', target.otlpHttp]);
    result = r.out;
    expect(r.code, JSON.stringify(r.out)).toBe(0);
    expect(counts).toEqual({ spans: rec.spans, logs: rec.logs, points: expect.any(Number) });
    const points = Number(counts!['points']);
    expect(points).toBeGreaterThan(0);
    expect(result.records).toEqual({ sent: rec.spans + rec.logs + points, acknowledged: rec.spans + rec.logs + points, rejected: 0 });
    expect(result.by_signal).toEqual({
      traces: { sent: rec.spans, acknowledged: rec.spans, rejected: 0 },
      logs: { sent: rec.logs, acknowledged: rec.logs, rejected: 0 },
      metrics: { sent: points, acknowledged: points, rejected: 0 },
    });
    expect(result.malformed).toEqual([]);
    expect(result.rejected).toEqual([]);
    // Not a terminal: progress went to stderr as JSON lines, the last one complete.
    const last = JSON.parse(r.err[r.err.length - 1]!);
    expect(last).toMatchObject({ event: 'progress', files_done: 1, files: 1, records_acknowledged: result.records.acknowledged });
  });

  it('stores the same rows as the live path, so every table answers alike', async () => {
    expect(await query(target.api, COUNTS)).toEqual(await query(live.api, COUNTS));
    for (const sql of [
      `SELECT * FROM svc_logs WHERE ${ALL_TIME} ORDER BY timestamp, body`,
      `SELECT * FROM svc_spans WHERE ${ALL_TIME} ORDER BY trace_id, span_id`,
      `SELECT timestamp, service_name, metric_name, value, attributes FROM svc_metrics_sum WHERE ${ALL_TIME} ORDER BY ALL`,
      `SELECT timestamp, service_name, metric_name, count, sum, bucket_counts, explicit_bounds FROM svc_metrics_histogram WHERE ${ALL_TIME} ORDER BY ALL`,
      `SELECT service_name, template_id, pattern, count FROM svc_log_templates WHERE ${ALL_TIME} ORDER BY template_id`,
      `SELECT service_name, operation, count(*) AS n, sum(duration_us) AS d, count_if(is_error) AS e FROM svc_spans WHERE ${ALL_TIME} GROUP BY ALL ORDER BY ALL`,
    ]) {
      expect(await query(target.api, sql), sql).toEqual(await query(live.api, sql));
    }
    expect(await (await fetch(`${target.api}/v1/services`)).json()).toEqual(await (await fetch(`${live.api}/v1/services`)).json());
  });

  it('gives identical trace detail for every trace', async () => {
    for (const id of rec.traceIds) {
      const [a, b] = await Promise.all([fetch(`${live.api}/v1/traces/${id}`), fetch(`${target.api}/v1/traces/${id}`)]);
      expect(b.status).toBe(200);
      const want = await a.json();
      expect(await b.json()).toEqual(want);
    }
  });
});
