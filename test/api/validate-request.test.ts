// validateRequest: query and path parameters checked and typed against the same parameter objects
// that openapi.json publishes.
import { describe, expect, it } from 'vitest';
import { validateRequest } from '../../src/api/validate.js';
import { API } from '../../src/api/endpoints.js';
import { ApiError } from '../../src/core/errors.js';
import { inQuery, type Endpoint } from '../../src/api/endpoint.js';
import { Type } from '../../src/core/schema.js';

type RouteDoc = Partial<Pick<Endpoint, 'params'>> & object;

const US = 1_700_000_000_000_000; // 16 digits

function run(doc: RouteDoc, query: string, params: Record<string, string> = {}) {
  return validateRequest(doc, { query: new URLSearchParams(query), params });
}
function fail(doc: RouteDoc, query: string, params: Record<string, string> = {}): ApiError {
  try {
    run(doc, query, params);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error(`expected ${query} ${JSON.stringify(params)} to be refused`);
}

describe('validateRequest', () => {
  it('types integers and passes strings through; absent optional parameters are omitted', () => {
    expect(run(API.listAnomalies, `from_ts=${US}&to_ts=${US + 1}&service=checkout`)).toEqual({ from_ts: US, to_ts: US + 1, service: 'checkout' });
    expect(run(API.listAnomalies, `from_ts=${US}&to_ts=${US}`)).toEqual({ from_ts: US, to_ts: US });
    expect(run(API.listAlerts, '')).toEqual({});
    expect(run(API.listServices, 'anything=1')).toEqual({}); // no parameters: nothing checked
  });

  it('ignores unknown query parameters (clients send extras)', () => {
    expect(run(API.ingestProfile, 'name=app.cpu{env=prod}&from=1700000000&until=1700000010&sampleRate=100&spyName=nodespy&format=pprof&aggregationType=sum')).toEqual({
      name: 'app.cpu{env=prod}',
      from: 1_700_000_000,
      until: 1_700_000_010,
      sampleRate: 100,
      spyName: 'nodespy',
      format: 'pprof',
    });
  });

  it('a missing required parameter is refused with its code and a hint saying what to add', () => {
    const e = fail(API.listAnomalies, `from_ts=${US}`);
    expect(e.code).toBe('INVALID_TIMESTAMP');
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/to_ts/);
    expect(e.hint).toMatch(/to_ts=.*microseconds/);
  });

  it('timestamps in seconds, milliseconds or nanoseconds are refused with a hint naming the unit', () => {
    const sec = fail(API.listAnomalies, `from_ts=1700000000&to_ts=${US}`);
    expect(sec.code).toBe('INVALID_TIMESTAMP');
    expect(sec.hint).toMatch(/seconds.*1,000,000/);
    expect(fail(API.listAnomalies, `from_ts=1700000000000&to_ts=${US}`).hint).toMatch(/milliseconds/);
    const ns = fail(API.listAnomalies, `from_ts=${US}&to_ts=1700000000000000123`);
    expect(ns.hint).toMatch(/nanoseconds.*1700000000000000/);
    expect(fail(API.listAnomalies, `from_ts=abc&to_ts=${US}`).message).toMatch(/from_ts must be an integer, got "abc"/);
    expect(fail(API.listAnomalies, `from_ts=1.5e15&to_ts=${US}`).code).toBe('INVALID_TIMESTAMP');
    expect(fail(API.listAnomalies, `from_ts=&to_ts=${US}`).message).toMatch(/integer/);
    expect(fail(API.listAnomalies, `from_ts=-${US}&to_ts=${US}`).hint).toMatch(/microseconds/);
  });

  it('a parameter given twice is refused', () => {
    const e = fail(API.listAnomalies, `from_ts=${US}&from_ts=${US}&to_ts=${US}`);
    expect(e.message).toMatch(/2 times/);
  });

  it('enums: the status filter of alerts', () => {
    expect(run(API.listAlerts, 'status=firing')).toEqual({ status: 'firing' });
    expect(run(API.listAlerts, 'status=resolved')).toEqual({ status: 'resolved' });
    const e = fail(API.listAlerts, 'status=FIRING');
    expect(e.code).toBe('INVALID_STATUS');
    expect(e.hint).toMatch(/firing or resolved/);
  });

  it('path parameters: pattern and length', () => {
    expect(run(API.getTrace, '', { trace_id: '0af7651916cd43dd8448eb211c80319c' })).toEqual({ trace_id: '0af7651916cd43dd8448eb211c80319c' });
    const e = fail(API.getTrace, '', { trace_id: 'xyz' });
    expect(e.code).toBe('INVALID_TRACE_ID');
    expect(e.hint).toMatch(/32 hex digits/);
    expect(run(API.revokeKey, '', { short_token: 'abcdef12' })).toEqual({ short_token: 'abcdef12' });
    const short = fail(API.revokeKey, '', { short_token: 'abc' });
    expect(short.code).toBe('BAD_REQUEST');
    expect(short.message).toMatch(/at least 8/);
    expect(short.hint).toMatch(/8 to 64/);
    expect(fail(API.revokeKey, '', { short_token: 'a'.repeat(65) }).message).toMatch(/at most 64/);
  });

  it('numbers and ranges', () => {
    expect(run(API.ingestProfile, 'sampleRate=99.5')).toEqual({ sampleRate: 99.5 });
    expect(fail(API.ingestProfile, 'sampleRate=0').message).toMatch(/greater than 0/);
    expect(fail(API.ingestProfile, 'sampleRate=fast').message).toMatch(/number/);
    expect(fail(API.ingestProfile, 'from=-5').message).toMatch(/at least 0/);
    expect(fail(API.ingestProfile, 'from=99999999999999999999').message).toMatch(/out of range/);
  });

  it('booleans and defaults from the schema', () => {
    const doc: RouteDoc = {
      params: {
        flag: inQuery(Type.Boolean({ default: false })),
        n: inQuery(Type.Unsafe<number | null>({ type: ['integer', 'null'] })),
      },
    };
    expect(run(doc, '')).toEqual({ flag: false });
    expect(run(doc, 'flag=true&n=3')).toEqual({ flag: true, n: 3 });
    expect(fail(doc, 'flag=yes').message).toMatch(/true or false/);
  });

  it('long bad values are cut in the message', () => {
    const e = fail(API.getTrace, '', { trace_id: 'z'.repeat(10_000) });
    expect(e.message.length).toBeLessThan(300);
  });
});
