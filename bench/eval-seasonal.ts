// npm run eval:seasonal — the detector's seasonal path as the scheduled pass runs it (timestamped
// series, one configuration per signal, nothing tuned per series), on data with daily cycles:
//
// - NAB realAWSCloudwatch (../shared/corpora/nab): 17 cloud metrics of 5-minute points over about
//   two weeks, with labelled anomaly windows, through the latency_p95 signal (Student-t on ln(1 + x),
//   the model of a positive series). Per series: worsening shifts a day outside every window, the
//   windows holding a worsening shift (and, for reference, holding any change), and the time from a
//   shift's first bucket to its row. Then the same through the generic signal (any value, read
//   linearly), for reference.
// - Generated seasonal series (testkit/seasonal-series.ts): latency, log volume, error rate and
//   error log counts, three weeks each, with real shifts at peaks and troughs. Per series: shifts
//   found (a worsening shift starting within an hour of the true onset), false worsening shifts a
//   day (outside every true shift), and the lag from the true onset to the row.
//
// Lags assume the pass runs as each bucket's grace passes (the default grace). Each source is split
// in two: the constants of the seasonal path were chosen on the first group (NAB ec2_cpu_*, generator
// seeds 1-10) and the second (the other NAB series, seeds 101-110) is reported as held out.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CORPORA_DIR } from '../src/core/paths.js';
import { settingDefault } from '../src/core/config.js';
import { BUCKET_US } from '../src/core/time.js';
import { BocpdDetector, worsening, type ChangePoint, type SeriesInput, type Signal } from '../src/detect/bocpd/index.js';
import { seasonalSeries, type GeneratedSeries, type GeneratedSignal } from '../testkit/seasonal-series.js';
import { poisson, rng } from '../testkit/rng.js';

const GRACE_MIN = Number(settingDefault('SVC_DETECT_GRACE_S')) / 60;
/** Buckets in an hour: a generated shift is found by a worsening starting within an hour of its onset. */
const HOUR = 12;
const BUCKET_MIN = BUCKET_US / 60_000_000;
const verbose = Boolean(process.env.EVAL_VERBOSE);

interface Row {
  group: string;
  name: string;
  days: number;
  falsePerDay: number;
  hit: number;
  windows: number;
  lags: number[];
  /** Generated shifts left out: their first hour is in the series' long gap. */
  hidden?: number;
  note?: string;
}

const median = (xs: number[]): number => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
};
const f2 = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : '-');

function detect(signal: Signal, input: SeriesInput): ChangePoint[] {
  return new BocpdDetector(signal).run(input).changes;
}

/** NAB: each file bucketed to 5 minutes (several values in a bucket averaged), through `signal`. */
function nab(signal: Signal = 'latency_p95'): Row[] {
  const dir = join(CORPORA_DIR, 'nab');
  if (!existsSync(dir)) {
    console.log(`NAB: skipped, ${dir} is absent`);
    return [];
  }
  const windows = JSON.parse(readFileSync(join(dir, 'labels', 'combined_windows.json'), 'utf8')) as Record<string, Array<[string, string]>>;
  const toUs = (s: string): number => Date.parse(s.replace(' ', 'T').replace(/(\.\d{3})\d*$/, '$1') + 'Z') * 1000;
  const rows: Row[] = [];
  for (const f of readdirSync(join(dir, 'data', 'realAWSCloudwatch')).filter((x) => x.endsWith('.csv')).sort()) {
    const lines = readFileSync(join(dir, 'data', 'realAWSCloudwatch', f), 'utf8').trim().split('\n').slice(1);
    const pts = lines.map((l) => [Math.floor(toUs(l.split(',')[0]!) / BUCKET_US), Number(l.split(',')[1])] as const);
    const b0 = pts[0]![0];
    const n = pts[pts.length - 1]![0] - b0 + 1;
    const sum = new Float64Array(n);
    const cnt = new Float64Array(n);
    for (const [b, v] of pts) {
      sum[b - b0] += v;
      cnt[b - b0]++;
    }
    const values = sum.map((s, i) => (cnt[i]! > 0 ? s / cnt[i]! : NaN));
    const changes = detect(signal, { values, start: b0 * BUCKET_US });
    const win = (windows[`realAWSCloudwatch/${f}`] ?? []).map(([a, b]) => [toUs(a), toUs(b)] as const);
    const tsOf = (i: number) => (b0 + i) * BUCKET_US;
    const inside = (c: ChangePoint, [a, b]: readonly [number, number]) => tsOf(c.index) >= a && tsOf(c.index) <= b;
    const rows_ = worsening(changes);
    const hit = win.filter((w) => rows_.some((c) => inside(c, w))).length;
    const hitAny = win.filter((w) => changes.some((c) => inside(c, w))).length;
    const falses = rows_.filter((c) => !win.some((w) => inside(c, w)));
    rows.push({
      group: (f.startsWith('ec2_cpu') ? 'NAB calibration (ec2_cpu_*)' : 'NAB held out (the others)') + (signal === 'latency_p95' ? '' : `, through ${signal}`),
      name: f.replace('.csv', ''),
      days: n / 288,
      falsePerDay: falses.length / (n / 288),
      hit,
      windows: win.length,
      lags: rows_.map((c) => (c.at - c.index + 1) * BUCKET_MIN + GRACE_MIN),
      note: `any change in ${hitAny}/${win.length}` + (verbose ? ` false at ${falses.map((c) => new Date(tsOf(c.index) / 1000).toISOString().slice(5, 16)).join(' ')}` : ''),
    });
  }
  return rows;
}

const SIGNALS: GeneratedSignal[] = ['latency_p95', 'log_volume', 'error_rate', 'error_log_rate'];
/** Seeds from..to. */
const seedRange = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
/** The generated seeds the seasonal path was tuned on, and those held out from it. */
const CALIBRATION = seedRange(1, 10);
const HELD_OUT = seedRange(101, 110);

/**
 * Generated series, each kept at one bucket in `every` (the others missing: a series sampled every
 * 5 × `every` minutes); `signals` and `callsPerBucket` (error_rate's) to change what is generated.
 */
function generated(seeds: number[], group: string, every = 1, signals = SIGNALS, callsPerBucket?: number): Row[] {
  const rows: Row[] = [];
  const kept = (g: GeneratedSeries, i: number): boolean => (g.start / BUCKET_US + i) % every === 0;
  // the first bucket kept after an onset may be every - 1 buckets later
  const late = HOUR + every - 1;
  for (const seed of seeds) {
    for (const signal of signals) {
      const g = seasonalSeries(seed, signal, callsPerBucket === undefined ? {} : { calls: callsPerBucket });
      const values = every === 1 ? g.values : g.values.map((v, i) => (kept(g, i) ? v : NaN));
      const calls = g.calls && every > 1 ? g.calls.map((n, i) => (kept(g, i) ? n : 0)) : g.calls;
      const changes = worsening(detect(signal, { values, ...(calls ? { calls } : {}), start: g.start }));
      const lags: number[] = [];
      let found = 0;
      // a shift whose first hour lies in the series' long gap cannot be found within that hour
      const shifts = g.shifts.filter((s) => !(s.at >= g.gap.at && s.at + HOUR <= g.gap.end));
      for (const s of shifts) {
        const c = changes.find((x) => x.index >= s.at - 2 && x.index <= s.at + late);
        if (!c) continue;
        found++;
        lags.push((c.at - s.at + s.share) * BUCKET_MIN + GRACE_MIN); // onset inside bucket s.at, row after bucket c.at closes
      }
      const falses = changes.filter((c) => !g.shifts.some((s) => c.index >= s.at - 2 && c.index < s.end + late));
      const days = g.values.length / 288;
      rows.push({
        group,
        name: g.name,
        days,
        falsePerDay: falses.length / days,
        hit: found,
        windows: shifts.length,
        hidden: g.shifts.length - shifts.length,
        lags,
        ...(verbose ? { note: `false at ${falses.map((c) => `${c.index} (day ${(c.index / 288).toFixed(1)})`).join(' ')}` } : {}),
      });
    }
  }
  return rows;
}

function print(rows: Row[], what: string, totalsOnly = false): void {
  const groups = [...new Set(rows.map((r) => r.group))];
  for (const group of groups) {
    const rs = rows.filter((r) => r.group === group);
    console.log(`\n${group}`);
    if (!totalsOnly) {
      console.log(`series                                  days  false/day  ${what.padEnd(7)}  lag min (median)`);
      for (const r of rs) {
        console.log(`${r.name.padEnd(38)} ${r.days.toFixed(1).padStart(5)}  ${f2(r.falsePerDay).padStart(9)}  ${`${r.hit}/${r.windows}`.padStart(7)}  ${f2(median(r.lags)).padStart(6)}${r.note ? `  ${r.note}` : ''}`);
      }
    }
    const days = rs.reduce((s, r) => s + r.days, 0);
    const falses = rs.reduce((s, r) => s + r.falsePerDay * r.days, 0);
    const hit = rs.reduce((s, r) => s + r.hit, 0);
    const windows = rs.reduce((s, r) => s + r.windows, 0);
    const hidden = rs.reduce((s, r) => s + (r.hidden ?? 0), 0);
    const lags = rs.flatMap((r) => r.lags);
    console.log(
      `TOTAL ${rs.length} series: false worsening shifts ${f2(falses / days)} a day per series (worst ${f2(Math.max(...rs.map((r) => r.falsePerDay)))}), ` +
        `${what} ${hit}/${windows} (${((100 * hit) / Math.max(1, windows)).toFixed(0)}%)${hidden ? ` (${hidden} more in a gap, not counted)` : ''}, lag median ${f2(median(lags))} min, max ${f2(Math.max(...lags))} min`,
    );
  }
}

console.log(`seasonal path — lags from a shift's onset to its row with the pass at each bucket's grace (default ${GRACE_MIN * 60} s)`);
print(nab(), 'windows');
// the generic signal (any value, read linearly): nothing of the seasonal path was chosen for it
print(nab('generic'), 'windows');
print([...generated(CALIBRATION, 'generated, calibration (seeds 1-10)'), ...generated(HELD_OUT, 'generated, held out (seeds 101-110)')], 'shifts');
// series sampled every 30 or 60 minutes: nothing of the seasonal path was chosen on them
const sparse = (seeds: number[], name: string): Row[] => [6, 12].flatMap((every) => generated(seeds, `generated, ${name}, one bucket in ${every} (every ${every * 5} minutes)`, every));
print([...sparse(CALIBRATION, 'calibration seeds'), ...sparse(HELD_OUT, 'held-out seeds')], 'shifts', true);
// error shares at 10 and 30 calls a bucket (the generator draws 100 to 3,000): nothing was chosen on them either
const quiet = (seeds: number[], name: string): Row[] => [10, 30].flatMap((calls) => generated(seeds, `generated, ${name}, error_rate at ${calls} calls a bucket`, 1, ['error_rate'], calls));
print([...quiet(CALIBRATION, 'calibration seeds'), ...quiet(HELD_OUT, 'held-out seeds')], 'shifts', true);
// What no set above holds, on generated series without shifts (seeds 301-320): a lasting step, the
// daily pattern moving an hour (a change of summer time), deep weekends. Rows written where the
// series did nothing new are the cost; none of this was tuned on.
function scenarios(): void {
  const seeds = seedRange(301, 320);
  const at = 10 * 288 + 100;
  const rowsOf = (signal: GeneratedSignal, g: GeneratedSeries, values: Float64Array): ChangePoint[] => worsening(detect(signal, { values, start: g.start }));
  console.log('\nscenarios, 20 generated series each (seeds 301-320, no shifts)');
  for (const signal of ['latency_p95', 'log_volume', 'error_log_rate'] as const) {
    let atStep = 0;
    let afterStep = 0;
    let later = 0;
    let unchanged = 0;
    let unchanged4 = 0;
    for (const seed of seeds) {
      const g = seasonalSeries(seed, signal, { shifts: false });
      const round = (v: number): number => (signal === 'latency_p95' ? v : Math.round(v));
      const step = rowsOf(signal, g, g.values.map((v, i) => (i >= at ? round(2 * v) : v)));
      const moved = rowsOf(signal, g, g.values.map((v, i) => (i >= at ? g.values[i - HOUR]! : v)));
      const base = rowsOf(signal, g, g.values);
      const within = (rs: ChangePoint[], from: number, days: number): number => rs.filter((c) => c.index >= from && c.index < at + days * 288).length;
      if (step.some((c) => c.index >= at - 2 && c.index <= at + HOUR)) atStep++;
      afterStep += within(step, at + HOUR + 1, 7);
      later += within(moved, at, 4);
      unchanged += within(base, at + HOUR + 1, 7);
      unchanged4 += within(base, at, 4);
    }
    console.log(
      `${signal.padEnd(15)} doubled for good: found at the step ${atStep}/20, rows in the week after ${afterStep} (unchanged ${unchanged}); ` +
        `the pattern an hour later: rows in the four days after ${later} (unchanged ${unchanged4})`,
    );
  }
  for (const signal of ['log_volume', 'error_log_rate'] as const) {
    const perDay = (weekend?: number): string => {
      let rows = 0;
      let days = 0;
      for (const seed of seeds) {
        const g = seasonalSeries(seed, signal, { shifts: false, ...(weekend === undefined ? {} : { weekend }) });
        rows += rowsOf(signal, g, g.values).filter((c) => c.index >= 3 * 288).length;
        days += g.values.length / 288 - 3;
      }
      return f2(rows / days);
    };
    console.log(`${signal.padEnd(15)} false rows a day from day 3 with weekends at 0.4-0.8 / 0.2 / 0.05 of weekdays: ${perDay()} / ${perDay(0.2)} / ${perDay(0.05)}`);
  }
  // a few error logs an hour: a daily cycle around `mean` counts a bucket, x4 for four hours from day 12
  const rare = (mean: number): string => {
    let found = 0;
    for (const seed of seeds) {
      const r = rng(seed * 31);
      const onset = 12 * 288 + Math.floor(r() * 200);
      const values = Float64Array.from({ length: 21 * 288 }, (_, i) => poisson(r, mean * Math.exp(0.8 * Math.cos((2 * Math.PI * (i - 170)) / 288)) * (i >= onset && i < onset + 48 ? 4 : 1)));
      if (worsening(detect('error_log_rate', { values, start: (19000 * 288 + 37) * BUCKET_US })).some((c) => c.index >= onset - 2 && c.index <= onset + HOUR)) found++;
    }
    return `${found}/20`;
  };
  console.log(`error_log_rate  at 0.2 / 0.5 / 1 counts a bucket, x4 for four hours found within an hour: ${rare(0.2)} / ${rare(0.5)} / ${rare(1)}`);
}
scenarios();
// EVAL_SEEDS=401-440: one more group of generated seeds, for a check on seeds nothing was looked at on
const more = /^(\d+)-(\d+)$/.exec(process.env.EVAL_SEEDS ?? '');
if (more) {
  const [from, to] = [Number(more[1]), Number(more[2])];
  print(generated(seedRange(from, to), `generated, seeds ${from}-${to}`), 'shifts');
}
