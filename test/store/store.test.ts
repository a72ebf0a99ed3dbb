import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, statSync } from 'node:fs';
import { openStore, STORE_ROW_GROUP_SIZE, STORE_STORAGE_VERSION, type Store } from '../../src/store/db.js';
import { createWriter } from '../../src/store/writer.js';
import { CHECKPOINT_ROW_GROUPS } from '../../src/store/commit-policy.js';
import { encodeCsv } from '../../src/store/csv.js';
import { HISTOGRAM_FIXTURE, batchOf, spanBatch, submitOf } from './fixtures.js';
import { LOG_TEMPLATES, METRICS_HISTOGRAM, SPANS, SPEC_TABLES, tableByName } from '../../src/store/schema.js';
import { serviceSpans } from '../../src/store/batch.js';
import { tempDir } from '../helpers/tmp.js';
import { beforeEachRun } from '../helpers/db.js';
import { readServiceSpans } from '../../src/store/readers.js';
import { listServices } from '../../src/api/routes/services.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function fresh(): Promise<{ store: Store; dir: string }> {
  const t = tempDir();
  const store = await openStore(t.dir);
  cleanups.push(t.cleanup, () => store.close());
  return { store, dir: t.dir };
}

/** The store with each loader connection's statements passed to `before` (with the loader's index) ahead of running. */
function watchLoaders(store: Store, before: (sql: string, loader: number) => Promise<void>): Store {
  return { ...store, loaders: store.loaders.map((conn, i) => beforeEachRun(conn, (sql) => before(sql, i))) };
}

describe('store', () => {
  it('creates the nine spec tables, reachable bare, as lake.<t> and main.<t>, on the writer and on new connections', async () => {
    const { store } = await fresh();
    const other = await store.connect();
    cleanups.push(() => other.closeSync());
    for (const conn of [store.writer, other]) {
      for (const t of SPEC_TABLES) {
        for (const name of [t.name, `lake.${t.name}`, `main.${t.name}`]) {
          const r = await conn.runAndReadAll(`SELECT count(*) FROM ${name}`);
          expect(Number(r.getRows()[0]![0])).toBe(0);
        }
      }
    }
  });

  it('encodes a batch the same after an encoding that threw halfway (no bytes carried over)', () => {
    const good = spanBatch(3, () => ({}));
    const before = encodeCsv(SPANS, good);
    // A number where a VARCHAR belongs, in the last row: two rows are written before it throws.
    const bad = spanBatch(3, (i) => (i === 2 ? { status_message: 42 as unknown as string } : {}) as Record<string, string>);
    expect(() => encodeCsv(SPANS, bad)).toThrow();
    expect(Buffer.from(encodeCsv(SPANS, good)).equals(Buffer.from(before))).toBe(true);
  });

  it('round-trips hostile strings, NULL vs empty, lists and timestamps exactly', async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 1 });
    const nasty = ['a "quoted", comma', 'line1\nline2\r\nline3', 'ctl \u0001 quote \u0001\u0001 twice', '\u0001', '', 'nul\u0000byte', 'ünïcødé ✓ 𝄞', '\\N', 'NULL', 'lone \uD800 surrogate', 'é'.repeat(300_000)];
    const batch = spanBatch(nasty.length, (i) => ({ status_message: nasty[i]!, parent_span_id: i % 2 ? null : '' }));
    await w.submit(submitOf(batch));
    const rows = (await store.writer.runAndReadAll(`SELECT status_message, parent_span_id, epoch_us(timestamp) FROM svc_spans ORDER BY span_id`)).getRows();
    // NUL and lone surrogates cannot be stored as they are: they become U+FFFD, like other undecodable input.
    expect(rows.map((r) => r[0])).toEqual(nasty.map((s) => s.replace('\u0000', '\uFFFD').replace('\uD800', '\uFFFD')));
    expect(rows.map((r) => r[1])).toEqual(nasty.map((_s, i) => (i % 2 ? null : '')));
    expect(rows.map((r) => Number(r[2]))).toEqual(batch.columns['timestamp']);
    await w.submit({
      parts: [{ table: METRICS_HISTOGRAM.name, rows: 1, csv: Buffer.from(encodeCsv(METRICS_HISTOGRAM, HISTOGRAM_FIXTURE)) }],
      services: serviceSpans([HISTOGRAM_FIXTURE]),
    });
    const h = (await store.writer.runAndReadAll(`SELECT bucket_counts, explicit_bounds, sum, min FROM svc_metrics_histogram`)).getRowObjectsJson();
    expect(h[0]).toMatchObject({ bucket_counts: ['1', '2', '18446744073709551615'], explicit_bounds: [0.5, 1] });
    expect(h[0]!['sum']).toBe('NaN');
  });

  it('records first and last seen per service across commits', async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 1 });
    await Promise.all([
      w.submit(submitOf(spanBatch(3, (i) => ({ service_name: 'a', timestamp: 1_700_000_000_000_000 + i })))),
      w.submit(submitOf(spanBatch(2, (i) => ({ service_name: 'b', timestamp: 1_700_000_100_000_000 + i })))),
    ]);
    await w.submit(submitOf(spanBatch(1, () => ({ service_name: 'a', timestamp: 1_600_000_000_000_000 }))));
    const rows = (await store.writer.runAndReadAll(`SELECT service_name, epoch_us(first_seen), epoch_us(last_seen) FROM svc_services ORDER BY 1`)).getRows();
    const expected = {
      a: [1_600_000_000_000_000, 1_700_000_000_000_002],
      b: [1_700_000_100_000_000, 1_700_000_100_000_001],
    };
    expect(rows.map((r) => [r[0], Number(r[1]), Number(r[2])])).toEqual(Object.entries(expected).map(([s, b]) => [s, ...b]));
    // The writer's copy (what GET /v1/services answers from) is the table, and so is what a restart reads.
    expect(w.services()).toEqual(expected);
    expect(await readServiceSpans(store.writer)).toEqual(expected);
  });

  it("services named like Object.prototype's members are recorded and looked up like any other", async () => {
    // Found by fuzzing: `__proto__` and `constructor` were lost (the lookup found Object.prototype's
    // member), and diagnosing `toString` answered 500 with the function taken for a service's bounds.
    const { store } = await fresh();
    const names = ['__proto__', 'constructor', 'a'];
    const w = createWriter(store, { flushIntervalMs: 1 });
    await w.submit(submitOf(spanBatch(names.length, (i) => ({ service_name: names[i]!, timestamp: 1_700_000_000_000_000 + i }))));
    const table = (await store.writer.runAndReadAll('SELECT service_name FROM svc_services ORDER BY 1')).getRows().map((r) => r[0]);
    expect(table).toEqual(['__proto__', 'a', 'constructor']);
    for (const known of [w.services(), createWriter(store, { flushIntervalMs: 1, services: await readServiceSpans(store.writer) }).services()]) {
      expect(listServices(known).map((e) => e.service_name)).toEqual(['__proto__', 'a', 'constructor']);
      expect(known['__proto__']).toEqual([1_700_000_000_000_000, 1_700_000_000_000_000]);
      expect(known['toString']).toBeUndefined();
      expect(known['hasOwnProperty']).toBeUndefined();
    }
    expect(serviceSpans([spanBatch(1, () => ({ service_name: 'valueOf' }))])['toString']).toBeUndefined();
  });

  it("a writer's services start from the table and list in the table's order", async () => {
    const { store } = await fresh();
    const names = ['b', 'a', 'Z', 'é', 'e\u0301', '𝄞', '\uFFFD', 'ｚ', 'a b', 'A'];
    const first = createWriter(store, { flushIntervalMs: 1 });
    await first.submit(submitOf(spanBatch(names.length, (i) => ({ service_name: names[i]!, timestamp: 1_700_000_000_000_000 + i }))));
    const second = createWriter(store, { flushIntervalMs: 1, services: await readServiceSpans(store.writer) });
    await second.submit(submitOf(spanBatch(1, () => ({ service_name: 'a', timestamp: 1_800_000_000_000_000 }))));
    const table = (await store.writer.runAndReadAll(`SELECT service_name, epoch_us(first_seen), epoch_us(last_seen) FROM svc_services ORDER BY service_name`)).getRows();
    expect(listServices(second.services()).map((e) => [e.service_name, e.first_seen_ts, e.last_seen_ts])).toEqual(table.map((r) => [r[0], Number(r[1]), Number(r[2])]));
    expect(second.services()['a']).toEqual([1_700_000_000_000_001, 1_800_000_000_000_000]);
  });

  it('upserts of one group commit: the latest submission of a key wins, other keys stay', async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 30 });
    const templates = (rows: [id: number, count: number][]) => {
      const batch = batchOf(
        LOG_TEMPLATES,
        rows.map(([id, n]) => ({
          timestamp: 1_700_000_000_000_000,
          first_seen: 1_700_000_000_000_000,
          last_seen: 1_700_000_000_000_000 + n,
          service_name: 'checkout',
          template_id: id,
          pattern: `pattern ${id} "<*>"`,
          count: n,
          error_count: 0,
        })),
      );
      return { parts: [{ table: batch.table, rows: batch.rows, csv: Buffer.from(encodeCsv(LOG_TEMPLATES, batch)), upsert: true }], services: {} };
    };
    await w.submit(templates([[1, 1], [2, 1]]));
    // Three submissions sharing one commit; key 1 moves twice, key 3 is new, key 2 is untouched.
    await Promise.all([w.submit(templates([[1, 5], [3, 1]])), w.submit(templates([[1, 9]])), w.submit(templates([[3, 4]]))]);
    expect(w.stats().commits).toBe(2);
    const rows = (await store.writer.runAndReadAll(`SELECT template_id, count, pattern FROM svc_log_templates ORDER BY 1`)).getRows();
    expect(rows.map((r) => [Number(r[0]), Number(r[1]), r[2]])).toEqual([
      [1, 9, 'pattern 1 "<*>"'],
      [2, 1, 'pattern 2 "<*>"'],
      [3, 4, 'pattern 3 "<*>"'],
    ]);
  });

  it('a submission arriving during a commit waits for more on their way, and goes at once when it fills a row group', async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 60_000, rowGroupRows: 3 });
    const a = w.submit(submitOf(spanBatch(2))); // nothing else on its way: commits at once
    await new Promise((r) => setImmediate(r)); // the commit of `a` is running now
    const arriving = w.expect();
    const small = w.submit(submitOf(spanBatch(2, (i) => ({ span_id: `s${i}` }))));
    await a;
    await new Promise((r) => setImmediate(r)); // the writer decides what comes next as the commit of `a` ends
    // Two rows do not fill a row group of three and more are on their way: they wait (the timer is a minute).
    expect(w.stats()).toMatchObject({ commits: 1, pendingSubmissions: 1 });
    const more = w.submit(submitOf(spanBatch(1, (i) => ({ span_id: `m${i}` }))));
    await Promise.all([small, more]);
    expect(w.stats()).toMatchObject({ commits: 2, rowsCommitted: 5 });
    arriving();
  });

  it('does not wait for submissions on their way when they would not fill a row group either, unless the last commit filled one', async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 60_000, rowGroupRows: 100 });
    const arriving = w.expect();
    await w.submit(submitOf(spanBatch(2))); // 2 queued + ~2 on the way < 100: commits now, not in a minute
    expect(w.stats()).toMatchObject({ commits: 1, rowsCommitted: 2 });
    await w.submit(submitOf(spanBatch(100, (i) => ({ span_id: `f${i}` })))); // fills one: at once
    expect(w.stats()).toMatchObject({ commits: 2, rowsCommitted: 102 });
    // After a full commit, load is high enough to fill the next one too: a small submission waits.
    const small = w.submit(submitOf(spanBatch(2, (i) => ({ span_id: `s${i}` }))));
    await new Promise((r) => setTimeout(r, 50));
    expect(w.stats()).toMatchObject({ commits: 2, pendingSubmissions: 1 });
    arriving();
    await w.flush();
    await small;
    expect(w.stats()).toMatchObject({ commits: 3, rowsCommitted: 104 });
  });

  it('writes a commit of a row group or more straight into the database file, not through the WAL', async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 1 });
    const walBytes = () => (existsSync(`${store.path}.wal`) ? statSync(`${store.path}.wal`).size : 0);
    // A first commit into an empty table takes the direct path at any size, so the full one goes first.
    const start = walBytes();
    await w.submit(submitOf(spanBatch(STORE_ROW_GROUP_SIZE, (i) => ({ span_id: `f${i}` }))));
    const fullRowGroup = walBytes() - start;
    await w.submit(submitOf(spanBatch(STORE_ROW_GROUP_SIZE - 1)));
    const belowRowGroup = walBytes() - start - fullRowGroup;
    expect(belowRowGroup).toBeGreaterThan(STORE_ROW_GROUP_SIZE * 50); // the rows themselves
    expect(fullRowGroup).toBeLessThan(belowRowGroup / 10); // pointers to blocks written already
    const n = (await store.writer.runAndReadAll('SELECT count(*), count(DISTINCT span_id) FROM svc_spans')).getRows()[0]!;
    expect(n.map(Number)).toEqual([2 * STORE_ROW_GROUP_SIZE - 1, 2 * STORE_ROW_GROUP_SIZE - 1]);
  });

  it('keeps partly filled row groups at a checkpoint instead of rewriting neighbours to merge them', async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 1 });
    const extra = 1000;
    for (const k of [0, 1]) await w.submit(submitOf(spanBatch(STORE_ROW_GROUP_SIZE + extra, (i) => ({ span_id: `${k}-${i}` }))));
    const groups = async () => (await store.writer.runAndReadAll(`SELECT row_group_id, max(count) FROM pragma_storage_info('svc_spans') GROUP BY 1 ORDER BY 1`)).getRows().map((r) => Number(r[1]));
    const expected = [STORE_ROW_GROUP_SIZE, extra, STORE_ROW_GROUP_SIZE, extra];
    expect(await groups()).toEqual(expected);
    await store.writer.run('CHECKPOINT');
    expect(await groups()).toEqual(expected);
  });

  it('checkpoints once CHECKPOINT_ROW_GROUPS row groups have gone through the WAL, between commits, leaving full row groups', async () => {
    const { store } = await fresh();
    const walBytes = () => (existsSync(`${store.path}.wal`) ? statSync(`${store.path}.wal`).size : 0);
    const w = createWriter(store, { flushIntervalMs: 1 });
    const G = STORE_ROW_GROUP_SIZE;
    const due = G * CHECKPOINT_ROW_GROUPS;
    for (let k = 0; 2 * (k + 1) * (G / 4) < due; k++) await w.submit(submitOf(spanBatch(G / 2, (i) => ({ span_id: `a${k}-${i}` }))));
    expect(w.stats().checkpoints).toBe(0);
    expect(walBytes()).toBeGreaterThan((due - G / 2) * 50);
    // Three commits side by side, queued together: the first two fill what is due, the third waits for the checkpoint.
    await Promise.all([0, 1, 2].map((k) => w.submit(submitOf(spanBatch(G / 4, (i) => ({ span_id: `${k}-${i}` }))))));
    expect(w.stats().checkpoints).toBe(1);
    const groups = (await store.writer.runAndReadAll(`SELECT row_group_id, max(count) FROM pragma_storage_info('svc_spans') GROUP BY 1 ORDER BY 1`)).getRows().map((r) => Number(r[1]));
    expect(groups).toEqual([...Array.from({ length: CHECKPOINT_ROW_GROUPS }, () => G), G / 4]);
    const n = (await store.writer.runAndReadAll('SELECT count(*), count(DISTINCT span_id) FROM svc_spans')).getRows()[0]!;
    expect(n.map(Number)).toEqual([due + G / 4, due + G / 4]);
  });

  it('checkpoints a large table at a share of what it holds, once a checkpoint has told the writer its size', async () => {
    const { store } = await fresh();
    await store.writer.run(
      `INSERT INTO svc_spans (timestamp, service_name, trace_id, span_id, span_name, status_code, duration_us, operation, is_error) ` +
        `SELECT make_timestamp(1700000000000000 + range), 'big', range::VARCHAR, range::VARCHAR, 'GET /a', 0, 1, 'GET /a', false FROM range(200000)`,
    );
    const w = createWriter(store, { flushIntervalMs: 1, rowGroupRows: 100 }); // the policy's groups: 100 rows
    const submit = (k: number) => w.submit(submitOf(spanBatch(50, (i) => ({ span_id: `w${k}-${i}` }))));
    for (let k = 0; k < 5; k++) await submit(k); // 200 rows of WAL: two groups, the first checkpoint
    expect(w.stats().checkpoints).toBe(1);
    // 200,200 rows stored at that checkpoint: a share is 401 rows, 500 in whole groups
    for (let k = 5; k < 13; k++) await submit(k); // 450 rows of WAL
    expect(w.stats().checkpoints).toBe(1);
    await submit(13); // 500: due
    await submit(14); // waited for it
    expect(w.stats().checkpoints).toBe(2);
  });

  it('leaves the WAL to DuckDB with checkpoints off', async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 1, checkpoints: false });
    for (let k = 0; k < 2 * CHECKPOINT_ROW_GROUPS + 1; k++) await w.submit(submitOf(spanBatch(STORE_ROW_GROUP_SIZE / 2, (i) => ({ span_id: `${k}-${i}` }))));
    expect(w.stats().checkpoints).toBe(0);
  });

  it('marks touched buckets dirty once, and again after an exclusive operation cleared them', async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 1 });
    const dirty = async () => (await store.writer.runAndReadAll(`SELECT bucket FROM svc_dirty_buckets ORDER BY 1`)).getRows().map((r) => Number(r[0]));
    await w.submit({ ...submitOf(spanBatch(1)), buckets: [5, 6] });
    await w.submit({ ...submitOf(spanBatch(1)), buckets: [6, 7] });
    expect(await dirty()).toEqual([5, 6, 7]);
    // The detection pass consumes marks on the writer connection; late data must mark its bucket again.
    await w.exclusive(() => store.writer.run('DELETE FROM svc_dirty_buckets'));
    await w.submit({ ...submitOf(spanBatch(1)), buckets: [6] });
    expect(await dirty()).toEqual([6]);
  });

  it('tells a bucket watch the buckets of commits under way at its start or started since, and every bucket after an exclusive step', async () => {
    const { store: base } = await fresh();
    // The first load of a commit of bucket 3 is held until released: that commit is under way when the watch starts.
    let release: () => void = () => {};
    const released = new Promise<void>((r) => (release = r));
    let loading: () => void = () => {};
    const loadingNow = new Promise<void>((r) => (loading = r));
    let armed = false;
    const store = watchLoaders(base, async (sql) => {
      if (!armed || !sql.startsWith('INSERT INTO')) return;
      armed = false;
      loading();
      await released;
    });
    const w = createWriter(store, { flushIntervalMs: 1 });
    await w.submit({ ...submitOf(spanBatch(1, () => ({ span_id: 'done' }))), buckets: [1] });
    armed = true;
    const underWay = w.submit({ ...submitOf(spanBatch(1, () => ({ span_id: 'held' }))), buckets: [3] });
    await loadingNow;
    const watch = w.watchBuckets();
    const later = w.submit({ ...submitOf(spanBatch(1, () => ({ span_id: 'later' }))), buckets: [5] });
    release();
    await Promise.all([underWay, later]);
    expect([1, 3, 5, 7].map((b) => watch.touched(b))).toEqual([false, true, true, false]);
    await w.exclusive(async () => {
      expect(watch.touched(7)).toBe(false); // a step reads the watch before its own writes count
    });
    expect(watch.touched(7)).toBe(true);
    watch.stop();
    // A checkpoint writes no row: it leaves a watch as it was.
    const again = w.watchBuckets();
    const G = STORE_ROW_GROUP_SIZE;
    for (let k = 0; k < 2 * CHECKPOINT_ROW_GROUPS + 1; k++) await w.submit(submitOf(spanBatch(G / 2, (i) => ({ span_id: `c${k}-${i}` }))));
    expect(w.stats().checkpoints).toBeGreaterThan(0);
    expect(again.touched(7)).toBe(false);
    again.stop();
  });

  it('commits on two loaders side by side; what others may update too goes one commit at a time, in order', async () => {
    const { store } = await fresh();
    expect(store.loaders).toHaveLength(2);
    // The loaders' statements are watched: the first COMMIT is held until the other loader starts a
    // load (at most 2 s), which a writer committing one group at a time never does.
    const loading = [false, false];
    let otherLoads: () => void = () => {};
    const otherLoaded = new Promise<void>((r) => (otherLoads = r));
    let held = false;
    const watched = watchLoaders(store, async (sql, i) => {
      if (sql.startsWith('INSERT INTO')) {
        loading[i] = true;
        if (loading.every(Boolean)) otherLoads();
      }
      if (sql === 'COMMIT' && !held) {
        held = true;
        await Promise.race([otherLoaded, new Promise((r) => setTimeout(r, 2000))]);
      }
    });
    const w = createWriter(watched, { flushIntervalMs: 60_000, rowGroupRows: 10 });
    // Every submission fills a row group, so each goes as soon as a loader is free. All update the
    // same service's bounds and the same template key, whose latest submission must win.
    const template = (n: number) => {
      const batch = batchOf(LOG_TEMPLATES, [{ timestamp: 1, first_seen: 1, last_seen: n, service_name: 'a', template_id: 1, pattern: `p${n}`, count: n, error_count: 0 }]);
      return { table: batch.table, rows: 1, csv: Buffer.from(encodeCsv(LOG_TEMPLATES, batch)), upsert: true };
    };
    const done: Promise<void>[] = [];
    for (let k = 0; k < 6; k++) {
      const spans = submitOf(spanBatch(10, (i) => ({ span_id: `${k}-${i}`, service_name: 'a', timestamp: 1_700_000_000_000_000 + k * 1000 + i })));
      done.push(w.submit({ ...spans, parts: [...spans.parts, template(k + 1)], buckets: [k % 2] }));
      await new Promise((r) => setImmediate(r)); // the next submission arrives once this one's commit started
    }
    await Promise.all(done);
    expect(loading).toEqual([true, true]);
    expect(w.stats()).toMatchObject({ rowsCommitted: 60, failedCommits: 0 });
    const svc = (await store.writer.runAndReadAll(`SELECT service_name, epoch_us(first_seen), epoch_us(last_seen) FROM svc_services`)).getRows();
    expect(svc.map((r) => [r[0], Number(r[1]), Number(r[2])])).toEqual([['a', 1_700_000_000_000_000, 1_700_000_000_005_009]]);
    const t = (await store.writer.runAndReadAll(`SELECT template_id, count, pattern FROM svc_log_templates`)).getRows();
    expect(t.map((r) => [Number(r[0]), Number(r[1]), r[2]])).toEqual([[1, 6, 'p6']]);
    const b = (await store.writer.runAndReadAll(`SELECT bucket FROM svc_dirty_buckets ORDER BY 1`)).getRows();
    expect(b.map((r) => Number(r[0]))).toEqual([0, 1]);
  });

  it('an exclusive operation waits for every commit under way, and commits wait for it', async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 60_000, rowGroupRows: 10 });
    const order: string[] = [];
    const tick = () => new Promise((r) => setImmediate(r));
    const track = (name: string, p: Promise<unknown>) => p.then(() => order.push(name));
    const a = track('a', w.submit(submitOf(spanBatch(10, (i) => ({ span_id: `a${i}` })))));
    await tick();
    const b = track('b', w.submit(submitOf(spanBatch(10, (i) => ({ span_id: `b${i}` })))));
    await tick();
    const ex = track(
      'exclusive',
      w.exclusive(async () => {
        const n = (await store.writer.runAndReadAll('SELECT count(*) FROM svc_spans')).getRows()[0]![0];
        order.push(`saw ${Number(n)}`);
      }),
    );
    const c = track('c', w.submit(submitOf(spanBatch(10, (i) => ({ span_id: `c${i}` })))));
    await Promise.all([a, b, ex, c]);
    // Both commits under way finished first, the exclusive operation saw their rows, and the commit
    // submitted after it was asked for went after it.
    expect(order.slice(0, 2).sort()).toEqual(['a', 'b']);
    expect(order.slice(2)).toEqual(['saw 20', 'exclusive', 'c']);
  });

  it('commits exactly a row group when the queue holds one (the rest on the next loader), else all of it', async () => {
    const { store } = await fresh();
    const inserts: number[] = []; // rows of each load statement, from its file
    const watched = watchLoaders(store, async (sql, i) => {
      if (!sql.startsWith('INSERT INTO')) return;
      const r = (await store.loaders[i]!.runAndReadAll(`SELECT count(*) FROM (${sql.slice(sql.indexOf(') SELECT ') + 2)})`)).getRows();
      inserts.push(Number(r[0]![0]));
    });
    const w = createWriter(watched, { flushIntervalMs: 60_000, rowGroupRows: 10 });
    let k = 0;
    const sub = (n: number) => submitOf(spanBatch(n, (i) => ({ span_id: `${k++}-${i}` })));
    // Queued in one tick: 4 + 6 and 5 + 5 are exactly a row group each; 3 + 4 + 25 never is, so it goes whole.
    await Promise.all([4, 6, 5, 5, 3, 4, 25].map((n) => w.submit(sub(n))).concat([w.flush()]));
    expect(inserts.sort((a, b) => a - b)).toEqual([10, 10, 32]);
    expect(w.stats()).toMatchObject({ commits: 3, rowsCommitted: 52, failedCommits: 0 });
    const n = (await store.writer.runAndReadAll('SELECT count(*) FROM svc_spans')).getRows();
    expect(Number(n[0]![0])).toBe(52);
  });

  it('flush() commits what waits for a row group, and resolves once it is committed', async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 60_000, rowGroupRows: 100 });
    await w.submit(submitOf(spanBatch(100, (i) => ({ span_id: `f${i}` })))); // a full commit: the next waits for more
    let done = false;
    const small = w.submit(submitOf(spanBatch(3, (i) => ({ span_id: `s${i}` })))).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBe(false);
    await w.flush();
    expect(done).toBe(true);
    await small;
    expect(w.stats()).toMatchObject({ commits: 2, rowsCommitted: 103 });
  });

  it('a bad submission fails alone; the others in its group commit', async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 20 });
    const good = w.submit(submitOf(spanBatch(4)));
    const bad = w.submit({ parts: [{ table: SPANS.name, rows: 1, csv: Buffer.from('"not a number",x\n') }], services: {} });
    await expect(good).resolves.toBeUndefined();
    await expect(bad).rejects.toThrow();
    const n = (await store.writer.runAndReadAll('SELECT count(*) FROM svc_spans')).getRows()[0]![0];
    expect(Number(n)).toBe(4);
  });

  it("a failure that leaves the writer's connection in an aborted transaction fails alone: commits, checkpoints and exclusive steps after it work", async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 1 });
    await w.submit(submitOf(spanBatch(4)));
    // As DuckDB out of memory left it in the soak: a transaction open on the writer's connection whose statement failed.
    const failing = w.exclusive(async () => {
      await store.writer.run('BEGIN TRANSACTION');
      await store.writer.run('SELECT * FROM no_such_table');
    });
    await expect(failing).rejects.toThrow(/no_such_table/);
    await w.submit(submitOf(spanBatch(3, (i) => ({ span_id: `after-${i}` }))));
    await w.exclusive(() => store.writer.run('CHECKPOINT'));
    const n = (await store.writer.runAndReadAll('SELECT count(*) FROM svc_spans')).getRows()[0]![0];
    expect(Number(n)).toBe(7);
    expect(Object.keys(w.services())).toContain(spanBatch(1).columns['service_name']![0]);
  });

  it('stores span and trace ids uncompressed, other strings as DuckDB chooses, also after reopening', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    let store = await openStore(t.dir);
    await store.close();
    store = await openStore(t.dir);
    cleanups.push(() => store.close());
    // Low-cardinality names (dictionary or constant) next to unique ids, parents included.
    await createWriter(store, { flushIntervalMs: 1 }).submit(submitOf(spanBatch(3000, (i) => ({ parent_span_id: (i + 7).toString(16).padStart(16, '0') }))));
    await store.writer.run('CHECKPOINT');
    const seg = (await store.writer.runAndReadAll(`SELECT column_name, list(DISTINCT compression ORDER BY compression) FROM pragma_storage_info('svc_spans') WHERE segment_type = 'VARCHAR' GROUP BY ALL`)).getRowsJS();
    const methods = new Map(seg.map((r) => [String(r[0]), (r[1] as string[]).join(',')]));
    for (const id of ['trace_id', 'span_id', 'parent_span_id']) expect(methods.get(id)).toBe('Uncompressed');
    expect(methods.get('service_name')).not.toBe('Uncompressed');
  });

  it('reopens a file with its data and refuses one from a newer schema', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    let store = await openStore(t.dir);
    await createWriter(store, { flushIntervalMs: 1 }).submit(submitOf(spanBatch(5)));
    await store.writer.run(`UPDATE svc_meta SET value = '999' WHERE key = 'schema_version'`);
    await store.close();
    await expect(openStore(t.dir)).rejects.toThrow(/newer version/);
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const inst = await DuckDBInstance.create(`${t.dir}/lake.duckdb`);
    const c = await inst.connect();
    await c.run(`UPDATE svc_meta SET value = '1' WHERE key = 'schema_version'`);
    await c.run('ALTER TABLE svc_spans DROP COLUMN gen_ai_model');
    c.closeSync();
    inst.closeSync();
    store = await openStore(t.dir);
    cleanups.push(() => store.close());
    const r = (await store.writer.runAndReadAll('SELECT count(*), count(gen_ai_model) FROM svc_spans')).getRows()[0]!;
    expect([Number(r[0]), Number(r[1])]).toEqual([5, 0]);
  });

  it('writes its file in the storage format it names, also a file written before in DuckDB\'s default format', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const format = async () => {
      const inst = await DuckDBInstance.create(':memory:');
      const c = await inst.connect();
      await c.run(`ATTACH '${t.dir}/lake.duckdb' AS f (READ_ONLY)`);
      const tags = String((await c.runAndReadAll(`SELECT tags FROM duckdb_databases() WHERE database_name = 'f'`)).getRows()[0]![0]);
      c.closeSync();
      inst.closeSync();
      return tags;
    };
    const old = await DuckDBInstance.create(`${t.dir}/lake.duckdb`);
    (await old.connect()).closeSync();
    old.closeSync();
    expect(await format()).toContain("'v1.0.0+'");
    const store = await openStore(t.dir);
    await createWriter(store, { flushIntervalMs: 1 }).submit(submitOf(spanBatch(5)));
    await store.close();
    expect(await format()).toContain(`'${STORE_STORAGE_VERSION}+'`);
  });
});

describe('retention', () => {
  it('deletes rows older than the retention and keeps the rest', async () => {
    const { store } = await fresh();
    const w = createWriter(store, { flushIntervalMs: 1 });
    const now = Date.now() * 1000;
    const hour = 3_600_000_000;
    await w.submit(submitOf(spanBatch(4, (i) => ({ timestamp: now - (i < 2 ? 100 : 1) * hour, service_name: i < 2 ? 'old' : 'new' }))));
    const { applyRetention } = await import('../../src/store/retention.js');
    expect(await applyRetention(store, 72, now)).toBe(3); // two spans and the 'old' service entry
    const rows = (await store.writer.runAndReadAll('SELECT service_name FROM svc_spans UNION ALL SELECT service_name FROM svc_services')).getRows().map((r) => r[0]);
    expect(rows.sort()).toEqual(['new', 'new', 'new']);
  });
});
