// Valid POST /v1/diagnose bodies around a given "now": services (some over the limit of 10, some
// named like Object.prototype's keys), windows in microseconds, and in the wrong units, and the view
// with its byte budget (in range and not).
import fc from 'fast-check';

export function diagnoseBody(nowUs: number): fc.Arbitrary<Record<string, unknown>> {
  const micros = fc.oneof(fc.integer({ min: nowUs - 3_600_000_000, max: nowUs + 60_000_000 }), fc.constantFrom(nowUs, Math.round(nowUs / 1000), nowUs * 1000, 0, -1));
  return fc.record(
    {
      services: fc.array(fc.oneof(fc.constantFrom('checkout', 'payment', '__proto__', 'constructor'), fc.string({ minLength: 1, maxLength: 10 })), { minLength: 1, maxLength: 12 }),
      service: fc.string({ minLength: 1, maxLength: 10 }),
      from_ts: micros,
      to_ts: micros,
      detail: fc.constantFrom('full', 'findings', 'compact', ''),
      max_bytes: fc.oneof(fc.integer({ min: 2048, max: 655_360 }), fc.constantFrom(0, 2047, 655_361, 4096.5, -1)),
    },
    { requiredKeys: [] },
  );
}
