// When the group-commit writer commits, and what: a pure policy over the queued submissions' row
// counts (no DuckDB, no timers), so its decisions can be tested alone. The writer asks it on every
// change (submit, expect, flush, a loader freed) and does the I/O.
//
// Why these rules: DuckDB writes a commit holding a row group's rows of a table (STORE_ROW_GROUP_SIZE)
// straight into the database file, and a commit of exactly one row group's rows costs less CPU a row
// than two groups, or a group and a part (raw DuckDB, 2 connections side by side, realistic spans):
// a bigger commit's buffers are fresh memory, more page faults a row. Short of an exact group, any cut leaves a partial group too, so a commit takes everything
// queued: fewer, larger commits pay the per-commit statements less often.
//
// Commits of less than a row group go through the WAL, and the policy says when to checkpoint it:
// once a table has CHECKPOINT_ROW_GROUPS row groups' worth there (walRows). DuckDB's own threshold let a few
// senders' commits pile up until one checkpoint stopped every commit for seconds (8 senders of 512
// spans: 4,096 in flight never fill a group); two row groups at a time stop them only briefly, and
// on a large store, whose checkpoints take longer, a share of what it holds. A
// checkpoint seals the row group the WAL was filling (the next append starts a new one), so the
// commits before it are cut to fill that group exactly where the batches allow: groups stay full.

/**
 * Row groups' worth of WAL a checkpoint folds into the file. Chosen on 8 OTLP/HTTP senders of 512
 * spans (bench:ingest), 1, 2 and 4 groups alternated: 1 group took the fewest spans/s, 4 the
 * longest ack p99, 2 neither.
 */
export const CHECKPOINT_ROW_GROUPS = 2;

/**
 * A checkpoint waits for at least this share of its table's stored rows in the WAL (whole row groups;
 * no fewer than CHECKPOINT_ROW_GROUPS). A checkpoint also writes metadata of the whole table, so its
 * time grows with the store (DuckDB 1.5, 16,000 rows of WAL: ~20 ms at 1 M spans, 60–80 at 10 M,
 * 190–260 at 40 M), and at two row groups apiece a large store spent most of the writer's time in
 * them: 8 closed-loop submitters of 1,000 spans took 118,400 spans/s at 1 M spans and 59,200 at 40 M
 * (bench:writer, bench/README.md). In proportion to the store, the metadata's share of the writer's
 * time stays bounded: at ~5 ms a million rows (idle), 1/500 keeps it within a quarter at 100,000
 * spans/s; it applies from 8 M rows on (1/500 of them is two row groups). Not tuned further: 40 M
 * spans then took 99,200 spans/s (one run). Spacing checkpoints by three times the last one's time
 * instead fed on itself: a longer wait folds more rows, the checkpoint takes longer, the next waits
 * longer (bench:overload's 8 senders of 1,000 spans: ack p99 1.4 s against 0.4).
 */
export const CHECKPOINT_STORE_SHARE = 1 / 500;

/** What the policy reads of a submission: the rows each part brings its table. */
export interface Batch {
  readonly parts: readonly { readonly table: string; readonly rows: number; readonly upsert?: boolean }[];
}

/** A queued submission, as the writer holds it. */
export interface Queued {
  readonly sub: Batch;
}

export class CommitPolicy {
  private forceNext = false; // flush(): the next commit starts as soon as a loader is free
  private expected = 0; // submissions on their way
  private rowsPerSubmission = 0; // moving average, to guess what those bring
  private lastFilled = false; // the last commit held a row group's worth for some table
  private readonly walRows = new Map<string, number>(); // rows taken through the WAL since the last checkpoint, by table
  private readonly storedRows = new Map<string, number>(); // rows each table holds, as of the last checkpoint

  /** `checkpointGroups`: the row groups' worth a table has in the WAL when a checkpoint is due. */
  constructor(
    readonly rowGroupRows: number,
    readonly checkpointGroups = CHECKPOINT_ROW_GROUPS,
  ) {}

  /** A submission joined the queue. */
  submitted(sub: Batch): void {
    const rows = sub.parts.reduce((n, p) => n + (p.upsert ? 0 : p.rows), 0);
    this.rowsPerSubmission = this.rowsPerSubmission ? 0.9 * this.rowsPerSubmission + 0.1 * rows : rows;
  }

  /** A submission is on its way (being decoded); `arrived` once it is submitted or given up. */
  expecting(): void {
    this.expected++;
  }

  arrived(): void {
    this.expected--;
  }

  /** flush(): whatever is queued now commits as soon as a loader is free. */
  flushing(queued: number): void {
    this.forceNext = queued > 0;
  }

  /**
   * With a loader free: commit the queue now if it fills a row group, or if what is on its way would
   * not fill one either (waiting would only stop commits overlapping decoding, and take fewer lines/s
   * from 8 log senders in bench:logs-ingest); else wait (flushIntervalMs at most). After a commit that
   * filled one, the next waits too: those on their way are not all counted yet (acknowledged senders'
   * next batches are still in transit); without the wait, 16 log senders' commits alternated between
   * partial groups through the WAL and full ones written directly, with long checkpoints between.
   */
  commitNow(queue: readonly Queued[]): boolean {
    const most = mostRowsOneTable(queue);
    return this.forceNext || most >= this.rowGroupRows || (!this.lastFilled && most + this.expected * this.rowsPerSubmission < this.rowGroupRows);
  }

  /**
   * How many queued submissions, from the front, the commit starting now takes: up to the one at
   * which some table holds exactly a row group's rows, if one does (512-span batches, 16 at a time; a
   * Collector batch of 8,192 alone); short of a row group queued, up to the one that brings the WAL
   * exactly to the rows a checkpoint is due at (walRows), if one does; otherwise all of them.
   */
  take(queue: readonly Queued[]): number {
    const G = this.rowGroupRows;
    const direct = mostRowsOneTable(queue) >= G;
    const rows = new Map<string, number>();
    let n = 0;
    while (n < queue.length) {
      const tables = addRows(rows, queue[n++]!.sub);
      if (tables.some((t) => rows.get(t) === G || (!direct && (this.walRows.get(t) ?? 0) + rows.get(t)! === this.dueRows(t)))) break;
    }
    const filled = Math.max(0, ...rows.values()) >= G;
    for (const [t, r] of rows) if (r < G) this.walRows.set(t, (this.walRows.get(t) ?? 0) + r);
    if (n === queue.length) this.forceNext = false;
    this.lastFilled = filled;
    return n;
  }

  /** Whether some table has the rows a checkpoint waits for in the WAL (dueRows): checkpoint before the next commit. */
  checkpointDue(): boolean {
    for (const [t, r] of this.walRows) if (r >= this.dueRows(t)) return true;
    return false;
  }

  /** The WAL rows a checkpoint of `table` waits for: checkpointGroups row groups, or CHECKPOINT_STORE_SHARE of what it holds in whole row groups. */
  dueRows(table: string): number {
    const G = this.rowGroupRows;
    return Math.max(G * this.checkpointGroups, Math.ceil(((this.storedRows.get(table) ?? 0) * CHECKPOINT_STORE_SHARE) / G) * G);
  }

  /** A checkpoint starts (no commit under way): the WAL's rows are folded into the file. */
  checkpointed(): void {
    this.walRows.clear();
  }

  /** The rows `table` holds (after a checkpoint): its checkpoints wait for more as it grows (dueRows). */
  stored(table: string, rows: number): void {
    this.storedRows.set(table, rows);
  }
}

/** The most rows the submissions append to any one table (upserts aside): what decides a direct write. */
function mostRowsOneTable(queue: readonly Queued[]): number {
  const rows = new Map<string, number>();
  for (const { sub } of queue) addRows(rows, sub);
  return Math.max(0, ...rows.values());
}

/** Adds the rows a submission appends (upserts aside) to the per-table counts; returns the tables it appends to. */
function addRows(rows: Map<string, number>, sub: Batch): string[] {
  const tables: string[] = [];
  for (const p of sub.parts) {
    if (p.upsert) continue;
    rows.set(p.table, (rows.get(p.table) ?? 0) + p.rows);
    tables.push(p.table);
  }
  return tables;
}
