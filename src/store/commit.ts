// The commit I/O of the group-commit writer (writer.ts; what and when: commit-policy.ts): one
// commit's rows written to spool CSV files and loaded on a loader connection in one transaction,
// with what other transactions may write too (service bounds, dirty marks, upserts) in a small
// transaction on the writer connection.
import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Store } from './db.js';
import type { ServiceSpans } from './batch.js';
import { emptyServiceSpans, mergeServiceSpans } from './batch.js';
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

/** What the commits count (part of WriterStats). */
export interface CommitStats {
  commits: number;
  rowsCommitted: number;
  /** Wall time of the last commit: load statements plus COMMIT. */
  lastCommitMs: number;
  /** Of which the COMMIT itself (WAL write and sync). */
  lastSyncMs: number;
  lastCommitRows: number;
}

export interface Committer {
  /** Commits the submissions' rows on `loader`; rejects if they could not be. */
  commit(subs: readonly Submission[], loader: DuckDBConnection): Promise<void>;
  /** Forgets which dirty marks are committed (an exclusive operation may have deleted some). */
  forgetMarks(): void;
}

/** `known`: the services table as committed, widened by each commit; `st`: counted into. */
export function createCommitter(store: Store, known: ServiceSpans, st: CommitStats): Committer {
  let metaTurn: Promise<void> = Promise.resolve(); // the serialised writes, in commit order
  let fileSeq = 0;
  // Buckets whose dirty mark is committed. Open buckets are touched by every commit; remembering them
  // saves a statement a commit. Forgotten whenever an exclusive operation (the detection pass,
  // retention) may have deleted marks.
  let marked = new Set<number>();

  return {
    /**
     * Commits the submissions' appends on `loader` in one transaction. What other transactions may
     * write too (service bounds, dirty marks, upserts) goes in its own transaction on the writer
     * connection, one commit's at a time in the order commits started, committed just before the
     * appends: concurrent transactions updating one row conflict in DuckDB, appends never do. Should
     * the appends then fail, the bounds are a little wide and a bucket is examined again; both harmless.
     */
    async commit(subs: readonly Submission[], loader: DuckDBConnection): Promise<void> {
      const byTable = new Map<string, Uint8Array[]>();
      const upserts = new Map<string, Uint8Array[]>();
      let rows = 0;
      const services = emptyServiceSpans();
      const buckets = new Set<number>();
      for (const sub of subs) {
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
        // a large share of the event loop's full garbage collections under OTLP/HTTP load.
        const fh = await open(file, 'w');
        try {
          await writeAll(fh, chunks);
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
    },

    forgetMarks() {
      marked = new Set();
    },
  };
}

/**
 * Writes every chunk (writev), then what a short write left: a disk filling up writes part of the
 * bytes first, and the write of the rest is what fails with ENOSPC, which says why (507, not 500).
 */
async function writeAll(fh: FileHandle, chunks: readonly Uint8Array[]): Promise<void> {
  let skip = (await fh.writev(chunks as Uint8Array[])).bytesWritten;
  for (const c of chunks) {
    let at = Math.min(skip, c.byteLength);
    skip -= at;
    while (at < c.byteLength) {
      const { bytesWritten } = await fh.write(c, at, c.byteLength - at);
      if (bytesWritten === 0) throw Object.assign(new Error(`spool file: no byte written of ${c.byteLength - at}`), { code: 'ENOSPC' });
      at += bytesWritten;
    }
  }
}

async function runAll(conn: DuckDBConnection, statements: readonly string[]): Promise<void> {
  for (const s of statements) await conn.run(s);
}

/** One MERGE (a statement has a fixed cost in DuckDB however small): widen known services, add new ones. */
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
