import { describe, expect, it } from 'vitest';
import { anomalyWindow, apiClient, type ApiRequest } from '../../src/client/api.js';
import { API } from '../../src/api/endpoints.js';
import type { Endpoint } from '../../src/api/endpoint.js';
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
    await client.listAnomalies({ service: 'a', from_ts: 1, to_ts: 2 });
    await client.diagnose({ body: { services: ['a'] } });
    await client.runQuery({ body: 'SELECT 1' });
    await client.getTrace({ trace_id: 'ab/cd' });
    await client.listAlerts();
    await client.getHealth({}, { timeoutMs: 5 });
    await client.revokeKey({ short_token: 'k 1' });
    await client.issueKey({ id: 'acme' });
    await client.moveTenant({ id: 'acme', body: {} });
    expect(seen).toEqual([
      { method: 'GET', path: '/v1/anomalies', query: { service: 'a', from_ts: 1, to_ts: 2 } },
      { method: 'POST', path: '/v1/diagnose', body: { contentType: 'application/json', text: '{"services":["a"]}' } },
      { method: 'POST', path: '/v1/query', body: { contentType: 'text/plain; charset=utf-8', text: 'SELECT 1' } },
      { method: 'GET', path: '/v1/traces/ab%2Fcd' },
      { method: 'GET', path: '/v1/alerts', query: { status: undefined } },
      { method: 'GET', path: '/healthz', timeoutMs: 5 },
      { method: 'DELETE', path: '/admin/keys/k%201' },
      { method: 'POST', path: '/admin/tenants/acme/keys' },
      { method: 'POST', path: '/admin/tenants/acme/move', body: { contentType: 'application/json', text: '{}' } },
    ]);
  });

  it('has one method per entry of the route table, sending its method and path', async () => {
    const { seen, client } = recorder();
    expect(Object.keys(client).sort()).toEqual(Object.keys(API).sort());
    for (const e of Object.values(API) as Endpoint[]) {
      const params = Object.fromEntries(Object.keys(e.params ?? {}).map((name) => [name, 'x']));
      await (client[e.operationId as keyof typeof client] as (input: unknown) => Promise<unknown>)(params);
      expect(seen.at(-1)).toMatchObject({ method: e.method, path: e.path.replace(/\{\w+\}/g, 'x') });
    }
  });
});
