// The memory budget (core/budget.ts): the limits it sizes when they are not set themselves, and on a
// real server, that DuckDB runs under its share and /admin/status reports the budget and its use.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { DEFAULT_BUDGET_CAP, memoryBudget } from '../../src/core/budget.js';
import { useTestServer } from '../helpers/server.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

describe('the memory budget', () => {
  it('defaults to a quarter of the machine, at most 2 GiB', () => {
    const cfg = loadConfig({});
    expect(cfg.memoryBudgetBytes).toBe(0);
    expect(memoryBudget(cfg, 4 * GiB)).toMatchObject({ bytes: GiB, source: 'machine' });
    expect(memoryBudget(cfg, 64 * GiB)).toMatchObject({ bytes: DEFAULT_BUDGET_CAP, source: 'machine' });
  });

  it('sizes DuckDB (half) and the bytes in flight (an eighth) unless they are set', () => {
    const b = memoryBudget(loadConfig({ SVC_MEMORY_BUDGET: String(GiB) }));
    expect(b).toEqual({ bytes: GiB, source: 'setting', duckdbMemoryLimit: `${GiB / 2}B`, stores: 1, maxInflightBytes: GiB / 8 });
    const set = memoryBudget(loadConfig({ SVC_MEMORY_BUDGET: String(GiB), SVC_DUCKDB_MEMORY_LIMIT: '3GB', SVC_MAX_INFLIGHT_BYTES: '1048576' }));
    expect(set).toMatchObject({ bytes: GiB, duckdbMemoryLimit: '3GB', maxInflightBytes: MiB });
    // The default on a machine of 8 GiB or more keeps the previous fixed in-flight limit, 256 MiB.
    expect(memoryBudget(loadConfig({}), 16 * GiB).maxInflightBytes).toBe(256 * MiB);
  });

  it('shares DuckDB\'s half among the stores the hosted variant may hold open at once', () => {
    const keys = memoryBudget(loadConfig({ SVC_AUTH: 'keys', SVC_ADMIN_TOKEN: 'a'.repeat(20), SVC_MEMORY_BUDGET: String(GiB), SVC_TENANT_MAX_OPEN: '4' }));
    expect(keys).toMatchObject({ stores: 4, duckdbMemoryLimit: `${GiB / 8}B`, maxInflightBytes: GiB / 8 });
    // Open mode has one store, whatever SVC_TENANT_MAX_OPEN says; a limit set by hand is each store's.
    expect(memoryBudget(loadConfig({ SVC_MEMORY_BUDGET: String(GiB), SVC_TENANT_MAX_OPEN: '4' }))).toMatchObject({ stores: 1, duckdbMemoryLimit: `${GiB / 2}B` });
    expect(memoryBudget(loadConfig({ SVC_AUTH: 'keys', SVC_DUCKDB_MEMORY_LIMIT: '300MB', SVC_TENANT_MAX_OPEN: '4' })).duckdbMemoryLimit).toBe('300MB');
  });

  it('refuses a budget too small to run in', () => {
    expect(() => loadConfig({ SVC_MEMORY_BUDGET: '1000' })).toThrow(/SVC_MEMORY_BUDGET/);
    expect(() => loadConfig({ SVC_MEMORY_BUDGET: '2GB' })).toThrow(/SVC_MEMORY_BUDGET/);
  });
});

describe('a server with a small budget', () => {
  const budget = 256 * MiB;
  const srv = useTestServer({ SVC_MEMORY_BUDGET: String(budget) });

  it('runs DuckDB under its share and reports the budget and its use', async () => {
    const res = await fetch(`${srv.api}/admin/status`);
    expect(res.status).toBe(200);
    const { status } = (await res.json()) as { status: Record<string, Record<string, any>> };
    const m = status['memory']!;
    expect(m['budget_bytes']).toBe(budget);
    expect(m['budget_source']).toBe('setting');
    // DuckDB's own word on its limit (current_setting on the store's connection; /v1/query does not allow
    // the function): half the budget, 128 MiB.
    expect(m['duckdb']['memory_limit']).toBe('128.0 MiB');
    expect(m['duckdb']['memory_used_bytes']).toBeGreaterThanOrEqual(0);
    expect(m['duckdb']['memory_used_bytes']).toBeLessThanOrEqual(128 * MiB);
    // What holds it, by DuckDB's tags: together the whole of it, nothing spilled on an idle store.
    const tags = m['duckdb']['by_tag'] as Record<string, number>;
    expect(Object.values(tags).reduce((a, b) => a + b, 0)).toBe(m['duckdb']['memory_used_bytes']);
    for (const tag of Object.keys(tags)) expect(tag).toMatch(/^[A-Z_]+$/);
    expect(m['duckdb']['temporary_storage_bytes']).toBe(0);
    expect(m['max_inflight_bytes']).toBe(budget / 8);
    expect(status['ingest']!['max_inflight_bytes']).toBe(budget / 8);
    expect(m['inflight_bytes']).toBe(0);
    expect(m['rss_bytes']).toBeGreaterThan(m['duckdb']['memory_used_bytes']);
    expect(m['js_heap_bytes']).toBeGreaterThan(0);
    expect(m['js_heap_bytes']).toBeLessThan(m['rss_bytes']);
  });
});
