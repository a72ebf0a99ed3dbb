// A store DuckDB has invalidated (a checkpoint that failed: out of memory at its limit in the soak,
// forced here with DuckDB's own debug_checkpoint_abort) fails every statement until it is attached
// again. The registry closes it at the first request that fails so, and the next request opens it
// afresh; reopened, the store has every row it acknowledged (a real DuckDB file).
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/db.js';
import { createWriter } from '../../src/store/writer.js';
import { registryOverFakes } from './fake-runtimes.js';
import { spanBatch, submitOf } from '../store/fixtures.js';
import { tempDir } from '../helpers/tmp.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('a store DuckDB invalidated', () => {
  it('fails every write until it is closed and opened again, and then has every acknowledged row', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const store = await openStore(t.dir);
    const w = createWriter(store, { flushIntervalMs: 1 });
    await w.submit(submitOf(spanBatch(5)));
    await store.writer.run("SET debug_checkpoint_abort = 'before_header'");
    expect(w.stats().invalidated).toBe(false);
    await expect(w.exclusive(() => store.writer.run('CHECKPOINT'))).rejects.toThrow(/invalidated/);
    expect(w.stats().invalidated).toBe(true); // what the registry looks at before it hands the store out
    await expect(w.submit(submitOf(spanBatch(2, (i) => ({ span_id: `later-${i}` }))))).rejects.toThrow(/has been invalidated/);
    await store.close().catch(() => {}); // closing a dead database may fail; its file is released
    const again = await openStore(t.dir);
    cleanups.push(() => again.close());
    const n = (await again.writer.runAndReadAll('SELECT count(*) FROM svc_spans')).getRows()[0]![0];
    expect(Number(n)).toBe(5);
    await createWriter(again, { flushIntervalMs: 1 }).submit(submitOf(spanBatch(3, (i) => ({ span_id: `after-${i}` }))));
    expect(Number((await again.writer.runAndReadAll('SELECT count(*) FROM svc_spans')).getRows()[0]![0])).toBe(8);
  });

  it('is closed by the registry at the first request that fails on it, or once its writer saw it, and opened again', async () => {
    let broken = 0; // the runtime whose writer saw DuckDB invalidate its database
    const { registry, events, logs, which } = registryOverFakes((n) => ({ invalidated: n === broken }));
    cleanups.push(() => registry.closeAll());
    expect(await registry.use('default', which)).toBe(1);
    // Another failure leaves the store as it is.
    await expect(registry.use('default', () => Promise.reject(new Error('Constraint Error: duplicate key')))).rejects.toThrow();
    expect(await registry.use('default', which)).toBe(1);
    await expect(registry.use('default', () => Promise.reject(new Error('commit failed: IO Error: Database "lake" has been invalidated because checkpointing failed')))).rejects.toThrow();
    expect(await registry.use('default', which)).toBe(2);
    // A failure seen by the writer alone (no request met it: ingest was being refused) reopens it too.
    broken = 2;
    expect(await registry.use('default', which)).toBe(3);
    expect(events).toEqual(['open 1', 'close 1', 'open 2', 'close 2', 'open 3']);
    expect(logs.some((l) => l['msg'] === 'tenant store invalidated by DuckDB: reopening it' && l['tenant'] === 'default')).toBe(true);
  });
});
