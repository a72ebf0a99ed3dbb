// Resource gauges as evidence (evidence/gauges.ts): which names count, and which shifts at the onset are news.
import { describe, expect, it } from 'vitest';
import { gaugeShifts as shiftsOf, resourceKind } from '../../src/diagnose/evidence/gauges.js';
import type { GaugeRow } from '../../src/diagnose/reads/index.js';

const MIN = 60_000_000;
const ONSET = 1_800_000_000_000_000;

/** One gauge per minute for an hour before the onset and 3 minutes after, `before`/`after` ± a little. */
function series(pod: string, metric: string, before: number, after: number, service = 'cart'): GaugeRow[] {
  const out: GaugeRow[] = [];
  for (let m = -60; m < 3; m++) out.push({ service_name: service, pod, metric_name: metric, minute: ONSET + m * MIN, value: (m < 0 ? before : after) * (1 + 0.02 * Math.sin(m)) });
  return out;
}

const gaugeShifts = (rows: GaugeRow[], onset: number, to: number) => shiftsOf(rows, onset, to).shifts;

describe('resource gauges', () => {
  it('names: CPU and memory use and restart counts by the conventions or plain names; limits and CPU time do not count', () => {
    expect(resourceKind('container.cpu.utilization')).toBe('cpu');
    expect(resourceKind('cpu_usage')).toBe('cpu');
    expect(resourceKind('k8s.pod.memory.working_set')).toBe('memory');
    expect(resourceKind('memory_usage_bytes')).toBe('memory');
    expect(resourceKind('k8s.container.restarts')).toBe('restarts');
    expect(resourceKind('k8s.container.cpu_limit')).toBeNull();
    expect(resourceKind('process.cpu.time')).toBeNull();
    expect(resourceKind('system.memory.available')).toBeNull();
    expect(resourceKind('http.server.request.duration')).toBeNull();
  });

  it('a pod whose CPU jumps at the onset is a shift; its steady siblings and memory are not', () => {
    const rows = [...series('cart-0', 'container.cpu.utilization', 0.2, 0.97), ...series('cart-1', 'container.cpu.utilization', 0.2, 0.21), ...series('cart-0', 'k8s.pod.memory.working_set', 5e8, 5.05e8)];
    const shifts = gaugeShifts(rows, ONSET, ONSET + 3 * MIN);
    expect(shifts.map((s) => [s.pod, s.kind])).toEqual([['cart-0', 'cpu']]);
    expect(shifts[0]!.after).toBeGreaterThan(0.9);
    expect(shifts[0]!.before).toBeLessThan(0.25);
  });

  it('a restart count that rises is a restart; a short baseline or no point after the onset is no evidence', () => {
    expect(gaugeShifts(series('cart-0', 'k8s.container.restarts', 2, 3), ONSET, ONSET + 3 * MIN).map((s) => s.kind)).toEqual(['restarts']);
    expect(gaugeShifts(series('cart-0', 'k8s.container.restarts', 2, 2), ONSET, ONSET + 3 * MIN)).toEqual([]);
    const short = series('cart-0', 'cpu_usage', 0.2, 0.9).filter((r) => r.minute >= ONSET - 3 * MIN);
    expect(gaugeShifts(short, ONSET, ONSET + 3 * MIN)).toEqual([]);
    expect(gaugeShifts(series('cart-0', 'cpu_usage', 0.2, 0.9), ONSET + 10 * MIN, ONSET + 13 * MIN)).toEqual([]);
  });
});

describe('resource gauges against a contaminated history', () => {
  it("an earlier fault's minutes in the hour before leave the pod's own level and spread, so a new rise still stands out", () => {
    // An hour at 0.2 with a 12-minute earlier spike to 0.95 in it, then a rise to 0.9.
    const rows = series('cart-0', 'container.cpu.utilization', 0.2, 0.9).map((r) => {
      const m = (r.minute - ONSET) / MIN;
      return m >= -30 && m < -18 ? { ...r, value: 0.95 } : r;
    });
    const [shift] = gaugeShifts(rows, ONSET, ONSET + 3 * MIN);
    expect(shift).toMatchObject({ pod: 'cart-0', kind: 'cpu' });
    expect(shift!.before).toBeLessThan(0.25);
    expect(shift!.surprise).toBeGreaterThan(6);
  });
});
