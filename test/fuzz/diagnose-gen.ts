// Valid POST /v1/diagnose bodies around a given "now": services (some over the limit of 10, some
// named like Object.prototype's keys) and windows in microseconds, and in the wrong units.
import fc from 'fast-check';

export function diagnoseBody(nowUs: number): fc.Arbitrary<Record<string, unknown>> {
  const micros = fc.oneof(fc.integer({ min: nowUs - 3_600_000_000, max: nowUs + 60_000_000 }), fc.constantFrom(nowUs, Math.round(nowUs / 1000), nowUs * 1000, 0, -1));
  return fc.record(
    {
      services: fc.array(fc.oneof(fc.constantFrom('checkout', 'payment', '__proto__', 'constructor'), fc.string({ minLength: 1, maxLength: 10 })), { minLength: 1, maxLength: 12 }),
      service: fc.string({ minLength: 1, maxLength: 10 }),
      from_ts: micros,
      to_ts: micros,
    },
    { requiredKeys: [] },
  );
}
