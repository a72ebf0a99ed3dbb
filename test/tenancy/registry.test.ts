// The registry of open tenant stores (tenancy/registry.ts): at most `maxOpen` open at once, the least
// recently used idle one closed to make room, 503 with Retry-After when every one is in use. The
// runtimes here are stand-ins that record their opening and closing: what is tested is the
// registry's bookkeeping; the real stores are opened in hosted-memory.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { createRegistry, type TenantRegistry } from '../../src/tenancy/registry.js';
import { ApiError } from '../../src/core/errors.js';
import type { TenantRuntime } from '../../src/tenancy/runtime.js';

let registry: TenantRegistry | undefined;
afterEach(async () => registry?.closeAll());

function harness(maxOpen: number) {
  const open = new Set<string>();
  const events: string[] = [];
  registry = createRegistry({
    dataDir: '/nonexistent',
    idleS: 3600,
    maxOpen,
    log: () => {},
    open: async (tenant) => {
      expect(open.has(tenant), `${tenant} opened twice`).toBe(false);
      open.add(tenant);
      events.push(`open ${tenant}`);
      return {
        tenant,
        close: async () => {
          await new Promise((r) => setTimeout(r, 5));
          open.delete(tenant);
          events.push(`close ${tenant}`);
        },
      } as unknown as TenantRuntime;
    },
  });
  return { registry, open, events };
}

describe('the tenant store registry', () => {
  it('keeps at most maxOpen stores open, closing the least recently used idle one first', async () => {
    const { registry: r, open, events } = harness(2);
    await r.use('a', () => {});
    await new Promise((res) => setTimeout(res, 2));
    await r.use('b', () => {});
    await new Promise((res) => setTimeout(res, 2));
    await r.use('a', () => {}); // a is now the most recently used
    await r.use('c', () => {});
    expect([...open].sort()).toEqual(['a', 'c']);
    expect(events).toEqual(['open a', 'open b', 'close b', 'open c']);
    expect(r.status()).toMatchObject({ open: 2, max_open: 2 });
  });

  it('answers 503 with Retry-After when every open store is in use, and opens once one is free', async () => {
    const { registry: r, open } = harness(1);
    let release!: () => void;
    const busy = r.use('a', () => new Promise<void>((res) => (release = res)));
    await new Promise((res) => setTimeout(res, 5));
    const refused = await r.use('b', () => 'opened').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(503);
    expect((refused as ApiError).retryAfter).toBeGreaterThan(0);
    expect((refused as ApiError).hint).toMatch(/SVC_TENANT_MAX_OPEN/);
    expect([...open]).toEqual(['a']);
    release();
    await busy;
    expect(await r.use('b', () => 'opened')).toBe('opened');
    expect([...open]).toEqual(['b']);
  });
});
