import { describe, expect, it } from 'vitest';
import { buildTraceDetail, type SpanRow } from '../../src/query/trace-detail.js';
import { rng } from '../../testkit/rng.js';

const T0 = 1_700_000_000_000_000; // µs since epoch
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

interface Mk {
  id: string;
  parent?: string | null;
  start: number; // µs offset from T0
  dur: number;
  svc?: string;
  status?: number;
  name?: string;
}

function span(m: Mk): SpanRow {
  const start = T0 + m.start;
  return {
    trace_id: TRACE,
    span_id: m.id,
    parent_span_id: m.parent ?? null,
    service_name: m.svc ?? 'api',
    span_name: m.name ?? `op-${m.id}`,
    span_kind: 2,
    status_code: m.status ?? 0,
    timestamp: new Date(Math.floor(start / 1000)).toISOString(),
    duration_us: m.dur,
    trace_state: null,
    scope_name: 'test',
    scope_version: '1.0',
    resource_attributes: '{}',
    span_attributes: '{}',
    events_json: null,
    links_json: null,
    start_us: start,
  };
}

const SPEC_KEYS = [
  'trace_id', 'span_id', 'parent_span_id', 'service_name', 'span_name', 'span_kind', 'status_code', 'timestamp',
  'duration_us', 'trace_state', 'scope_name', 'scope_version', 'resource_attributes', 'span_attributes',
  'events_json', 'links_json',
].sort();

describe('buildTraceDetail: shape', () => {
  it('returns exactly the spec fields, spans without start_us, counts and services', () => {
    const d = buildTraceDetail([
      span({ id: 'b', parent: 'a', start: 10, dur: 50, svc: 'db', status: 2 }),
      span({ id: 'a', start: 0, dur: 100, svc: 'api' }),
      span({ id: 'c', parent: 'a', start: 60, dur: 30, svc: 'cache', status: 2 }),
    ]);
    expect(Object.keys(d).sort()).toEqual(
      ['critical_path', 'error_count', 'root_span', 'service_breakdown', 'services', 'span_count', 'spans', 'total_duration_us', 'trace_id'].sort(),
    );
    expect(d.trace_id).toBe(TRACE);
    expect(d.span_count).toBe(3);
    expect(d.error_count).toBe(2);
    expect(d.spans.map((s) => s.span_id)).toEqual(['a', 'b', 'c']); // by start
    for (const s of d.spans) expect(Object.keys(s).sort()).toEqual(SPEC_KEYS);
    expect(d.root_span.span_id).toBe('a');
    expect(d.services).toEqual(['api', 'db', 'cache']); // order of first start
    expect(d.spans.find((s) => s.span_id === 'b')!.parent_span_id).toBe('a');
    expect(JSON.parse(JSON.stringify(d))).toEqual(d); // JSON-safe
  });

  it('accepts bigint durations/starts from DuckDB and outputs numbers', () => {
    const r = span({ id: 'a', start: 0, dur: 7 });
    const d = buildTraceDetail([{ ...r, duration_us: 7n, start_us: BigInt(T0) }]);
    expect(d.root_span.duration_us).toBe(7);
    expect(d.total_duration_us).toBe(7);
  });

  it('throws on an empty trace', () => {
    expect(() => buildTraceDetail([])).toThrow(RangeError);
  });

  it('keeps a span id stored twice only once', () => {
    const d = buildTraceDetail([span({ id: 'a', start: 0, dur: 10 }), span({ id: 'a', start: 0, dur: 10 })]);
    expect(d.span_count).toBe(1);
  });

  it('treats an empty or all-zero parent id as no parent', () => {
    const d = buildTraceDetail([span({ id: 'x', parent: '', start: 5, dur: 1 }), span({ id: 'y', parent: '0000000000000000', start: 0, dur: 10 })]);
    expect(d.spans.every((s) => s.parent_span_id === null)).toBe(true);
    expect(d.root_span.span_id).toBe('y'); // the longer of two roots
  });
});

describe('buildTraceDetail: critical path', () => {
  it('single span', () => {
    const d = buildTraceDetail([span({ id: 'a', start: 0, dur: 42, svc: 'solo' })]);
    expect(d.critical_path).toEqual(['a']);
    expect(d.total_duration_us).toBe(42);
    expect(d.service_breakdown).toEqual([{ service: 'solo', duration_us: 42, percentage: 100 }]);
  });

  it('sequential children are all on the path, in time order', () => {
    const d = buildTraceDetail([
      span({ id: 'root', start: 0, dur: 100 }),
      span({ id: 'c2', parent: 'root', start: 40, dur: 30 }),
      span({ id: 'c1', parent: 'root', start: 5, dur: 30 }),
      span({ id: 'c3', parent: 'root', start: 75, dur: 20 }),
    ]);
    expect(d.critical_path).toEqual(['root', 'c1', 'c2', 'c3']);
  });

  it('concurrent children: only the one that finishes last (and what precedes it) counts', () => {
    // fast and slow run in parallel from t=10; slow ends at 80, fast at 30; then tail 85..95.
    const d = buildTraceDetail([
      span({ id: 'root', start: 0, dur: 100 }),
      span({ id: 'fast', parent: 'root', start: 10, dur: 20 }),
      span({ id: 'slow', parent: 'root', start: 10, dur: 70 }),
      span({ id: 'slow-db', parent: 'slow', start: 20, dur: 50, svc: 'db' }),
      span({ id: 'slow-cache', parent: 'slow', start: 15, dur: 10, svc: 'cache' }), // overlaps slow-db: skipped
      span({ id: 'tail', parent: 'root', start: 85, dur: 10 }),
    ]);
    expect(d.critical_path).toEqual(['root', 'slow', 'slow-db', 'tail']);
    expect(d.critical_path).not.toContain('fast');
    expect(d.critical_path).not.toContain('slow-cache');
  });

  it('a child that ends before a concurrent sibling starts is on the path', () => {
    // a: 0..30, b: 20..60 (concurrent with a), c: 60..90. Walk back: c, then b (ends 60 <= 60), then a ends 30 > b.start 20: skipped.
    const d = buildTraceDetail([
      span({ id: 'r', start: 0, dur: 100 }),
      span({ id: 'a', parent: 'r', start: 0, dur: 30 }),
      span({ id: 'b', parent: 'r', start: 20, dur: 40 }),
      span({ id: 'c', parent: 'r', start: 60, dur: 30 }),
    ]);
    expect(d.critical_path).toEqual(['r', 'b', 'c']);
  });

  it('clock skew: a child overflowing its parent is clamped, one wholly outside is never on the path', () => {
    const d = buildTraceDetail([
      span({ id: 'r', start: 1000, dur: 100 }),
      // starts 50µs before its parent (skewed clock), ends inside: clamped to 1000..1060, on the path
      span({ id: 'early', parent: 'r', start: 950, dur: 110, svc: 'remote' }),
      // ends after its parent: clamped to 1070..1100, on the path; its child lies in the clamped-away part
      span({ id: 'late', parent: 'r', start: 1070, dur: 200, svc: 'remote' }),
      span({ id: 'late-kid', parent: 'late', start: 1150, dur: 50, svc: 'remote' }),
      // entirely after the parent ended: contributes no time to the parent
      span({ id: 'outside', parent: 'r', start: 5000, dur: 10, svc: 'remote' }),
    ]);
    expect(d.critical_path).toEqual(['r', 'early', 'late']);
    // totals use raw times over all spans
    expect(d.total_duration_us).toBe(5010 - 950);
  });

  it('skew: a clamped child still beats a concurrent sibling when it ends last within the parent', () => {
    const d = buildTraceDetail([
      span({ id: 'r', start: 0, dur: 100 }),
      span({ id: 'skewed', parent: 'r', start: 50, dur: 500 }), // clamped to 50..100
      span({ id: 'other', parent: 'r', start: 10, dur: 80 }), // 10..90, concurrent with skewed
    ]);
    expect(d.critical_path).toEqual(['r', 'skewed']);
  });

  it('deep chain of 10,000 spans does not overflow the stack', () => {
    const n = 10_000;
    const rows: SpanRow[] = [];
    for (let i = 0; i < n; i++) rows.push(span({ id: `s${i}`, parent: i === 0 ? null : `s${i - 1}`, start: i, dur: 2 * n - 2 * i }));
    rows.reverse();
    const d = buildTraceDetail(rows);
    expect(d.span_count).toBe(n);
    expect(d.root_span.span_id).toBe('s0');
    expect(d.critical_path.length).toBe(n);
    expect(d.critical_path[0]).toBe('s0');
    expect(d.critical_path[n - 1]).toBe(`s${n - 1}`);
  });

  it('wide trace of 10,000 sequential siblings', () => {
    const n = 10_000;
    const rows: SpanRow[] = [span({ id: 'r', start: 0, dur: n * 10 })];
    for (let i = 0; i < n; i++) rows.push(span({ id: `k${i}`, parent: 'r', start: i * 10, dur: 10 }));
    const d = buildTraceDetail(rows);
    expect(d.critical_path.length).toBe(n + 1);
    expect(d.critical_path[1]).toBe('k0');
  });

  it('survives a parent cycle in bad data', () => {
    const d = buildTraceDetail([span({ id: 'a', parent: 'b', start: 0, dur: 10 }), span({ id: 'b', parent: 'a', start: 1, dur: 5 })]);
    expect(d.root_span.span_id).toBe('a'); // earliest
    expect(d.critical_path).toEqual(['a', 'b']);
  });
});

describe('buildTraceDetail: root selection', () => {
  it('missing parents: the earliest-starting span whose parent is absent', () => {
    const d = buildTraceDetail([
      span({ id: 'x', parent: 'gone1', start: 20, dur: 500 }),
      span({ id: 'y', parent: 'gone2', start: 10, dur: 50 }),
      span({ id: 'y1', parent: 'y', start: 15, dur: 20 }),
    ]);
    expect(d.root_span.span_id).toBe('y');
    expect(d.root_span.parent_span_id).toBe('gone2');
    expect(d.critical_path).toEqual(['y', 'y1']);
    expect(d.span_count).toBe(3);
    expect(d.total_duration_us).toBe(520 - 10);
  });

  it('multiple roots: the longest wins, then the earliest', () => {
    const d = buildTraceDetail([
      span({ id: 'short', start: 0, dur: 10 }),
      span({ id: 'long', start: 5, dur: 100 }),
      span({ id: 'long-kid', parent: 'long', start: 10, dur: 20 }),
    ]);
    expect(d.root_span.span_id).toBe('long');
    expect(d.critical_path).toEqual(['long', 'long-kid']);
    const tie = buildTraceDetail([span({ id: 'later', start: 5, dur: 10 }), span({ id: 'first', start: 0, dur: 10 })]);
    expect(tie.root_span.span_id).toBe('first');
  });

  it('a true root is preferred over an orphan', () => {
    const d = buildTraceDetail([span({ id: 'orphan', parent: 'gone', start: 0, dur: 1000 }), span({ id: 'root', start: 10, dur: 5 })]);
    expect(d.root_span.span_id).toBe('root');
  });
});

describe('buildTraceDetail: service breakdown', () => {
  it('sums inclusive durations per service, largest first, percentages summing to 100', () => {
    const d = buildTraceDetail([
      span({ id: 'r', start: 0, dur: 100, svc: 'front' }),
      span({ id: 'a', parent: 'r', start: 0, dur: 60, svc: 'back' }),
      span({ id: 'b', parent: 'a', start: 0, dur: 50, svc: 'db' }),
      span({ id: 'c', parent: 'r', start: 60, dur: 40, svc: 'back' }),
    ]);
    expect(d.service_breakdown).toEqual([
      { service: 'front', duration_us: 100, percentage: 40 }, // tie: earlier-starting service first
      { service: 'back', duration_us: 100, percentage: 40 },
      { service: 'db', duration_us: 50, percentage: 20 },
    ]);
  });

  it('rounds thirds so the shares still sum to 100', () => {
    const d = buildTraceDetail([
      span({ id: 'r', start: 0, dur: 10, svc: 'a' }),
      span({ id: 's', parent: 'r', start: 0, dur: 10, svc: 'b' }),
      span({ id: 't', parent: 'r', start: 0, dur: 10, svc: 'c' }),
    ]);
    const pcts = d.service_breakdown.map((e) => e.percentage);
    expect(pcts.reduce((x, y) => x + y, 0)).toBeCloseTo(100, 9);
    for (const p of pcts) expect(p).toBeGreaterThanOrEqual(33.33);
  });

  it('all zero-length spans: shares by span count', () => {
    const d = buildTraceDetail([
      span({ id: 'r', start: 0, dur: 0, svc: 'a' }),
      span({ id: 's', parent: 'r', start: 0, dur: 0, svc: 'b' }),
      span({ id: 't', parent: 'r', start: 0, dur: 0, svc: 'b' }),
      span({ id: 'u', parent: 'r', start: 0, dur: 0, svc: 'b' }),
    ]);
    expect(d.service_breakdown.find((e) => e.service === 'b')!.percentage).toBe(75);
    expect(d.total_duration_us).toBe(0);
    expect(d.critical_path).toEqual(['r']);
  });
});

describe('buildTraceDetail: invariants on random traces', () => {
  it('the path is a chain of parent links from the root; chosen siblings never overlap; shares sum to 100', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const r = rng(seed);
      const n = 1 + Math.floor(r() * 60);
      const rows: SpanRow[] = [];
      const iv: Array<[number, number]> = [];
      for (let i = 0; i < n; i++) {
        const p = i === 0 ? -1 : Math.floor(r() * i);
        const [ps, pe] = p < 0 ? [0, 10_000] : iv[p]!;
        // children mostly inside the parent, sometimes skewed outside
        const skew = r() < 0.1 ? Math.floor((r() - 0.5) * 4000) : 0;
        const s = ps + Math.floor(r() * Math.max(1, pe - ps)) + skew;
        const d = Math.floor(r() * Math.max(1, pe - s));
        iv.push([s, s + d]);
        rows.push(span({ id: `s${i}`, parent: p < 0 ? null : `s${p}`, start: s, dur: d, svc: `svc${Math.floor(r() * 4)}`, status: r() < 0.2 ? 2 : 0 }));
      }
      const d = buildTraceDetail(rows);
      const byId = new Map(d.spans.map((s) => [s.span_id, s]));
      const onPath = new Set(d.critical_path);
      expect(d.critical_path[0]).toBe('s0');
      expect(onPath.size).toBe(d.critical_path.length);
      for (const id of d.critical_path.slice(1)) expect(onPath.has(byId.get(id)!.parent_span_id!)).toBe(true);
      // siblings on the path are sequential within their parent's clamped interval
      const raw = new Map(rows.map((x) => [x.span_id, [Number(x.start_us), Number(x.start_us) + Number(x.duration_us)] as [number, number]]));
      const clamped = new Map<string, [number, number]>([['s0', raw.get('s0')!]]);
      const kids = new Map<string, string[]>();
      for (const id of d.critical_path.slice(1)) {
        const p = byId.get(id)!.parent_span_id!;
        const [lo, hi] = clamped.get(p)!; // pre-order: the parent comes first
        const [a, b] = raw.get(id)!;
        clamped.set(id, [Math.max(a, lo), Math.min(b, hi)]);
        expect(Math.min(b, hi)).toBeGreaterThan(Math.max(a, lo)); // never a span wholly outside its parent
        kids.set(p, [...(kids.get(p) ?? []), id]);
      }
      for (const [, ks] of kids) {
        for (let i = 1; i < ks.length; i++) expect(clamped.get(ks[i - 1]!)![1]).toBeLessThanOrEqual(clamped.get(ks[i]!)![0]);
      }
      expect(d.span_count).toBe(n);
      expect(d.error_count).toBe(rows.filter((x) => x.status_code === 2).length);
      expect(d.service_breakdown.reduce((a, e) => a + e.percentage, 0)).toBeCloseTo(100, 6);
      expect(d.service_breakdown.reduce((a, e) => a + e.duration_us, 0)).toBe(rows.reduce((a, x) => a + Number(x.duration_us), 0));
      expect(new Set(d.services)).toEqual(new Set(rows.map((x) => x.service_name)));
      const starts = rows.map((x) => Number(x.start_us));
      const ends = rows.map((x) => Number(x.start_us) + Number(x.duration_us));
      expect(d.total_duration_us).toBe(Math.max(...ends) - Math.min(...starts));
    }
  });
});
