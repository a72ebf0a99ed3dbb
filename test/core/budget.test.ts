// The memory budget (core/budget.ts): the limits it sizes when they are not set themselves, and on a
// real server, that DuckDB runs under its share and /admin/status reports the budget and its use.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { DEFAULT_BUDGET_CAP, DUCKDB_BYTES_PER_COMMITTED_ROW, memoryBudget } from '../../src/core/budget.js';
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

  it('sizes DuckDB (a quarter), its reopening (a sixteenth) and the bytes in flight (an eighth) unless they are set', () => {
    const b = memoryBudget(loadConfig({ SVC_MEMORY_BUDGET: String(GiB) }));
    expect(b).toEqual({
      bytes: GiB,
      source: 'setting',
      duckdbMemoryLimit: `${GiB / 4}B`,
      stores: 1,
      storeReopenRows: Math.floor(GiB / 16 / DUCKDB_BYTES_PER_COMMITTED_ROW),
      maxInflightBytes: GiB / 8,
    });
    // DuckDB's metadata for the rows committed before a reopen stays within its sixteenth.
    expect(b.storeReopenRows * DUCKDB_BYTES_PER_COMMITTED_ROW).toBeLessThanOrEqual(GiB / 16);
    // Reopening set by hand, including never (0, not "derived").
    expect(memoryBudget(loadConfig({ SVC_MEMORY_BUDGET: String(GiB), SVC_STORE_REOPEN_ROWS: '0' })).storeReopenRows).toBe(0);
    expect(memoryBudget(loadConfig({ SVC_MEMORY_BUDGET: String(GiB), SVC_STORE_REOPEN_ROWS: '5000' })).storeReopenRows).toBe(5000);
    const set = memoryBudget(loadConfig({ SVC_MEMORY_BUDGET: String(GiB), SVC_DUCKDB_MEMORY_LIMIT: '3GB', SVC_MAX_INFLIGHT_BYTES: '1048576' }));
    expect(set).toMatchObject({ bytes: GiB, duckdbMemoryLimit: '3GB', maxInflightBytes: MiB });
    // The default on a machine of 8 GiB or more keeps the previous fixed in-flight limit, 256 MiB.
    expect(memoryBudget(loadConfig({}), 16 * GiB).maxInflightBytes).toBe(256 * MiB);
  });

  it('shares DuckDB\'s parts among the stores the hosted variant may hold open at once', () => {
    const keys = memoryBudget(loadConfig({ SVC_AUTH: 'keys', SVC_ADMIN_TOKEN: 'a'.repeat(20), SVC_MEMORY_BUDGET: String(GiB), SVC_TENANT_MAX_OPEN: '4' }));
    const one = memoryBudget(loadConfig({ SVC_MEMORY_BUDGET: String(GiB) }));
    expect(keys).toMatchObject({ stores: 4, duckdbMemoryLimit: `${(GiB * 3) / 32}B`, maxInflightBytes: GiB / 8 });
    expect(keys.storeReopenRows).toBe(Math.floor(one.storeReopenRows / 4));
    // Open mode has one store, whatever SVC_TENANT_MAX_OPEN says; a limit set by hand is each store's.
    expect(memoryBudget(loadConfig({ SVC_MEMORY_BUDGET: String(GiB), SVC_TENANT_MAX_OPEN: '4' }))).toMatchObject({ stores: 1, duckdbMemoryLimit: `${GiB / 4}B` });
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
    // the function): a quarter of the budget, 64 MiB.
    expect(m['duckdb']['memory_limit']).toBe('64.0 MiB');
    expect(m['duckdb']['memory_used_bytes']).toBeGreaterThanOrEqual(0);
    expect(m['duckdb']['memory_used_bytes']).toBeLessThanOrEqual(64 * MiB);
    // The store is reopened before DuckDB's metadata outside the limit outgrows a sixteenth of the budget.
    expect(m['store_reopen_rows'] * DUCKDB_BYTES_PER_COMMITTED_ROW).toBeLessThanOrEqual(budget / 16);
    expect(m['store_reopen_rows']).toBeGreaterThan(0);
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
    expect(m['array_buffers_bytes']).toBeGreaterThan(0);
    expect(m['array_buffers_bytes']).toBeLessThan(m['rss_bytes']);
  });
});
