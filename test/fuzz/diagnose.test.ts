// Fuzzing the body parser of POST /v1/diagnose and /v1/investigate: valid requests made hostile
// (wrong types, huge and fractional numbers, prototype keys, deep nesting, cut text) and arbitrary
// JSON. Property: every body is parsed into at most 10 distinct non-empty services, a window with
// to > from, a view and a budget only for the compact view within its range, or refused with an
// ApiError whose status is 4xx, a message and a hint.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import { DETAILS, MAX_MAX_BYTES, MAX_SERVICES, MIN_MAX_BYTES, parseDiagnoseRequest } from '../../src/diagnose/request.js';
import { budget, noHang, testTimeout } from './budget.js';
import { diagnoseBody } from './diagnose-gen.js';
import { anyJsonText, hostileJson } from './hostile-json.js';

const NOW_US = 1_763_000_000_000_000;
const validBody = diagnoseBody(NOW_US);

function expectParsedOrRefused(text: string): void {
  try {
    const r = noHang('parseDiagnoseRequest', () => parseDiagnoseRequest(Buffer.from(text), NOW_US));
    expect(r.services.length).toBeGreaterThan(0);
    expect(r.services.length).toBeLessThanOrEqual(MAX_SERVICES);
    expect(new Set(r.services).size).toBe(r.services.length);
    for (const s of r.services) expect(typeof s === 'string' && s !== '').toBe(true);
    expect(Number.isSafeInteger(r.from) && Number.isSafeInteger(r.to) && r.to > r.from).toBe(true);
    expect(DETAILS).toContain(r.detail);
    if (r.maxBytes !== null) expect(r.detail === 'findings' && Number.isInteger(r.maxBytes) && r.maxBytes >= MIN_MAX_BYTES && r.maxBytes <= MAX_MAX_BYTES).toBe(true);
  } catch (e) {
    expect(e, String(e)).toBeInstanceOf(ApiError);
    const err = e as ApiError;
    expect(err.status).toBeGreaterThanOrEqual(400);
    expect(err.status).toBeLessThan(500);
    expect(err.message.length).toBeGreaterThan(0);
    expect(err.hint.length).toBeGreaterThan(0);
  }
}

describe('diagnose request parser', () => {
  it('hostile versions of valid requests: a parsed request or a 4xx ApiError with a hint', () => {
    fc.assert(fc.property(hostileJson(validBody), expectParsedOrRefused), budget(400));
  }, testTimeout());

  it('any JSON and any text: a parsed request or a 4xx ApiError with a hint', () => {
    fc.assert(fc.property(fc.oneof(anyJsonText, fc.string({ maxLength: 50 })), expectParsedOrRefused), budget(300));
  }, testTimeout());
});
