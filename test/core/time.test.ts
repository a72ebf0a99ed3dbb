// The one time formatter and the microsecond unit check every `*_ts` input goes through.
import { describe, expect, it } from 'vitest';
import { checkMicros, isoFromNanos, isoFromUs } from '../../src/core/time.js';
import { sqlTimestamp } from '../../src/store/sql.js';

describe('time formatting', () => {
  it('prints microseconds exactly, before the epoch too', () => {
    expect(isoFromUs(1_704_067_200_000_100)).toBe('2024-01-01T00:00:00.000100Z');
    expect(isoFromUs(-1)).toBe('1969-12-31T23:59:59.999999Z');
    expect(isoFromNanos(1_704_067_200_000_000_001n)).toBe('2024-01-01T00:00:00.000000001Z');
  });

  it('SQL literals carry the same instant, without a time zone', () => {
    expect(sqlTimestamp(1_704_067_200_123_456)).toBe("TIMESTAMP '2024-01-01 00:00:00.123456'");
  });
});

describe('checkMicros', () => {
  it('accepts 16 digits and names the unit of the common mistakes with an exact conversion', () => {
    expect(checkMicros(1_704_067_200_000_000)).toBeNull();
    expect(checkMicros(1_704_067_200)).toMatchObject({ unit: 'seconds', hint: expect.stringContaining('1704067200000000') });
    expect(checkMicros('1704067200000')).toMatchObject({ unit: 'milliseconds', hint: expect.stringContaining('1704067200000000') });
    // Beyond 2^53: the raw digits give an exact example where a number would round.
    expect(checkMicros('1704067200000000123')).toMatchObject({ unit: 'nanoseconds', hint: expect.stringContaining('(e.g. 1704067200000000)') });
    expect(checkMicros('-5')!.unit).toBe('unknown');
  });
});
