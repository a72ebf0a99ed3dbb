// The recorded-style cases of eval:diagnose (bench/lib/scenario/recorded.ts, issue 27): deterministic
// per seed, telemetry shaped like a recording (nothing but ids, service, pod, name and times on
// spans; levels only in log text; per-pod gauges), and every shape with the property it claims.
// Pure checks on the generated data: no server.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import {
  RECORDED_SHAPES,
  generateRecorded,
  planRecorded,
  recordedCaseList,
  scoreCase,
  serviceOf,
  type GenSpan,
  type RecordedPlan,
  type RecordedShape,
  type ScenarioData,
} from '../../bench/lib/scenario/index.js';

const NOW = 1_760_000_123_456_789;
const SMALL = 8_000; // span budget for the property checks (the evaluation uses 40,000)
const MIN = 60e6;
const cache = new Map<string, { p: RecordedPlan; d: ScenarioData }>();

function gen(seed: number, shape: RecordedShape, maxSpans = SMALL) {
  const k = `${seed}/${shape}/${maxSpans}`;
  let v = cache.get(k);
  if (!v) {
    const p = planRecorded({ seed, shape, maxSpans }, NOW);
    v = { p, d: generateRecorded(p) };
    cache.set(k, v);
  }
  return v;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const digest = (d: ScenarioData) => createHash('sha256').update(JSON.stringify(d)).digest('hex');
const byId = (d: ScenarioData) => new Map(d.spans.map((s) => [s.spanId, s]));
/** Spans of `svc` whose parent is in another service: its server side of a call. */
const ownServerSpans = (d: ScenarioData, svc: string) => {
  const ids = byId(d);
  return d.spans.filter((s) => s.service === svc && s.parentSpanId && ids.get(s.parentSpanId) && ids.get(s.parentSpanId)!.service !== svc);
};
/** The callers' spans around calls into `svc` (the parents of its server spans). */
const callerSpans = (d: ScenarioData, svc: string) => {
  const ids = byId(d);
  return ownServerSpans(d, svc).map((s) => ids.get(s.parentSpanId!)!);
};
const before = (xs: GenSpan[], p: RecordedPlan) => xs.filter((s) => s.startUs < p.onsetUs - 30e6 && !(p.earlier && s.startUs >= p.earlier.fromUs - 30e6));
const after = (xs: GenSpan[], p: RecordedPlan) => xs.filter((s) => s.startUs >= p.onsetUs + 2e6);
const dur = (xs: GenSpan[]) => median(xs.map((s) => s.durationUs));

describe('recorded-style cases', () => {
  it('are deterministic per seed and differ between seeds', () => {
    const a = planRecorded({ seed: 1003, shape: 'network_delay', maxSpans: SMALL }, NOW);
    const b = planRecorded({ seed: 1003, shape: 'network_delay', maxSpans: SMALL }, NOW);
    expect(a).toEqual(b);
    expect(digest(generateRecorded(a))).toBe(digest(generateRecorded(b)));
    expect(digest(generateRecorded(planRecorded({ seed: 1004, shape: 'network_delay', maxSpans: SMALL }, NOW)))).not.toBe(digest(generateRecorded(a)));
  });

  it('lists at least 10 cases of every shape by default, each on its own seed', () => {
    const list = recordedCaseList();
    for (const shape of RECORDED_SHAPES) expect(list.filter((c) => c.shape === shape).length).toBeGreaterThanOrEqual(10);
    const own = list.filter((c) => c.shape !== 'grid_shift');
    expect(new Set(own.map((c) => c.seed)).size).toBe(own.length);
  });

  it.each(RECORDED_SHAPES.map((s) => [s]))('%s: spans carry ids, service, pod, name and times only; logs have a level word and no severity; gauges per pod', (shape) => {
    const { p, d } = gen(1100 + RECORDED_SHAPES.indexOf(shape), shape);
    expect(d.spans.length).toBeGreaterThan(1000);
    if (shape === 'fault_free') expect(p.expectation.service).toBeNull();
    else expect(d.spans.filter((s) => s.service === p.expectation.service && s.startUs >= p.onsetUs).length).toBeGreaterThan(20);
    for (const s of d.spans) {
      expect(s.kind).toBe(0);
      expect(s.error).toBe(false);
      expect(s.statusMessage).toBe('');
      expect(s.attributes).toEqual({});
      expect(s.events).toEqual([]);
      expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
    }
    for (const res of Object.values(d.resources)) expect(Object.keys(res).sort()).toEqual(['k8s.pod.name', 'service.instance.id', 'service.name']);
    expect(d.logs.length).toBeGreaterThan(100);
    for (const l of d.logs) {
      expect(l.severityNumber).toBe(0);
      expect(l.severityText).toBe('');
      expect(l.body).toMatch(/^\S+ \S+ +(INFO|WARN|ERROR) \[/);
      expect(l.traceId).toMatch(/^[0-9a-f]{32}$/);
    }
    expect(d.profiles).toEqual([]);
    expect(d.metrics.every((m) => m.gauge !== undefined && m.histogram === undefined)).toBe(true);
    // One point a pod, gauge and minute at most (and most minutes have their points).
    const keys = d.metrics.map((m) => `${m.resource}|${m.name}|${Math.floor(m.timeUs / MIN)}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(d.metrics.map((m) => m.name)).size).toBe(9);
    expect(d.spans.reduce((m, s) => Math.max(m, s.startUs + s.durationUs), 0)).toBeLessThanOrEqual(NOW + 5_000);
    // The onset sits in its 5-minute bucket where the plan says, and the window is its first 3 minutes.
    expect(Math.floor((p.onsetUs % 300e6) / 1e6)).toBe(p.expectation.gridOffsetS);
    if (shape === 'default_window') {
      expect(p.expectation.window).toBeNull();
      expect(NOW - p.onsetUs).toBeLessThan(15 * MIN);
      expect(NOW - p.onsetUs).toBeGreaterThan(3 * MIN);
    } else expect(p.expectation.window).toEqual({ fromUs: p.onsetUs, toUs: p.onsetUs + 3 * MIN });
  });

  it('short_history: two minutes of data before the onset', () => {
    const { p, d } = gen(1200, 'short_history');
    const first = Math.min(...d.spans.map((s) => s.startUs));
    expect(p.onsetUs - first).toBeLessThanOrEqual(2 * MIN + 5e6);
    expect(p.onsetUs - first).toBeGreaterThan(1.5 * MIN);
  });

  it('hour_gaps: an hour or more with no telemetry at all in the history, and the history is longer than two hours', () => {
    const { p, d } = gen(1201, 'hour_gaps');
    const times = [...d.spans.map((s) => s.startUs)].sort((a, b) => a - b);
    let gap = 0;
    for (let i = 1; i < times.length; i++) if (times[i]! < p.onsetUs) gap = Math.max(gap, times[i]! - times[i - 1]!);
    expect(gap).toBeGreaterThanOrEqual(59 * MIN);
    expect(p.onsetUs - times[0]!).toBeGreaterThan(2 * 60 * MIN);
    expect(d.logs.filter((l) => l.timeUs > p.gaps[0]![0] + 1e6 && l.timeUs < p.gaps[0]![1])).toEqual([]);
  });

  it('earlier_incident: the same service had the same kind of fault 10 minutes before and recovered', () => {
    for (const seed of [1202, 1203, 1204, 1205]) {
      const { p, d } = gen(seed, 'earlier_incident');
      const t = p.target!;
      expect(p.earlier!.fromUs).toBe(p.onsetUs - 10 * MIN);
      const inRange = (x: number, from: number, to: number) => x >= from && x < to;
      if (p.effect === 'self_latency') {
        const own = d.spans.filter((s) => s.service === t);
        const med = (from: number, to: number) => dur(own.filter((s) => inRange(s.startUs, from, to)));
        const calm = med(p.onsetUs - 40 * MIN, p.earlier!.fromUs);
        expect(med(p.earlier!.fromUs, p.earlier!.toUs)).toBeGreaterThan(2 * calm);
        expect(med(p.earlier!.toUs + 30e6, p.onsetUs)).toBeLessThan(1.3 * calm);
        expect(med(p.onsetUs, p.onsetUs + 3 * MIN)).toBeGreaterThan(2 * calm);
      } else {
        const errs = d.logs.filter((l) => l.service === t && / ERROR /.test(l.body) && /Exception/.test(l.body));
        const count = (from: number, to: number) => errs.filter((l) => inRange(l.timeUs, from, to)).length / ((to - from) / MIN);
        expect(count(p.earlier!.fromUs, p.earlier!.toUs)).toBeGreaterThan(5 * Math.max(0.2, count(p.onsetUs - 40 * MIN, p.earlier!.fromUs)));
        expect(count(p.onsetUs, p.onsetUs + 3 * MIN)).toBeGreaterThan(5 * Math.max(0.2, count(p.earlier!.toUs + 30e6, p.onsetUs)));
      }
    }
  });

  it('network_delay: the callee\'s own spans stay flat while the callers\' spans around its calls slow down', () => {
    for (const seed of [1210, 1211, 1212]) {
      const { p, d } = gen(seed, 'network_delay');
      const own = ownServerSpans(d, p.target!);
      expect(dur(after(own, p)) / dur(before(own, p))).toBeGreaterThan(0.85);
      expect(dur(after(own, p)) / dur(before(own, p))).toBeLessThan(1.15);
      // Calls to the delayed pod: the callers wait the delay on top of the callee's own time.
      const pod = d.resources[`${p.target}|${p.pod}`]!['k8s.pod.name'];
      const podOwn = own.filter((s) => d.resources[s.resource]!['k8s.pod.name'] === pod);
      const ids = byId(d);
      const around = (xs: GenSpan[]) => xs.map((s) => ids.get(s.parentSpanId!)!);
      expect(dur(around(after(podOwn, p)))).toBeGreaterThan(dur(around(before(podOwn, p))) + 100_000);
      expect(callerSpans(d, p.target!).every((s) => s.service !== p.target)).toBe(true);
    }
  });

  it('cpu_starved: a caller with several callees slows around its calls while the callees stay flat, and its pod\'s CPU gauge saturates', () => {
    for (const seed of [1220, 1221, 1222]) {
      const { p, d } = gen(seed, 'cpu_starved');
      const t = p.target!;
      const callees = [...new Set(p.topology.edges.filter((e) => e.caller === t).map((e) => e.callee))];
      expect(callees.length).toBeGreaterThanOrEqual(2);
      expect(serviceOf(p.topology, t).level).toBeGreaterThan(0); // not the diagnosed entry itself
      for (const c of callees) {
        const own = ownServerSpans(d, c);
        expect(dur(after(own, p)) / dur(before(own, p))).toBeLessThan(1.2);
      }
      const pod = `${t}|${p.pod}`;
      // The target's spans around its calls wait for a core on top of the callees' own time.
      const around = callees.flatMap((c) => callerSpans(d, c)).filter((s) => s.resource === pod);
      expect(dur(after(around, p))).toBeGreaterThan(dur(before(around, p)) + 20_000);
      const podSpans = d.spans.filter((s) => s.resource === pod);
      expect(dur(after(podSpans, p))).toBeGreaterThan(1.5 * dur(before(podSpans, p)));
      const cpu = d.metrics.filter((m) => m.resource === pod && /cpu/.test(m.name));
      expect(median(cpu.filter((m) => m.timeUs >= p.onsetUs + MIN).map((m) => m.gauge!))).toBeGreaterThan(0.9);
      expect(median(cpu.filter((m) => m.timeUs < p.onsetUs - MIN).map((m) => m.gauge!))).toBeLessThan(0.5);
    }
  });

  it('exception_logs: ERROR lines with stack traces and trace ids on the faulty service, and no error status anywhere', () => {
    for (const seed of [1230, 1231, 1232]) {
      const { p, d } = gen(seed, 'exception_logs');
      const spanIds = new Set(d.spans.map((s) => s.spanId));
      const errs = d.logs.filter((l) => l.service === p.target && / ERROR \[/.test(l.body) && /\n\tat /.test(l.body));
      const rate = (from: number, to: number) => errs.filter((l) => l.timeUs >= from && l.timeUs < to).length / ((to - from) / MIN);
      expect(rate(p.onsetUs, p.onsetUs + 3 * MIN)).toBeGreaterThan(5 * Math.max(0.2, rate(p.onsetUs - 40 * MIN, p.onsetUs)));
      const fresh = errs.filter((l) => l.timeUs >= p.onsetUs);
      expect(fresh.filter((l) => spanIds.has(l.spanId!)).length / fresh.length).toBeGreaterThan(0.9);
      expect(fresh.every((l) => l.body.includes(l.traceId!))).toBe(true);
      expect(d.spans.some((s) => s.error || s.statusMessage !== '')).toBe(false);
    }
  });

  it('wrong_return: the callers call the faulty service more often (retries) and drop later calls; its own spans stay flat', () => {
    for (const seed of [1240, 1241, 1242]) {
      const { p, d } = gen(seed, 'wrong_return');
      const t = p.target!;
      const own = ownServerSpans(d, t);
      expect(dur(after(own, p)) / dur(before(own, p))).toBeGreaterThan(0.8);
      expect(dur(after(own, p)) / dur(before(own, p))).toBeLessThan(1.25);
      // Calls into the target per entry request go up at the onset.
      const roots = d.spans.filter((s) => s.parentSpanId === null);
      const perRoot = (xs: GenSpan[], rs: GenSpan[]) => xs.length / rs.length;
      expect(perRoot(after(own, p), after(roots, p))).toBeGreaterThan(1.15 * perRoot(before(own, p), before(roots, p)));
      // Some trace contains the same caller span calling the target twice or more.
      const parents = new Map<string, number>();
      const ids = byId(d);
      for (const s of after(own, p)) {
        const caller = ids.get(s.parentSpanId!);
        if (caller?.parentSpanId) parents.set(caller.parentSpanId, (parents.get(caller.parentSpanId) ?? 0) + 1);
      }
      expect([...parents.values()].some((n) => n >= 2)).toBe(true);
      expect(serviceOf(p.topology, t).level).toBeGreaterThan(0);
    }
  });

  it('grid_shift: pairs on one data seed with the onset 150 s apart in the 5-minute grid', () => {
    const list = recordedCaseList({ perShape: 4, shapes: ['grid_shift'] });
    expect(list.map((c) => c.seed)).toEqual([2000, 2001, 2002, 2003]);
    const a = planRecorded({ ...list[0]!, maxSpans: SMALL }, NOW);
    const b = planRecorded({ ...list[1]!, maxSpans: SMALL }, NOW);
    expect(a.target).toBe(b.target);
    expect(a.topology).toEqual(b.topology);
    expect((b.expectation.gridOffsetS - a.expectation.gridOffsetS + 300) % 300).toBe(150);
    // The same data, only moved along the grid: every time relative to the onset is the same (up to
    // 4 minutes after it; the data ends at the clock, not at a time relative to the onset).
    const rel = (p: RecordedPlan) => {
      const d = generateRecorded(p);
      const upTo = p.onsetUs + 4 * MIN;
      return digest({
        ...d,
        spans: d.spans.filter((s) => s.startUs < upTo).map((s) => ({ ...s, startUs: s.startUs - p.onsetUs })),
        logs: d.logs.filter((l) => l.timeUs < upTo).map((l) => ({ ...l, timeUs: l.timeUs - p.onsetUs, body: l.body.slice(24) })),
        metrics: [],
      });
    };
    expect(rel(b)).toBe(rel(a));
  });

  it('fault_free: nothing injected, two noisy services with ERROR logs throughout', () => {
    const { p, d } = gen(1250, 'fault_free');
    expect(p.effect).toBe('none');
    expect(p.noisy.length).toBe(2);
    for (const s of p.noisy) {
      const errs = d.logs.filter((l) => l.service === s && / ERROR \[/.test(l.body));
      expect(errs.filter((l) => l.timeUs < p.onsetUs).length).toBeGreaterThan(5);
    }
  });

  it('scores the service alone beside service and signal; an empty signal list takes any non-null signal', () => {
    const ok = { status: 200, ms: 1, error: null };
    const f = (service: string, signal: string | null) => ({ kind: 'change', severity: 'high', summary: '', service, signal });
    expect(scoreCase({ service: 'a', signals: ['latency_p95'] }, { ...ok, findings: [f('a', 'error_rate'), f('a', 'latency_p95')] })).toMatchObject({ top1: false, top3: true, top1Service: true, top3Service: true });
    expect(scoreCase({ service: 'a', signals: [] }, { ...ok, findings: [f('a', null), f('b', 'x'), f('c', 'y'), f('a', 'x')] })).toMatchObject({ top1: false, top3: false, top1Service: true });
    expect(scoreCase({ service: 'a', signals: [] }, { ...ok, findings: [f('b', 'x'), f('a', 'error_log_rate')] })).toMatchObject({ top1: false, top3: true, top1Service: false, top3Service: true });
  });
});
