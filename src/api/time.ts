// Timestamps at the API: int64 microseconds since the epoch in `*_ts` fields, ISO strings in `*_iso`
// and friends. One formatter so every answer prints time the same way.

/** `2024-01-02T03:04:05.123456Z` (microsecond precision, UTC). */
export function isoFromUs(us: number): string {
  const ms = Math.floor(us / 1000);
  const micros = ((us % 1_000_000) + 1_000_000) % 1_000_000;
  const iso = new Date(ms).toISOString(); // ...:05.123Z
  return iso.slice(0, 19) + '.' + String(micros).padStart(6, '0') + 'Z';
}

export const MINUTE_US = 60_000_000;

export type TsUnitProblem = { unit: 'seconds' | 'milliseconds' | 'nanoseconds' | 'unknown'; hint: string };

/**
 * Microsecond timestamps for current dates have 16 digits. Seconds (10), milliseconds (13) and
 * nanoseconds (19) are common mistakes; say which one it looks like and how to convert.
 */
export function checkMicros(value: number): TsUnitProblem | null {
  if (!Number.isInteger(value) || value < 0) return { unit: 'unknown', hint: 'send a non-negative whole number of microseconds since the Unix epoch (16 digits)' };
  const digits = value.toFixed(0).length;
  if (digits === 16) return null;
  if (digits <= 10) return { unit: 'seconds', hint: `that looks like seconds; multiply by 1,000,000 (e.g. ${value * 1_000_000})` };
  if (digits <= 13) return { unit: 'milliseconds', hint: `that looks like milliseconds; multiply by 1,000 (e.g. ${value * 1000})` };
  if (digits >= 19) return { unit: 'nanoseconds', hint: `that looks like nanoseconds; divide by 1,000 (e.g. ${Math.floor(value / 1000)})` };
  return { unit: 'unknown', hint: 'timestamps are microseconds since the Unix epoch: 16 digits for current dates' };
}
