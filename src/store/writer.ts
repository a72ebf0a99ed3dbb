// Group commit: submissions from concurrent requests are loaded in one transaction, and each
// submitter's promise resolves only after that transaction committed (DuckDB syncs its WAL at
// commit), so an acknowledged batch survives a crash. Commits run side by side, one on each of the
// store's loader connections (DuckDB appends from concurrent transactions do not conflict; on 2
// cores, two loaders took 10–15% more spans/s than one, whose DuckDB thread was the limit);
// submissions arriving meanwhile share the next free one. A free loader commits at once when a row
// group's worth of rows for one table is queued, since DuckDB writes such a commit straight into the
// database file (see STORE_ROW_GROUP_SIZE); with less, it waits up to flushIntervalMs for
// submissions on their way (expect()) when they could fill one (schedule()).
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Store } from './db.js';
import { STORE_ROW_GROUP_SIZE } from './db.js';
import type { ServiceSpans } from './batch.js';
import { mergeServiceSpans } from './batch.js';
import { loadSql, upsertSql } from './csv.js';
import { DIRTY_BUCKETS, SERVICES, tableByName } from './schema.js';
import { inTransaction, sqlString, sqlTimestamp } from './sql.js';

/** CSV rows of one table, as encoded by store/csv.ts (in a worker). */
export interface EncodedPart {
  table: string;
  rows: number;
  csv: Uint8Array;
  /** Replace rows with the same primary key (INSERT OR REPLACE), in submission order; a part holds a key at most once. */
  upsert?: boolean;
}

export interface Submission {
  parts: EncodedPart[];
  services: ServiceSpans;
  /** 5-minute bucket indexes the rows touch; marked dirty for the detection pass before the rows are acknowledged. */
  buckets?: number[];
}

export interface WriterStats {
  commits: number;
  rowsCommitted: number;
  failedCommits: number;
  pendingSubmissions: number;
  /** Wall time of the last commit: load statements plus COMMIT. */
  lastCommitMs: number;
  /** Of which the COMMIT itself (WAL write and sync). */
  lastSyncMs: number;
  lastCommitRows: number;
}

export interface Writer {
  /** Resolves once every row of the submission is committed; rejects if it could not be. */
  submit(sub: Submission): Promise<void>;
  /** Commits whatever is pending now; resolves once that and every commit under way are done. */
  flush(): Promise<void>;
  /**
   * Announces a submission on its way (being decoded): a free loader with less than a row group queued
   * may wait for it, up to flushIntervalMs. Call the returned function once it is submitted or given up.
   */
  expect(): () => void;
  stats(): WriterStats;
  /** Runs `fn` on the writer connection once no commit is under way; commits wait for it (retention, detection writes). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Every service's first and last time seen, as the services table holds them: the table at start
   * (opts.services) widened by each commit of its bounds. GET /v1/services answers from it without a
   * query, which under ingest waited behind the loaders for tens of milliseconds.
   */
  services(): Readonly<ServiceSpans>;
}

interface Pending {
  sub: Submission;
  resolve(): void;
  reject(err: unknown): void;
  /** Settles with the submission, never rejects (what flush() waits for). */
  settled: Promise<void>;
}

export function createWriter(store: Store, opts: { flushIntervalMs: number; rowGroupRows?: number; services?: ServiceSpans }): Writer {
  const rowGroupRows = opts.rowGroupRows ?? STORE_ROW_GROUP_SIZE;
  const known = mergeServiceSpans({}, opts.services ?? {}); // the services table, as committed
  const free = [...store.loaders];
  let queue: Pending[] = [];
  const running = new Set<Promise<void>>(); // commits under way, one a loader
  let timer: NodeJS.Timeout | null = null;
  let forceNext = false; // flush(): the next commit starts as soon as a loader is free
  let expected = 0; // submissions on their way
  let rowsPerSubmission = 0; // moving average, to guess what those bring
  let lastFilled = false; // the last commit held a row group's worth for some table
  let metaTurn: Promise<void> = Promise.resolve(); // the serialised writes, in commit order
  const exclusives: (() => Promise<void>)[] = [];
  let exclusiveRunning = false;
  let fileSeq = 0;
  // Buckets whose dirty mark is committed. Open buckets are touched by every commit; remembering them
  // saves a statement a commit. Forgotten whenever an exclusive operation (the detection pass,
  // retention) may have deleted marks.
  let marked = new Set<number>();
  const st: WriterStats = { commits: 0, rowsCommitted: 0, failedCommits: 0, pendingSubmissions: 0, lastCommitMs: 0, lastSyncMs: 0, lastCommitRows: 0 };

  /**
   * Commits the submissions' appends on `loader` in one transaction. What other transactions may
   * write too (service bounds, dirty marks, upserts) goes in its own transaction on the writer
   * connection, one commit's at a time in the order commits started, committed just before the
   * appends: concurrent transactions updating one row conflict in DuckDB, appends never do. Should
   * the appends then fail, the bounds are a little wide and a bucket is examined again; both harmless.
   */
  async function commit(items: readonly Pending[], loader: DuckDBConnection): Promise<void> {
    const byTable = new Map<string, Uint8Array[]>();
    const upserts = new Map<string, Uint8Array[]>();
    let rows = 0;
    const services: ServiceSpans = {};
    const buckets = new Set<number>();
    for (const { sub } of items) {
      for (const b of sub.buckets ?? []) if (!marked.has(b)) buckets.add(b);
      for (const p of sub.parts) {
        if (!p.rows) continue;
        // Upsert parts stay one file each, in submission order, so the latest row of a key wins.
        const into = p.upsert ? upserts : byTable;
        let list = into.get(p.table);
        if (!list) into.set(p.table, (list = []));
        list.push(p.csv);
        if (!p.upsert) rows += p.rows;
      }
      mergeServiceSpans(services, sub.services);
    }
    const files: string[] = [];
    /** Writes one CSV file to the spool; returns its path. */
    const spool = async (name: string, chunks: readonly Uint8Array[]) => {
      const file = join(store.spoolDir, `${process.pid}-${++fileSeq}-${name}.csv`);
      files.push(file);
      // Written as they came (writev), not concatenated first: that copy of every commit's rows caused
      // a third of the event loop's full garbage collections (116 → 77 in 15 s of OTLP/HTTP load).
      const fh = await open(file, 'w');
      try {
        const { bytesWritten } = await fh.writev(chunks as Uint8Array[]);
        const size = chunks.reduce((a, c) => a + c.byteLength, 0);
        if (bytesWritten !== size) throw new Error(`spool file ${file}: wrote ${bytesWritten} of ${size} bytes`);
      } finally {
        await fh.close();
      }
      return file;
    };
    const prepared = (async () => {
      const meta: string[] = [];
      const appends: string[] = [];
      for (const [name, parts] of upserts) {
        const paths: string[] = [];
        for (const csv of parts) paths.push(await spool(name, [csv]));
        meta.push(upsertSql(tableByName(name), paths));
      }
      const merge = mergeServicesSql(services);
      if (merge) meta.push(merge);
      if (buckets.size) meta.push(`INSERT OR IGNORE INTO ${DIRTY_BUCKETS.name} VALUES ${[...buckets].map((b) => `(${b})`).join(', ')}`);
      for (const [name, chunks] of byTable) appends.push(loadSql(tableByName(name), [await spool(name, chunks)]));
      return { meta, appends };
    })();
    // The small transaction takes its turn now (commit order), runs while the rows load, and commits
    // before them. Waiting for it first (its COMMIT queues behind the other loader's in DuckDB) took a
    // sixth of the loaders' time.
    const metaCommitted = metaTurn.then(async () => {
      const { meta } = await prepared;
      if (meta.length) await inTransaction(store.writer, () => runAll(store.writer, meta));
      for (const b of buckets) marked.add(b);
      mergeServiceSpans(known, services);
    });
    metaTurn = metaCommitted.catch(() => {}); // the next commit's turn comes whatever became of this one
    try {
      const { meta, appends } = await prepared;
      if (!appends.length) {
        await metaCommitted;
        if (meta.length) st.commits++;
        return;
      }
      const started = performance.now();
      let committing = 0;
      try {
        await inTransaction(loader, async () => {
          await runAll(loader, appends);
          await metaCommitted;
          committing = performance.now();
        });
      } finally {
        await metaCommitted.catch(() => {}); // settled before the files go
      }
      st.lastSyncMs = performance.now() - committing;
      st.commits++;
      st.rowsCommitted += rows;
      st.lastCommitMs = performance.now() - started;
      st.lastCommitRows = rows;
    } finally {
      await Promise.all(files.map((f) => rm(f, { force: true })));
    }
  }

  async function commitGroup(items: readonly Pending[], loader: DuckDBConnection): Promise<void> {
    try {
      await commit(items, loader);
      for (const it of items) it.resolve();
    } catch (groupErr) {
      st.failedCommits++;
      if (items.length === 1) {
        items[0]!.reject(groupErr);
        return;
      }
      // One bad submission must not fail the others that shared its commit: retry each alone.
      for (const it of items) {
        try {
          await commit([it], loader);
          it.resolve();
        } catch (err) {
          st.failedCommits++;
          it.reject(err);
        }
      }
    }
  }

  /**
   * What a commit takes: the queue up to the submission at which some table holds exactly a row
   * group's rows, if one does (512-span batches, 16 at a time; a Collector batch of 8,192 alone);
   * otherwise all of it. DuckDB commits exactly one row group's rows for ~30% less CPU a row than
   * two groups, or a group and a part (raw DuckDB, 2 connections side by side, 131,072 realistic
   * spans: commits of 8,192 rows 11.6-14.2 µs a row against 16.5-19.2 for 16,384 and 15.9-18.6 for
   * 9,216), half of it in the kernel: a bigger commit's buffers are fresh memory, twice the page
   * faults a row. Short of an exact group, any cut leaves a partial group too, so the commit takes
   * everything queued, as before: fewer, larger commits pay the per-commit statements less often.
   * `filled`: the items bring some table a row group or more (see schedule()).
   */
  function takeCommit(): { items: Pending[]; filled: boolean } {
    const rows = new Map<string, number>();
    for (let n = 0; n < queue.length; ) {
      if (addRows(rows, queue[n++]!.sub).some((t) => rows.get(t) === rowGroupRows)) return { items: queue.splice(0, n), filled: true };
    }
    return { items: queue.splice(0), filled: Math.max(0, ...rows.values()) >= rowGroupRows };
  }

  let claiming = false; // a commit has a loader and takes the queue in a moment
  const canStart = () => !claiming && free.length > 0 && !exclusives.length && !exclusiveRunning && queue.length > 0;

  /** Commits what is queued (up to an exact row group: takeCommit) on a free loader. */
  function start(): void {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!canStart()) return;
    claiming = true;
    const loader = free.pop()!;
    const run = (async () => {
      await null; // submissions of this same tick join the commit
      claiming = false;
      const { items, filled } = takeCommit();
      if (!queue.length) forceNext = false;
      st.pendingSubmissions = queue.length;
      lastFilled = filled;
      schedule(); // a row group's worth left behind goes on the other loader
      if (items.length) await commitGroup(items, loader);
    })().finally(() => {
      free.push(loader);
      running.delete(run);
      // What queued meanwhile goes next: usually a row group's worth at once under load; less waits
      // for what is being decoded. With 32 senders, commits back to back held ~5,000 spans, went
      // through the WAL, and a checkpoint stopped all commits for ~1.5 s every few seconds
      // (70,000-76,000 spans/s, ack p99 ~1.4 s, against 82,000-93,000 and ~0.25 s).
      if (!running.size && exclusives.length) void runExclusives();
      else schedule();
    });
    running.add(run);
  }

  /**
   * Starts a commit of what is queued when a loader is free: now if it fills a row group, or if what
   * is on its way would not fill one either (waiting would only stop commits overlapping decoding: 8
   * senders of 1,000 log lines did 80,000 instead of 96,000-100,000 lines/s); else after
   * flushIntervalMs at the latest. After a commit that filled one, the next waits too: those on
   * their way are not all counted yet (acknowledged senders' next batches are still in transit), and
   * with 16 log senders commits then alternated between 7,000 lines through the WAL and 9,000 written
   * directly, with a 3 s checkpoint (98,000 against 113,000-119,000 lines/s once all went directly).
   */
  function schedule(): void {
    if (!canStart()) return;
    const most = mostRowsOneTable(queue);
    if (forceNext || most >= rowGroupRows || (!lastFilled && most + expected * rowsPerSubmission < rowGroupRows)) start();
    else timer ??= setTimeout(start, opts.flushIntervalMs);
  }

  /** Runs the waiting exclusive operations once no commit is under way; commits resume after them. */
  async function runExclusives(): Promise<void> {
    exclusiveRunning = true;
    if (timer) clearTimeout(timer);
    timer = null;
    while (exclusives.length) await exclusives.shift()!();
    exclusiveRunning = false;
    schedule();
  }

  return {
    submit(sub) {
      let resolve!: () => void;
      let reject!: (err: unknown) => void;
      const done = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
      queue.push({ sub, resolve, reject, settled: done.catch(() => {}) });
      st.pendingSubmissions = queue.length;
      const rows = sub.parts.reduce((n, p) => n + (p.upsert ? 0 : p.rows), 0);
      rowsPerSubmission = rowsPerSubmission ? 0.9 * rowsPerSubmission + 0.1 * rows : rows;
      schedule();
      return done;
    },
    async flush() {
      const waits = [...running, ...queue.map((p) => p.settled)];
      forceNext = queue.length > 0;
      schedule();
      await Promise.all(waits);
    },
    expect() {
      expected++;
      let done = false;
      return () => {
        if (done) return;
        done = true;
        expected--;
        schedule();
      };
    },
    stats: () => ({ ...st }),
    services: () => known,
    exclusive<T>(fn: () => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        exclusives.push(async () => {
          marked = new Set();
          await fn().then(resolve, reject);
        });
        if (!running.size && !exclusiveRunning) void runExclusives();
      });
    },
  };
}

async function runAll(conn: DuckDBConnection, statements: readonly string[]): Promise<void> {
  for (const s of statements) await conn.run(s);
}

/** The most rows the submissions append to any one table (upserts aside): what decides a direct write. */
function mostRowsOneTable(items: readonly Pending[]): number {
  const rows = new Map<string, number>();
  for (const { sub } of items) addRows(rows, sub);
  return Math.max(0, ...rows.values());
}

/** Adds the rows a submission appends (upserts aside) to the per-table counts; returns the tables it appends to. */
function addRows(rows: Map<string, number>, sub: Submission): string[] {
  const tables: string[] = [];
  for (const p of sub.parts) {
    if (p.upsert) continue;
    rows.set(p.table, (rows.get(p.table) ?? 0) + p.rows);
    tables.push(p.table);
  }
  return tables;
}

/** One MERGE (a statement costs DuckDB ~1.5 ms however small): widen known services, add new ones. */
function mergeServicesSql(services: ServiceSpans): string | null {
  const entries = Object.entries(services);
  if (!entries.length) return null;
  const values = entries.map(([s, [a, b]]) => `(${sqlString(s)}, ${sqlTimestamp(a)}, ${sqlTimestamp(b)})`).join(', ');
  return (
    `MERGE INTO ${SERVICES.name} AS s USING (VALUES ${values}) AS v(service_name, first_seen, last_seen) ON s.service_name = v.service_name ` +
      `WHEN MATCHED THEN UPDATE SET first_seen = least(s.first_seen, v.first_seen), last_seen = greatest(s.last_seen, v.last_seen), timestamp = least(s.first_seen, v.first_seen) ` +
      `WHEN NOT MATCHED THEN INSERT (timestamp, service_name, first_seen, last_seen) VALUES (v.first_seen, v.service_name, v.first_seen, v.last_seen)`
  );
}
