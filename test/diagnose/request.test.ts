import { describe, expect, it } from 'vitest';
import { parseDiagnoseRequest, DEFAULT_WINDOW_US } from '../../src/diagnose/request.js';
import { ApiError } from '../../src/core/errors.js';

const NOW = 1_790_000_000_000_000;
const parse = (body: unknown) => parseDiagnoseRequest(typeof body === 'string' ? body : JSON.stringify(body), NOW);
const failure = (body: unknown): ApiError => {
  try {
    parse(body);
  } catch (e) {
    return e as ApiError;
  }
  throw new Error('accepted ' + JSON.stringify(body));
};

describe('diagnose request', () => {
  it('defaults to the last 15 minutes, and from_ts alone ends now', () => {
    expect(parse({ services: ['a'] })).toEqual({ services: ['a'], from: NOW - DEFAULT_WINDOW_US, to: NOW, detail: 'full', maxBytes: null });
    expect(parse({ service: 'a', from_ts: NOW - 5_000_000 })).toMatchObject({ services: ['a'], from: NOW - 5_000_000, to: NOW });
    expect(parse({ service: 'a', from_ts: NOW - 9, to_ts: NOW - 3 })).toMatchObject({ from: NOW - 9, to: NOW - 3 });
    expect(parse({ service: 'a', from_ts: null, to_ts: null }).to).toBe(NOW);
  });

  it('takes the union of services and service, without duplicates, at most 10', () => {
    expect(parse({ services: ['a', 'b', 'a'], service: 'c' }).services).toEqual(['a', 'b', 'c']);
    expect(parse({ services: ['a'], service: 'a' }).services).toEqual(['a']);
    const ten = Array.from({ length: 10 }, (_v, i) => `s${i}`);
    expect(parse({ services: ten, service: 's0' }).services).toHaveLength(10);
    expect(failure({ services: ten, service: 'eleven' }).message).toMatch(/11 services/);
    expect(failure({ services: [] }).status).toBe(400);
    expect(failure({}).hint).toMatch(/GET \/v1\/services/);
    expect(failure({ services: [1] }).code).toBe('BAD_REQUEST');
    expect(failure({ services: 'a' }).code).toBe('BAD_REQUEST');
    expect(failure({ service: '' }).code).toBe('BAD_REQUEST');
  });

  it('a deeply nested value in any field is a 400 naming its kind, not a stack overflow', () => {
    // Found by fuzzing: the message's JSON.stringify of a 20,000-deep array overflowed the stack (a 500).
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    for (const body of [`{"service":${deep}}`, `{"services":[${deep}]}`, `{"service":"a","from_ts":${deep}}`, `{"service":"a","detail":${deep}}`, `{"service":"a","detail":"findings","max_bytes":${deep}}`]) {
      const e = failure(body);
      expect(e).toBeInstanceOf(ApiError);
      expect(e.status).toBe(400);
      expect(e.message).toMatch(/an array/);
    }
    expect(failure({ service: 'a', from_ts: 'x'.repeat(1000) }).message.length).toBeLessThan(200);
  });

  it('refuses to_ts without from_ts and an empty or reversed window', () => {
    expect(failure({ service: 'a', to_ts: NOW }).code).toBe('INVALID_WINDOW');
    expect(failure({ service: 'a', from_ts: NOW, to_ts: NOW }).code).toBe('INVALID_WINDOW');
    expect(failure({ service: 'a', from_ts: NOW, to_ts: NOW - 1 }).status).toBe(400);
    expect(failure({ service: 'a', from_ts: NOW + 1_000_000 }).code).toBe('INVALID_WINDOW');
  });

  it('names the unit a timestamp looks like and the microsecond value meant', () => {
    const s = failure({ service: 'a', from_ts: 1_790_000_000 });
    expect(s.code).toBe('INVALID_TIMESTAMP');
    expect(s.hint).toMatch(/seconds/);
    expect(s.hint).toContain('1790000000000000');
    const ms = failure({ service: 'a', from_ts: 1_790_000_000_000 });
    expect(ms.hint).toMatch(/milliseconds/);
    expect(ms.hint).toContain('1790000000000000');
    const ns = failure({ service: 'a', from_ts: 1_790_000_000_000_000_000 });
    expect(ns.hint).toMatch(/nanoseconds/);
    expect(failure({ service: 'a', from_ts: NOW - 1, to_ts: 1_790_000_000 }).hint).toMatch(/seconds/);
    expect(failure({ service: 'a', from_ts: '1790000000000000' }).code).toBe('INVALID_TIMESTAMP');
    expect(failure({ service: 'a', from_ts: 1.5e15 + 0.5 }).code).toBe('INVALID_TIMESTAMP');
  });

  it('takes the view and its byte budget: max_bytes only with detail findings, in range, whole', () => {
    expect(parse({ service: 'a', detail: 'findings' })).toMatchObject({ detail: 'findings', maxBytes: null });
    expect(parse({ service: 'a', detail: 'findings', max_bytes: 4096 })).toMatchObject({ detail: 'findings', maxBytes: 4096 });
    expect(parse({ service: 'a', detail: 'full', max_bytes: null })).toMatchObject({ detail: 'full', maxBytes: null });
    expect(parse({ service: 'a', detail: null })).toMatchObject({ detail: 'full' });
    for (const detail of ['compact', 'FULL', 5, ['findings'], {}]) {
      const e = failure({ service: 'a', detail });
      expect(e.code, JSON.stringify(detail)).toBe('BAD_REQUEST');
      expect(e.hint).toMatch(/findings/);
    }
    for (const max_bytes of [2047, 640 * 1024 + 1, 4096.5, '4096', -1, true, [4096]]) {
      const e = failure({ service: 'a', detail: 'findings', max_bytes });
      expect(e.message, JSON.stringify(max_bytes)).toMatch(/max_bytes must be a whole number of bytes from 2048 to 655360/);
    }
    const full = failure({ service: 'a', max_bytes: 4096 });
    expect(full.message).toMatch(/compact view only/);
    expect(full.hint).toMatch(/"detail": "findings"/);
  });

  it('refuses malformed, truncated and hostile bodies with a hint', () => {
    for (const raw of ['', '{', '{"services": ["a"]', 'null', '[]', '"a"', '\u0000\u0001', '{"services": ["a"]}}']) {
      const e = failure(raw);
      expect(e.status).toBe(400);
      expect(e.hint.length).toBeGreaterThan(0);
    }
    expect(parse('{"services":["a"],"__proto__":{"x":1}}').services).toEqual(['a']);
    expect(parse({ services: ['a'], extra: { deep: [1, 2, 3] } }).services).toEqual(['a']);
  });
});

describe('a named baseline', () => {
  const NOW = 1_735_689_600_000_000;
  const H = 3_600_000_000;
  const parse = (extra: Record<string, unknown>) => parseDiagnoseRequest(JSON.stringify({ service: 'a', from_ts: NOW - H, to_ts: NOW, ...extra }), NOW);
  it('is read with both ends, before the window', () => {
    expect(parse({ baseline_from_ts: NOW - 26 * H, baseline_to_ts: NOW - 25 * H }).reference).toEqual({ from: NOW - 26 * H, to: NOW - 25 * H });
    expect(parse({}).reference).toBeUndefined();
  });
  it('is refused with one end, reversed, overlapping the window or not in microseconds, with a hint', () => {
    for (const bad of [
      { baseline_from_ts: NOW - 2 * H },
      { baseline_to_ts: NOW - 2 * H },
      { baseline_from_ts: NOW - 2 * H, baseline_to_ts: NOW - 3 * H },
      { baseline_from_ts: NOW - 2 * H, baseline_to_ts: NOW - H / 2 },
      { baseline_from_ts: (NOW - 2 * H) / 1000, baseline_to_ts: NOW - H },
    ]) {
      const err = (() => {
        try {
          parse(bad);
        } catch (e) {
          return e as ApiError;
        }
        return null;
      })();
      expect(err, JSON.stringify(bad)).toBeInstanceOf(ApiError);
      expect(err!.hint, JSON.stringify(bad)).toBeTruthy();
    }
  });
});
