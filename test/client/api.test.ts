import { describe, expect, it } from 'vitest';
import { anomalyWindow, apiClient, type ApiRequest } from '../../src/client/api.js';
import { HOUR_US } from '../../src/core/time.js';

const NOW = 1_735_689_600_000_000;

describe('anomalyWindow', () => {
  it('ends now and starts an hour earlier when neither bound is given', () => {
    expect(anomalyWindow<number>(undefined, undefined, NOW)).toEqual({ from_ts: NOW - HOUR_US, to_ts: NOW });
  });

  it('starts an hour before a given end, and keeps given bounds as they are', () => {
    expect(anomalyWindow<number>(undefined, NOW - 5, NOW)).toEqual({ from_ts: NOW - 5 - HOUR_US, to_ts: NOW - 5 });
    expect(anomalyWindow<number>(NOW - 10, undefined, NOW)).toEqual({ from_ts: NOW - 10, to_ts: NOW });
  });

  it('passes a bound that is not a number through for the service to refuse, starting the default before now', () => {
    expect(anomalyWindow<unknown>(undefined, 'soon', NOW)).toEqual({ from_ts: NOW - HOUR_US, to_ts: 'soon' });
    expect(anomalyWindow<unknown>(null, null, NOW)).toEqual({ from_ts: NOW - HOUR_US, to_ts: NOW });
  });
});

describe('apiClient', () => {
  function recorder() {
    const seen: ApiRequest[] = [];
    const client = apiClient(async (r) => {
      seen.push(r);
      return { ok: true, status: 200, body: {} };
    });
    return { seen, client };
  }

  it('sends each endpoint its method, path, query and body as given, with no defaults of its own', async () => {
    const { seen, client } = recorder();
    await client.anomalies({ service: 'a', from_ts: 1, to_ts: 2 });
    await client.diagnose({ services: ['a'] });
    await client.query('SELECT 1');
    await client.trace('ab/cd');
    await client.alerts({});
    await client.health({ timeoutMs: 5 });
    await client.revokeKey('k 1');
    expect(seen).toEqual([
      { method: 'GET', path: '/v1/anomalies', query: { service: 'a', from_ts: 1, to_ts: 2 } },
      { method: 'POST', path: '/v1/diagnose', body: { contentType: 'application/json', text: '{"services":["a"]}' } },
      { method: 'POST', path: '/v1/query', body: { contentType: 'text/plain; charset=utf-8', text: 'SELECT 1' } },
      { method: 'GET', path: '/v1/traces/ab%2Fcd' },
      { method: 'GET', path: '/v1/alerts', query: { status: undefined } },
      { method: 'GET', path: '/healthz', timeoutMs: 5 },
      { method: 'DELETE', path: '/admin/keys/k%201' },
    ]);
  });
});
