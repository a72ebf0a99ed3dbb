// DuckDB's share of the machine: its threads and its memory limit, from the configuration to the instance.
import { describe, expect, it } from 'vitest';
import { duckdbThreads, loadConfig } from '../../src/core/config.js';
import { openStore } from '../../src/store/db.js';
import { tempDir } from '../helpers/tmp.js';

describe('DuckDB threads', () => {
  it('defaults to the cores the decode workers leave, at least 1; an explicit value wins', () => {
    const auto = loadConfig({});
    expect(auto.duckdbThreads).toBe(0);
    expect(duckdbThreads(auto, 2)).toBe(1);
    expect(duckdbThreads(auto, 1)).toBe(1);
    expect(duckdbThreads(auto, 8)).toBe(6);
    expect(duckdbThreads(loadConfig({ SVC_WORKERS: '3' }), 8)).toBe(5);
    expect(duckdbThreads(loadConfig({ SVC_DUCKDB_THREADS: '4' }), 2)).toBe(4);
    expect(() => loadConfig({ SVC_DUCKDB_THREADS: '-1' })).toThrow(/SVC_DUCKDB_THREADS/);
  });

  it('takes a memory limit as a size, or nothing for the memory budget\'s share', () => {
    expect(loadConfig({}).duckdbMemoryLimit).toBe('');
    expect(loadConfig({ SVC_DUCKDB_MEMORY_LIMIT: '512MB' }).duckdbMemoryLimit).toBe('512MB');
    expect(loadConfig({ SVC_DUCKDB_MEMORY_LIMIT: '1.5 GiB' }).duckdbMemoryLimit).toBe('1.5 GiB');
    for (const bad of ['lots', '2 parsecs', '-1GB', "1GB'; DROP TABLE svc_spans; --"]) {
      expect(() => loadConfig({ SVC_DUCKDB_MEMORY_LIMIT: bad })).toThrow(/SVC_DUCKDB_MEMORY_LIMIT/);
    }
  });

  it('opens the store with that many threads and that memory limit', async () => {
    const t = tempDir();
    const store = await openStore(t.dir, 'default', { threads: 3, memoryLimit: '512MB' });
    try {
      const rows = (await store.writer.runAndReadAll(`SELECT current_setting('threads'), current_setting('memory_limit')`)).getRows();
      expect(Number(rows[0]![0])).toBe(3);
      expect(String(rows[0]![1])).toMatch(/^(488\.2 MiB|512\.0 MB)$/);
    } finally {
      await store.close();
      t.cleanup();
    }
  });
});
