// A store whose DuckDB instance has committed SVC_STORE_REOPEN_ROWS rows is closed and opened again
// (DuckDB's in-process state grows with them; registry.ts): at a moment no request uses it, or, past
// a wait for one, once the requests in flight are done, arrivals waiting meanwhile. On a real server:
// every acknowledged span is there after the reopens, and each is logged.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { randomBytes } from 'node:crypto';
import { registryOverFakes } from './fake-runtimes.js';
import { clientFor, queryRows } from '../helpers/client.js';
import { useTestServer } from '../helpers/server.js';
import { encodeTraces, postOtlp } from '../helpers/otlp.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A registry over runtimes whose writers report `rows[n]` rows committed (n: the runtime's number, from 1). */
function registryOver(rows: number[], reopenIdleWaitMs = 30_000) {
  const r = registryOverFakes((n) => ({ invalidated: false, rowsCommitted: rows[n] ?? 0 }), { reopenRows: 100, reopenIdleWaitMs });
  cleanups.push(() => r.registry.closeAll());
  return r;
}

describe('reopening a store after SVC_STORE_REOPEN_ROWS rows', () => {
  it('reopens at the first request that finds it due and unused, not before', async () => {
    const rows = [0, 99];
    const { registry, events, logs, which } = registryOver(rows);
    expect(await registry.use('default', which)).toBe(1);
    expect(await registry.use('default', which)).toBe(1); // 99 rows: not due
    rows[1] = 100;
    expect(await registry.use('default', which)).toBe(2); // due and unused: closed, and this request opens it again
    expect(await registry.use('default', which)).toBe(2); // the new instance has committed none
    expect(events).toEqual(['open 1', 'close 1', 'open 2']);
    expect(logs.filter((l) => /reopening/.test(String(l['msg'])))).toEqual([expect.objectContaining({ tenant: 'default', rows_committed: 100, reopen_rows: 100 })]);
  });

  it('does not close a store under a request in flight; past the wait, arrivals wait until those in flight are done', async () => {
    const rows = [0, 0];
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] }); // the registry's clock and its polls, so a wait asserts nothing by luck
    cleanups.push(() => void vi.useRealTimers());
    const { registry, events, which } = registryOver(rows, 50);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const long = registry.use('default', async (rt) => {
      await held;
      return which(rt);
    });
    await vi.advanceTimersByTimeAsync(5);
    rows[1] = 500;
    // Due, but a request uses it: served by the same instance.
    expect(await registry.use('default', which)).toBe(1);
    await vi.advanceTimersByTimeAsync(80); // past the wait for an unused moment
    const arrival = registry.use('default', which);
    await vi.advanceTimersByTimeAsync(10_000); // however long the request in flight takes, it is not cut off
    expect(events).toEqual(['open 1']);
    release();
    await vi.advanceTimersByTimeAsync(20); // the close notices, at its next look, that nothing uses the store
    expect(await long).toBe(1);
    expect(await arrival).toBe(2); // waited for it, then for the reopen
    expect(events).toEqual(['open 1', 'close 1', 'open 2']);
  });
});

describe('reopening on a real server', () => {
  const srv = useTestServer({ SVC_STORE_REOPEN_ROWS: '150' });
  const NOW_US = Date.now() * 1000 - 60_000_000; // recent: the server deletes data older than its retention at start

  it('keeps every acknowledged span across the reopens', async () => {
    const traces: string[] = [];
    for (let b = 0; b < 6; b++) {
      const traceId = randomBytes(16);
      traces.push(traceId.toString('hex'));
      const spans = Array.from({ length: 64 }, (_v, i) => ({ traceId, startUs: NOW_US + b * 1000 + i, durationUs: 10, attributes: { i } }));
      expect((await postOtlp(srv.otlpHttp, 'traces', encodeTraces('reopened', spans))).status).toBe(200);
    }
    const rows = await queryRows<{ trace_id: string; n: number }>(clientFor(srv.api), "SELECT trace_id, count(*) AS n FROM svc_spans WHERE service_name = 'reopened' GROUP BY trace_id");
    const stored = new Map(rows.map((r) => [r.trace_id, Number(r.n)]));
    expect(new Map(traces.map((t) => [t, 64]))).toEqual(stored);
    // 384 rows at a reopen every 150: at least twice (each batch's commit counts when the next arrives).
    expect(srv.logs.filter((l) => /tenant store reopening/.test(String(l['msg']))).length).toBeGreaterThanOrEqual(2);
  });
});
