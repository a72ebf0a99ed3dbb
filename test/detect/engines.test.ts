// The WASM module against its TypeScript twin (same change points, means within 1e-9 relative, same
// states within 1e-9), and the incremental contract: a series fed in pieces, through saved states,
// or inside a batch gives exactly the changes of one run over the whole series.
import { describe, expect, it } from 'vitest';
import { BocpdDetector, loadState, saveState, standardScaling, type RunResult, type SeriesInput, type Signal } from '../../src/detect/bocpd/index.js';
import { instantiateWasm } from '../../src/compute/wasm.js';
import { lgamma } from '../../src/detect/bocpd/reference.js';
import { countSeries, errorSeries, lognormalSeries, normalSeries, rng } from './synth.js';

const TOL = 1e-9;

function mixed(signal: Signal, seed: number): SeriesInput {
  // a few regimes and gaps, so every branch runs: steps up and down, missing points
  const n = 400;
  const parts = [0, 90, 170, 260, n];
  const r = rng(seed);
  const factors = [1, 2.5, 0.7, 1.8];
  const out = new Float64Array(n);
  const calls = new Float64Array(n);
  for (let p = 0; p < 4; p++) {
    const len = parts[p + 1]! - parts[p]!;
    let seg: Float64Array;
    if (signal === 'error_rate') {
      const e = errorSeries(seed + p, len, 40 + 400 * r(), 0.01 * factors[p]!);
      calls.set(e.calls, parts[p]);
      seg = e.values;
    } else if (signal === 'log_volume' || signal === 'error_log_rate') seg = countSeries(seed + p, len, 200 * factors[p]!, 0.1);
    else if (signal === 'generic') seg = normalSeries(seed + p, len).map((v) => v + 3 * factors[p]!);
    else seg = lognormalSeries(seed + p, len, 1e4 * factors[p]!, 0.15);
    out.set(seg, parts[p]);
  }
  for (let i = 0; i < n; i++) if (r() < 0.03) (signal === 'error_rate' ? calls : out)[i] = signal === 'error_rate' ? 0 : NaN;
  return signal === 'error_rate' ? { values: out, calls } : { values: out };
}

const SIGNALS: Signal[] = ['error_rate', 'latency_p95', 'profile_cost', 'log_volume', 'error_log_rate', 'generic'];

function detector(signal: Signal, engine: 'wasm' | 'ts', s: SeriesInput): BocpdDetector {
  if (signal !== 'generic') return new BocpdDetector(signal, { engine });
  return new BocpdDetector({ ...new BocpdDetector('generic').config, ...standardScaling(s.values) }, { engine });
}

function expectSame(a: RunResult, b: RunResult): void {
  expect(a.changes.map((c) => [c.index, c.at])).toEqual(b.changes.map((c) => [c.index, c.at]));
  for (let i = 0; i < a.changes.length; i++) {
    for (const k of ['before', 'after'] as const) {
      const x = a.changes[i]![k];
      const y = b.changes[i]![k];
      expect(Math.abs(x - y)).toBeLessThanOrEqual(TOL * Math.max(1, Math.abs(x)));
    }
  }
  expect(a.state.length).toBe(b.state.length);
  const used = 8 + a.state[1]! * 10;
  expect(b.state[1]).toBe(a.state[1]);
  for (let i = 0; i < used; i++) {
    const x = a.state[i]!;
    const y = b.state[i]!;
    if (Number.isNaN(x)) expect(Number.isNaN(y)).toBe(true);
    else expect(Math.abs(x - y)).toBeLessThanOrEqual(TOL * Math.max(1, Math.abs(x)));
  }
}

describe('WASM and the TypeScript reference agree', () => {
  for (const signal of SIGNALS) {
    it(`${signal}: same changes, means and states on 8 mixed series`, () => {
      let changes = 0;
      for (let seed = 1; seed <= 8; seed++) {
        const s = mixed(signal, seed * 31);
        const w = detector(signal, 'wasm', s).run(s);
        const t = detector(signal, 'ts', s).run(s);
        expectSame(w, t);
        changes += w.changes.length;
      }
      expect(changes).toBeGreaterThan(8); // the series do change: the comparison is not vacuous
    });
  }
});

describe('WASM math', () => {
  it('ln Γ (table-driven ln inside, used by every model) matches the reference within 1e-13 over 1e-3 .. 1e7', () => {
    const wasm = instantiateWasm<{ lgamma(x: number): number }>('bocpd');
    let worst = 0;
    for (let e = -3; e <= 7; e += 0.001) {
      const x = 10 ** e;
      const ref = lgamma(x);
      worst = Math.max(worst, Math.abs(wasm.lgamma(x) - ref) / Math.max(1, Math.abs(ref)));
    }
    expect(worst).toBeLessThan(1e-13);
  });
});

describe('incremental use', () => {
  for (const signal of SIGNALS) {
    it(`${signal}: feeding random-sized pieces through saved states gives the whole-series answer`, () => {
      for (let seed = 1; seed <= 4; seed++) {
        const s = mixed(signal, seed * 17);
        const det = detector(signal, 'wasm', s);
        const whole = det.run(s);
        const r = rng(seed);
        let state: Float64Array | undefined;
        const pieces: RunResult['changes'] = [];
        for (let i = 0; i < s.values.length; ) {
          const j = Math.min(s.values.length, i + 1 + Math.floor(r() * 40));
          const part: SeriesInput = {
            values: (s.values as Float64Array).subarray(i, j),
            ...(s.calls ? { calls: (s.calls as Float64Array).subarray(i, j) } : {}),
          };
          const res = det.run(part, state && loadState(saveState(state)));
          pieces.push(...res.changes);
          state = res.state;
          i = j;
        }
        // same change points at the same absolute indices, reported at the same points, each once, same "before"
        expect(pieces.map((c) => [c.index, c.at])).toEqual(whole.changes.map((c) => [c.index, c.at]));
        pieces.forEach((c, k) => expect(c.before).toBeCloseTo(whole.changes[k]!.before, 9));
        expect(state!.subarray(0, 8 + state![1]! * 10)).toEqual(whole.state.subarray(0, 8 + whole.state[1]! * 10));
      }
    });
  }

  it('a state saved by the WASM engine resumes on the reference and vice versa', () => {
    const s = mixed('latency_p95', 5);
    const head = { values: (s.values as Float64Array).subarray(0, 200) };
    const tail = { values: (s.values as Float64Array).subarray(200) };
    const w = new BocpdDetector('latency_p95', { engine: 'wasm' });
    const t = new BocpdDetector('latency_p95', { engine: 'ts' });
    const a = t.run(tail, w.run(head).state);
    const b = w.run(tail, t.run(head).state);
    expectSame(a, b);
  });

  it('saveState keeps only live runs', () => {
    const det = new BocpdDetector('latency_p95');
    const { state } = det.run({ values: lognormalSeries(1, 288, 1e4, 0.1) });
    const bytes = saveState(state);
    expect(bytes.byteLength).toBeLessThan(state.byteLength);
    expect(loadState(bytes)).toEqual(state.map((v, i) => (i < 8 + state[1]! * 10 ? v : 0)));
  });

  it('rejects a state of another configuration or model', () => {
    const a = new BocpdDetector('latency_p95');
    const b = new BocpdDetector({ ...a.config, maxRuns: 16 });
    expect(() => b.run({ values: [1, 2] }, a.newState())).toThrow(/state/);
    expect(() => new BocpdDetector('log_volume').run({ values: [1, 2] }, a.run({ values: [1, 2] }).state)).toThrow(/observation model/);
    expect(new BocpdDetector('profile_cost').run({ values: [1, 2] }, a.newState()).changes).toEqual([]); // same model
  });
});

describe('batch', () => {
  it('one call over many series equals series-by-series runs, with and without prior states', () => {
    for (const signal of SIGNALS.filter((s) => s !== 'generic')) {
      const det = new BocpdDetector(signal);
      const series = Array.from({ length: 50 }, (_, i) => mixed(signal, 1000 + i));
      const batch = det.runBatch(series);
      series.forEach((s, i) => {
        expect(batch[i]!.changes).toEqual(det.run(s).changes);
        expect(batch[i]!.state).toEqual(det.run(s).state);
      });
      const again = det.runBatch(
        series,
        batch.map((b) => b.state),
      );
      series.forEach((s, i) => expect(again[i]!.changes).toEqual(det.run(s, batch[i]!.state).changes));
    }
  });

  it('a batch needing more event room than one engine call holds is completed in several calls', () => {
    // 3 series of 20,000 alternating points: ~one change per regime, far beyond one call's minimum room
    const series = [0, 1, 2].map((k) => ({ values: Float64Array.from({ length: 20_000 }, (_, i) => (Math.floor(i / 8) % 2 ? 5e4 : 1e4) * (1 + 0.01 * k)) }));
    const det = new BocpdDetector('latency_p95');
    const batch = det.runBatch(series);
    for (let k = 0; k < 3; k++) expect(batch[k]!.changes).toEqual(det.run(series[k]!).changes);
    expect(batch[0]!.changes.length).toBeGreaterThan(1000);
  });
});
