// The hosted variant's pure parts and its embedded control plane, without a server.
import { describe, expect, it } from 'vitest';
import { bearerToken, generateKey, hashKey, isKeyShaped, safeEqual, tenantIdProblem } from '../../src/tenancy/keys.js';
import { takeTokens } from '../../src/tenancy/gate.js';
import { createControlPlane } from '../../src/tenancy/control-plane.js';
import { openEmbeddedBackend } from '../../src/tenancy/embedded.js';
import { ConfigError, loadConfig } from '../../src/core/config.js';
import { tempDir } from '../helpers/tmp.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

describe('keys', () => {
  it('are tds_ + 256 random bits, distinct, and recognisable', () => {
    const keys = new Set(Array.from({ length: 1000 }, generateKey));
    expect(keys.size).toBe(1000);
    for (const k of keys) expect(isKeyShaped(k)).toBe(true);
    const k = [...keys][0]!;
    expect(Buffer.from(k.slice(4), 'base64url').length).toBe(32);
    expect(hashKey(k)).toMatch(/^[0-9a-f]{64}$/);
    expect(isKeyShaped('tds_short')).toBe(false);
    expect(isKeyShaped(k + 'x')).toBe(false);
  });

  it('are read from a Bearer header only', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer  abc ')).toBe('abc');
    for (const h of [undefined, '', 'Basic abc', 'Bearer', 'Bearer a b', 'abc']) expect(bearerToken(h)).toBeNull();
  });

  it('compare equal strings only', () => {
    expect(safeEqual('a'.repeat(20), 'a'.repeat(20))).toBe(true);
    expect(safeEqual('a'.repeat(20), 'a'.repeat(19) + 'b')).toBe(false);
    expect(safeEqual('a', 'a'.repeat(20))).toBe(false);
  });
});

describe('tenant ids', () => {
  it('are safe directory names', () => {
    for (const ok of ['acme', 'a', 'acme-prod_2', '0x', 'a'.repeat(63)]) expect(tenantIdProblem(ok), ok).toBeNull();
    for (const bad of ['', 'A', '../b', 'a/b', '.', '..', '-a', '_a', 'a b', 'a'.repeat(64), 'é', 'default', 'a\u0000', 42, null]) expect(tenantIdProblem(bad), String(bad)).not.toBeNull();
  });
});

describe('the per-tenant ingest rate (token bucket)', () => {
  it('admits a second of rate, then asks to wait, and refills', () => {
    const b = { tokens: 1000, at: 0 };
    expect(takeTokens(b, 600, 1000, 0)).toBe(0);
    expect(takeTokens(b, 600, 1000, 0)).toBe(1); // 400 left
    expect(takeTokens(b, 600, 1000, 300)).toBe(0); // 700 after 0.3 s
  });
  it('admits one body larger than a second of rate from a full bucket, then refuses until it refilled', () => {
    const b = { tokens: 1000, at: 0 };
    expect(takeTokens(b, 5000, 1000, 0)).toBe(0);
    expect(takeTokens(b, 10, 1000, 1000)).toBeGreaterThanOrEqual(1);
    expect(takeTokens(b, 10, 1000, 6000)).toBe(0);
  });
});

describe('configuration of the hosted variant', () => {
  it('checks the mode, the admin token and the control plane URL, without echoing secrets', () => {
    expect(loadConfig({}).auth).toBe('open');
    const bad = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    expect(bad({ SVC_AUTH: 'key' })).toMatch(/SVC_AUTH="key": must be one of open, keys/);
    const short = bad({ SVC_AUTH: 'keys', SVC_ADMIN_TOKEN: 'hunter2' });
    expect(short).toMatch(/SVC_ADMIN_TOKEN=\(not shown\)/);
    expect(short).not.toContain('hunter2');
    const url = bad({ SVC_AUTH: 'keys', SVC_CONTROL_PLANE_URL: 'mysql://u:s3cret@h/db' });
    expect(url).not.toContain('s3cret');
    expect(bad({ SVC_CONTROL_PLANE_URL: 'postgres://h/db' })).toMatch(/only applies with SVC_AUTH=keys/);
  });
});

describe('the embedded control plane', () => {
  it('creates, issues, authenticates, revokes (409 on an ambiguous prefix), deactivates, and persists only hashes', async () => {
    const tmp = tempDir();
    try {
      const backend = openEmbeddedBackend(tmp.dir);
      const cp = await createControlPlane(backend, { refreshMs: 1000, log: () => {} });
      expect(await cp.createTenant('acme')).toEqual({ id: 'acme', status: 'active' });
      await expect(cp.createTenant('../etc')).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      const k = await cp.issueKey('acme');
      expect(hashKey(k.key).startsWith(k.short_token)).toBe(true);
      expect(cp.authenticate(`Bearer ${k.key}`)).toBe('acme');
      expect(() => cp.authenticate(undefined)).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
      // The key with its last character changed (to another one: 'A' when it was not one already).
      const wrong = k.key.slice(0, -1) + (k.key.endsWith('A') ? 'B' : 'A');
      expect(() => cp.authenticate(`Bearer ${wrong}`)).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
      await expect(cp.issueKey('nobody')).rejects.toMatchObject({ code: 'NOT_FOUND' });

      // Two keys whose hashes share a prefix (written straight to the backend: real collisions need ~2^16 keys).
      await backend.addKey('acme', 'abcdef01' + '1'.repeat(56));
      await backend.addKey('acme', 'abcdef01' + '2'.repeat(56));
      const conflict = await cp.revokeKey('abcdef01').catch((e: unknown) => e);
      expect(conflict).toMatchObject({ code: 'CONFLICT' });
      expect(JSON.stringify((conflict as { toBody(): unknown }).toBody())).not.toMatch(/1111|2222/);
      expect(await cp.revokeKey('abcdef011')).toEqual({ revoked: true, short_token: 'abcdef011' });
      expect(await cp.revokeKey('abcdef011')).toEqual({ revoked: false, short_token: 'abcdef011' });
      expect(await cp.revokeKey('0000000000')).toEqual({ revoked: false, short_token: '0000000000' });

      await cp.deactivateTenant('acme');
      expect(() => cp.authenticate(`Bearer ${k.key}`)).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
      await cp.createTenant('acme'); // reactivated: its unrevoked keys work again
      expect(cp.authenticate(`Bearer ${k.key}`)).toBe('acme');
      expect(await cp.revokeKey(k.short_token)).toEqual({ revoked: true, short_token: k.short_token });
      expect(() => cp.authenticate(`Bearer ${k.key}`)).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
      await cp.close();

      const file = readFileSync(join(tmp.dir, 'control-plane.json'), 'utf8');
      expect(file).not.toContain(k.key);
      expect(file).toContain(hashKey(k.key));
      // Reopened from the file: the state survived.
      const again = await createControlPlane(openEmbeddedBackend(tmp.dir), { refreshMs: 1000, log: () => {} });
      expect(again.tenants()).toEqual([{ id: 'acme', status: 'active', keys: 1 }]);
      await again.close();
    } finally {
      tmp.cleanup();
    }
  });
});
