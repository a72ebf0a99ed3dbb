// The response check of test/setup/validate-responses.ts is in force for every test file: fetch is
// wrapped, the real server's answers carry the header it keys on, and a drifted answer would fail.
import { expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';
import { checkResponse } from '../helpers/api.js';

const srv = useTestServer();

it('wraps fetch and recognises the real server by its uWebSockets header', async () => {
  expect(globalThis.fetch.name).toBe('checkedFetch');
  const res = await fetch(`${srv.api}/v1/services`);
  expect(res.headers.has('uwebsockets')).toBe(true);
  expect(res.status).toBe(200);
});

it('would fail a test on an undocumented status or a drifted body', () => {
  expect(() => checkResponse('GET', '/v1/services', 418, {})).toThrow(/not documented/);
  expect(() => checkResponse('GET', '/v1/services', 200, { services: [{ service_name: 1 }] })).toThrow(/does not match/);
});
