// Group commit: submissions from concurrent requests are loaded in one transaction, and each
// submitter's promise resolves only after that transaction committed (DuckDB syncs its WAL at
// commit), so an acknowledged batch survives a crash. Commits run side by side, one on each of the
// store's loader connections (DuckDB appends from concurrent transactions do not conflict; on 2
// cores, two loaders take more spans/s in bench:ingest than one, whose DuckDB thread is the limit);
// submissions arriving meanwhile share the next free one. When a free loader commits and what it
// takes is commit-policy.ts (pure); the commit's I/O is commit.ts; this file holds the queue, the
// loaders, the timer and the exclusive operations.
import { statfs } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Store } from './db.js';
import { STORE_ROW_GROUP_SIZE } from './db.js';
import type { ServiceSpans } from './batch.js';
import { emptyServiceSpans, mergeServiceSpans } from './batch.js';
import { CommitPolicy } from './commit-policy.js';
import { createCommitter, type CommitStats, type Submission } from './commit.js';
import { isInvalidated, rollbackLeftovers } from './sql.js';

export type { EncodedPart, Submission } from './commit.js';

export interface WriterStats extends CommitStats {
  failedCommits: number;
  pendingSubmissions: number;
  /** Checkpoints the writer ran (CommitPolicy.checkpointDue), and the last one's wall time. */
  checkpoints: number;
  lastCheckpointMs: number;
  /** DuckDB invalidated the database (a checkpoint failed): nothing works on it until it is opened again (tenancy/registry.ts does). */
  invalidated: boolean;
}

export interface Writer {
  /** Resolves once every row of the submission is committed; rejects if it could not be. */
  submit(sub: Submission): Promise<void>;
  /** Commits whatever is pending now; resolves once that, every commit under way and a checkpoint they made due are done. */
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
   * Watches which 5-minute buckets commits append to from now on, the commits under way included: a
   * reader that aggregates buckets from a snapshot taken after this call learns which of them may
   * hold rows it did not see (the detection pass, which then leaves those buckets dirty).
   */
  watchBuckets(): BucketWatch;
  /**
   * Every service's first and last time seen, as the services table holds them: the table at start
   * (opts.services) widened by each commit of its bounds. GET /v1/services answers from it without a
   * query, which under ingest waited behind the loaders for tens of milliseconds.
   */
  services(): Readonly<ServiceSpans>;
}

export interface BucketWatch {
  /** Whether a commit under way at the watch's start, or started since, appends to `bucket`; any bucket once an exclusive step (not a checkpoint) has run: it may have written rows or marks. */
  touched(bucket: number): boolean;
  stop(): void;
}

interface Pending {
  sub: Submission;
  resolve(): void;
  reject(err: unknown): void;
  /** Settles with the submission, never rejects (what flush() waits for). */
  settled: Promise<void>;
}

export interface WriterOptions {
  flushIntervalMs: number;
  rowGroupRows?: number;
  services?: ServiceSpans;
  /** false: no checkpoint but DuckDB's own (STORE_CHECKPOINT_THRESHOLD of WAL); default true (commit-policy.ts). */
  checkpoints?: boolean;
}

export function createWriter(store: Store, opts: WriterOptions): Writer {
  const policy = new CommitPolicy(opts.rowGroupRows ?? STORE_ROW_GROUP_SIZE);
  const known = mergeServiceSpans(emptyServiceSpans(), opts.services ?? {}); // the services table, as committed
  const free = [...store.loaders];
  const queue: Pending[] = [];
  const running = new Set<Promise<void>>(); // commits under way, one a loader
  let timer: NodeJS.Timeout | null = null;
  const exclusives: (() => Promise<void>)[] = [];
  let exclusiveRunning = false;
  const st: WriterStats = { commits: 0, rowsCommitted: 0, failedCommits: 0, pendingSubmissions: 0, lastCommitMs: 0, lastSyncMs: 0, lastCommitRows: 0, checkpoints: 0, lastCheckpointMs: 0, invalidated: false };
  let checkpoint: Promise<void> | null = null; // queued or running
  const committing = new Map<DuckDBConnection, number[]>(); // the buckets each loader's commit under way appends to
  const watches = new Set<{ buckets: Set<number> | null }>(); // null: every bucket (watchBuckets)
  const committer = createCommitter(store, known, st);
  const commit = (items: readonly Pending[], loader: DuckDBConnection) => committer.commit(items.map((it) => it.sub), loader);

  async function commitGroup(items: readonly Pending[], loader: DuckDBConnection): Promise<void> {
    try {
      await commit(items, loader);
      for (const it of items) it.resolve();
    } catch (groupErr) {
      st.failedCommits++;
      if (isInvalidated(groupErr)) st.invalidated = true;
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

  let claiming = false; // a commit has a loader and takes the queue in a moment
  const canStart = () => !claiming && free.length > 0 && !exclusives.length && !exclusiveRunning && queue.length > 0;

  /** Commits what is queued (as much as the policy takes) on a free loader. */
  function start(): void {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!canStart()) return;
    claiming = true;
    const loader = free.pop()!;
    const run = (async () => {
      await null; // submissions of this same tick join the commit
      claiming = false;
      const items = queue.splice(0, policy.take(queue));
      st.pendingSubmissions = queue.length;
      const buckets = items.flatMap((it) => it.sub.buckets ?? []);
      committing.set(loader, buckets);
      for (const w of watches) for (const b of buckets) w.buckets?.add(b);
      if (policy.checkpointDue()) queueCheckpoint(); // before schedule(): commits wait for it
      schedule(); // a row group's worth left behind goes on the other loader
      if (items.length) await commitGroup(items, loader);
    })().finally(() => {
      committing.delete(loader);
      free.push(loader);
      running.delete(run);
      // What queued meanwhile goes next: usually a row group's worth at once under load; less waits
      // for what is being decoded. Committing at once instead, 32 senders' commits held less than a
      // row group, went through the WAL, and its checkpoints stopped all commits every few seconds
      // (fewer spans/s and a far longer ack p99 in bench:ingest).
      if (!running.size && exclusives.length) void runExclusives();
      else schedule();
    });
    running.add(run);
  }

  /**
   * Checkpoints once the commits under way are done, before the next starts (CommitPolicy: a row
   * group's worth in the WAL). Skipped when the disk has little room: a checkpoint that runs out of
   * space leaves DuckDB's file unusable until it is attached again, where a commit would only fail
   * (store/README.md); DuckDB's own threshold still applies then.
   */
  function queueCheckpoint(): void {
    if (checkpoint || opts.checkpoints === false) return;
    checkpoint = queueExclusive(async () => {
      policy.checkpointed();
      const fs = await statfs(store.dir);
      if (fs.bavail * fs.bsize < CHECKPOINT_MIN_FREE_BYTES) return;
      const t = performance.now();
      await store.writer.run('CHECKPOINT');
      st.checkpoints++;
      st.lastCheckpointMs = performance.now() - t;
      const sizes = await store.writer.runAndReadAll(`SELECT table_name, estimated_size FROM duckdb_tables() WHERE database_name = current_database()`);
      for (const [table, rows] of sizes.getRows()) policy.stored(String(table), Number(rows));
    }, false)
      .catch(() => {}) // the WAL stays as it was: the next due checkpoint takes it
      .finally(() => (checkpoint = null));
  }

  /** Queues `fn` to run once no commit is under way; `forget`: it may write rows or delete dirty marks (a checkpoint does neither). */
  function queueExclusive<T>(fn: () => Promise<T>, forget: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      exclusives.push(async () => {
        // No commit runs during an exclusive step: a failure of its own (a checkpoint, retention or a
        // detection pass out of memory) cannot leave the writer's connection in a failed transaction.
        // What it may have written is known only after it (a step reads a watch before its own writes count).
        await fn()
          .finally(() => {
            if (!forget) return;
            committer.forgetMarks();
            for (const w of watches) w.buckets = null;
          })
          .then(resolve, (err: unknown) => {
            if (isInvalidated(err)) st.invalidated = true;
            return rollbackLeftovers(store.writer).then(() => reject(err));
          });
      });
      if (!running.size && !exclusiveRunning) void runExclusives();
    });
  }

  /** Starts a commit of what is queued when a loader is free, now or after flushIntervalMs at the latest (policy.commitNow). */
  function schedule(): void {
    if (!canStart()) return;
    if (policy.commitNow(queue)) start();
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
      policy.submitted(sub);
      schedule();
      return done;
    },
    async flush() {
      const waits = [...running, ...queue.map((p) => p.settled)];
      policy.flushing(queue.length);
      schedule();
      await Promise.all(waits);
      await checkpoint; // one these commits made due: done before the store closes
    },
    expect() {
      policy.expecting();
      let done = false;
      return () => {
        if (done) return;
        done = true;
        policy.arrived();
        schedule();
      };
    },
    stats: () => ({ ...st }),
    services: () => known,
    exclusive: (fn) => queueExclusive(fn, true),
    watchBuckets() {
      const w: { buckets: Set<number> | null } = { buckets: new Set([...committing.values()].flat()) };
      watches.add(w);
      return { touched: (b) => w.buckets?.has(b) ?? true, stop: () => void watches.delete(w) };
    },
  };
}

/** Free space below which the writer leaves checkpoints to DuckDB: a row group's worth of WAL is a few MB. */
const CHECKPOINT_MIN_FREE_BYTES = 64 * 1024 * 1024;
