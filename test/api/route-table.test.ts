// The route table (api/endpoints.ts) as the one source: its entries are well formed, the types read
// off them refuse what the schemas refuse (checked by `npm run typecheck` through @ts-expect-error),
// and named schemas cannot be declared twice.
import { describe, expect, it } from 'vitest';
import { API } from '../../src/api/endpoints.js';
import { routeTable, inPath, type InputOf } from '../../src/api/endpoint.js';
import { ok } from '../../src/api/http.js';
import { collectComponents, component, obj, resolved, str } from '../../src/core/schema.js';
import { DiagnoseRequest } from '../../src/api/schemas.js';
import { parseDiagnoseRequest } from '../../src/diagnose/request.js';
import { ApiError } from '../../src/core/errors.js';
import { SIGNALS } from '../../src/detect/signals.js';
import { checkSchema } from '../helpers/api.js';

describe('the route table', () => {
  it('refuses an entry whose path and path parameters disagree', () => {
    const base = { method: 'GET', summary: 's', tags: [], ok: { description: 'd', schema: str() }, responses: {} } as const;
    expect(() => routeTable({ x: { ...base, path: '/a/{id}' } })).toThrow(/\{id\}|\[id\]/);
    expect(() => routeTable({ x: { ...base, path: '/a', params: { id: inPath(str()) } } })).toThrow(/declares \[id\]/);
    expect(routeTable({ x: { ...base, path: '/a/{id}', params: { id: inPath(str()) } } }).x.operationId).toBe('x');
  });

  it('gives every entry its key as operationId and a unique method and path', () => {
    const seen = new Set<string>();
    for (const [key, e] of Object.entries(API)) {
      expect(e.operationId).toBe(key);
      expect(seen.has(`${e.method} ${e.path}`), `${e.method} ${e.path}`).toBe(false);
      seen.add(`${e.method} ${e.path}`);
    }
  });

  it('types a handler\'s answer and a client\'s input by the schemas', () => {
    // @ts-expect-error: `services` is required in the answer of listServices
    expect(ok(API.listServices, {}).status).toBe(200);
    // @ts-expect-error: from_ts and to_ts are required parameters of listAnomalies
    const input: InputOf<typeof API.listAnomalies> = { service: 'a' };
    expect(input.service).toBe('a');
    // @ts-expect-error: the diagnose body is required
    const noBody: InputOf<typeof API.diagnose> = {};
    expect(noBody).toEqual({});
  });

  it('publishes the detection signals as the Signal enumeration', () => {
    for (const s of SIGNALS) checkSchema('Signal', s.name);
    expect(() => checkSchema('Signal', 'cpu_time')).toThrow(/enum|allowed/);
  });
});

describe('the diagnose body', () => {
  // The parser (diagnose/request.ts) keeps the rules with their hints; the schema publishes them.
  // Each field of the schema must be one the parser reads: a wrong value of it is refused.
  const NOW = 1_735_689_600_000_000;
  const wrong: Record<string, Record<string, unknown>> = {
    services: { services: 'checkout' },
    service: { service: 5 },
    from_ts: { service: 'a', from_ts: 1_735_689_600 },
    to_ts: { service: 'a', from_ts: NOW - 1, to_ts: 'soon' },
    detail: { service: 'a', detail: 'compact' },
    max_bytes: { service: 'a', detail: 'findings', max_bytes: 100 },
    baseline_from_ts: { service: 'a', from_ts: NOW - 1, baseline_from_ts: NOW - 100 },
    baseline_to_ts: { service: 'a', from_ts: NOW - 1, baseline_from_ts: NOW - 100, baseline_to_ts: NOW },
  };
  it('has no field the parser does not read', () => {
    const fields = Object.keys((resolved(DiagnoseRequest) as unknown as { properties: object }).properties);
    expect(fields.sort()).toEqual(Object.keys(wrong).sort());
    for (const f of fields) expect(() => parseDiagnoseRequest(JSON.stringify(wrong[f]), NOW), f).toThrow(ApiError);
    expect(() => checkSchema('DiagnoseRequest', { services: ['a'], from_ts: NOW - 1, to_ts: NOW })).not.toThrow();
    expect(parseDiagnoseRequest(JSON.stringify({ services: ['a'], from_ts: NOW - 1, to_ts: NOW }), NOW)).toEqual({ services: ['a'], from: NOW - 1, to: NOW, detail: 'full', maxBytes: null });
  });
});

describe('named schemas', () => {
  it('are collected once from where they are used, and two schemas under one name throw', () => {
    const A = component('A', obj({ a: str() }));
    const B = component('B', obj({ b: A, c: A }));
    expect(Object.keys(collectComponents([B]))).toEqual(['B', 'A']);
    const A2 = component('A', obj({ other: str() }));
    expect(() => collectComponents([B, A2])).toThrow(/two schemas are named A/);
  });
});
