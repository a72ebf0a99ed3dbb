// The signature of forwarded requests and the google.rpc.Status reader of tenancy/forward.ts.
import { describe, expect, it } from 'vitest';
import { decodeRpcStatus, signForward, verifyForward } from '../../src/tenancy/forward.js';
import { messageType } from '../helpers/otlp.js';

const SECRET = 'cluster-secret-0123456789';
const NOW = 1_760_000_000_000;

describe('forwarded request signatures', () => {
  const header = signForward(SECRET, 'node-a', 'acme', 'POST', '/v1/traces', NOW);

  it('name the tenant when sender, tenant, time, method and path are as signed', () => {
    expect(verifyForward(SECRET, header, 'POST', '/v1/traces', NOW + 1000)).toBe('acme');
    expect(verifyForward(SECRET, header, 'post', '/v1/traces', NOW)).toBe('acme');
    // Ids with spaces or odd characters survive the header.
    expect(verifyForward(SECRET, signForward(SECRET, 'http://10.0.0.1:9999', 'a b', 'GET', '/v1/services', NOW), 'GET', '/v1/services', NOW)).toBe('a b');
  });

  it('refuse another secret, method, path, tenant or sender, a stale time and garbage', () => {
    expect(verifyForward('another-secret-0123456789', header, 'POST', '/v1/traces', NOW)).toBeNull();
    expect(verifyForward(SECRET, header, 'GET', '/v1/traces', NOW)).toBeNull();
    expect(verifyForward(SECRET, header, 'POST', '/v1/logs', NOW)).toBeNull();
    expect(verifyForward(SECRET, header.replace('acme', 'other'), 'POST', '/v1/traces', NOW)).toBeNull();
    expect(verifyForward(SECRET, header.replace('node-a', 'node-b'), 'POST', '/v1/traces', NOW)).toBeNull();
    expect(verifyForward(SECRET, header, 'POST', '/v1/traces', NOW + 61_000)).toBeNull();
    expect(verifyForward(SECRET, header, 'POST', '/v1/traces', NOW - 61_000)).toBeNull();
    for (const bad of ['', 'a b c', `${header} x`, header.slice(0, -1), '%E0%A4%A a 1 x']) expect(verifyForward(SECRET, bad, 'POST', '/v1/traces', NOW)).toBeNull();
  });
});

describe('decodeRpcStatus', () => {
  it('reads code and message as protobufjs wrote them, details skipped', () => {
    const Status = messageType('google.rpc.Status');
    const bytes = Status.encode(Status.create({ code: 14, message: 'try later – ü', details: [{ type_url: 'x', value: Buffer.from([1, 2]) }] })).finish();
    expect(decodeRpcStatus(bytes)).toEqual({ code: 14, message: 'try later – ü' });
    expect(decodeRpcStatus(new Uint8Array())).toEqual({ code: 0, message: '' });
  });

  it('gives null for what is not a Status', () => {
    expect(decodeRpcStatus(Buffer.from('{"error":{}}'))).toBeNull();
    expect(decodeRpcStatus(Uint8Array.from([0x12, 0x05, 0x61]))).toBeNull(); // a string past the end
  });
});
