// Group commit: submissions from concurrent requests are loaded in one transaction, and each
// submitter's promise resolves only after that transaction committed (DuckDB syncs its WAL at
// commit), so an acknowledged batch survives a crash. One flush runs at a time on the writer
// connection; submissions arriving meanwhile share the next one. A free writer commits at once when
// a row group's worth of rows for one table is queued, since DuckDB writes such a commit straight
// into the database file (see STORE_ROW_GROUP_SIZE); with less, it waits up to flushIntervalMs for
// submissions on their way (expect()) when they could fill one (schedule()).
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Store } from './db.js';
import { inTransaction, sqlString, sqlTimestamp, STORE_ROW_GROUP_SIZE } from './db.js';
import type { ServiceSpans } from './batch.js';
import { mergeServiceSpans } from './batch.js';
import { loadSql, upsertSql } from './csv.js';
import { DIRTY_BUCKETS, SERVICES, tableByName } from './schema.js';

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
  /** 5-minute bucket indexes the rows touch; marked dirty for the detection pass in the same commit. */
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
  /** Commits whatever is pending now. */
  flush(): Promise<void>;
  /**
   * Announces a submission on its way (being decoded): a free writer holding less than a row group
   * may wait for it, up to flushIntervalMs. Call the returned function once it is submitted or given up.
   */
  expect(): () => void;
  stats(): WriterStats;
  /** Runs `fn` on the writer connection between commits (retention, detection writes). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
}

interface Pending {
  sub: Submission;
  resolve(): void;
  reject(err: unknown): void;
}

export function createWriter(store: Store, opts: { flushIntervalMs: number; rowGroupRows?: number }): Writer {
  const rowGroupRows = opts.rowGroupRows ?? STORE_ROW_GROUP_SIZE;
  let queue: Pending[] = [];
  let timer: NodeJS.Timeout | null = null;
  let busy = false; // a flush is running or about to
  let expected = 0; // submissions on their way
  let rowsPerSubmission = 0; // moving average, to guess what those bring
  let lastFilled = false; // the last commit held a row group's worth for some table
  let chain: Promise<void> = Promise.resolve();
  let fileSeq = 0;
  // Buckets whose dirty mark is committed. Open buckets are touched by every commit; remembering them
  // saves a statement a commit. Forgotten whenever an exclusive operation (the detection pass,
  // retention) may have deleted marks.
  let marked = new Set<number>();
  const st: WriterStats = { commits: 0, rowsCommitted: 0, failedCommits: 0, pendingSubmissions: 0, lastCommitMs: 0, lastSyncMs: 0, lastCommitRows: 0 };

  async function commit(items: readonly Pending[]): Promise<void> {
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
    const statements: string[] = [];
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
    try {
      for (const [name, chunks] of byTable) statements.push(loadSql(tableByName(name), [await spool(name, chunks)]));
      for (const [name, parts] of upserts) {
        const paths: string[] = [];
        for (const csv of parts) paths.push(await spool(name, [csv]));
        statements.push(upsertSql(tableByName(name), paths));
      }
      const merge = mergeServicesSql(services);
      if (merge) statements.push(merge);
      if (buckets.size) statements.push(`INSERT OR IGNORE INTO ${DIRTY_BUCKETS.name} VALUES ${[...buckets].map((b) => `(${b})`).join(', ')}`);
      if (!statements.length) return;
      const started = performance.now();
      let committing = 0;
      await inTransaction(store.writer, async () => {
        for (const s of statements) await store.writer.run(s);
        committing = performance.now();
      });
      st.lastSyncMs = performance.now() - committing;
      for (const b of buckets) marked.add(b);
      st.commits++;
      st.rowsCommitted += rows;
      st.lastCommitMs = performance.now() - started;
      st.lastCommitRows = rows;
    } finally {
      await Promise.all(files.map((f) => rm(f, { force: true })));
    }
  }

  async function flushNow(): Promise<void> {
    timer = null;
    const items = queue;
    queue = [];
    lastFilled = mostRowsOneTable(items) >= rowGroupRows;
    st.pendingSubmissions = 0;
    if (!items.length) return;
    try {
      await commit(items);
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
          await commit([it]);
          it.resolve();
        } catch (err) {
          st.failedCommits++;
          it.reject(err);
        }
      }
    }
  }

  const start = () => {
    busy = true; // claimed at once: what is submitted until the commit starts joins it
    void enqueueFlush();
  };

  /**
   * Starts a commit of what is queued: now if it fills a row group, or if what is on its way would
   * not fill one either (waiting would only stop commits overlapping decoding: 8 senders of 1,000 log
   * lines did 80,000 instead of 96,000-100,000 lines/s); else after flushIntervalMs at the latest.
   * After a commit that filled one, the next waits too: those on their way are not all counted yet
   * (acknowledged senders' next batches are still in transit), and with 16 log senders commits then
   * alternated between 7,000 lines through the WAL and 9,000 written directly, with a 3 s checkpoint
   * (98,000 against 113,000-119,000 lines/s once all went directly).
   */
  function schedule(): void {
    if (busy || !queue.length) return;
    const most = mostRowsOneTable(queue);
    if (most >= rowGroupRows || (!lastFilled && most + expected * rowsPerSubmission < rowGroupRows)) start();
    else timer ??= setTimeout(start, opts.flushIntervalMs);
  }

  function enqueueFlush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = null;
    const run = async () => {
      busy = true;
      try {
        await flushNow();
      } finally {
        busy = false;
        // What queued during the commit goes next. Under load that is usually a row group's worth, at
        // once; less waits for what is being decoded: with 32 senders, commits back to back held ~5,000
        // spans, went through the WAL, and a checkpoint stopped all commits for ~1.5 s every few seconds
        // (70,000-76,000 spans/s, ack p99 ~1.4 s, against 82,000-93,000 and ~0.25 s).
        schedule();
      }
    };
    chain = chain.then(run, run);
    return chain;
  }

  return {
    submit(sub) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ sub, resolve, reject });
        st.pendingSubmissions = queue.length;
        const rows = sub.parts.reduce((n, p) => n + (p.upsert ? 0 : p.rows), 0);
        rowsPerSubmission = rowsPerSubmission ? 0.9 * rowsPerSubmission + 0.1 * rows : rows;
        schedule();
      });
    },
    async flush() {
      await enqueueFlush();
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
    exclusive<T>(fn: () => Promise<T>): Promise<T> {
      const wrapped = () => {
        marked = new Set();
        return fn();
      };
      const run = chain.then(wrapped, wrapped);
      chain = run.then(
        () => {},
        () => {},
      );
      return run;
    },
  };
}

/** The most rows the submissions append to any one table (upserts aside): what decides a direct write. */
function mostRowsOneTable(items: readonly Pending[]): number {
  const byTable = new Map<string, number>();
  for (const { sub } of items) for (const p of sub.parts) if (!p.upsert) byTable.set(p.table, (byTable.get(p.table) ?? 0) + p.rows);
  return Math.max(0, ...byTable.values());
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
