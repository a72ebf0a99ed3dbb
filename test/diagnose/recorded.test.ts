// POST /v1/diagnose end to end on recorded-style telemetry (testkit/scenario/recorded.ts): spans
// with ids, service, pod, name, start and end only (no kind, status or attributes), log levels only
// as a word in the body, per-pod gauges. Each case is a real server fed through OTLP/HTTP, with one
// fault whose cause is not the service diagnosed: a network delay in front of a callee that only its
// callers' spans show, and an exception that only ERROR logs carrying trace ids show. The first
// finding must name the faulty service, and its drill_down_sql must return the rows it talks about.
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { clientFor, queryRows } from '../helpers/client.js';
import { diagnose, generateRecorded, planRecorded, sendScenario, type RecordedShape } from '../../testkit/scenario/index.js';

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) {
    await s.stop();
    s.cleanup();
  }
});


/** One case on its own server: the plan (what must be found) and the first findings of the diagnosis of the entry service. */
async function runCase(shape: RecordedShape, seed: number, services?: readonly [number, number]) {
  const plan = planRecorded({ seed, shape, maxSpans: 15_000, ...(services ? { services } : {}) }, Date.now() * 1000);
  const srv = await startTestServer({ SVC_DETECT_INTERVAL_S: '3600' });
  servers.push(srv);
  await sendScenario(srv, generateRecorded(plan));
  const e = plan.expectation;
  const answer = await diagnose(srv, e.entry, e.window);
  expect(answer.error).toBeNull();
  return { plan, srv, findings: answer.findings! };
}

describe('diagnosis on recorded-style telemetry', () => {
  it('a delay on the wire in front of a callee is blamed on the callee, whose own spans stay flat', async () => {
    const { plan, srv, findings } = await runCase('network_delay', 41);
    expect(plan.target).not.toBe(plan.expectation.entry);
    const top = findings[0]!;
    expect(top.service).toBe(plan.target);
    expect(top.signal).toBe('latency_p95');
    expect(top.summary).toMatch(/wait/);
    // The lead lists the calls into the callee with the wait beyond its own span, the longest first.
    const lead = await queryRows(clientFor(srv.api), top.drill_down_sql!);
    expect(lead.length).toBeGreaterThan(0);
    const waits = lead.map((r) => Number(r['wait_us']));
    expect(waits[0]).toBeGreaterThan(50_000);
    expect([...waits].sort((a, b) => b - a)).toEqual(waits);
    // The block reports the onset it found and the stable stretch before it.
    const e = plan.expectation;
    const res = await fetch(`${srv.api}/v1/diagnose`, { method: 'POST', body: JSON.stringify({ services: [e.entry], from_ts: e.window!.fromUs, to_ts: e.window!.toUs }) });
    const onset = ((await res.json()) as { results: Record<string, { onset: { at_ts: number; baseline_from_ts: number; baseline_to_ts: number } }> }).results[e.entry]!.onset;
    expect(Math.abs(onset.at_ts - plan.onsetUs)).toBeLessThan(30_000_000);
    expect(onset.baseline_to_ts).toBeLessThanOrEqual(onset.at_ts + 10_000_000);
    expect(onset.baseline_to_ts - onset.baseline_from_ts).toBeGreaterThan(10 * 60_000_000);
  }, 120_000);

  it('an exception seen only in ERROR lines is blamed on the service that logs them, with the level read from the body', async () => {
    const { plan, srv, findings } = await runCase('exception_logs', 43);
    const top = findings[0]!;
    expect(top.service).toBe(plan.target);
    expect(top.signal).toBe('error_log_rate');
    const lead = await queryRows(clientFor(srv.api), top.drill_down_sql!);
    expect(lead.length).toBeGreaterThan(0);
    for (const r of lead) expect(r['service_name']).toBe(plan.target);
    expect(lead.every((r) => r['severity_text'] === 'ERROR')).toBe(true);
    // Every lead of the block runs as it stands.
    for (const f of findings) {
      const sql = f.drill_down_sql;
      if (sql) expect({ sql, status: (await clientFor(srv.api).runQuery({ body: sql })).status }).toEqual({ sql, status: 200 });
    }
  }, 120_000);

  it("an exception in the diagnosed service's call graph is named, not a larger burst of ERROR records of a job outside it at the same time", async () => {
    const { plan, findings } = await runCase('overlapping_burst', 44);
    const top = findings[0]!;
    expect(top.service).toBe(plan.target);
    expect(top.signal).toBe('error_log_rate');
    // The job shares no trace and no edge with the diagnosed service: its trouble is not a cause.
    expect(findings.filter((f) => f.service === 'report-job')).toEqual([]);
  }, 120_000);

  it("a wrong return value seen only in what its caller does next (a fallback) is blamed on the service that answered, and the lead lists the caller's calls to it", async () => {
    const { plan, srv, findings } = await runCase('java_wrong_return', 40, [8, 11]);
    expect(plan.java?.onWrong).toBe('fallback');
    const top = findings[0]!;
    expect(top.service).toBe(plan.target);
    expect(top.kind).toBe('call_pattern_change');
    expect(top.summary).toMatch(/after its answers .* turned to /);
    const lead = await queryRows(clientFor(srv.api), top.drill_down_sql!);
    expect(lead.length).toBeGreaterThan(0);
  }, 120_000);
});
