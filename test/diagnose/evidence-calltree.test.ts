// Unit tests of the call tree's evidence (calltree.ts, evidence/latency.ts, paths.ts, log-levels.ts) and the ranking, on simulated call trees. The generator (simulate) walks a small service
// topology once per root request, 20 requests per 10-second bin: each visit to a service picks one of
// its pods, draws its own work and, for every call to a callee, the wire time, both log-normal around
// a median (times a slow per-service wobble, new every 30 s), and adds them to rows keyed by (service,
// pod, callee, callee pod, bin) the way the fine-binned call-tree statement does: Σ and Σ² of exclusive
// time, Σ ln(x + 1) and its squares, the same over the span's total duration, and Σ duration. Own-work
// rows are `entry` rows (the requests the service received). Faults act from an onset (µs) on: they
// add wire time, multiply own work, or multiply calls per request. Everything is seeded (mulberry32).
import { describe, expect, it } from 'vitest';
import { prepareStructure, splitSeries } from '../../src/diagnose/calltree.js';
import { analyse, analyseFrom, top, whats } from './evidence-harness.js';
import type { Bin } from '../../src/diagnose/onset.js';
import { SLOW_CALL_US, type CallSequenceRow, type CallTreeRow, type LogLevelRow } from '../../src/diagnose/reads/index.js';
import { rng } from '../../testkit/rng.js';

const SEC = 1_000_000;
const MIN = 60 * SEC;
const BIN = 10 * SEC;
const FROM = 1_800_000_000 * SEC;
const TO = FROM + 3 * MIN;
const HISTORY = 60 * MIN;

const normal = (r: () => number) => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
function poisson(r: () => number, lambda: number): number {
  const l = Math.exp(-lambda);
  let k = 0;
  for (let p = r(); p > l; p *= r()) k++;
  return k;
}

interface Svc {
  pods: number;
  ownMs: number;
  /** Log-normal sigma of own work (0.3 unless set), and the share of 20x outliers. */
  sigma?: number;
  outliers?: number;
  /** [callee, calls per visit, median wire time ms]. */
  calls?: [string, number, number][];
}
interface Ctx {
  service: string;
  pod: number;
  /** null: the service's own work. */
  callee: string | null;
  calleePod: number;
}
interface Fault {
  at: number;
  until?: number;
  addMs?: (c: Ctx) => number;
  mul?: (c: Ctx) => number;
  calls?: (caller: string, callee: string) => number;
  /** Calls that get no answer: they time out after 2 s, counted as the call-tree statement counts them (a call to the callee, on no pod). */
  unanswered?: (c: Ctx) => boolean;
}
interface Sim {
  seed: number;
  topo: Record<string, Svc>;
  root?: string;
  start?: number;
  end?: number;
  faults?: Fault[];
  /** Root requests per bin (20 unless set). */
  perBin?: number;
}

function simulate({ seed, topo, root = 'gateway', start = FROM - HISTORY, end = TO, faults = [], perBin = 20 }: Sim): CallTreeRow[] {
  const r = rng(seed);
  const rows = new Map<string, CallTreeRow>();
  const wobble = new Map<string, number>();
  const add = (service: string, pod: string, callee: string | null, calleePod: string | null, bin: number, x: number, d: number) => {
    const key = [service, pod, callee, calleePod, bin].join('|');
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { service, pod, callee, callee_pod: calleePod, entry: callee === null, bin, n: 0, k: 0, sx: 0, sxx: 0, slx: 0, sllx: 0, sl: 0, sll: 0, sd: 0, kt: 0 }));
    const lx = Math.log(x + 1);
    const ld = Math.log(d + 1);
    row.n++;
    row.sx += x;
    row.sxx += x * x;
    row.slx += lx;
    row.sllx += lx * lx;
    row.sl += ld;
    row.sll += ld * ld;
    row.sd += d;
    if (x >= SLOW_CALL_US) row.kt++;
  };
  const draw = (ms: number, sigma: number, outliers: number) => ms * 1000 * Math.exp(sigma * normal(r)) * (r() < outliers ? 20 : 1);
  function visit(service: string, podIdx: number, bin: number, fs: Fault[]): number {
    const s = topo[service]!;
    const pod = `${service}-${podIdx}`;
    const mul = (c: Ctx) => fs.reduce((m, f) => m * (f.mul?.(c) ?? 1), 1);
    const own = draw(s.ownMs, s.sigma ?? 0.3, s.outliers ?? 0) * (wobble.get(service) ?? 1) * mul({ service, pod: podIdx, callee: null, calleePod: -1 });
    let total = own;
    for (const [callee, perVisit, wireMs] of s.calls ?? []) {
      const m = perVisit * fs.reduce((p, f) => p * (f.calls?.(service, callee) ?? 1), 1);
      const k = Math.floor(m) + (r() < m % 1 ? 1 : 0);
      for (let i = 0; i < k; i++) {
        if (fs.some((f) => f.unanswered?.({ service, pod: podIdx, callee, calleePod: -1 }))) {
          add(service, pod, callee, '', bin, 2_000_000, 2_000_000);
          total += 2_000_000;
          continue;
        }
        const cp = Math.floor(r() * topo[callee]!.pods);
        const c: Ctx = { service, pod: podIdx, callee, calleePod: cp };
        const x = draw(wireMs, 0.3, 0) * mul(c) + 1000 * fs.reduce((a, f) => a + (f.addMs?.(c) ?? 0), 0);
        const d = x + visit(callee, cp, bin, fs);
        add(service, pod, callee, `${callee}-${cp}`, bin, x, d);
        total += d;
      }
    }
    add(service, pod, null, null, bin, own, total);
    return total;
  }
  for (let bin = start; bin < end; bin += BIN) {
    if (((bin - start) / BIN) % 3 === 0) for (const s of Object.keys(topo)) wobble.set(s, Math.exp(0.08 * normal(r)));
    const fs = faults.filter((f) => bin >= f.at && bin < (f.until ?? Infinity));
    for (let i = 0; i < perBin; i++) visit(root, Math.floor(r() * topo[root]!.pods), bin, fs);
  }
  return [...rows.values()];
}

/** ERROR log records of one service per bin: Poisson around `rate(bin)`, all tied to traces. */
function logRows(seed: number, service: string, rate: (t: number) => number, start = FROM - HISTORY, end = TO): LogLevelRow[] {
  const r = rng(seed);
  const out: LogLevelRow[] = [];
  for (let bin = start; bin < end; bin += BIN) {
    const k = poisson(r, rate(bin));
    out.push({ service_name: service, bin, n: 200 + k, k, w: 0 });
  }
  return out;
}


/** gateway → A, B; A → C; B → C: a callee with two callers. */
const FAN_IN: Record<string, Svc> = {
  gateway: { pods: 2, ownMs: 5, calls: [['A', 1, 2], ['B', 1, 2]] },
  A: { pods: 2, ownMs: 8, calls: [['C', 1, 2]] },
  B: { pods: 3, ownMs: 8, calls: [['C', 1, 2]] },
  C: { pods: 2, ownMs: 10 },
};
/** From `at` on, calls to C's pod 0 wait 300 ms more on the wire, whoever makes them. */
const slowCPod = (at: number): Fault => ({ at, addMs: (c) => (c.callee === 'C' && c.calleePod === 0 ? 300 : 0) });

/** gateway → V → N, N on two pods. */
const CHAIN: Record<string, Svc> = {
  gateway: { pods: 1, ownMs: 5, calls: [['V', 1, 2]] },
  V: { pods: 1, ownMs: 8, calls: [['N', 1, 1]] },
  N: { pods: 2, ownMs: 10 },
};

describe('evidence from the call tree, ranked', () => {
  it('blames a callee that only its callers see slow (wire time from two callers)', () => {
    const res = analyse(simulate({ seed: 1, topo: FAN_IN, faults: [slowCPod(FROM)] }), [], [], 'gateway', FROM, TO);
    expect(res.root!.after).toBeGreaterThan(res.root!.before * 1.5);
    expect(top(res)?.service).toBe('C');
    expect(whats(res, 'C')).toContain('wire_latency');
  });

  it('blames a CPU-starved caller whose calls to every callee wait', () => {
    const topo: Record<string, Svc> = {
      gateway: { pods: 2, ownMs: 5, calls: [['S', 1, 2]] },
      S: { pods: 2, ownMs: 10, calls: [['C1', 1, 2], ['C2', 1, 2]] },
      C1: { pods: 2, ownMs: 10 },
      C2: { pods: 3, ownMs: 10 },
    };
    const starved = (c: Ctx) => c.service === 'S' && c.pod === 1;
    const fault: Fault = { at: FROM, addMs: (c) => (starved(c) && c.callee ? 80 : 0), mul: (c) => (starved(c) && !c.callee ? 2 : 1) };
    const res = analyse(simulate({ seed: 2, topo, faults: [fault] }), [], [], 'gateway', FROM, TO);
    expect(top(res)?.service).toBe('S');
    expect(whats(res, 'S').some((w) => w === 'caller_wait' || w === 'own_latency')).toBe(true);
    expect(whats(res, 'C1')).not.toContain('wire_latency');
    expect(whats(res, 'C2')).not.toContain('wire_latency');
  });

  it('blames the callee of a single edge when the delay sits on one of its pods', () => {
    const topo: Record<string, Svc> = {
      gateway: { pods: 2, ownMs: 5, calls: [['P', 1, 2]] },
      P: { pods: 2, ownMs: 8, calls: [['Q', 1, 2]] },
      Q: { pods: 3, ownMs: 10 },
    };
    // P's own work rises a little too, so only the pod the delay sits on can clear P of the wire time.
    const fault: Fault = {
      at: FROM,
      addMs: (c) => (c.service === 'P' && c.callee === 'Q' && c.calleePod === 0 ? 100 : 0),
      mul: (c) => (c.service === 'P' && !c.callee ? 1.6 : 1),
    };
    const res = analyse(simulate({ seed: 3, topo, faults: [fault] }), [], [], 'gateway', FROM, TO);
    expect(top(res)?.service).toBe('Q');
    expect(whats(res, 'Q')).toContain('wire_latency');
    expect(whats(res, 'P')).toContain('own_latency');
    expect(whats(res, 'P')).not.toContain('caller_wait');
  });

  it('finds a slow callee pod among quiet traffic, where the edge as a whole is too mixed to be sure', () => {
    // One request a bin (18 in the window): calls to one of N's three pods wait 300 ms more, the
    // other two answer as before. The edge's mean rises, but its mix of fast and slow calls leaves
    // the whole edge's test unsure; the slow pod's own calls are not.
    const topo: Record<string, Svc> = {
      gateway: { pods: 1, ownMs: 5, calls: [['V', 1, 2]] },
      V: { pods: 1, ownMs: 8, calls: [['N', 1, 1]] },
      N: { pods: 3, ownMs: 10 },
    };
    const fault: Fault = { at: FROM, addMs: (c) => (c.callee === 'N' && c.calleePod === 0 ? 300 : 0) };
    for (const seed of [21, 22, 23]) {
      const res = analyse(simulate({ seed, topo, faults: [fault], perBin: 1 }), [], [], 'gateway', FROM, TO);
      expect(top(res)?.service, `seed ${seed}`).toBe('N');
      const ev = top(res)!.evidence.find((e) => e.what === 'wire_latency')!;
      expect(ev.surprise, `seed ${seed}`).toBeGreaterThan(6);
    }
  });

  it('finds a callee whose pod loses packets: a few calls in ten wait for a retransmission, the rest as before', () => {
    // A fifth of the calls to N's pod 0 wait 250 ms more: about 7 calls in the window's 72. The edge's
    // mean rises by ~24 ms against a spread of ~75 ms (Welch's z below 3); the count of slow calls
    // goes from none in an hour to several.
    for (const seed of [31, 32, 33]) {
      const loss = rng(seed * 7);
      const fault: Fault = { at: FROM, addMs: (c) => (c.callee === 'N' && c.calleePod === 0 && loss() < 0.2 ? 250 : 0) };
      const res = analyse(simulate({ seed, topo: CHAIN, faults: [fault], perBin: 4 }), [], [], 'gateway', FROM, TO);
      expect(top(res)?.service, `seed ${seed}`).toBe('N');
      expect(whats(res, 'N'), `seed ${seed}`).toContain('wire_latency');
    }
  });

  it('blames nobody for slow calls that were as many before', () => {
    // The same 250 ms waits on 3% of the calls to N, the whole hour.
    for (const seed of [34, 35, 36]) {
      const loss = rng(seed * 7);
      const fault: Fault = { at: FROM - HISTORY, addMs: (c) => (c.callee === 'N' && loss() < 0.03 ? 250 : 0) };
      const res = analyse(simulate({ seed, topo: CHAIN, faults: [fault], perBin: 4 }), [], [], 'gateway', FROM, TO);
      expect(whats(res, 'N'), `seed ${seed}`).not.toContain('wire_latency');
    }
  });

  it('names a service that stopped answering, not its callers that still call it nor its callees that no longer hear from it', () => {
    const topo: Record<string, Svc> = {
      gateway: { pods: 2, ownMs: 5, calls: [['A', 1, 1]] },
      A: { pods: 2, ownMs: 8, calls: [['B', 0.7, 1]] },
      B: { pods: 2, ownMs: 10, calls: [['C', 1, 1]] },
      C: { pods: 2, ownMs: 10 },
    };
    const res = analyse(simulate({ seed: 41, topo, faults: [{ at: FROM, unanswered: (c) => c.callee === 'B' }], perBin: 4 }), [], [], 'gateway', FROM, TO);
    expect(top(res)?.service).toBe('B');
    expect(whats(res, 'B')).toContain('went_silent');
    expect(res.services.find((s) => s.service === 'C')?.score ?? 0).toBeLessThan(top(res)!.score / 2);
    expect(whats(res, 'A')).not.toContain('calls_drop');
  });

  it('takes the recovered level as the baseline after an earlier incident', () => {
    const topo: Record<string, Svc> = {
      gateway: { pods: 2, ownMs: 5, calls: [['A', 1, 2]] },
      A: { pods: 2, ownMs: 8, calls: [['C', 1, 2]] },
      C: { pods: 2, ownMs: 20 },
    };
    const cOwn = (m: number) => (c: Ctx) => (c.service === 'C' && !c.callee ? m : 1);
    const faults: Fault[] = [
      { at: FROM - 10 * MIN, until: FROM - 6 * MIN, mul: cOwn(10) },
      { at: FROM, mul: cOwn(2.5) },
    ];
    const res = analyse(simulate({ seed: 4, topo, faults }), [], [], 'gateway', FROM, TO);
    expect(top(res)?.service).toBe('C');
    const ev = top(res)!.evidence.find((e) => e.what === 'own_latency')!;
    expect(ev).toBeDefined();
    // Mean of a log-normal with median 20 ms and sigma 0.3 (the incident would add ~60%).
    const normalMean = 20_000 * Math.exp(0.3 ** 2 / 2);
    expect(ev.before!).toBeGreaterThan(0.85 * normalMean);
    expect(ev.before!).toBeLessThan(1.2 * normalMean);
    expect(ev.after!).toBeGreaterThan(2 * ev.before!);
    expect(Math.abs(ev.onset - FROM)).toBeLessThanOrEqual(BIN);
  });

  it('points retries at the retried service, not at the calls echoing below it', () => {
    const topo: Record<string, Svc> = {
      gateway: { pods: 2, ownMs: 5, calls: [['pricing', 1, 2]] },
      pricing: { pods: 2, ownMs: 15, calls: [['billing', 1, 2]] },
      billing: { pods: 3, ownMs: 10 },
    };
    const fault: Fault = { at: FROM, calls: (a, b) => (a === 'gateway' && b === 'pricing' ? 2 : 1) };
    const res = analyse(simulate({ seed: 5, topo, faults: [fault] }), [], [], 'gateway', FROM, TO);
    const rank = (s: string) => res.services.findIndex((x) => x.service === s);
    const rise = res.services.find((s) => s.service === 'pricing')?.evidence.find((e) => e.what === 'calls_rise');
    expect(rise).toBeDefined();
    expect(rise!.peer).toBe('gateway');
    expect(rise!.after! / rise!.before!).toBeGreaterThan(1.7);
    expect(rank('pricing')).toBe(0);
    const billing = res.services.find((s) => s.service === 'billing');
    if (billing) {
      expect(billing.evidence.map((e) => e.what)).not.toContain('calls_rise');
      expect(billing.score).toBeLessThan(res.services[0]!.score / 2);
    }
  });

  describe("a caller's calls to every callee rising at once", () => {
    const topo: Record<string, Svc> = {
      gateway: { pods: 2, ownMs: 5, calls: [['ads', 1, 2], ['catalog', 2, 2], ['cart', 1, 2], ['recs', 1, 2]] },
      ads: { pods: 2, ownMs: 8 },
      catalog: { pods: 2, ownMs: 8 },
      cart: { pods: 2, ownMs: 8 },
      recs: { pods: 2, ownMs: 8 },
    };
    const retried = (res: ReturnType<typeof analyse>) => res.all.filter((e) => e.what === 'calls_rise').map((e) => e.service);

    it('takes it for a change of its requests, not retries of each callee', () => {
      const fault: Fault = { at: FROM, calls: (a) => (a === 'gateway' ? 3 : 1) };
      const res = analyse(simulate({ seed: 11, topo, faults: [fault] }), [], [], 'gateway', FROM, TO);
      expect(retried(res)).toEqual([]);
    });

    it('still finds the one callee retried beyond the others', () => {
      const fault: Fault = { at: FROM, calls: (a, b) => (a !== 'gateway' ? 1 : b === 'cart' ? 6 : 2) };
      const res = analyse(simulate({ seed: 11, topo, faults: [fault] }), [], [], 'gateway', FROM, TO);
      expect(retried(res)).toEqual(['cart']);
    });
  });

  it('finds a service whose error logs jump, and not one with a steady share of errors', () => {
    const calls = simulate({ seed: 6, topo: FAN_IN });
    const logs = [...logRows(60, 'B', (t) => (t >= FROM ? 8 : 0.2)), ...logRows(61, 'A', () => 6)];
    const res = analyse(calls, logs, [], 'gateway', FROM, TO);
    expect(top(res)?.service).toBe('B');
    expect(whats(res, 'B')).toContain('error_logs');
    expect(whats(res, 'A')).not.toContain('error_logs');
  });


  it('names a quiet service by three ERROR records after a clean hour, counted against every request of the hour', () => {
    const calls = simulate({ seed: 7, topo: { gateway: { pods: 1, ownMs: 5, calls: [['A', 1, 2], ['Q', 0.1, 2]] }, A: { pods: 1, ownMs: 8 }, Q: { pods: 1, ownMs: 8 } }, perBin: 2 });
    // Q logs a record in one bin of twenty before (none an error), and three ERROR records since the onset.
    const logs: LogLevelRow[] = [];
    for (let bin = FROM - HISTORY, i = 0; bin < TO; bin += BIN, i++) {
      const k = bin >= FROM && [2, 7, 12].includes((bin - FROM) / BIN) ? 1 : 0;
      if (k || i % 20 === 0) logs.push({ service_name: 'Q', bin, n: 1, k, w: 0 });
    }
    const res = analyse(calls, logs, [], 'gateway', FROM, TO);
    expect(top(res)?.service).toBe('Q');
    expect(whats(res, 'Q')).toContain('error_logs');
  });


  it("leaves a caller's echo of its callee's exceptions to the callee: the caller's error records less the callee's burst", () => {
    // gateway → A → D: D throws on some requests since the onset, A logs its own ERROR for 70% of the failed calls.
    const calls = simulate({ seed: 8, topo: { gateway: { pods: 1, ownMs: 5, calls: [['A', 1, 2]] }, A: { pods: 1, ownMs: 8, calls: [['D', 1, 2]] }, D: { pods: 1, ownMs: 8 } } });
    const logs = [...logRows(62, 'D', (t) => (t >= FROM ? 3 : 0.02)), ...logRows(63, 'A', (t) => (t >= FROM ? 2.1 : 0.02))];
    const res = analyse(calls, logs, [], 'gateway', FROM, TO);
    expect(top(res)?.service).toBe('D');
    expect(whats(res, 'D')).toContain('error_logs');
    expect(whats(res, 'A')).not.toContain('error_logs');
    // A burst of its own, larger than its callee's, is still its own.
    const own = analyse(calls, [...logRows(62, 'D', (t) => (t >= FROM ? 3 : 0.02)), ...logRows(64, 'A', (t) => (t >= FROM ? 9 : 0.02))], [], 'gateway', FROM, TO);
    expect(whats(own, 'A')).toContain('error_logs');
  });

  describe('what callers do after an answer (call sequences)', () => {
    // gateway → A; A calls T, then B (five requests a bin), F idle; a wrong answer from T shows only in what A does next.
    const topo: Record<string, Svc> = { gateway: { pods: 1, ownMs: 5, calls: [['A', 1, 2]] }, A: { pods: 1, ownMs: 8, calls: [['T', 1, 2], ['B', 1, 2]] }, T: { pods: 1, ownMs: 8 }, B: { pods: 1, ownMs: 8 }, F: { pods: 1, ownMs: 8 } };
    const calls = simulate({ seed: 9, topo, perBin: 5 });
    /** A's requests: `normal` before the onset, `after(r)` since. */
    const sequences = (seed: number, normal: (r: () => number) => string[], after: (r: () => number) => string[]): CallSequenceRow[] => {
      const r = rng(seed);
      const out: CallSequenceRow[] = [];
      for (let bin = FROM - HISTORY; bin < TO; bin += BIN) for (let i = 0; i < 5; i++) out.push(sequential('A', bin, bin >= FROM ? after(r) : normal(r)));
      return out;
    };
    /** One request's calls one after the other: each issued after the answer before it. */
    const sequential = (caller: string, bin: number, seq: string[]): CallSequenceRow => ({ caller, bin, seq, issued: seq.map((_c, i) => bin + i * 10_000), answered: seq.map((_c, i) => bin + i * 10_000 + 8_000) });
    const run = (seqs: CallSequenceRow[]) => analyseFrom(prepareStructure(calls, [], [], FROM, TO, () => 1, seqs), 'gateway');

    it('blames the callee whose answers its caller stopped using: a fallback after it, or the call asked again', () => {
      const fallback = run(sequences(70, () => ['T', 'B'], (r) => (r() < 0.4 ? ['T', 'F'] : ['T', 'B'])));
      expect(top(fallback)?.service).toBe('T');
      expect(whats(fallback, 'T')).toContain('path_after');
      const retried = run(sequences(71, () => ['T', 'B'], (r) => (r() < 0.4 ? ['T', 'T', 'B'] : ['T', 'B'])));
      expect(top(retried)?.service).toBe('T');
      expect(top(retried)?.evidence[0]?.peer).toBe('A: asked it again');
    });

    /** A's requests, each a fan-out to T, B and C issued at once: answers at `at(r)` ms (T, B, C), then `more` after them. */
    const fanOut = (seed: number, at: (r: () => number, after: boolean) => [number, number, number], more: (r: () => number, after: boolean) => string[]) => {
      const r = rng(seed);
      const seqs: CallSequenceRow[] = [];
      for (let bin = FROM - HISTORY; bin < TO; bin += BIN)
        for (let i = 0; i < 5; i++) {
          const answers = at(r, bin >= FROM).map((ms) => bin + ms * 1000);
          const extra = more(r, bin >= FROM);
          const done = Math.max(...answers);
          seqs.push({ caller: 'A', bin, seq: ['T', 'B', 'C', ...extra], issued: [bin, bin + 10, bin + 20, ...extra.map((_c, k) => done + 1000 + k * 10_000)], answered: [...answers, ...extra.map((_c, k) => done + 5000 + k * 10_000)] });
        }
      return run(seqs);
    };

    it('after a fan-out, ties a fallback to the answer that came last, not to the call issued last', () => {
      // T answers last (5 ms after B and C); since the onset, 40% of the requests then call F.
      const res = fanOut(73, () => [5, 3, 4], (r, after) => (after && r() < 0.4 ? ['F'] : []));
      expect(top(res)?.service).toBe('T');
      expect(top(res)?.evidence[0]?.peer).toBe('A: turned to F');
    });

    it('blames nobody for the answer that now comes last in a fan-out because it got slower', () => {
      // T's answers go from first (2 ms) to last (300 ms): the caller still stops after all three.
      const res = fanOut(74, (_r, after) => [after ? 300 : 2, 3, 4], () => []);
      expect(res.services.flatMap((x) => x.evidence).filter((e) => e.what === 'path_after')).toEqual([]);
    });

    it('blames nobody for calls made in any order, as often before as after', () => {
      const res = run(sequences(72, (r) => (r() < 0.5 ? ['T', 'B'] : ['B', 'T']), (r) => (r() < 0.5 ? ['T', 'B'] : ['B', 'T'])));
      expect(res.services.flatMap((x) => x.evidence).filter((e) => e.what === 'path_after')).toEqual([]);
    });
  });

  it('counts log records per request of every trace when the call tree holds one trace in four', () => {
    const calls = simulate({ seed: 6, topo: FAN_IN });
    const logs = logRows(60, 'B', (t) => (t >= FROM ? 8 : 0.2));
    const evidence = (sample: number) =>
      analyseFrom(prepareStructure(calls, logs, [], FROM, TO, () => sample), 'gateway').services.find((s) => s.service === 'B')?.evidence.find((e) => e.what === 'error_logs');
    const all = evidence(1)!;
    const sampled = evidence(4)!;
    expect(sampled.after).toBeCloseTo(all.after! / 4, 3);
    expect(sampled.before).toBeCloseTo(all.before! / 4, 3);
    expect(sampled.surprise).toBe(all.surprise);
  });

  it('finds the onset inside a long window', () => {
    const onset = FROM + 7 * MIN;
    const to = FROM + 15 * MIN;
    const res = analyse(simulate({ seed: 7, topo: FAN_IN, end: to, faults: [slowCPod(onset)] }), [], [], 'gateway', FROM, to);
    expect(res.root!.found).toBe(true);
    expect(Math.abs(res.root!.onset - onset)).toBeLessThanOrEqual(30 * SEC);
    expect(top(res)?.service).toBe('C');
    expect(whats(res, 'C')).toContain('wire_latency');
  });

  it('gives the same culprit wherever the window falls on the bin grid', () => {
    const shift = 150 * SEC;
    const a = analyse(simulate({ seed: 8, topo: FAN_IN, faults: [slowCPod(FROM)] }), [], [], 'gateway', FROM, TO);
    const rows = simulate({ seed: 8, topo: FAN_IN, end: TO + shift, faults: [slowCPod(FROM + shift)] });
    const b = analyse(rows, [], [], 'gateway', FROM + shift, TO + shift);
    expect(top(a)?.service).toBe('C');
    expect(top(b)?.service).toBe(top(a)?.service);
    expect(whats(b, 'C')).toContain('wire_latency');
    expect(Math.abs(b.root!.onset - (FROM + shift))).toBeLessThanOrEqual(BIN);
  });

  it('blames nobody when nothing changed, even beside a noisy heavy-tailed service', () => {
    const topo: Record<string, Svc> = {
      gateway: { pods: 2, ownMs: 5, calls: [['A', 1, 2], ['N', 1, 2]] },
      A: { pods: 2, ownMs: 8, calls: [['N', 1, 2]] },
      N: { pods: 3, ownMs: 10, sigma: 0.9, outliers: 0.01 },
    };
    for (const seed of [9, 10, 11]) {
      const res = analyse(simulate({ seed, topo }), [], [], 'gateway', FROM, TO);
      expect(res.root).not.toBeNull();
      for (const s of res.services) expect(s.score, `${s.service} (seed ${seed})`).toBeLessThan(0.5);
    }
  });
});

describe('splitSeries', () => {
  /** 10-second bins of 20 calls from 30 minutes before FROM to TO, at exp(level(t)) µs, a little noise. */
  const series = (level: (t: number) => number): Bin[] => {
    const r = rng(12);
    const out: Bin[] = [];
    for (let t = FROM - 30 * MIN; t < TO; t += BIN) {
      const m = level(t) + 0.05 * normal(r);
      out.push({ t, n: 20, errors: 0, sumLog: 20 * m, sumLog2: 20 * (m * m + 0.25) });
    }
    return out;
  };

  it('finds a clean step up at the step, with the stretch before it as the baseline', () => {
    const step = FROM + 60 * SEC;
    const s = splitSeries(series((t) => (t >= step ? Math.log(3000) : Math.log(1000))), FROM, TO)!;
    expect(s.found).toBe(true);
    expect(s.onset).toBe(step);
    expect(s.before.length).toBeGreaterThan(100);
    expect(Math.max(...s.before)).toBeLessThan(step);
    expect(s.after[0]).toBe(step);
    expect(s.after.length).toBe((TO - step) / BIN);
  });

  it('takes the window start as the onset of a flat series, with a baseline before it', () => {
    const s = splitSeries(series(() => Math.log(1000)), FROM, TO)!;
    expect(s.found).toBe(false);
    expect(s.onset).toBe(FROM);
    expect(s.before.length).toBeGreaterThan(0);
    expect(s.after.length).toBe((TO - FROM) / BIN);
  });

  it('returns null without observed bins', () => {
    expect(splitSeries([], FROM, TO)).toBeNull();
  });

  // A long window (the last half hour) with an earlier incident that has ended in it.
  const LONG_FROM = TO - 30 * MIN;
  const earlier = (t: number) => t >= LONG_FROM + 5 * MIN && t < LONG_FROM + 10 * MIN;

  it('skips an incident that ended in the window for the one still going on', () => {
    const later = TO - 3 * MIN;
    const s = splitSeries(series((t) => (earlier(t) || t >= later ? Math.log(3000) : Math.log(1000))), LONG_FROM, TO)!;
    expect(s.found).toBe(true);
    expect(s.onset).toBe(later);
    expect(Math.max(...s.before)).toBeLessThan(later);
  });

  it('judges the window as a whole when its only incident has ended', () => {
    const s = splitSeries(series((t) => (earlier(t) ? Math.log(3000) : Math.log(1000))), LONG_FROM, TO)!;
    expect(s.found).toBe(false);
    expect(s.onset).toBe(LONG_FROM);
    expect(s.after.length).toBe((TO - LONG_FROM) / BIN);
  });

  it('keeps an incident whose series alternates (one pod of several): a clean stretch followed by slow ones has not ended', () => {
    // Two minutes slow, two clean, from 21 minutes before the end: it ends slow.
    const onset = TO - 21 * MIN;
    const slow = (t: number) => t >= onset && Math.floor((t - onset) / (2 * MIN)) % 2 === 0;
    const s = splitSeries(series((t) => (slow(t) ? Math.log(3000) : Math.log(1000))), LONG_FROM, TO)!;
    expect(s.found).toBe(true);
    expect(s.onset).toBe(onset);
  });
});

