// The detector's seasonal path (a timestamped series): a daily cycle is not a shift, real shifts at
// peaks and troughs are found with raw-unit means, and the path keeps the detector's contracts:
// pieces through saved states give the whole-series answer, both engines agree, a state resumes
// exactly. Generated series of seeds 201-205 (testkit/seasonal-series.ts): neither the seeds the
// path was calibrated on nor those it is reported on.
import { describe, expect, it } from 'vitest';
import { BocpdDetector, loadState, saveState, worsening, type ChangePoint, type SeriesInput } from '../../src/detect/bocpd/index.js';
import { seasonalSeries, type GeneratedSeries, type GeneratedSignal } from '../../testkit/seasonal-series.js';
import { T, newContext, noteFall, riseBase, timedModel } from '../../src/detect/bocpd/timed.js';
import { tsEngine, wasmEngine } from '../../src/detect/bocpd/engine.js';
import { W, newRecord } from '../../src/detect/bocpd/record.js';
import { LEVELS, SCALES, V, absorbPoint, advanceEnvelope, barFor, levelsBefore, newEnvelope } from '../../src/detect/bocpd/envelope.js';
import { F } from '../../src/detect/bocpd/profile.js';
import { lognormalSeries } from './synth.js';
import { binomial, gauss, poisson, rng } from '../../testkit/rng.js';

const SEEDS = [201, 202, 203, 204, 205];
const DAY = 288;
const B = 300_000_000;
/** A daily traffic curve peaking at 14:24 UTC, `depth` its log-amplitude. */
const curve = (i: number, depth = 0.6): number => Math.exp(depth * Math.cos((2 * Math.PI * (i - 0.6 * DAY)) / DAY));

const input = (g: GeneratedSeries, timed = true): SeriesInput => ({ values: g.values, ...(g.calls ? { calls: g.calls } : {}), ...(timed ? { start: g.start } : {}) });
const slice = (g: GeneratedSeries, from: number, to: number): SeriesInput => ({
  values: g.values.subarray(from, to),
  ...(g.calls ? { calls: g.calls.subarray(from, to) } : {}),
  start: g.start + from * B,
});
/** Saved state bytes as an older version wrote them: the seasonal context cut after its first `slots` slots. */
const cutContext = (bytes: Uint8Array, slots: number): Uint8Array => {
  const older = new Uint8Array(bytes.length - 8 * (T.size - slots));
  older.set(bytes.subarray(0, older.length));
  new Float64Array(older.buffer)[0] -= T.size - slots;
  return older;
};

describe('seasonal path: a daily cycle is not a shift', () => {
  it.each<GeneratedSignal>(['latency_p95', 'log_volume', 'error_log_rate'])('%s: three weeks of cycles without a shift', (signal) => {
    let plain = 0;
    let timed = 0;
    for (const seed of SEEDS) {
      const g = seasonalSeries(seed, signal, { shifts: false });
      plain += worsening(new BocpdDetector(signal).run(input(g, false)).changes).length;
      timed += worsening(new BocpdDetector(signal).run(input(g)).changes).filter((c) => c.index >= 3 * DAY).length;
    }
    // read as they are, the cycles are dozens of rises; with the profile, at most 0.1 a day once it is learnt
    expect(plain).toBeGreaterThanOrEqual(40);
    expect(timed).toBeLessThanOrEqual(0.1 * SEEDS.length * 18);
  });
});

describe('seasonal path: shifts at peaks and troughs', () => {
  it.each<[GeneratedSignal, number]>([
    ['latency_p95', 0.9],
    ['error_rate', 0.9],
    ['log_volume', 0.7],
  ])('%s: found within an hour of their onset, raw-unit means at their time of day', (signal, share) => {
    let found = 0;
    let total = 0;
    for (const seed of SEEDS) {
      const g = seasonalSeries(seed, signal);
      const rows = worsening(new BocpdDetector(signal).run(input(g)).changes);
      for (const s of g.shifts) {
        total++;
        const c = rows.find((x) => x.index >= s.at - 2 && x.index <= s.at + 12);
        if (!c) continue;
        found++;
        if (signal === 'error_rate') expect(c.before).toBeLessThan(3); // errors %: a base rate of 0.2-2%, rising to 5-20%
        // shifts of x1.5 to x4 (errors more); a row written on its onset's bucket (a week's record)
        // has that bucket's mean as `after`, which the shift may cover only in part
        expect(c.after / c.before).toBeGreaterThan(1.3);
      }
    }
    expect(found / total).toBeGreaterThanOrEqual(share);
  });
});

describe('seasonal path: a series sampled every 10 to 60 minutes', () => {
  const sampled = (g: GeneratedSeries, every: number): SeriesInput => ({
    values: Float64Array.from(g.values, (v, i) => ((g.start / B + i) % every === 0 ? v : NaN)),
    start: g.start,
  });

  it.each([2, 6, 12])('one bucket in %i: its days count, so its daily profile is in use from the third day', (every) => {
    for (const engine of ['wasm', 'ts'] as const) {
      const det = new BocpdDetector('latency_p95', { engine });
      const g = seasonalSeries(201, 'latency_p95', { days: 4, shifts: false });
      const { state } = det.run(sampled(g, every));
      // the first, partial day may not count; the three whole days after it do
      expect(state[det.stateSize + T.profile + F.days]).toBeGreaterThanOrEqual(3);
    }
  });

  it('one bucket in 6: most shifts are found, with few false rows', () => {
    let found = 0;
    let total = 0;
    let falses = 0;
    for (const seed of SEEDS) {
      for (const signal of ['latency_p95', 'log_volume'] as const) {
        const g = seasonalSeries(seed, signal);
        const rows = worsening(new BocpdDetector(signal).run(sampled(g, 6)).changes);
        for (const s of g.shifts) {
          total++;
          if (rows.some((x) => x.index >= s.at - 2 && x.index <= s.at + 18)) found++;
        }
        falses += rows.filter((x) => !g.shifts.some((s) => x.index >= s.at - 2 && x.index < s.end + 18)).length;
      }
    }
    // with its days counted by points, such a series never learnt its cycle: 16 of 40 found
    expect(found / total).toBeGreaterThanOrEqual(0.55);
    expect(falses).toBeLessThanOrEqual(0.05 * SEEDS.length * 2 * 21);
  });
});

describe('seasonal path: a lasting step', () => {
  it("is one worsening: the day's next peak at the new level is no second row", () => {
    let found = 0;
    let after = 0;
    for (let seed = 201; seed <= 210; seed++) {
      const g = seasonalSeries(seed, 'latency_p95', { shifts: false });
      const at = 10 * DAY + 100;
      const values = g.values.map((v, i) => (i >= at ? 2 * v : v));
      const rows = worsening(new BocpdDetector('latency_p95').run({ values, start: g.start }).changes);
      if (rows.some((c) => c.index >= at - 2 && c.index <= at + 12)) found++;
      after += rows.filter((c) => c.index > at + 12 && c.index < at + 7 * DAY).length;
    }
    expect(found).toBe(10);
    // each new height of that first day had been a week's record, and a row (8 in the week after)
    expect(after).toBeLessThanOrEqual(4);
  });
});

describe('seasonal path: where a worsening starts', () => {
  it('at the step of the last hour, not at the slighter rise BOCPD merged into it', () => {
    // generator seed 8 (a calibration seed; used here for its shape): latency ×2.35 from bucket 2432,
    // which BOCPD's regime starts at 2414, where the residual had risen a little
    const g = seasonalSeries(8, 'latency_p95');
    const shift = g.shifts[1]!;
    expect(shift.at).toBe(2432);
    const rows = worsening(new BocpdDetector('latency_p95').run(input(g)).changes).filter((c) => c.at >= shift.at && c.at < shift.end);
    expect(rows.map((c) => c.index)).toEqual([shift.at]);
  });

  it('measured from the level before it when BOCPD reports it more than 16 buckets on: a few error logs a bucket that triple', () => {
    // generator seed 9 (a calibration seed; used here for its shape): error logs x3.5 from bucket 2487,
    // about one a bucket before; BOCPD reports the change 19 buckets after its start, when the level
    // had risen with it, and the change measured from that level never cleared its bar
    const g = seasonalSeries(9, 'error_log_rate');
    const shift = g.shifts[1]!;
    expect(shift.at).toBe(2487);
    const before = g.values.subarray(shift.at - 24, shift.at).reduce((a, b) => a + b, 0) / 24;
    expect(before).toBeLessThan(1.5);
    const rows = worsening(new BocpdDetector('error_log_rate').run(input(g)).changes).filter((c) => c.index >= shift.at - 2 && c.index <= shift.at + 12);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.before).toBeLessThan(2 * before);
    expect(rows[0]!.after / rows[0]!.before).toBeGreaterThan(1.5);
  });

  it('at the shift, not at a burst that ended before it: the series back at its level ends what the burst started', () => {
    // generator seed 10 (a calibration seed; used here for its shape): its daily cron burst (3 buckets
    // at x3) at bucket 1399 started a change that, with the burst's points in its mean, stayed a little
    // up until latency x1.6 from bucket 1421 cleared it, 22 buckets early
    const g = seasonalSeries(10, 'latency_p95');
    const shift = g.shifts[0]!;
    expect(shift.at).toBe(1421);
    expect(g.values[1399]! / g.values[1396]!).toBeGreaterThan(2);
    const rows = worsening(new BocpdDetector('latency_p95').run(input(g)).changes).filter((c) => c.at >= shift.at - 24 && c.at < shift.end);
    expect(rows.map((c) => c.index)).toEqual([shift.at]);
  });
});

describe('seasonal path: contracts', () => {
  const g = seasonalSeries(203, 'log_volume');
  const e = seasonalSeries(204, 'error_rate');

  it('feeding random-sized pieces through saved states gives the whole-series answer', () => {
    for (const [series, signal] of [
      [g, 'log_volume'],
      [e, 'error_rate'],
    ] as const) {
      const det = new BocpdDetector(signal);
      const whole = det.run(input(series));
      expect(worsening(whole.changes).length).toBeGreaterThan(2);
      let state: Float64Array | undefined;
      const pieces: ChangePoint[] = [];
      let seed = 7;
      for (let i = 0; i < series.values.length; ) {
        seed = (seed * 16807) % 2147483647;
        const j = Math.min(series.values.length, i + 1 + (seed % 400));
        const res = det.run(slice(series, i, j), state && loadState(saveState(state)));
        pieces.push(...res.changes);
        state = res.state;
        i = j;
      }
      expect(pieces).toEqual(whole.changes);
      expect(state).toEqual(whole.state);
    }
  });

  it.each<GeneratedSignal>(['latency_p95', 'log_volume', 'error_rate', 'error_log_rate'])(
    '%s: the WASM engine and the TypeScript reference give the same changes and seasonal contexts, and resume each other',
    (signal) => {
      const s = seasonalSeries(205, signal);
      const w = new BocpdDetector(signal, { engine: 'wasm' }).run(input(s));
      const t = new BocpdDetector(signal, { engine: 'ts' }).run(input(s));
      expect(worsening(w.changes).length).toBeGreaterThan(0);
      expect(t.changes.map((c) => [c.index, c.at])).toEqual(w.changes.map((c) => [c.index, c.at]));
      t.changes.forEach((c, i) => {
        expect(c.before).toBeCloseTo(w.changes[i]!.before, 6);
        expect(c.after).toBeCloseTo(w.changes[i]!.after, 6);
      });
      expect(t.state.length).toBe(w.state.length);
      const ss = new BocpdDetector(signal).stateSize;
      t.state.forEach((v, i) => {
        const u = w.state[i]!;
        // the seasonal context within 1e-9; the detector's run masses, rounded over 6,000 points, within 1e-8
        const tol = i < ss ? 1e-8 : 1e-9;
        if (Number.isFinite(v) || Number.isFinite(u)) expect(Math.abs(v - u), `slot ${i}`).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(v)));
        else expect(u).toBe(v);
      });
      // a state the WASM engine made, resumed by the reference over a later piece, and the other way
      const half = Math.floor(s.values.length / 2);
      for (const [a, b] of [
        ['wasm', 'ts'],
        ['ts', 'wasm'],
      ] as const) {
        const first = new BocpdDetector(signal, { engine: a }).run(slice(s, 0, half));
        const rest = new BocpdDetector(signal, { engine: b }).run(slice(s, half, s.values.length), first.state);
        expect([...first.changes, ...rest.changes].map((c) => [c.index, c.at])).toEqual(w.changes.map((c) => [c.index, c.at]));
      }
    },
  );

  it.each(['latency_p95', 'log_volume', 'error_rate', 'generic'] as const)(
    "%s: both engines' first reading names the same points as beating the week's record, the bursts among them",
    (signal) => {
      // ten days of a daily cycle over three series, series i with a burst of five times the level at noon on day 4 + i
      const m = timedModel(new BocpdDetector(signal).config);
      const r = rng(17);
      const n = 3 * 10 * DAY;
      const xs = new Float64Array(n);
      const ns = new Float64Array(m.binomial ? n : 0);
      const bursts: number[] = [];
      for (let k = 0; k < n; k++) {
        const i = k % (10 * DAY);
        const level = 50 * (1 + 0.5 * Math.sin((2 * Math.PI * i) / DAY)) * (i === (4 + Math.floor(k / (10 * DAY))) * DAY + DAY / 2 ? 5 : 1);
        if (level > 100) bursts.push(k);
        if (m.binomial) {
          ns[k] = 400;
          xs[k] = binomial(r, 400, level / 2000);
        } else xs[k] = Math.max(0, level * (1 + 0.05 * gauss(r)));
        if (k % 97 === 0) xs[k] = NaN;
      }
      const read = (engine: typeof tsEngine) => {
        const contexts = new Float64Array(3 * T.size);
        for (let i = 0; i < 3; i++) newContext(contexts, i * T.size);
        const records = new Float64Array(n + 1);
        const offsets = Float64Array.from([0, 10 * DAY, 20 * DAY, n]);
        engine.seasonal(m, { contexts, xs, ns, out: new Float64Array(n), records, offsets, buckets: new Float64Array(3).fill(20_000 * DAY), nSeries: 3 });
        return [...records.subarray(1, 1 + records[0]!)];
      };
      const ts = read(tsEngine);
      expect(read(wasmEngine())).toEqual(ts);
      expect(bursts.filter((k) => xs[k] === xs[k]).every((k) => ts.includes(k))).toBe(true);
      expect(ts.length).toBeLessThan(2 * bursts.length);
    },
  );

  it('a batch of timestamped and plain series equals series-by-series runs', () => {
    const det = new BocpdDetector('log_volume');
    const plain = { values: g.values.subarray(0, 2000) };
    const [a, b] = det.runBatch([input(g), plain]);
    expect(a).toEqual(det.run(input(g)));
    expect(b).toEqual(det.run(plain));
  });

  it('a start before the next bucket the state expects is refused; a later one is a gap', () => {
    const det = new BocpdDetector('log_volume');
    const head = det.run(slice(g, 0, 1000));
    expect(() => det.run(slice(g, 999, 1100), head.state)).toThrow(/before the next point/);
    const gapped = det.run(slice(g, 1010, 1100), head.state);
    expect(gapped.state[0]).toBe(1100); // points 1000..1009 passed as missing
    expect(() => det.run({ values: [1] }, head.state)).toThrow(/timestamped/);
  });

  it('refeedState keeps what was learnt of the cycle: fed again from a later day, a daily peak is no shift', () => {
    const det = new BocpdDetector('log_volume');
    const q = seasonalSeries(205, 'log_volume', { shifts: false });
    const learnt = det.run(slice(q, 0, 10 * DAY)).state;
    const again = det.run(slice(q, 9 * DAY, 12 * DAY), det.refeedState(learnt, q.start + 9 * DAY * B));
    const fresh = det.run(slice(q, 9 * DAY, 12 * DAY));
    expect(worsening(again.changes).length).toBeLessThan(worsening(fresh.changes).length);
    expect(worsening(again.changes).length).toBeLessThanOrEqual(1);
  });

  it('with no history a step waits 5 points, as without the seasonal path; with an hour and more, a strong one is reported on its first point', () => {
    const det = new BocpdDetector('latency_p95');
    const start = Date.UTC(2024, 4, 6, 10) * 1000;
    const early = worsening(det.run({ values: lognormalSeries(3, 40, 20_000, 0.05, 8, 2), start }).changes);
    expect(early.map((c) => [c.index, c.at])).toEqual([[8, 12]]);
    const later = worsening(det.run({ values: lognormalSeries(3, 80, 20_000, 0.05, 40, 2), start }).changes);
    expect(later.map((c) => [c.index, c.at])).toEqual([[40, 40]]);
    expect(later[0]!.after / later[0]!.before).toBeGreaterThan(1.8);
  });
});

describe('seasonal path: recoveries and old states', () => {
  // Counts of a steady service (about 200 a bucket) for two days, then `silent` buckets of nothing,
  // then `after` times the old level.
  const afterSilence = (silent: number, after: number): SeriesInput => {
    const values = new Float64Array(2 * DAY + silent + 48);
    let u = 7;
    const noise = (): number => ((u = (u * 16807) % 2147483647) / 2147483647 - 0.5) * 30;
    for (let i = 0; i < values.length; i++) values[i] = i < 2 * DAY ? 200 + noise() : i < 2 * DAY + silent ? 0 : Math.round(after * 200 + noise());
    return { values, start: Date.UTC(2024, 4, 6) * 1000 };
  };

  it('the return of a series after a silence is a recovery, not a worsening; a return well above the old level is one', () => {
    const det = new BocpdDetector('log_volume');
    const back = worsening(det.run(afterSilence(36, 1)).changes).filter((c) => c.index >= 2 * DAY);
    expect(back).toEqual([]);
    const higher = worsening(det.run(afterSilence(36, 4)).changes).filter((c) => c.index >= 2 * DAY);
    expect(higher.map((c) => c.index)).toEqual([2 * DAY + 36]);
  });

  it('a rise is measured from the level before a deep fall only while the series is still down', () => {
    const c = new Float64Array(T.size);
    newContext(c, 0);
    noteFall(c, 0, 200, 20, true); // to a tenth: an outage
    expect(riseBase(c, 0, 20)).toBe(200); // the return from it is a recovery
    expect(riseBase(c, 0, 20)).toBe(20); // ... and the fall is then forgotten
    noteFall(c, 0, 200, 20, true); // a burst of 200 over a level of 20 fell back
    expect(riseBase(c, 0, 90)).toBe(90); // hours later, at 90, the burst is no level
    noteFall(c, 0, 0.2, 0.01, false); // an error share from 20% to 1%: an improvement, no outage
    expect(riseBase(c, 0, 0.01)).toBe(0.01); // the next rise is measured from 1%
  });

  it("still down is judged by the regime the rise leaves as well as by the lagging level; for counts, a burst's end is no outage", () => {
    const c = new Float64Array(T.size);
    newContext(c, 0);
    noteFall(c, 0, 200, 0, true); // a silence
    expect(riseBase(c, 0, 80, 0)).toBe(200); // two hours on, the clipped level is still at 80, the regime at 0: a recovery
    noteFall(c, 0, 200, 20, true); // a burst of 200 that fell back to 20
    expect(riseBase(c, 0, 90, 90)).toBe(90); // hours later, at 90 both ways: no level of its own
    c[T.n] = 100;
    c[T.level] = 20; // the series' settled level: the burst's three points barely moved it
    noteFall(c, 0, 200, 15, true, true); // counts: back to about that level, no outage
    expect(riseBase(c, 0, 15, 15)).toBe(15);
    noteFall(c, 0, 200, 1, true, true); // to nothing: an outage
    expect(riseBase(c, 0, 1, 1)).toBe(200);
  });

  it('a busy log stream that falls silent for two hours and comes back is no worsening', () => {
    // the hour's level, moved by at most 4 noise units a bucket, is still well up when the stream comes back
    let rows = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const r = rng(seed);
      const at = 4 * DAY + 150;
      const values = Float64Array.from({ length: 6 * DAY }, (_, i) => (i >= at && i < at + 26 ? 0 : poisson(r, 1500 * curve(i, 0.8))));
      rows += worsening(new BocpdDetector('log_volume').run({ values, start: 19_000 * DAY * B }).changes).filter((c) => c.index >= at).length;
    }
    // judged by the level alone, each of the 10 returns was a row
    expect(rows).toBeLessThanOrEqual(1);
  });

  it("a nightly job's burst of error logs is no outage: a tripling hours after it is measured from the usual level", () => {
    const at = 5 * DAY + 100;
    const hits = Array.from({ length: 20 }, (_, k) => k + 51).filter((seed) => {
      const r = rng(seed);
      const values = Float64Array.from({ length: 6 * DAY }, (_, i) => {
        const burst = i % DAY >= 37 && i % DAY < 40 ? 10 : 1; // three buckets at 03:05
        return poisson(r, 3 * curve(i, 0.8) * burst * (i >= at && i < at + 60 ? 3 : 1));
      });
      return worsening(new BocpdDetector('error_log_rate').run({ values, start: 19_000 * DAY * B }).changes).some((c) => c.index >= at - 2 && c.index <= at + 12);
    });
    // with the burst's end taken for an outage, 9 of these 20
    expect(hits.length).toBeGreaterThanOrEqual(12);
  });

  it('a dip to half and its return is no worsening: a rise is measured from most of the usual level too', () => {
    const rows = (sig: 'latency_p95' | 'log_volume', len: number): number => {
      let n = 0;
      for (let seed = 1; seed <= 20; seed++) {
        const r = rng(seed);
        const at = 5 * DAY + 100;
        const values = Float64Array.from({ length: 6 * DAY }, (_, i) => {
          const mean = 1000 * curve(i) * (i >= at && i < at + len ? 0.5 : 1);
          return sig === 'latency_p95' ? mean * 80 * Math.exp(0.2 * gauss(r)) : poisson(r, mean);
        });
        n += worsening(new BocpdDetector(sig).run({ values, start: 19_000 * DAY * B }).changes).filter((c) => c.index >= at).length;
      }
      return n;
    };
    // measured from the dip's level alone, 20 and 10 of these 20 returns were rows
    expect(rows('log_volume', 36)).toBeLessThanOrEqual(2);
    expect(rows('latency_p95', 12)).toBeLessThanOrEqual(2);
  });

  it('an outage during a reported worsening is still an outage: the return from it is a recovery', () => {
    const c = new Float64Array(T.size);
    newContext(c, 0);
    c[T.raised] = 100; // a worsening from 100 was reported, the series now at 300
    noteFall(c, 0, 300, 110, true); // back to its old level: the worsening's end, no outage
    expect(riseBase(c, 0, 110)).toBe(110);
    c[T.raised] = 100;
    noteFall(c, 0, 300, 5, true); // to nothing, below the level it rose from: an outage
    expect(riseBase(c, 0, 5)).toBe(300);
  });

  it('a lone zero amid many counts is a missing bucket; a silence is seen from its second bucket', () => {
    const g = seasonalSeries(203, 'log_volume', { shifts: false });
    const at = 3 * DAY + 100;
    expect(g.values[at - 1]).toBeGreaterThan(50);
    const run = (edit: (v: Float64Array) => void): ChangePoint[] => {
      const values = g.values.slice();
      edit(values);
      return new BocpdDetector('log_volume').run({ values, start: g.start }).changes;
    };
    const missing = run((v) => (v[at] = NaN));
    expect(run((v) => (v[at] = 0))).toEqual(missing);
    // two hours of zeros: a fall, reported from the second of them on
    const silent = run((v) => v.fill(0, at, at + 24));
    const fall = silent.find((c) => c.index >= at && c.after < c.before / 10);
    expect(fall?.index).toBe(at + 1);
  });

  it('a state whose seasonal context has another layout (an older version) resumes with a fresh context', () => {
    const det = new BocpdDetector('latency_p95');
    const g = seasonalSeries(201, 'latency_p95', { shifts: false });
    const bytes = saveState(det.run(slice(g, 0, DAY)).state);
    const state = loadState(cutContext(bytes, T.size - 2)); // two doubles fewer in the context
    expect(state.length).toBe(det.stateSize);
    expect(() => det.run(slice(g, DAY, 2 * DAY), state)).not.toThrow();
  });

  it('a state saved before the week\'s record existed keeps its context, the record starting empty', () => {
    const det = new BocpdDetector('latency_p95');
    const g = seasonalSeries(201, 'latency_p95', { shifts: false });
    const now = det.run(slice(g, 0, 4 * DAY)).state;
    const bytes = saveState(now);
    const state = loadState(cutContext(bytes, T.record)); // the context up to the record
    const same = loadState(bytes); // unused run slots dropped alike
    expect(state.length).toBe(now.length);
    const ctx = now.length - T.size;
    expect(state.subarray(0, ctx + T.record)).toEqual(same.subarray(0, ctx + T.record));
    const empty = new Float64Array(W.size);
    newRecord(empty, 0);
    expect(state.subarray(ctx + T.record, ctx + T.record + W.size)).toEqual(empty);
    // what it learnt stands: the next day gives the same changes as the state that had a record
    // (none of them a record: three days of it are needed)
    expect(det.run(slice(g, 4 * DAY, 5 * DAY), state).changes).toEqual(det.run(slice(g, 4 * DAY, 5 * DAY), now).changes);
  });

  it("a state saved before the blocks' spread was kept keeps its context, the spread unmeasured until a day of blocks is seen again", () => {
    const det = new BocpdDetector('latency_p95');
    const g = seasonalSeries(203, 'latency_p95', { shifts: false });
    const now = det.run(slice(g, 0, 4 * DAY)).state;
    const ctx = now.length - T.size;
    expect(now.subarray(ctx + T.spread, ctx + T.size).every((v) => v > 0)).toBe(true);
    const bytes = saveState(now);
    const state = loadState(cutContext(bytes, T.spread));
    expect(state.length).toBe(now.length);
    expect(state.subarray(0, ctx + T.spread)).toEqual(loadState(bytes).subarray(0, ctx + T.spread));
    expect([...state.subarray(ctx + T.spread)]).toEqual(Array(T.size - T.spread).fill(0));
    const later = det.run(slice(g, 4 * DAY, 5 * DAY), state).state;
    expect(later.subarray(ctx + T.spread, ctx + T.size).every((v) => v > 0)).toBe(true);
  });

  it('a state saved before the zero\'s flag existed keeps its context; its reported worsening ends at any fall, as it did', () => {
    const det = new BocpdDetector('log_volume');
    const g = seasonalSeries(203, 'log_volume', { shifts: false });
    const now = det.run(slice(g, 0, 4 * DAY)).state;
    const ctx = now.length - T.size;
    for (const [flag, base] of [[1, 0], [0, NaN]] as const) {
      now[ctx + T.raised] = flag; // what the older layout held: 1 after a reported worsening, else 0
      const bytes = saveState(now);
      const state = loadState(cutContext(bytes, T.zero));
      expect(state.length).toBe(now.length);
      expect(state[ctx + T.raised]).toBe(base);
      expect(state.subarray(ctx + T.raised + 1, ctx + T.zero)).toEqual(loadState(bytes).subarray(ctx + T.raised + 1, ctx + T.zero));
      expect(state[ctx + T.zero]).toBe(0);
    }
  });
});

describe('seasonal path: how long a count regime must be', () => {
  // Five days of a daily curve with Poisson counts, then a rise for four hours from a quiet hour of
  // day 4. A mean over many buckets has less Poisson noise than one bucket; overdispersion (the
  // wander a busy series' counts have) does not average away.
  const counts = (seed: number, level: number, factor: number, len: number): { input: SeriesInput; at: number } => {
    const r = rng(seed);
    const n = 5 * DAY;
    const at = 4 * DAY + 100;
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const mean = level * Math.exp(0.5 * Math.cos((2 * Math.PI * i) / DAY)) * (i >= at && i < at + len ? factor : 1);
      values[i] = poisson(r, mean);
    }
    return { input: { values, start: 19_000 * DAY * B }, at };
  };
  const found = (input: SeriesInput, at: number): boolean =>
    worsening(new BocpdDetector('error_log_rate').run(input).changes).some((c) => c.index >= at - 2 && c.index <= at + 12);

  it('a few counts a bucket that triple for four hours are a shift, though each bucket rises by less than 4 of its noise units', () => {
    const hits = [1, 2, 3, 4, 5].filter((seed) => {
      const { input, at } = counts(seed, 2, 3, 48);
      return found(input, at);
    });
    expect(hits.length).toBeGreaterThanOrEqual(4);
  });

  it('a busy series whose counts rise by half for four hours, under 4 of its noise units a bucket, is not one: its overdispersion does not average away', () => {
    const hits = [1, 2, 3, 4, 5].filter((seed) => {
      const { input, at } = counts(seed, 1000, 1.5, 48);
      return found(input, at);
    });
    expect(hits).toEqual([]);
  });

  it("a busy series' floor follows how its own block means stray: counts that wander write few rows, and a doubling for four hours is still found", () => {
    // 1,000 a bucket on a daily curve, times a wander of 30% that keeps 0.98 of itself from bucket to
    // bucket, Poisson on top: far more than k0's overdispersion, and it does not average away
    const busy = (seed: number, days: number, shifted: (i: number) => boolean): Float64Array => {
      const r = rng(seed);
      let wander = 0;
      return Float64Array.from({ length: days * DAY }, (_, i) => {
        wander = 0.98 * wander + Math.sqrt(1 - 0.98 ** 2) * gauss(r);
        return poisson(r, 1000 * Math.exp(0.5 * Math.cos((2 * Math.PI * i) / DAY) + 0.3 * wander) * (shifted(i) ? 2 : 1));
      });
    };
    const rows = (values: Float64Array): ChangePoint[] => worsening(new BocpdDetector('log_volume').run({ values, start: 19_000 * DAY * B }).changes);
    let quiet = 0;
    for (let seed = 1; seed <= 10; seed++) quiet += rows(busy(seed, 8, () => false)).filter((c) => c.index >= 3 * DAY).length;
    // the model's share alone wrote 16 rows in these 50 days
    expect(quiet).toBeLessThanOrEqual(8);
    const at = 5 * DAY + 100;
    const hits = [101, 102, 103, 104, 105, 106, 107, 108, 109, 110].filter((seed) => rows(busy(seed, 6, (i) => i >= at && i < at + 48)).some((c) => c.index >= at - 2 && c.index <= at + 12));
    expect(hits.length).toBeGreaterThanOrEqual(8);
  });
});

describe('seasonal path: what the envelope and the profile learn', () => {
  const start = 19_000 * DAY * B; // a midnight
  /** n points of `mean(i)` with multiplicative noise of sd `sd` (p95 latency, CPU). */
  const around = (seed: number, n: number, sd: number, mean: (i: number) => number): Float64Array => {
    const r = rng(seed);
    return Float64Array.from({ length: n }, (_, i) => mean(i) * Math.exp(sd * gauss(r)));
  };
  const latencyRows = (values: Float64Array, from = start): ChangePoint[] => worsening(new BocpdDetector('latency_p95').run({ values, start: from }).changes);

  it('an incident reported once does not hide the next ones like it: the same slowdown five times in a week is five rows', () => {
    // ten days of p95 latency with a daily cycle; p95 doubles for three hours at 11:00, 20:00 or 02:00 on days 3 to 8
    const onsets = [3 * DAY + 132, 4 * DAY + 240, 5 * DAY + 24, 6 * DAY + 132, 8 * DAY + 240];
    const rows = [301, 302, 303, 304, 305].map((seed) => {
      const found = latencyRows(around(seed, 10 * DAY, 0.1, (i) => 8e4 * curve(i) * (onsets.some((at) => i >= at && i < at + 36) ? 2 : 1)));
      return { rows: found.length, slowdowns: onsets.filter((at) => found.some((c) => c.index >= at - 2 && c.index <= at + 12)).length };
    });
    expect(rows).toEqual(Array(5).fill({ rows: 5, slowdowns: 5 }));
  });

  it('p95 up by 70% for three hours is a shift though each bucket rises by under 4 of its noise units; for ten minutes it is not', () => {
    const at = 5 * DAY + 132;
    const found = (seed: number, len: number): boolean =>
      latencyRows(around(seed, 6 * DAY, 0.18, (i) => 8e4 * curve(i) * (i >= at && i < at + len ? 1.7 : 1))).some((c) => c.index >= at - 2 && c.index <= at + 12);
    const seeds = [321, 322, 323, 324, 325];
    expect(seeds.filter((seed) => found(seed, 36)).length).toBeGreaterThanOrEqual(4);
    expect(seeds.filter((seed) => found(seed, 2))).toEqual([]);
  });

  it('a weekend that eases in and out around a time zone\'s midnight is no worsening: the weekday offsets are read between day centres', () => {
    // four weeks of p95 latency; Saturday and Sunday at half a weekday's, eased over the six hours
    // around midnight at UTC-5. Stepping the offsets at 00:00 UTC wrote 23 rows in days 15-28 of these
    // ten series, most on the mornings after the week turned
    let rows = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const r = rng(seed);
      const values = Float64Array.from({ length: 28 * DAY }, (_, i) => {
        const local = 19_000 * DAY + i - (5 * DAY) / 24;
        const day = Math.floor(local / DAY);
        const u = (local - day * DAY) / DAY;
        const at = (d: number): number => ((d + 4) % 7 >= 5 ? 0.5 : 1); // 1970-01-01 was a Thursday
        const week = u < 0.125 ? at(day) + (at(day - 1) - at(day)) * (0.5 - u * 4) : u > 0.875 ? at(day) + (at(day + 1) - at(day)) * ((u - 0.875) * 4) : at(day);
        return 8e4 * curve(i) * week * Math.exp(0.15 * gauss(r));
      });
      rows += latencyRows(values).filter((c) => c.index >= 15 * DAY).length;
    }
    expect(rows).toBeLessThanOrEqual(8);
  });

  it('a regime of two points or more is held to the second-highest day only once four days have values', () => {
    // one burst a day over a flat series, in noise units of 1: the days' highest single buckets
    const e = new Float64Array(V.size);
    newEnvelope(e, 0);
    const first = 19_000 * DAY;
    const day = (d: number, burst: number): void => {
      for (let i = 0; i < DAY; i++) {
        advanceEnvelope(e, 0, first + d * DAY + i, (mean, level) => mean - level, false, -1);
        absorbPoint(e, 0, i === 100 ? burst : 0, 1, 0, 1);
      }
    };
    const secondAt = (bucket: number): number => {
      const out = new Float64Array(LEVELS);
      levelsBefore(e, 0, bucket, out, 0);
      return out[SCALES]!; // the bar's level for longer regimes, at one bucket's scale
    };
    day(0, 8);
    day(1, 5);
    day(2, 3);
    // three days: the second-highest of so few says little about what recurs daily, so the highest
    expect(secondAt(first + 3 * DAY)).toBe(8);
    day(3, 2);
    expect(secondAt(first + 4 * DAY)).toBe(5);
  });

  it('the bar falls smoothly with a regime\'s length: read between the scales either side of half its length, not only when it reaches 8, 16 or 32 points', () => {
    // the second-highest day's levels per scale (1, 2, 4, ... buckets): shorter blocks strayed further
    const levels = new Float64Array(LEVELS).fill(-Infinity);
    const byScale = [12, 9, 7, 5, 4, 3];
    byScale.forEach((v, j) => (levels[SCALES + j] = v));
    const bar = (points: number): number => barFor(levels, 0, points, 0, true, 0);
    // at a power of two, the bar is that of blocks half as long
    expect(bar(8)).toBe(byScale[2]! * 1.25);
    expect(bar(16)).toBe(byScale[3]! * 1.25);
    // between, linearly in the block length: 12 points read blocks of 6, half way from 4 to 8
    expect(bar(12)).toBeCloseTo(((byScale[2]! + byScale[3]!) / 2) * 1.25, 12);
    for (let n = 9; n < 16; n++) {
      expect(bar(n)).toBeLessThan(bar(n - 1));
    }
    // where the next scale has no block yet, the smaller scale's bar holds
    levels[SCALES + 3] = -Infinity;
    expect(bar(12)).toBe(byScale[2]! * 1.25);
  });

  it("a long regime's floor follows how the series' own block means stray: p95 up by 60% for four hours over independent noise is a shift, and noise that wanders writes few rows", () => {
    const at = 5 * DAY + 132;
    const white = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].filter((seed) =>
      latencyRows(around(seed, 6 * DAY, 0.25, (i) => 8e4 * curve(i) * (i >= at && i < at + 48 ? 1.6 : 1))).some((c) => c.index >= at - 2 && c.index <= at + 12),
    );
    // a fixed share of one bucket's noise (0.8) found 1 of these 10
    expect(white.length).toBeGreaterThanOrEqual(5);
    // the same daily cycle under noise as wide that wanders (each point 0.95 of the one before, plus new noise), no shift:
    // a fixed share wrote 24 rows in these 50 days (0.5 a day), as the wander's hours cleared a floor made for independent noise
    let rows = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const r = rng(seed);
      let wander = 0;
      const values = Float64Array.from({ length: 8 * DAY }, (_, i) => {
        wander = 0.95 * wander + Math.sqrt(1 - 0.95 ** 2) * gauss(r);
        return 8e4 * curve(i) * Math.exp(0.3 * wander);
      });
      rows += latencyRows(values).filter((c) => c.index >= 3 * DAY).length;
    }
    expect(rows).toBeLessThanOrEqual(10);
  });

  it('one error among a handful of night calls does not raise the bar: errors 1% → 20% by day are mostly written within two buckets', () => {
    const within = Array.from({ length: 12 }, (_, k) => 341 + k).map((seed) => {
      const r = rng(seed);
      const at = 3 * DAY + 72 + Math.floor(r() * 144); // a fault in the busier half of the day
      const values = new Float64Array(4 * DAY);
      const calls = new Float64Array(4 * DAY);
      for (let i = 0; i < values.length; i++) {
        calls[i] = Math.round(20 + 15 * Math.sin((2 * Math.PI * i) / DAY)); // 5 calls a bucket at night, 35 by day
        values[i] = binomial(r, calls[i]!, i >= at && i < at + 12 ? 0.2 : 0.01);
      }
      const row = worsening(new BocpdDetector('error_rate').run({ values, calls, start }).changes).find((c) => c.index >= at - 1 && c.index <= at + 2);
      return row !== undefined && row.at - at < 2;
    });
    // with the usual traffic's noise for every block, night errors set bars that held 10 of 12 back longer
    expect(within.filter(Boolean).length).toBeGreaterThanOrEqual(5);
  });

  it('a level jump in the first days is not learnt as the daily shape: no row on the days after it', () => {
    // CPU-like: 40 from 14:30 on day 0, 3 from 23:00 on day 1 until 17:00 on day 2 (a stopped job), then 33 for twelve days
    const level = (at: number): number => (at < DAY + 276 ? 40 : at < 2 * DAY + 204 ? 3 : 33); // `at`: buckets since midnight of day 0
    const rows = [311, 312, 313].map(
      (seed) => latencyRows(around(seed, 15 * DAY - 174, 0.05, (i) => level(i + 174)), start + 174 * B).filter((c) => c.index + 174 >= 3 * DAY).length,
    );
    expect(rows).toEqual([0, 0, 0]);
  });
});
