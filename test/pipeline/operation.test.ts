// Operation identity and promoted columns.
import { describe, expect, it } from 'vitest';
import { SPAN_KIND, deriveOperation } from '../../src/pipeline/operation.js';
import { logIsError, promoteResource, promoteSpan } from '../../src/pipeline/promote.js';

const { INTERNAL, SERVER, CLIENT, PRODUCER, CONSUMER, UNSPECIFIED } = SPAN_KIND;

describe('deriveOperation', () => {
  it('server spans: METHOD route, else rpc service/method, else the span name', () => {
    expect(deriveOperation(SERVER, 'GET', { 'http.request.method': 'GET', 'http.route': '/users/{id}' })).toBe('GET /users/{id}');
    expect(deriveOperation(SERVER, 'x', { 'http.method': 'post', 'http.route': '/pay' })).toBe('POST /pay');
    expect(deriveOperation(SERVER, 'x', { 'http.route': '/pay' })).toBe('/pay');
    expect(deriveOperation(SERVER, 'x', { 'rpc.service': 'shop.Cart', 'rpc.method': 'Add' })).toBe('shop.Cart/Add');
    expect(deriveOperation(SERVER, 'x', { 'rpc.service': 'shop.Cart' })).toBe('shop.Cart');
    expect(deriveOperation(SERVER, 'GET /health', { 'http.request.method': 'GET' })).toBe('GET /health');
    expect(deriveOperation(SERVER, '', {})).toBe('unknown_operation');
  });

  it('consumer, internal and unspecified spans follow the server rules', () => {
    for (const k of [CONSUMER, INTERNAL, UNSPECIFIED, 99]) {
      expect(deriveOperation(k, 'process order', {})).toBe('process order');
      expect(deriveOperation(k, 'n', { 'http.route': '/r', 'http.method': 'GET' })).toBe('GET /r');
    }
  });

  it('client and producer spans are keyed by the peer they call', () => {
    expect(deriveOperation(CLIENT, 'POST', { 'peer.service': 'payments', 'http.request.method': 'POST', 'server.address': 'pay.internal' })).toBe('→ payments POST');
    expect(deriveOperation(CLIENT, 'GET', { 'server.address': 'api.example.com', 'http.request.method': 'get' })).toBe('→ api.example.com GET');
    expect(deriveOperation(CLIENT, 'GET', { 'server.address': 'api', 'http.request.method': 'GET', 'http.route': '/v1/x' })).toBe('→ api GET /v1/x');
    expect(deriveOperation(CLIENT, 'x', { 'server.address': 'cart', 'rpc.service': 'shop.Cart', 'rpc.method': 'Add' })).toBe('→ cart shop.Cart/Add');
    expect(deriveOperation(CLIENT, 'SELECT orders', { 'db.system': 'postgresql', 'db.operation': 'SELECT' })).toBe('→ postgresql SELECT');
    expect(deriveOperation(CLIENT, 'SELECT orders', { 'db.system.name': 'postgresql' })).toBe('→ postgresql SELECT orders');
    expect(deriveOperation(CLIENT, 'redis', { 'db.system': 'redis' })).toBe('→ redis');
    expect(deriveOperation(PRODUCER, 'send', { 'messaging.system': 'kafka', 'messaging.destination.name': 'orders' })).toBe('→ kafka orders');
    expect(deriveOperation(CLIENT, 'fetch thing', {})).toBe('→ fetch thing');
  });

  it("a caller's view of a call never equals the callee's own operation", () => {
    const callee = deriveOperation(SERVER, 'POST /charge', { 'http.request.method': 'POST', 'http.route': '/charge' });
    const caller = deriveOperation(CLIENT, 'POST /charge', { 'http.request.method': 'POST', 'http.route': '/charge', 'peer.service': 'payments' });
    const callerNoPeer = deriveOperation(CLIENT, 'POST /charge', {});
    expect(callee).toBe('POST /charge');
    expect(caller).not.toBe(callee);
    expect(callerNoPeer).not.toBe(callee);
  });

  it('is stable: same input, same output; numbers are accepted as strings', () => {
    const a = { 'server.address': 'db', 'db.operation.name': 'INSERT' };
    expect(deriveOperation(CLIENT, 'n', a)).toBe(deriveOperation(CLIENT, 'n', { ...a }));
    expect(deriveOperation(CLIENT, 'n', { 'server.address': '10.0.0.1', 'rpc.service': 'S', 'rpc.method': 7 })).toBe('→ 10.0.0.1 S/7');
  });
});

describe('promoteSpan', () => {
  it('error type: exception event, then error.type, then HTTP status, then gRPC code; only on error spans', () => {
    expect(promoteSpan(SERVER, 'n', 2, { 'error.type': 'timeout' }, 'java.io.IOException').error_type).toBe('java.io.IOException');
    expect(promoteSpan(SERVER, 'n', 2, { 'error.type': 'timeout' }, null).error_type).toBe('timeout');
    expect(promoteSpan(SERVER, 'n', 2, { 'http.response.status_code': 503 }, null).error_type).toBe('HTTP 503');
    expect(promoteSpan(SERVER, 'n', 2, { 'http.status_code': '500' }, null).error_type).toBe('HTTP 500');
    expect(promoteSpan(SERVER, 'n', 2, { 'rpc.grpc.status_code': 14 }, null).error_type).toBe('gRPC 14 UNAVAILABLE');
    expect(promoteSpan(SERVER, 'n', 2, {}, null).error_type).toBeNull();
    const ok = promoteSpan(SERVER, 'n', 1, { 'error.type': 'x', 'http.response.status_code': 503 }, 'E');
    expect(ok.is_error).toBe(false);
    expect(ok.error_type).toBeNull();
    expect(promoteSpan(SERVER, 'n', 2, {}, null).is_error).toBe(true);
  });

  it('http, rpc, db, peer and gen_ai fields', () => {
    const p = promoteSpan(CLIENT, 'chat', 0, {
      'http.method': 'get', 'http.route': '/r', 'http.status_code': 200, 'rpc.service': 'S', 'rpc.method': 'M',
      'server.address': 'api.openai.com', 'db.system': 'redis',
      'gen_ai.provider.name': 'openai', 'gen_ai.operation.name': 'chat', 'gen_ai.response.model': 'gpt-4o-2024',
      'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.completion_tokens': 5n, 'gen_ai.response.finish_reasons': 'length',
    }, null);
    expect(p).toMatchObject({
      http_method: 'GET', http_route: '/r', http_status_code: 200, rpc_service: 'S', rpc_method: 'M', peer_service: 'api.openai.com',
      db_system: 'redis', gen_ai_system: 'openai', gen_ai_operation: 'chat', gen_ai_model: 'gpt-4o-2024',
      gen_ai_input_tokens: 10, gen_ai_output_tokens: 5n, gen_ai_finish_reasons: '["length"]',
    });
    expect(promoteSpan(SERVER, 'n', 0, { 'server.address': 'me' }, null).peer_service).toBeNull();
    expect(promoteSpan(CLIENT, 'n', 0, { 'gen_ai.system': 'anthropic', 'gen_ai.request.model': 'claude', 'gen_ai.response.model': 'claude-x', 'gen_ai.usage.prompt_tokens': 3, 'gen_ai.response.finish_reasons': ['stop', 'length'] }, null))
      .toMatchObject({ gen_ai_system: 'anthropic', gen_ai_model: 'claude', gen_ai_input_tokens: 3, gen_ai_finish_reasons: '["stop","length"]' });
  });
});

describe('promoteResource and logIsError', () => {
  it('service identity, environment, k8s and container names', () => {
    expect(promoteResource({}).serviceName).toBe('unknown_service');
    const r = promoteResource({
      'service.name': 'a', 'service.namespace': 'ns', 'deployment.environment': 'old', 'container.name': 'c', 'container.image.name': 'img',
    });
    expect(r.serviceName).toBe('a');
    expect(r.columns).toEqual(['ns', null, null, 'old', null, null, null, 'c', 'img', null]);
    expect(promoteResource({ 'deployment.environment.name': 'new', 'deployment.environment': 'old', 'k8s.container.name': 'k', 'container.name': 'c', 'container.image.name': 'i', 'container.image.tags': ['t1', 't2'] }).columns)
      .toEqual([null, null, null, 'new', null, null, null, 'k', 'i:t1', null]);
  });

  it('log errors by number or text', () => {
    expect(logIsError(17, null)).toBe(true);
    expect(logIsError(24, 'whatever')).toBe(true);
    expect(logIsError(16, 'WARN')).toBe(false);
    expect(logIsError(0, 'error')).toBe(true);
    expect(logIsError(0, 'Critical')).toBe(true);
    expect(logIsError(0, 'FATAL')).toBe(true);
    expect(logIsError(9, 'INFO')).toBe(false);
    expect(logIsError(0, null)).toBe(false);
  });
});

describe('levelFromBody', () => {
  it('reads the level word a body starts with, in the usual layouts', async () => {
    const { levelFromBody } = await import('../../src/pipeline/promote.js');
    expect(levelFromBody('2026-11-25 10:00:00.123 ERROR [svc,abc,def] 1 --- [main] c.a.H : failed')).toEqual([17, 'ERROR']);
    expect(levelFromBody('2026-11-25 10:00:00.123  WARN [svc,,] 1 --- x')).toEqual([13, 'WARN']);
    expect(levelFromBody('[INFO] started')).toEqual([9, 'INFO']);
    expect(levelFromBody('ts=1 level=error msg="boom"')).toEqual([17, 'ERROR']);
    expect(levelFromBody('{"time":"x","level":"warn","msg":"slow"}')).toEqual([13, 'WARN']);
    expect(levelFromBody('<FATAL> out of memory')).toEqual([21, 'FATAL']);
  });
  it('finds nothing in a message that only mentions a level, in lower case, far in or absent', async () => {
    const { levelFromBody } = await import('../../src/pipeline/promote.js');
    expect(levelFromBody('an error occurred while reading')).toBeNull();
    expect(levelFromBody('INFORMATION about ERRORS')).toBeNull();
    expect(levelFromBody('x'.repeat(200) + ' ERROR late')).toBeNull();
    expect(levelFromBody('')).toBeNull();
    expect(levelFromBody(null)).toBeNull();
    expect(levelFromBody('level=verbose')).toBeNull();
  });
});
