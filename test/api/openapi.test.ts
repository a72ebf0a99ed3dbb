// The generated OpenAPI document: valid OpenAPI 3.1, covers every endpoint of the spec, and its
// schemas follow the spec's field tables. The response checker accepts right bodies and rejects wrong ones.
import { describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildOpenApi } from '../../src/api/openapi.js';
import { API } from '../../src/api/endpoints.js';
import { ERROR_STATUS } from '../../src/core/errors.js';
import { checkResponse, checkSchema, documentedRoutes, fullOpenApi, matchPathTemplate } from '../helpers/api.js';
import { type RouteSpec } from '../../src/api/route.js';

// The spec's "Summary" table (four ingest paths on one row), plus POST /v1/investigate (spec
// "POST /v1/investigate"), the two paths DESIGN.md adds: /healthz and /openapi.json, and the MCP
// endpoint (issue 23).
const SPEC_ENDPOINTS = [
  'POST /',
  'POST /ingest',
  'POST /ingest/pyroscope',
  'POST /push.v1.PusherService/Push',
  'GET /v1/alerts',
  'GET /v1/anomalies',
  'POST /v1/diagnose',
  'POST /v1/query',
  'GET /v1/services',
  'GET /v1/traces/{trace_id}',
  'POST /admin/tenants',
  'DELETE /admin/keys/{short_token}',
  'GET /admin/status',
  'POST /v1/investigate',
  // The hosted variant's key issuing and tenant deactivation (the spec leaves them unshown; issue 21).
  'POST /admin/tenants/{id}/keys',
  'POST /admin/tenants/{id}/deactivate',
  // Several instances: moving a tenant between them (issue 30).
  'POST /admin/tenants/{id}/move',
  // Benchmark-harness runs: detection on demand, a window as Parquet and back (issue 48).
  'POST /admin/detect',
  'POST /v1/snapshot',
  'POST /v1/restore',
  'GET /healthz',
  'GET /openapi.json',
  'POST /mcp',
];
// Spec "Authentication" 2: the endpoints that declare the bearer requirement (+ investigate, + admin
// by decision, + /mcp: it serves anomalies and diagnose among its tools).
const AUTH = ['POST /mcp', 'POST /', 'POST /ingest', 'POST /ingest/pyroscope', 'POST /push.v1.PusherService/Push', 'GET /v1/alerts', 'GET /v1/anomalies', 'POST /v1/diagnose', 'POST /v1/investigate', 'POST /admin/tenants', 'DELETE /admin/keys/{short_token}', 'GET /admin/status', 'POST /admin/tenants/{id}/keys', 'POST /admin/tenants/{id}/deactivate', 'POST /admin/tenants/{id}/move', 'POST /admin/detect'];

const doc = fullOpenApi();
type Op = { operationId: string; responses: Record<string, any>; security?: unknown[]; parameters?: any[]; requestBody?: any };
function operations(d: Record<string, any>): [string, Op][] {
  return Object.entries(d['paths'] as Record<string, Record<string, Op>>).flatMap(([p, item]) => Object.entries(item).map(([m, op]) => [`${m.toUpperCase()} ${p}`, op] as [string, Op]));
}

describe('the generated document', () => {
  it('is valid OpenAPI 3.1 for a real validator', async () => {
    const v = new Validator();
    const res = await v.validate(doc);
    expect(res.errors ?? []).toEqual([]);
    expect(res.valid).toBe(true);
    expect(v.version).toBe('3.1');
  });

  it('a broken document is rejected by the same validator (the check can fail)', async () => {
    const broken = structuredClone(doc);
    broken['paths']['/v1/traces/{trace_id}']['get']['parameters'][0]['in'] = 'body'; // an OpenAPI 2 location
    delete broken['paths']['/v1/services']['get']['responses']['200']['description'];
    const res = await new Validator().validate(broken);
    expect(res.valid).toBe(false);
  });

  it('covers every endpoint of the spec, and nothing else', () => {
    expect(operations(doc).map(([k]) => k).sort()).toEqual([...SPEC_ENDPOINTS].sort());
  });

  it('carries version 0.1.0, the Apache-2.0 license and the bearer scheme described as a prefixed API key', () => {
    expect(doc['openapi']).toMatch(/^3\.1\./);
    expect(doc['info']['version']).toBe('0.1.0');
    expect(doc['info']['license']['name']).toBe('Apache-2.0');
    const schemes = doc['components']['securitySchemes'];
    expect(Object.values(schemes)).toEqual([expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'prefixed API key' })]);
  });

  it('declares the bearer requirement and a 401 exactly where the spec says', () => {
    for (const [key, op] of operations(doc)) {
      const auth = AUTH.includes(key);
      expect(op.security !== undefined, key).toBe(auth);
      expect('401' in op.responses, key).toBe(auth);
    }
    expect(doc['security']).toBeUndefined(); // query, services, traces declare none
  });

  it('every error response is the one error body (at /mcp, but for 401, a JSON-RPC error: the protocol\'s own)', () => {
    for (const [key, op] of operations(doc)) {
      for (const [status, r] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        if (key === 'POST /mcp' && status !== '401') {
          expect(r.content, `${key} ${status}`).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/JsonRpcError' } } });
          continue;
        }
        expect(r.content, `${key} ${status}`).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/Error' } } });
      }
    }
    expect(doc['components']['schemas']['Error']['properties']['error']['required']).toEqual(['code', 'message', 'hint']);
    expect(doc['components']['schemas']['Error']['properties']['error']['properties']['code']['enum']).toEqual(Object.keys(ERROR_STATUS));
  });

  it('lists the statuses the spec gives each endpoint', () => {
    const statuses = (key: string) => Object.keys(operations(doc).find(([k]) => k === key)![1].responses);
    for (const p of ['/', '/ingest', '/ingest/pyroscope', '/push.v1.PusherService/Push']) expect(statuses(`POST ${p}`)).toEqual(['200', '400', '401', '413', '429', '500', '507']);
    expect(statuses('GET /v1/alerts')).toEqual(expect.arrayContaining(['200', '400', '401']));
    expect(statuses('GET /v1/anomalies')).toEqual(expect.arrayContaining(['200', '400', '401']));
    expect(statuses('POST /v1/diagnose')).toEqual(expect.arrayContaining(['200', '400', '401']));
    expect(statuses('POST /v1/investigate')).toEqual(expect.arrayContaining(['200', '400', '401']));
    expect(statuses('POST /v1/query')).toEqual(expect.arrayContaining(['200', '400']));
    expect(statuses('GET /v1/traces/{trace_id}')).toEqual(expect.arrayContaining(['200', '400', '404']));
  });

  it('every $ref resolves and every operationId is its route table key', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(20);
    for (const r of refs) {
      const name = /#\/components\/schemas\/([^"]+)"/.exec(r)?.[1];
      expect(name && doc['components']['schemas'][name], r).toBeTruthy();
    }
    for (const [, op] of operations(doc)) expect(API[op.operationId as keyof typeof API]?.operationId).toBe(op.operationId);
    expect(operations(doc).length).toBe(Object.keys(API).length);
  });

  it('documents the request parameters and bodies of the spec', () => {
    const op = (key: string) => operations(doc).find(([k]) => k === key)![1];
    const params = (key: string) => Object.fromEntries((op(key).parameters ?? []).map((p: any) => [p.name, p]));
    const ingest = params('POST /ingest');
    expect(Object.keys(ingest).sort()).toEqual(['format', 'from', 'name', 'sampleRate', 'spyName', 'until']);
    expect(Object.keys(op('POST /ingest').requestBody.content).sort()).toEqual(['application/octet-stream', 'application/proto', 'binary/octet-stream', 'multipart/form-data']);
    expect(params('GET /v1/alerts')['status'].schema.enum).toEqual(['firing', 'resolved']);
    const an = params('GET /v1/anomalies');
    expect([an['service'].required, an['from_ts'].required, an['to_ts'].required]).toEqual([false, true, true]);
    expect(an['from_ts'].schema).toMatchObject({ type: 'integer', format: 'int64' });
    expect(op('POST /v1/query').requestBody.content).toHaveProperty('text/plain');
    expect(params('DELETE /admin/keys/{short_token}')['short_token'].schema).toMatchObject({ minLength: 8, maxLength: 64 });
    expect(params('GET /v1/traces/{trace_id}')['trace_id']).toMatchObject({ in: 'path', required: true });
  });

  it('omits undocumented routes and refuses duplicate operationIds', () => {
    const routes: RouteSpec[] = [{ method: 'GET', path: '/x', handler: () => ({ status: 200, body: '' }) }, ...documentedRoutes()];
    expect(Object.keys(buildOpenApi(routes)['paths'] as object)).not.toContain('/x');
    const dup: RouteSpec[] = [{ method: 'GET', path: '/a', doc: API.listServices, handler: () => ({ status: 200, body: '' }) }, { method: 'GET', path: '/b', doc: API.listServices, handler: () => ({ status: 200, body: '' }) }];
    expect(() => buildOpenApi(dup)).toThrow(/listServices/);
  });
});

describe('schemas follow the spec field tables', () => {
  const s = (name: string) => doc['components']['schemas'][name];
  const required = (name: string) => [...s(name).required].sort();

  it('span detail: required fields, nullable optional ones, int64 duration', () => {
    expect(required('SpanDetail')).toEqual(['duration_us', 'service_name', 'span_id', 'span_name', 'status_code', 'timestamp', 'trace_id']);
    for (const f of ['parent_span_id', 'span_kind', 'trace_state', 'scope_name', 'scope_version', 'resource_attributes', 'span_attributes', 'events_json', 'links_json']) {
      expect(s('SpanDetail').properties[f].type, f).toContain('null');
    }
    expect(s('SpanDetail').properties['duration_us']).toMatchObject({ type: 'integer', format: 'int64' });
    expect(s('SpanDetail').properties['status_code']).toMatchObject({ type: 'integer', format: 'int32' });
  });

  it('trace detail, anomaly entry, alert instance, service entry', () => {
    expect(required('TraceDetail')).toEqual(['critical_path', 'error_count', 'root_span', 'service_breakdown', 'services', 'span_count', 'spans', 'total_duration_us', 'trace_id']);
    expect(required('ServiceBreakdownEntry')).toEqual(['duration_us', 'percentage', 'service']);
    expect(required('AnomalyEntry')).toEqual(['after', 'before', 'detected_at', 'direction', 'kind', 'operation', 'service_name', 'signal', 'ts_shift', 'ts_shift_us']);
    expect(s('AnomalyEntry').properties['incident_id'].type).toEqual(['string', 'null']);
    expect(s('AnomalyEntry').properties['drill_down_sql'].type).toEqual(['string', 'null']);
    expect(s('Signal').enum).toEqual(['error_rate', 'latency_p95', 'log_volume', 'error_log_rate', 'profile_cost']);
    expect(required('AnomaliesResponse')).toEqual(['anomalies', 'truncated']);
    expect(required('AlertInstance')).toEqual(['container_name', 'fingerprint', 'occurrence_count', 'rule_id', 'service_name', 'starts_at', 'status']);
    expect(s('AlertInstance').properties['occurrence_count']).toMatchObject({ type: 'integer', format: 'int64', minimum: 0 });
    expect(required('ServiceEntry')).toEqual(['first_seen', 'first_seen_ts', 'last_seen', 'last_seen_ts', 'service_name']);
    expect(required('DiagnoseResponse')).toEqual(['errors', 'results']);
    expect(s('DiagnoseRequest').properties['services']).toMatchObject({ minItems: 1, maxItems: 10 });
    expect(s('DiagnoseRequest').required).toEqual([]);
  });

  it('accepts right values and rejects wrong ones', () => {
    const alert = { fingerprint: 'f', rule_id: 'r', status: 'firing', service_name: 's', container_name: 'c', starts_at: '2024-01-02T03:04:05.000000Z', occurrence_count: 1 };
    expect(() => checkSchema('AlertInstance', alert)).not.toThrow();
    expect(() => checkSchema('AlertInstance', { ...alert, ends_at: null })).not.toThrow();
    expect(() => checkSchema('AlertInstance', { ...alert, status: 'pending' })).toThrow(/status/);
    expect(() => checkSchema('AlertInstance', { ...alert, occurrence_count: -1 })).toThrow(/occurrence_count/);
    expect(() => checkSchema('AlertInstance', { ...alert, starts_at: 'yesterday' })).toThrow(/starts_at/);
    const finding = { kind: 'error_spike', severity: 'critical', summary: 'x', service: 's', operation: null, signal: 'error_rate', before: 1, after: 20, score: 0.9 };
    expect(() => checkSchema('Finding', { ...finding, drill_down_sql: 'SELECT 1' })).not.toThrow();
    expect(() => checkSchema('Finding', finding)).toThrow(/drill_down_sql/);
    expect(() => checkSchema('Finding', { ...finding, kind: 'incident' })).toThrow(/incident/);
    expect(() => checkSchema('Finding', { ...finding, drill_down_sql: 'SELECT 1', kind: 'guess' })).toThrow(/kind/);
    expect(() => checkSchema('Finding', { ...finding, drill_down_sql: 'SELECT 1', score: 1.5 })).toThrow(/score/);
    // The status names its parts: one missing, or a part of the wrong shape, is refused.
    expect(() => checkSchema('AdminStatus', { status: { instance: { version: '0.1.0' } } })).toThrow(/storage|node/);
    const { service: _s, ...noService } = finding;
    expect(() => checkSchema('Finding', { ...noService, drill_down_sql: 'SELECT 1' })).toThrow(/service/);
  });
});

describe('checkResponse', () => {
  const service = { service_name: 'a', first_seen_ts: 1_700_000_000_000_000, last_seen_ts: 1_700_000_000_000_001, first_seen: '2023-11-14T22:13:20.000000Z', last_seen: '2023-11-14T22:13:20.000001Z' };

  it('accepts a right body and the error body on documented error statuses', () => {
    checkResponse('GET', '/v1/services', 200, { services: [service] });
    checkResponse('get', '/v1/traces/{trace_id}', 404, { error: { code: 'NOT_FOUND', message: 'm', hint: '' } });
  });

  it('rejects a wrong body, an undocumented status, an unknown operation and an unknown error code', () => {
    const { last_seen: _, ...missing } = service;
    expect(() => checkResponse('GET', '/v1/services', 200, { services: [missing] })).toThrow(/last_seen/);
    expect(() => checkResponse('GET', '/v1/services', 200, { services: [{ ...service, first_seen_ts: '1' }] })).toThrow(/first_seen_ts/);
    expect(() => checkResponse('GET', '/v1/services', 200, [service])).toThrow(/match/);
    expect(() => checkResponse('GET', '/v1/services', 404, { error: { code: 'NOT_FOUND', message: 'm', hint: '' } })).toThrow(/not documented/);
    expect(() => checkResponse('GET', '/v1/nope', 200, {})).toThrow(/not in the API description/);
    expect(() => checkResponse('GET', '/v1/traces/{trace_id}', 404, { error: { code: 'NO_SUCH_CODE', message: 'm', hint: '' } })).toThrow(/code/);
    expect(() => checkResponse('GET', '/v1/traces/{trace_id}', 404, { error: { code: 'NOT_FOUND', message: 'm' } })).toThrow(/hint/);
    expect(() => checkResponse('GET', '/v1/services', 200, { services: [] }, { contentType: 'text/html' })).toThrow(/Content-Type/);
  });

  it('matches concrete paths to templates, literal segments first', () => {
    expect(matchPathTemplate(doc, '/v1/traces/abc')).toBe('/v1/traces/{trace_id}');
    expect(matchPathTemplate(doc, '/')).toBe('/');
    expect(matchPathTemplate(doc, '/v1/services')).toBe('/v1/services');
    expect(matchPathTemplate(doc, '/v1/traces/')).toBeUndefined();
    expect(matchPathTemplate(doc, '/v2/x')).toBeUndefined();
  });
});
