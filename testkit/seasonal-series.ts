// Seeded generator of seasonal 5-minute service series for the detector's evaluation: a daily
// traffic curve (two harmonics, a peak-to-trough ratio of 2 to 10), quieter weekends, noise of each
// signal's kind, missing buckets and one long gap, a daily cron burst in some series, a daily
// amplitude that changes once, and real worsening shifts of a few hours placed at a daily peak or
// a trough, each starting at a random moment inside its bucket.
import { binomial, gauss, poisson, rng } from './rng.js';

export type GeneratedSignal = 'latency_p95' | 'log_volume' | 'error_rate' | 'error_log_rate';

export interface GeneratedShift {
  /** Index of the bucket the shift starts in, and the fraction of that bucket already shifted. */
  at: number;
  share: number;
  /** First bucket after the shift. */
  end: number;
  where: 'peak' | 'trough';
  /** Multiplier on the value (latency, counts) or the error probability's new value (error_rate). */
  size: number;
}

export interface GeneratedSeries {
  name: string;
  signal: GeneratedSignal;
  /** µs timestamp of values[0] (a 5-minute bucket start). */
  start: number;
  values: Float64Array;
  calls?: Float64Array;
  shifts: GeneratedShift[];
  /** The long gap: buckets at .. end-1 have no value (no p95, no calls, zero records). */
  gap: { at: number; end: number };
}

const BUCKET_US = 300_000_000;
const DAY = 288;

const between = (r: () => number, a: number, b: number): number => a + (b - a) * r();

/** Saturday and Sunday run at `weekend` times a weekday's traffic, the change spread over the six hours around midnight. */
function weekly(bucket: number, weekend: number): number {
  const at = (d: number) => ((((d + 4) % 7) + 7) % 7 >= 5 ? weekend : 1); // 1970-01-01 was a Thursday: 5 = Saturday, 6 = Sunday
  const day = Math.floor(bucket / DAY);
  const u = (bucket % DAY) / DAY; // time of day
  if (u < 0.125) return at(day) + (at(day - 1) - at(day)) * (0.5 - u * 4); // 00:00-03:00: from halfway
  if (u > 0.875) return at(day) + (at(day + 1) - at(day)) * ((u - 0.875) * 4); // 21:00-24:00: to halfway
  return at(day);
}

export interface SeasonalOptions {
  /** Days of data (default three weeks, so the weekly profile comes into use). */
  days?: number;
  /** Whether to place real shifts (default true). */
  shifts?: boolean;
  /** error_rate: calls a bucket at the day's mean (default: drawn from 100 to 3,000). */
  calls?: number;
  /** Weekend traffic as a share of a weekday's (default: drawn from 0.4 to 0.8). */
  weekend?: number;
}

export function seasonalSeries(seed: number, signal: GeneratedSignal, opts: SeasonalOptions = {}): GeneratedSeries {
  const days = opts.days ?? 21;
  const r = rng(seed * 7919 + signal.length);
  const n = days * DAY;
  // Start on a random bucket of a random day in 2024 (the weekday varies with the seed).
  const start = (Math.floor(Date.UTC(2024, 0, 1) / 300_000) + Math.floor(r() * 365) * DAY + Math.floor(r() * DAY)) * BUCKET_US;
  const b0 = start / BUCKET_US;
  // Daily traffic curve: ln(traffic) = amp * shape(t), shape with two harmonics scaled to [-1, 1].
  const phase = r();
  const second = between(r, 0, 0.5);
  const raw = (u: number) => Math.cos(2 * Math.PI * (u - phase)) + second * Math.cos(4 * Math.PI * (u - phase - 0.1));
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < DAY; i++) {
    lo = Math.min(lo, raw(i / DAY));
    hi = Math.max(hi, raw(i / DAY));
  }
  const shape = (bucket: number) => (2 * (raw((bucket % DAY) / DAY) - lo)) / (hi - lo) - 1;
  const amp = Math.log(between(r, 2, 10)) / 2;
  const ampChangeDay = 7 + Math.floor(r() * 7);
  const ampChange = r() < 0.5 ? 1.5 : 0.6;
  const drawnWeekend = between(r, 0.4, 0.8); // drawn whatever the option, so the other draws stay the same
  const weekend = opts.weekend ?? drawnWeekend;
  const cron = r() < 0.5 ? Math.floor(r() * DAY) : -1; // a daily burst at this bucket of the day
  const noise = between(r, 0.05, 0.2);
  // Peak and trough buckets of the day, for placing shifts.
  let peak = 0;
  let trough = 0;
  for (let i = 0; i < DAY; i++) {
    if (shape(i) > shape(peak)) peak = i;
    if (shape(i) < shape(trough)) trough = i;
  }
  const shifts: GeneratedShift[] = [];
  for (let d = 3 + Math.floor(r() * 2); d < days - 1 && shifts.length < 4; d += 3 + Math.floor(r() * 3)) {
    if (opts.shifts === false) break;
    const where = shifts.length % 2 === 0 ? 'peak' : 'trough';
    const dayStart = Math.ceil((b0 + d * DAY) / DAY) * DAY - b0; // index of that day's midnight
    const at = dayStart + (where === 'peak' ? peak : trough) - 6 + Math.floor(r() * 12);
    if (at + 96 >= n) break;
    const size = signal === 'error_rate' ? between(r, 0.05, 0.2) : signal === 'latency_p95' ? between(r, 1.5, 3) : between(r, 2, 4);
    shifts.push({ at, share: r(), end: at + 24 + Math.floor(r() * 72), where, size });
  }
  const gapAt = Math.floor(between(r, 2, days - 2) * DAY);
  const gapLen = 24 + Math.floor(r() * 48);
  const drawn = signal === 'latency_p95' ? between(r, 2e4, 2e5) : signal === 'log_volume' ? between(r, 50, 2000) : signal === 'error_log_rate' ? between(r, 2, 20) : between(r, 100, 3000);
  const level = signal === 'error_rate' && opts.calls !== undefined ? opts.calls : drawn; // drawn either way, so the other draws stay the same
  const errP = between(r, 0.002, 0.02);
  const values = new Float64Array(n);
  const calls = signal === 'error_rate' ? new Float64Array(n) : undefined;
  for (let i = 0; i < n; i++) {
    const bucket = b0 + i;
    const day = Math.floor(bucket / DAY);
    const a = i >= ampChangeDay * DAY ? amp * ampChange : amp;
    const traffic = Math.exp(a * shape(bucket)) * weekly(bucket, weekend);
    const burst = cron >= 0 && Math.abs((bucket % DAY) - cron) <= 1 && r() < 0.9 ? 3 : 1;
    // The share of this bucket under a shift (the first bucket of a shift is partly shifted).
    let shifted = 0;
    let size = 1;
    for (const s of shifts) {
      if (i > s.at && i < s.end) shifted = 1;
      else if (i === s.at) shifted = s.share;
      if (i >= s.at && i < s.end) size = s.size;
    }
    if (signal === 'latency_p95') {
      // p95 of a mix: once more than 5% of the bucket's calls are slow, its p95 is theirs
      const load = 1 + 0.3 * (traffic - 1) / Math.max(1, Math.exp(amp)); // latency rises with load
      values[i] = level * load * burst * (shifted > 0.05 ? size : 1) * Math.exp(noise * gauss(r));
    } else if (signal === 'error_rate') {
      const c = poisson(r, level * traffic * burst);
      calls![i] = c;
      const p = errP * (1 - shifted) + (shifted ? size : errP) * shifted;
      values[i] = binomial(r, c, Math.min(1, p * Math.exp(noise * gauss(r))));
    } else {
      const mean = level * traffic * burst * (1 + shifted * (size - 1)) * Math.max(0.05, 1 + noise * gauss(r));
      values[i] = poisson(r, mean);
    }
    // A missing bucket: no p95, no calls, or (as the pass reads a known service's log counts) zero records.
    if ((i >= gapAt && i < gapAt + gapLen) || r() < 0.01) {
      values[i] = signal === 'latency_p95' ? NaN : 0;
      if (calls) calls[i] = 0;
    }
  }
  return { name: `${signal}#${seed}`, signal, start, values, ...(calls ? { calls } : {}), shifts, gap: { at: gapAt, end: gapAt + gapLen } };
}
