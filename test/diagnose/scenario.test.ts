// The diagnosis evaluation's scenario generator (testkit/scenario): deterministic per seed, a
// system of the promised shape, consistent traces, and the injected fault visible in the data it
// generates. One small case goes to a real server to show every signal is accepted and stored.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import {
  FAULT_KINDS,
  caseList,
  generateScenario,
  leavesOf,
  planScenario,
  reachProbabilities,
  runScenario,
  scoreCase,
  type CaseSpec,
  type FaultKind,
  type GenSpan,
  type ScenarioData,
  type Scenario,
} from '../../testkit/scenario/index.js';
import { startChildServer } from '../../testkit/server.js';
import { clientFor, queryRows } from '../helpers/client.js';

const NOW = 1_760_000_123_456_789; // a fixed clock: the same seed must give the same bytes
const SMALL = 40_000; // span budget for the property checks (the evaluation uses 130,000)
const cache = new Map<string, { sc: Scenario; data: ScenarioData }>();

function gen(seed: number, kind: FaultKind, maxSpans = SMALL) {
  const k = `${seed}/${kind}/${maxSpans}`;
  let v = cache.get(k);
  if (!v) {
    const sc = planScenario({ seed, kind, maxSpans }, NOW);
    v = { sc, data: generateScenario(sc) };
    cache.set(k, v);
  }
  return v;
}

const digest = (d: ScenarioData) => createHash('sha256').update(JSON.stringify(d)).digest('hex');
const isError = (s: GenSpan) => s.error;
const share = <T>(xs: T[], f: (x: T) => boolean) => (xs.length ? xs.filter(f).length / xs.length : NaN);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const serverSpans = (d: ScenarioData, svc: string) => d.spans.filter((s) => s.service === svc && s.kind === 2);
/** Spans of the 5-minute-aligned stretch well before the onset, and after it. */
const split = <T>(xs: T[], at: (x: T) => number, onset: number) => ({ before: xs.filter((x) => at(x) < onset - 600e6), after: xs.filter((x) => at(x) >= onset) });

describe('scenario generator', () => {
  it('is deterministic per seed and differs between seeds', () => {
    const a = planScenario({ seed: 5, kind: 'errors_leaf', maxSpans: SMALL }, NOW);
    const b = planScenario({ seed: 5, kind: 'errors_leaf', maxSpans: SMALL }, NOW);
    expect(a).toEqual(b);
    expect(digest(generateScenario(a))).toBe(digest(generateScenario(b)));
    const summaries = new Set([1, 2, 3, 4, 5, 6].map((s) => planScenario({ seed: s, kind: 'none' }, NOW).expectation.topology));
    expect(summaries.size).toBe(6);
  });

  it('keeps a case within the span budget over two 5-minute-aligned hours ending now', () => {
    const { sc, data } = gen(3, 'none', 130_000);
    expect(data.spans.length).toBeLessThanOrEqual(150_000);
    expect(data.spans.length).toBeGreaterThan(80_000);
    expect(sc.startUs % 300_000_000).toBe(0);
    expect(NOW - sc.startUs).toBeGreaterThanOrEqual(2 * 3_600e6);
    expect(data.spans.reduce((m, s) => Math.max(m, s.startUs + s.durationUs), 0)).toBeLessThanOrEqual(NOW);
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8])('seed %i: at least 8 services, a database client span, an LLM span, a noisy service, logs, metrics, profiles', (seed) => {
    const { sc, data } = gen(seed, 'none');
    const t = sc.topology;
    const services = new Set(data.spans.map((s) => s.service));
    expect(services.size).toBeGreaterThanOrEqual(8);
    expect(services.size).toBe(t.services.length); // every service gets traffic
    expect(t.depth).toBeGreaterThanOrEqual(2);
    expect(t.depth).toBeLessThanOrEqual(4);
    const db = data.spans.filter((s) => s.kind === 3 && (s.attributes['db.system'] ?? s.attributes['db.system.name']) === 'postgresql');
    expect(db.length).toBeGreaterThan(0);
    expect(new Set(db.map((s) => s.service))).toEqual(new Set([t.db.service]));
    const llm = data.spans.filter((s) => s.attributes['gen_ai.request.model'] !== undefined);
    expect(llm.length).toBeGreaterThan(0);
    expect(new Set(llm.map((s) => s.service))).toEqual(new Set([t.llm.service]));
    for (const s of llm.filter((x) => !x.error)) {
      expect(s.attributes['gen_ai.provider.name'] ?? s.attributes['gen_ai.system']).toBe(t.llm.provider);
      expect(s.attributes['gen_ai.usage.output_tokens'] ?? s.attributes['gen_ai.usage.completion_tokens']).toBeGreaterThan(0);
      expect(s.attributes['gen_ai.response.finish_reasons']).toEqual(expect.arrayContaining([expect.stringMatching(/stop|length/)]));
    }
    // Noisy but healthy: 5-12% errors and a heavy tail, the same in the first and the last hour.
    const noisy = serverSpans(data, t.noisy);
    const half = sc.startUs + (NOW - sc.startUs) / 2;
    for (const part of [noisy.filter((s) => s.startUs < half), noisy.filter((s) => s.startUs >= half)]) {
      expect(share(part, isError)).toBeGreaterThan(0.035);
      expect(share(part, isError)).toBeLessThan(0.15);
    }
    const d = noisy.map((s) => s.durationUs).sort((a, b) => a - b);
    // (its spans include its callees' time, which dilutes the tail of its own work)
    expect(d[Math.floor(d.length * 0.99)]! / median(d)).toBeGreaterThan(3);
    expect(d[d.length - 1]! / median(d)).toBeGreaterThan(10);
    // Every other service is healthy.
    for (const s of t.services.filter((x) => !x.noisy && x.level > 0)) expect(share(serverSpans(data, s.name), (x) => x.error && x.events.length > 0)).toBeLessThan(0.01);
    // Resource attributes of the promoted columns.
    for (const r of Object.values(data.resources))
      for (const k of ['service.version', 'service.instance.id', 'k8s.pod.name', 'k8s.deployment.name', 'k8s.namespace.name', 'container.image.name', 'container.image.tag']) expect(r[k], k).toBeTruthy();
    expect(data.logs.some((l) => l.severityText === 'INFO' && l.traceId)).toBe(true);
    const metricNames = new Set(data.metrics.map((m) => `${m.service}:${m.gauge !== undefined ? 'gauge' : 'histogram'}`));
    for (const s of t.services) for (const k of ['gauge', 'histogram']) expect(metricNames.has(`${s.name}:${k}`)).toBe(true);
    expect(new Set(data.profiles.map((p) => p.service)).size).toBeGreaterThanOrEqual(3);
  });

  it('varies the attribute conventions across seeds (old and new gen_ai and db names)', () => {
    const llm = new Set<boolean>();
    const db = new Set<boolean>();
    for (let seed = 1; seed <= 12; seed++) {
      const t = planScenario({ seed, kind: 'none' }, NOW).topology;
      llm.add(t.llm.newNames);
      db.add(t.db.newNames);
    }
    expect(llm).toEqual(new Set([true, false]));
    expect(db).toEqual(new Set([true, false]));
  });

  it.each([1, 4, 9])('seed %i: parent links are consistent and every cross-service hop is a topology edge', (seed) => {
    const { sc, data } = gen(seed, 'none');
    const byId = new Map(data.spans.map((s) => [`${s.traceId}/${s.spanId}`, s]));
    expect(byId.size).toBe(data.spans.length); // span ids unique within their trace
    const edges = new Set(sc.topology.edges.map((e) => `${e.caller}>${e.callee}`));
    // Every span is checked; the first few problems are reported (one expect a span is slow on 40,000).
    const problems: string[] = [];
    const problem = (s: GenSpan, what: string) => void (problems.length < 10 && problems.push(`${s.service} ${s.name} ${s.traceId}/${s.spanId}: ${what}`));
    let hops = 0;
    for (const s of data.spans) {
      if (s.parentSpanId === null) {
        if (s.service !== sc.topology.entry) problem(s, 'a root outside the entry service');
        continue;
      }
      const p = byId.get(`${s.traceId}/${s.parentSpanId}`);
      if (!p) {
        problem(s, 'no parent');
        continue;
      }
      if (s.startUs < p.startUs || s.startUs + s.durationUs > p.startUs + p.durationUs) problem(s, 'outside its parent');
      if (p.service !== s.service) {
        hops++;
        // A server span's parent is its caller's client span, naming it as peer.service.
        if (s.kind !== 2 || p.kind !== 3) problem(s, `kinds ${p.kind} > ${s.kind} across services`);
        if (p.attributes['peer.service'] !== s.service) problem(s, `peer.service ${String(p.attributes['peer.service'])}`);
        if (!edges.has(`${p.service}>${s.service}`)) problem(s, `no edge ${p.service}>${s.service}`);
      }
    }
    expect(problems).toEqual([]);
    expect(hops).toBeGreaterThan(1000);
  });

  it('varies how failures are recorded and how an outage looks across seeds', () => {
    const styles = new Set<string>();
    const modes = new Set<string>();
    for (let seed = 1; seed <= 16; seed++) {
      styles.add(planScenario({ seed, kind: 'errors_leaf' }, NOW).fault.errorStyle);
      modes.add(planScenario({ seed, kind: 'dependency_outage' }, NOW).fault.outageMode);
    }
    expect(styles).toEqual(new Set(['exception', 'error_type', 'status_only']));
    expect(modes).toEqual(new Set(['refused', 'timeout']));
  });

  it('picks fault targets of the right shape', () => {
    for (let seed = 1; seed <= 10; seed++) {
      for (const kind of FAULT_KINDS) {
        const sc = planScenario({ seed, kind }, NOW);
        const { target } = sc.fault;
        const t = sc.topology;
        if (kind === 'none') {
          expect(target).toBeNull();
          continue;
        }
        expect(target).not.toBe(t.entry);
        expect(target).not.toBe(t.noisy);
        if (kind === 'latency_leaf' || kind === 'errors_leaf' || kind === 'dependency_outage') expect(leavesOf(t)).toContain(target);
        if (kind === 'llm_degradation') expect(target).toBe(t.llm.service);
        if (kind === 'cpu_hot_spot') expect(t.services.find((s) => s.name === target)!.profiled).toBe(true);
        expect(reachProbabilities(t).get(target!)).toBeGreaterThan(0);
        expect(NOW - sc.fault.onsetUs).toBeGreaterThanOrEqual(10 * 60e6);
        expect(NOW - sc.fault.onsetUs).toBeLessThanOrEqual(46 * 60e6);
        expect(sc.expectation).toMatchObject({ seed, kind, entry: t.entry, service: target, onsetUs: sc.fault.onsetUs });
        expect(sc.expectation.signals.length).toBeGreaterThan(0);
      }
    }
  });
});

describe('the injected fault shows in the data', () => {
  const seeds = [2, 7];

  it.each(seeds)('latency_leaf (seed %i): the leaf serves slower after the onset', (seed) => {
    const { sc, data } = gen(seed, 'latency_leaf');
    const { before, after } = split(serverSpans(data, sc.fault.target!), (s) => s.startUs, sc.fault.onsetUs);
    expect(median(after.map((s) => s.durationUs))).toBeGreaterThan(3 * median(before.map((s) => s.durationUs)));
    const entry = split(serverSpans(data, sc.topology.entry), (s) => s.startUs, sc.fault.onsetUs);
    expect(share(entry.after, isError)).toBeLessThan(0.05); // slower, not failing
  });

  // Seeds 1, 2, 7 record the failures as error.type alone, with exception events, and by status alone.
  it.each([1, ...seeds])('errors_leaf (seed %i): the leaf fails after the onset, not before, recorded in the planned style', (seed) => {
    const { sc, data } = gen(seed, 'errors_leaf');
    const { before, after } = split(serverSpans(data, sc.fault.target!), (s) => s.startUs, sc.fault.onsetUs);
    expect(share(before, isError)).toBeLessThan(0.01);
    expect(share(after, isError)).toBeGreaterThan(0.15);
    // Recorded in the plan's style: exception event and error.type, error.type alone, or the status alone.
    const failing = after.filter((s) => isError(s) && s.attributes['http.response.status_code'] !== 502 && s.attributes['rpc.grpc.status_code'] !== 14);
    const style = sc.fault.errorStyle;
    const exceptionOf = (s: GenSpan) => s.events.find((e) => e.name === 'exception')?.attributes['exception.type'];
    if (style === 'exception') expect(failing.some((s) => exceptionOf(s) === sc.fault.errorType && s.attributes['error.type'] === sc.fault.errorType)).toBe(true);
    if (style === 'error_type') expect(failing.some((s) => s.attributes['error.type'] === sc.fault.errorType && s.events.length === 0)).toBe(true);
    if (style === 'status_only') expect(failing.some((s) => s.attributes['error.type'] === undefined && s.events.length === 0)).toBe(true);
    // The failure reaches the entry.
    const entry = split(serverSpans(data, sc.topology.entry), (s) => s.startUs, sc.fault.onsetUs);
    expect(share(entry.after, isError)).toBeGreaterThan(share(entry.before, isError) + 0.03);
  });

  it.each(seeds)('bad_deploy (seed %i): new version, instances and pods from the onset, failing', (seed) => {
    const { sc, data } = gen(seed, 'bad_deploy');
    const target = sc.fault.target!;
    const { before, after } = split(serverSpans(data, target), (s) => s.startUs, sc.fault.onsetUs);
    const version = (s: GenSpan) => data.resources[s.resource]!['service.version'];
    const pods = (xs: GenSpan[]) => new Set(xs.map((s) => data.resources[s.resource]!['k8s.pod.name']));
    expect(new Set(after.map(version))).toEqual(new Set([sc.fault.newVersion]));
    expect(new Set(before.map(version)).has(sc.fault.newVersion)).toBe(false);
    expect([...pods(after)].some((p) => pods(before).has(p))).toBe(false);
    expect(share(after, isError)).toBeGreaterThan(0.1);
    expect(share(before, isError)).toBeLessThan(0.01);
  });

  it.each(seeds)('error_log_burst (seed %i): a new ERROR message at a high rate, spans unchanged', (seed) => {
    const { sc, data } = gen(seed, 'error_log_burst');
    const target = sc.fault.target!;
    const errs = data.logs.filter((l) => l.service === target && l.severityText === 'ERROR');
    const { before, after } = split(errs, (l) => l.timeUs, sc.fault.onsetUs);
    const minutesAfter = (NOW - sc.fault.onsetUs) / 60e6;
    expect(after.length / minutesAfter).toBeGreaterThan(50);
    expect(before.length / ((sc.fault.onsetUs - 600e6 - sc.startUs) / 60e6)).toBeLessThan(2);
    expect(after.filter((l) => l.traceId === null).length).toBeGreaterThan(after.length * 0.9); // background lines, not requests
    const spans = split(serverSpans(data, target), (s) => s.startUs, sc.fault.onsetUs);
    expect(share(spans.after, isError)).toBeLessThan(0.02);
  });

  it.each(seeds)('cpu_hot_spot (seed %i): one function of a profiled service costs more CPU per request', (seed) => {
    const { sc, data } = gen(seed, 'cpu_hot_spot');
    const target = sc.fault.target!;
    const profiles = data.profiles.filter((p) => p.service === target);
    const { before, after } = split(profiles, (p) => p.startUs, sc.fault.onsetUs);
    const total = (ps: typeof profiles) => ps.reduce((a, p) => a + p.samples.reduce((b, s) => b + s.cpuNs, 0), 0) / ps.length;
    expect(total(after)).toBeGreaterThan(1.5 * total(before));
    const leafShare = (ps: typeof profiles) => {
      const by = new Map<string, number>();
      for (const p of ps) for (const s of p.samples) by.set(s.stack[s.stack.length - 1]!, (by.get(s.stack[s.stack.length - 1]!) ?? 0) + s.cpuNs);
      return by;
    };
    const b = leafShare(before);
    const a = leafShare(after);
    const grown = [...a].filter(([fn, v]) => v / after.length > 2.5 * ((b.get(fn) ?? 0) / before.length));
    expect(grown.length).toBe(1);
  });

  it.each(seeds)('llm_degradation (seed %i): finish reason `length` and errors after the onset', (seed) => {
    const { sc, data } = gen(seed, 'llm_degradation');
    const llm = data.spans.filter((s) => s.attributes['gen_ai.request.model'] !== undefined);
    const { before, after } = split(llm, (s) => s.startUs, sc.fault.onsetUs);
    const length = (s: GenSpan) => Array.isArray(s.attributes['gen_ai.response.finish_reasons']) && (s.attributes['gen_ai.response.finish_reasons'] as string[]).includes('length');
    expect(share(before, length)).toBeLessThan(0.1);
    expect(share(after, length)).toBeGreaterThan(0.3);
    expect(share(before, isError)).toBe(0);
    expect(share(after, isError)).toBeGreaterThan(0.02);
  });

  // Seed 2: connections refused; seed 7: client timeouts.
  it.each(seeds)('dependency_outage (seed %i): the service sends nothing from the onset; its callers are refused or time out', (seed) => {
    const { sc, data } = gen(seed, 'dependency_outage');
    const target = sc.fault.target!;
    const on = sc.fault.onsetUs;
    expect(data.spans.filter((s) => s.service === target && s.startUs >= on)).toEqual([]);
    expect(data.logs.filter((l) => l.service === target && l.timeUs >= on)).toEqual([]);
    expect(data.metrics.filter((m) => m.service === target && m.timeUs >= on)).toEqual([]);
    expect(data.profiles.filter((p) => p.service === target && p.startUs >= on)).toEqual([]);
    expect(data.spans.filter((s) => s.service === target && s.startUs < on).length).toBeGreaterThan(100);
    const calls = data.spans.filter((s) => s.kind === 3 && s.attributes['peer.service'] === target);
    const { before, after } = split(calls, (s) => s.startUs, on);
    expect(after.length).toBeGreaterThan(0);
    const refused = sc.fault.outageMode === 'refused';
    expect(after.every((s) => s.error && (refused ? s.attributes['error.type'] === 'ECONNREFUSED' : ['timeout', 'DEADLINE_EXCEEDED'].includes(String(s.attributes['error.type']))))).toBe(true);
    // Refused at once, or after the client's timeout.
    for (const s of after) refused ? expect(s.durationUs).toBeLessThan(5_000) : expect(s.durationUs).toBeGreaterThanOrEqual(sc.fault.timeoutUs);
    expect(share(before, isError)).toBeLessThan(0.01);
  });

  it('none: every service looks the same before and after the would-be onset', () => {
    const { sc, data } = gen(2, 'none');
    for (const s of sc.topology.services) {
      const { before, after } = split(serverSpans(data, s.name), (x) => x.startUs, sc.fault.onsetUs);
      expect(Math.abs(share(after, isError) - share(before, isError))).toBeLessThan(s.noisy ? 0.05 : 0.01);
    }
  });
});

describe('case list and scoring', () => {
  it('lists every faulty kind on distinct seeds, then the fault-free controls', () => {
    const cases = caseList({ perKind: 3, controls: 3 });
    expect(cases.length).toBe(24);
    expect(new Set(cases.map((c) => c.seed)).size).toBe(cases.length);
    for (const k of FAULT_KINDS) expect(cases.filter((c: CaseSpec) => c.kind === k).length).toBe(3);
    expect(caseList({ kinds: ['errors_leaf'], perKind: 2 })).toEqual([{ seed: 1, kind: 'errors_leaf' }, { seed: 2, kind: 'errors_leaf' }]);
  });

  it('scores top-1, top-3 and fault-free severity', () => {
    const e = planScenario({ seed: 1, kind: 'llm_degradation' }, NOW).expectation;
    const f = (service: string, signal: string, severity = 'high') => ({ kind: 'x', severity, summary: '', service, signal, score: 0.5 });
    const ok = { status: 200, ms: 1, error: null };
    expect(scoreCase(e, { ...ok, findings: [f(e.service!, 'error_rate')] })).toMatchObject({ top1: true, top3: true });
    expect(scoreCase(e, { ...ok, findings: [f('x', 'error_rate'), f(e.service!, 'gen_ai_finish_reasons')] })).toMatchObject({ top1: false, top3: true });
    expect(scoreCase(e, { ...ok, findings: [f(e.service!, 'latency_p95')] })).toMatchObject({ top1: false, top3: false });
    expect(scoreCase(e, { status: 501, ms: 1, error: 'HTTP 501', findings: null })).toMatchObject({ top1: false, top3: false, pass: false });
    const none = planScenario({ seed: 1, kind: 'none' }, NOW).expectation;
    expect(scoreCase(none, { ...ok, findings: [f('a', 'error_rate', 'low')] })).toMatchObject({ pass: true, maxSeverity: 'low' });
    expect(scoreCase(none, { ...ok, findings: [f('a', 'error_rate', 'medium')] })).toMatchObject({ pass: false, maxSeverity: 'medium' });
  });
});

describe('sent to a real server', () => {
  it('every signal is accepted and stored: spans, logs, metrics and profiles of every service', async () => {
    const srv = await startChildServer({ SVC_DETECT_INTERVAL_S: '3600' });
    try {
      const run = await runScenario(srv, { seed: 11, kind: 'bad_deploy', hours: 1, maxSpans: 15_000 });
      const q = (sql: string) => queryRows(clientFor(srv.api), sql);
      const from = `TIMESTAMP '${new Date(run.expectation.startUs / 1000 - 60_000).toISOString().replace('T', ' ').replace('Z', '')}'`;
      const count = async (table: string) => Number((await q(`SELECT count(*) AS n FROM ${table} WHERE timestamp >= ${from}`))[0]!['n']);
      expect(await count('svc_spans')).toBe(run.sent.spans);
      expect(await count('svc_logs')).toBe(run.sent.logs);
      expect(await count('svc_profiles')).toBeGreaterThan(0);
      expect((await count('svc_metrics_gauge')) + (await count('svc_metrics_histogram'))).toBe(run.sent.metrics);
      const services = await q(`SELECT DISTINCT service_name FROM svc_spans WHERE timestamp >= ${from}`);
      expect(services.length).toBe(run.topology.services.length);
      const gen = await q(`SELECT count(*) AS n FROM svc_spans WHERE timestamp >= ${from} AND gen_ai_model IS NOT NULL AND gen_ai_finish_reasons IS NOT NULL AND gen_ai_output_tokens > 0`);
      expect(Number(gen[0]!['n'])).toBeGreaterThan(0);
      const db = await q(`SELECT count(*) AS n FROM svc_spans WHERE timestamp >= ${from} AND db_system = 'postgresql'`);
      expect(Number(db[0]!['n'])).toBeGreaterThan(0);
      const versions = await q(`SELECT count(DISTINCT service_version) AS n FROM svc_spans WHERE timestamp >= ${from} AND service_name = '${run.expectation.service}'`);
      expect(Number(versions[0]!['n'])).toBe(2);
    } finally {
      await srv.stop();
      srv.cleanup();
    }
  }, 180_000); // a real server and an hour of a system: ~25 s alone, several times that on a busy machine
});
