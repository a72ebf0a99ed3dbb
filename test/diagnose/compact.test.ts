// The compact view of a diagnosis and its byte budget, on hand-built blocks: every finding, lead and
// anomalous operation of the full block is carried; what is left out is counted with the SQL or call
// that fetches it; a budget drops the lowest-ranked entries first, says so, and is met to the byte.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compactBlock, compactResponse, jsonBytes } from '../../src/diagnose/compact.js';
import type { DiagnoseResponse, DiagnosisBlock, Finding } from '../../src/diagnose/block-schema.js';
import type { CompactDiagnoseResponse } from '../../src/diagnose/compact-schema.js';
import { checkSchema } from '../helpers/api.js';

const FROM = 1_790_000_000_000_000;
const TO = FROM + 15 * 60_000_000;
const iso = (us: number) => new Date(us / 1000).toISOString().replace('Z', '000Z');
const sql = (what: string) => `SELECT * FROM svc_spans WHERE ${what} AND timestamp >= TIMESTAMP '2026-09-21 14:13:20' AND timestamp < TIMESTAMP '2026-09-21 14:28:20' LIMIT 100`;

function finding(service: string, i: number, score: number): Finding {
  return {
    kind: 'error_spike',
    severity: score > 0.8 ? 'critical' : 'medium',
    summary: `${service} op${i}: error rate 0% → ${i}%`,
    service,
    operation: `GET /op${i}`,
    signal: 'error_rate',
    before: 0,
    after: i,
    score,
    drill_down_sql: sql(`service_name = '${service}' AND operation = 'GET /op${i}'`),
  };
}

function incident(service: string, score: number): Finding {
  return {
    kind: 'incident',
    severity: 'high',
    summary: `${service}: 2 correlated shifts`,
    service,
    operation: null,
    signal: 'error_rate',
    before: 0,
    after: 10,
    score,
    incident: {
      incident_id: 'inc_0123456789abcdef',
      started_at: FROM,
      started_at_iso: iso(FROM),
      shifts: [0, 1].map((k) => ({
        signal: 'error_rate' as const,
        entity: `GET /shift${k}`,
        before: 0,
        after: 5,
        ts_shift: FROM,
        ts_shift_iso: iso(FROM),
        summary: 'shift',
        drill_down_sql: sql(`service_name = '${service}' AND operation = 'GET /shift${k}'`),
      })),
    },
  };
}

/** A whole block: `findings` scores in rank order, `anomalous` operations flagged of `operations`, `events` events. */
function block(service: string, o: { findings: Finding[]; anomalous: number; operations: number; events: number }): DiagnosisBlock {
  const op = (i: number) => ({
    operation: `GET /op${i}`,
    span_name: `GET /op${i}`,
    count: 100 + i,
    error_count: i,
    error_pct: i,
    duration_p50_us: 1000,
    duration_p95_us: 2000 + i,
    duration_p99_us: 3000,
    baseline_count: 400,
    baseline_error_pct: i < o.anomalous ? 0 : null,
    baseline_p95_us: 1900,
    is_anomalous: i < o.anomalous,
    anomaly_reason: i < o.anomalous ? `error rate 0% → ${i}%` : null,
    error_breakdown: [{ error_type: 'HTTP 500', count: i }],
    exemplar_error_trace_id: i < o.anomalous ? 'ab'.repeat(16) : null,
    drill_down_sql: sql(`service_name = '${service}' AND operation = 'GET /op${i}' ORDER BY is_error DESC`),
  });
  return {
    service,
    window: { from_ts: FROM, from_iso: iso(FROM), to_ts: TO, to_iso: iso(TO) },
    context: {
      service_name: service,
      deployment: service,
      namespace: 'shop',
      pod_count: 2,
      has_instance_id: true,
      first_seen: iso(FROM - 3_600_000_000),
      last_seen: iso(TO),
      dependencies: [{ service_name: 'db', span_count: 10, error_count: 0, error_rate: 0 }],
      dependents: [],
    },
    coverage: {
      has_spans: true,
      has_logs: true,
      has_metrics: false,
      has_profiles: false,
      span_count: 5000,
      log_template_count: 3,
      metric_series_count: 0,
      profile_sample_count: 0,
      signals: [{ signal_type: 'metrics', available: false, reason: 'no metrics in the window', severity: 'low' }],
    },
    error_traces_total: 12,
    events: Array.from({ length: o.events }, (_v, i) => ({ event_type: 'deploy', description: `${service} v${i} rolled out`, detected_at: iso(FROM + i), detected_at_us: FROM + i })),
    findings: o.findings,
    operation_summaries: Array.from({ length: o.operations }, (_v, i) => op(i)),
    spans: { total: 5000, sampled_by: 'errors_then_slowest_then_one_per_operation', drill_all_sql: sql(`service_name = '${service}' ORDER BY timestamp DESC`), sample: [] },
    logs: { total: 0, sampled_by: 'errors_then_newest', drill_all_sql: sql(`service_name = '${service}' -- logs`), sample: [] },
    log_patterns: [],
    log_counters: [],
    metrics: [],
    profiles: [],
    gen_ai: [],
    findings_total: o.findings.length,
    operations_total: o.operations + 7,
    log_patterns_total: 4,
    metrics_total: 0,
    profiles_total: 0,
    baseline: { from_ts: FROM - 3_600_000_000, from_iso: iso(FROM - 3_600_000_000), to_ts: FROM, to_iso: iso(FROM), buckets: 12, ends_at_onset: false },
    onset: null,
    window_sampled: null,
    call_graph_sampled: null,
  };
}

const answerOf = (...blocks: DiagnosisBlock[]): DiagnoseResponse => ({ results: Object.fromEntries(blocks.map((b) => [b.service, b])), errors: { gone: 'no telemetry' } });

/** Every SQL string under `v`. */
function sqlOf(v: unknown): string[] {
  if (Array.isArray(v)) return v.flatMap(sqlOf);
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => (typeof x === 'string' && /sql$/.test(k) ? [x] : sqlOf(x)));
  return [];
}

describe('the compact view of a block', () => {
  const full = block('checkout', { findings: [finding('payments', 1, 0.95), incident('checkout', 0.7), finding('checkout', 2, 0.4)], anomalous: 2, operations: 5, events: 2 });
  checkSchema('DiagnosisBlock', full);
  const c = compactBlock(full);

  it('carries every finding as it is, every anomalous operation with its SQL, coverage and events', () => {
    expect(c.findings).toEqual(full.findings);
    expect(c.anomalous_operations.map((o) => [o.operation, o.drill_down_sql, o.anomaly_reason])).toEqual(
      full.operation_summaries.filter((o) => o.is_anomalous).map((o) => [o.operation, o.drill_down_sql, o.anomaly_reason]),
    );
    expect(c.coverage).toEqual(full.coverage);
    expect(c.events).toEqual(full.events);
    expect(c.window).toEqual(full.window);
  });

  it('keeps every lead of the findings and operations it carries, and the SQL that fetches all spans', () => {
    const kept = new Set(sqlOf(c));
    for (const s of sqlOf({ f: full.findings, o: full.operation_summaries.filter((o) => o.is_anomalous), s: full.spans })) expect(kept.has(s), s).toBe(true);
  });

  it('counts what it leaves out, with the full call; parts with nothing left out are not listed', () => {
    expect(c.omitted).toEqual({
      full_call: { detail: 'full', services: ['checkout'], from_ts: FROM, to_ts: TO },
      operations: { count: 5 + 7 - 2 },
      spans: { count: 5000, sql: full.spans.drill_all_sql },
      log_patterns: { count: 4 },
      dependencies: { count: 1 },
    });
  });

  it('does not change the block it reads', () => {
    const before = JSON.stringify(full);
    compactResponse(answerOf(full), 2048);
    expect(JSON.stringify(full)).toBe(before);
  });
});

describe('the compact answer', () => {
  const services = ['a', 'b', 'c'].map((s, k) =>
    block(s, {
      findings: [finding(s, 1, 0.9 - k * 0.1), finding(s, 2, 0.6 - k * 0.1), finding(s, 3, 0.35 + k * 0.01)],
      anomalous: 3,
      operations: 6,
      events: 3,
    }),
  );
  const full = answerOf(...services);

  it('without a budget: every service, the errors as they were, its exact size', () => {
    const a = compactResponse(full, null);
    checkSchema('CompactDiagnoseResponse', a);
    expect(Object.keys(a.results)).toEqual(['a', 'b', 'c']);
    for (const b of services) expect(a.results[b.service]).toEqual(compactBlock(b));
    expect(a.errors).toEqual(full.errors);
    expect(a.budget).toEqual({ max_bytes: null, bytes: jsonBytes(a), dropped: 0, fits: true });
  });

  it('within a budget: fits to the byte, says how much went, and drops anomalous operations, then events, then findings lowest score first', () => {
    const whole = compactResponse(full, null).budget.bytes;
    let previous: CompactDiagnoseResponse | null = null;
    for (let budget = whole; budget >= 2048; budget -= 97) {
      const a = compactResponse(full, budget);
      checkSchema('CompactDiagnoseResponse', a);
      expect(a.budget.bytes, String(budget)).toBe(jsonBytes(a));
      if (a.budget.fits) expect(a.budget.bytes, String(budget)).toBeLessThanOrEqual(budget);
      const ops = Object.values(a.results).reduce((n, b) => n + b.anomalous_operations.length, 0);
      const events = Object.values(a.results).reduce((n, b) => n + b.events.length, 0);
      const findings = Object.values(a.results).flatMap((b) => b.findings);
      // The order: no event goes while an operation is left, no finding while an event is.
      if (events < 9) expect(ops).toBe(0);
      if (findings.length < 9) expect(events).toBe(0);
      // Each list keeps its first entries (events their newest); the findings kept outrank those dropped.
      for (const b of services) {
        const v = a.results[b.service]!;
        expect(v.findings).toEqual(b.findings.slice(0, v.findings.length));
        expect(v.events).toEqual(b.events.slice(b.events.length - v.events.length));
        const gone = b.findings.length - v.findings.length;
        expect(v.omitted.findings?.count ?? 0).toBe(gone);
        expect(v.omitted.events?.count ?? 0).toBe(b.events.length - v.events.length);
        expect(v.omitted.anomalous_operations?.count ?? 0).toBe(3 - v.anomalous_operations.length);
      }
      const keptScores = findings.map((f) => f.score);
      const droppedScores = services.flatMap((b) => b.findings.slice(a.results[b.service]!.findings.length)).map((f) => f.score);
      const firstOfEach = services.map((b) => b.findings[0]!.score);
      for (const d of droppedScores) for (const k of keptScores) if (!firstOfEach.includes(k) && !firstOfEach.includes(d)) expect(d).toBeLessThanOrEqual(k);
      expect(a.budget.dropped).toBe(9 + 9 + 9 - ops - events - findings.length);
      // A smaller budget never keeps more.
      if (previous) expect(a.budget.dropped).toBeGreaterThanOrEqual(previous.budget.dropped);
      previous = a;
    }
  });

  it('drops each service\'s first finding last, and says when even the answer with nothing left to drop does not fit', () => {
    // b's first finding scores below a's second and third: it still outlasts them.
    const strong = block('a', { findings: [finding('a', 1, 0.9), finding('a', 2, 0.8), finding('a', 3, 0.7)], anomalous: 0, operations: 0, events: 0 });
    const weak = block('b', { findings: [finding('b', 1, 0.3), finding('b', 2, 0.2)], anomalous: 0, operations: 0, events: 0 });
    const two = answerOf(strong, weak);
    const whole = compactResponse(two, null);
    const oneEach = compactResponse({ ...two, results: { a: { ...strong, findings: strong.findings.slice(0, 1) }, b: { ...weak, findings: weak.findings.slice(0, 1) } } }, null);
    const tight = compactResponse(two, oneEach.budget.bytes + 200);
    expect(tight.budget.bytes).toBeLessThan(whole.budget.bytes);
    expect(tight.results['a']!.findings.map((f) => f.score)).toEqual([0.9]);
    expect(tight.results['b']!.findings.map((f) => f.score)).toEqual([0.3]);
    const none = compactResponse(full, 2048);
    expect(Object.values(none.results).map((b) => b.findings.length)).toEqual([0, 0, 0]);
    expect(none.budget).toMatchObject({ max_bytes: 2048, fits: false, dropped: 27 });
    expect(none.budget.bytes).toBe(jsonBytes(none));
  });

  it('any answer, any budget: its own size to the byte, within the budget or with nothing left to drop', () => {
    const service = fc.record({
      scores: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }),
      text: fc.string({ unit: 'grapheme', maxLength: 300 }),
      anomalous: fc.nat(6),
      operations: fc.nat(4),
      events: fc.nat(5),
    });
    fc.assert(
      fc.property(fc.array(service, { minLength: 1, maxLength: 10 }), fc.integer({ min: 2048, max: 40_000 }), (specs, budget) => {
        const blocks = specs.map((sp, k) =>
          block(`svc-${k}`, {
            findings: [...sp.scores].sort((x, y) => y - x).map((sc, i) => ({ ...finding(`svc-${k}`, i, sc), summary: sp.text })),
            anomalous: sp.anomalous,
            operations: sp.anomalous + sp.operations,
            events: sp.events,
          }),
        );
        const a = compactResponse(answerOf(...blocks), budget);
        expect(a.budget.bytes).toBe(jsonBytes(a));
        if (a.budget.fits) expect(a.budget.bytes).toBeLessThanOrEqual(budget);
        else for (const v of Object.values(a.results)) expect(v.findings.length + v.anomalous_operations.length + v.events.length).toBe(0);
      }),
      { numRuns: 150 },
    );
  });

  it('a busy answer (every service in errors) stays one', () => {
    const a = compactResponse({ results: {}, errors: { a: 'busy' } }, 4096);
    expect(a).toEqual({ detail: 'findings', results: {}, errors: { a: 'busy' }, budget: { max_bytes: 4096, bytes: jsonBytes(a), dropped: 0, fits: true } });
  });
});
