// Timestamps at the API: int64 microseconds since the epoch in `*_ts` fields, ISO strings in `*_iso`
// and friends. One formatter so every answer prints time the same way.

export const MINUTE_US = 60_000_000;
export const HOUR_US = 3_600_000_000;
/** Detection buckets are 5 minutes; a bucket's index is floor(µs / BUCKET_US). */
export const BUCKET_US = 300_000_000;
/** Buckets in a day (288): the period of the detector's daily profile. */
export const BUCKETS_PER_DAY = (24 * HOUR_US) / BUCKET_US;
/** The diagnosis's fine bins (onsets, the call tree, log levels): 10 seconds, a thirtieth of a bucket. */
export const FINE_BIN_US = 10_000_000;
/** Largest microsecond timestamp accepted (2^53 - 1, year 2255): beyond it JSON numbers lose precision. */
export const MAX_MICROS = Number.MAX_SAFE_INTEGER;
/** Smallest 16-digit value (2001-09-09): anything smaller is seconds or milliseconds. */
export const MIN_MICROS = 1_000_000_000_000_000;

/** Contiguous runs of sorted bucket indexes, as [start µs, end µs): the spans a reader or rebuild covers at once. */
export function bucketRuns(buckets: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const b of buckets) {
    const last = out[out.length - 1];
    if (last && b * BUCKET_US === last[1]) last[1] = (b + 1) * BUCKET_US;
    else out.push([b * BUCKET_US, (b + 1) * BUCKET_US]);
  }
  return out;
}

/** Floor division for bigint (BigInt division truncates toward zero). */
function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function secondsIso(seconds: bigint): string {
  const d = new Date(Number(seconds) * 1000);
  if (Number.isNaN(d.getTime())) return `${seconds.toString()}s`;
  return d.toISOString().slice(0, -5); // drop ".mmmZ"
}

/** A count of `perSecond` units since the epoch → "YYYY-MM-DDTHH:MM:SS.<fraction>Z" (UTC, exact). */
function isoFromUnits(units: bigint, perSecond: bigint, digits: number): string {
  const seconds = floorDiv(units, perSecond);
  return `${secondsIso(seconds)}.${(units - seconds * perSecond).toString().padStart(digits, '0')}Z`;
}

/** Microseconds since the epoch → `2024-01-02T03:04:05.123456Z`. */
export function isoFromMicros(micros: bigint): string {
  return isoFromUnits(micros, 1_000_000n, 6);
}

/** Nanoseconds since the epoch → `2024-01-02T03:04:05.123456789Z`. */
export function isoFromNanos(nanos: bigint): string {
  return isoFromUnits(nanos, 1_000_000_000n, 9);
}

/** `2024-01-02T03:04:05.123456Z` from integer microseconds held in a number. */
export function isoFromUs(us: number): string {
  return isoFromMicros(BigInt(Math.trunc(us)));
}

export type TsUnitProblem = { unit: 'seconds' | 'milliseconds' | 'nanoseconds' | 'unknown'; hint: string };

/**
 * Microsecond timestamps for current dates have 16 digits. Seconds (10), milliseconds (13) and
 * nanoseconds (19) are common mistakes; say which one it looks like and how to convert. Takes the
 * raw digits too, so a nanosecond value beyond 2^53 gets an exact example.
 */
export function checkMicros(raw: number | string): TsUnitProblem | null {
  const text = typeof raw === 'number' ? (Number.isInteger(raw) ? raw.toFixed(0) : '') : raw.trim().replace(/^0+(?=\d)/, '');
  if (!/^\d+$/.test(text)) return { unit: 'unknown', hint: 'send a non-negative whole number of microseconds since the Unix epoch (16 digits)' };
  const digits = text.length;
  const value = BigInt(text);
  if (digits === 16) return null;
  if (digits <= 10) return { unit: 'seconds', hint: `that looks like seconds; multiply by 1,000,000 (e.g. ${value * 1_000_000n})` };
  if (digits <= 13) return { unit: 'milliseconds', hint: `that looks like milliseconds; multiply by 1,000 (e.g. ${value * 1000n})` };
  if (digits >= 19) return { unit: 'nanoseconds', hint: `that looks like nanoseconds; divide by 1,000 (e.g. ${value / 1000n})` };
  return { unit: 'unknown', hint: 'timestamps are microseconds since the Unix epoch: 16 digits for current dates' };
}
