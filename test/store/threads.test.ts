import { describe, expect, it } from 'vitest';
import { duckdbThreads, loadConfig } from '../../src/config.js';
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

  it('opens the store with that many threads', async () => {
    const t = tempDir();
    const store = await openStore(t.dir, 'default', { threads: 3 });
    try {
      const rows = (await store.writer.runAndReadAll(`SELECT current_setting('threads')`)).getRows();
      expect(Number(rows[0]![0])).toBe(3);
    } finally {
      await store.close();
      t.cleanup();
    }
  });
});
