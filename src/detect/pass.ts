// The detection pass. Its cost grows with new data, not with the look-back:
// 1. close the 5-minute buckets that received data (marked dirty by ingest commits) and whose end is
//    older than the grace delay as of the pass's time: aggregate just those buckets, with literal
//    time bounds, into svc_series_5m;
// 2. feed each affected series' new points to its detector (the seasonal path: the points are
//    timestamped), resuming from its state (kept in memory between passes, else read from the store);
// 3. write every new worsening change as an anomaly row (once: keyed by entity, signal and shift),
//    update the alert instances, and save the detector states.
// A late bucket that lands before a series' last fed point makes that series' detector start again
// from the persisted series (bounded by retention), keeping what it learnt of the series' cycle, so
// backfills are detected too; its anomalies from that bucket on are re-derived, so a shift seen on
// half-arrived data does not outlive the data.
//
// runPass takes the time it acts as of and the grace, so one call can also close every bucket whose
// data has arrived (grace 0) or a replayed window in the past (an earlier as-of).
import type { Pool } from '../compute/pool.js';
import { type Store } from '../store/db.js';
import { readRows, type ReadPool } from '../store/readers.js';
import { ANOMALIES, DETECTOR_STATE, DIRTY_BUCKETS, SERIES } from '../store/schema.js';
import type { Writer } from '../store/writer.js';
import type { ColumnBatch } from '../store/batch.js';
import type { DetectOutput, DetectSeries, DetectTask } from './detect-task.js';
import { drillDownSql } from './drilldown.js';
import { bucketTs, rebuildSeriesSql, signalDef, type SignalName } from './signals.js';
import { encodeBatches } from '../pipeline/encode.js';
import { alertStatements, type ShiftEvent } from './alerts.js';
import { BUCKET_US, bucketRuns } from '../core/time.js';
import { bucketIndexSql, inTransaction, sqlString, sqlTimestamp } from '../store/sql.js';
import { decodeState, dueToSave, encodeState, type SeriesState, type StateCache } from './states.js';

export interface PassDeps {
  store: Store;
  writer: Writer;
  reads: ReadPool;
  pool: Pool;
  graceS: number;
  /** The detector states fed in this process (the scheduler's); without it every pass reads them from the store. */
  cache?: StateCache;
}

export interface PassOptions {
  /** The time the pass acts as of (µs): buckets ending before asOf − grace are closed. Default: now. */
  asOfUs?: number;
  /** The grace (µs) a bucket waits after its end for late data. Default: the deps' graceS. */
  graceUs?: number;
}

export interface PassReport {
  started_at: string;
  duration_ms: number;
  buckets_closed: number;
  series_updated: number;
  /** Detector states written to the store (new and refed series, and each series every 30 minutes). */
  states_saved: number;
  series_reset: number;
  points_fed: number;
  anomalies_written: number;
  alerts_changed: number;
  /** Buckets at or after this (index) are still open. */
  closed_before_bucket: number;
}

const keyOf = (service: string, operation: string, signal: string) => `${signal}\u0000${service}\u0000${operation}`;
const splitKey = (k: string) => {
  const [signal, service, operation] = k.split('\u0000') as [SignalName, string, string];
  return { signal, service, operation };
};

type SeriesKey = string;

/** What to feed each touched series: from a saved state, or from its first point after a reset. */
interface FeedPlan {
  states: Map<SeriesKey, SeriesState>;
  /** Series resuming from a saved state (fed from the bucket given). */
  resume: Map<SeriesKey, number>;
  /** Series fed from their first point. */
  fresh: Set<SeriesKey>;
  /** Reset series → first bucket whose data changed; their anomalies from there on are re-derived. */
  resetFrom: Map<SeriesKey, number>;
}

interface Job {
  key: SeriesKey;
  first: number;
  from: number;
  to: number;
  input: DetectSeries;
}

/**
 * One detection pass as of `opts.asOfUs` (default now) with `opts.graceUs` (default the deps'
 * grace): closes the dirty buckets that ended before asOf − grace, feeds the detectors, writes the
 * anomalies, stamped as of then (their detection and alert times, so a recording detected as of
 * its own time gives the same rows in any run); the report counts the buckets closed and the rows written.
 */
export async function runPass(deps: PassDeps, opts: PassOptions = {}): Promise<PassReport> {
  const started = performance.now();
  const asOfUs = opts.asOfUs ?? Date.now() * 1000;
  const graceUs = opts.graceUs ?? deps.graceS * 1_000_000;
  const report: PassReport = {
    started_at: new Date(asOfUs / 1000).toISOString(),
    duration_ms: 0,
    buckets_closed: 0,
    series_updated: 0,
    states_saved: 0,
    series_reset: 0,
    points_fed: 0,
    anomalies_written: 0,
    alerts_changed: 0,
    closed_before_bucket: Math.floor((asOfUs - graceUs) / BUCKET_US),
  };
  const done = () => ((report.duration_ms = performance.now() - started), report);
  const closedLimit = report.closed_before_bucket;

  const dirty = await closeDirtyBuckets(deps, closedLimit);
  report.buckets_closed = dirty.length;
  if (!dirty.length) return done();

  const plan = await planFeeds(deps, dirty, closedLimit);
  report.series_reset = plan.resetFrom.size;
  if (!plan.resume.size && !plan.fresh.size) return done();

  const points = await loadPoints(deps, plan, closedLimit);
  const jobs = detectorJobs(plan, points, closedLimit);
  for (const list of jobs.values()) for (const j of list) report.points_fed += j.input.length;
  const { shifts, stateBatch, fed } = await runDetectors(deps, jobs);
  report.series_updated = fed.size;
  report.states_saved = stateBatch.rows;

  const written = await writeShifts(deps, shifts, plan.resetFrom, asOfUs);
  report.anomalies_written = written.anomalies;
  report.alerts_changed = written.alerts;
  // States after the anomalies: a crash between the two only loses states, and the next pass refeeds.
  if (stateBatch.rows) await deps.writer.submit({ ...encodeBatches([stateBatch]), services: {} });
  for (const [k, st] of fed) deps.cache?.set(k, st);
  return done();
}

/**
 * Marks dirty again the closed buckets holding series points that no detector was fed, so the next
 * pass feeds them. A pass stopped between closing its buckets (their marks deleted) and saving the
 * detector states (a crash, a kill) leaves such points, and they would otherwise wait for their
 * series' next data, which may never come: the shift in them would never become an anomaly. Run
 * before a process's first pass and after a pass that failed (one join of the series and the
 * states). Returns the buckets marked.
 */
export async function markUnfedBuckets(deps: Pick<PassDeps, 'store' | 'writer'>): Promise<number> {
  const w = deps.store.writer;
  const bucket = bucketIndexSql('s.timestamp');
  return deps.writer.exclusive(async () => {
    const r = await w.run(
      `INSERT OR IGNORE INTO ${DIRTY_BUCKETS.name} SELECT DISTINCT ${bucket} FROM ${SERIES.name} AS s ` +
        `LEFT JOIN ${DETECTOR_STATE.name} AS d USING (service_name, operation, signal) WHERE d.last_bucket IS NULL OR ${bucket} > d.last_bucket`,
    );
    return Number(r.rowsChanged);
  });
}

/** Step 1: aggregates the closed dirty buckets into the series table; their indexes, oldest first. */
async function closeDirtyBuckets(deps: PassDeps, closedLimit: number): Promise<number[]> {
  const dirty = (await deps.reads.use((c) => readRows(c, `SELECT bucket FROM ${DIRTY_BUCKETS.name} WHERE bucket < ? ORDER BY bucket`, [closedLimit]))).map((r) =>
    Number(r['bucket']),
  );
  if (!dirty.length) return dirty;
  // The aggregation reads every row of the buckets: a bucket of bench:overload's unloaded phase (3.7
  // million spans) took 1.7 s, and as an exclusive step it held every commit that long (traced), so
  // a flood's acknowledgements waited past their bound. It runs beside the commits instead, on a
  // connection of its own, and the commits wait only for the marks' deletion. A bucket some commit
  // appended to meanwhile keeps its mark: the snapshot may have missed rows of it, and the next pass
  // aggregates it again, as it would late data. Every mark stays if an exclusive step ran meanwhile
  // (a restore, the only other writer of the series and rollups, or retention).
  const watch = deps.writer.watchBuckets();
  try {
    const conn = await deps.store.connect();
    try {
      await inTransaction(conn, async () => {
        for (const [a, b] of bucketRuns(dirty)) for (const s of rebuildSeriesSql(a / BUCKET_US, b / BUCKET_US - 1)) await conn.run(s);
      });
    } finally {
      conn.closeSync();
    }
    await deps.writer.exclusive(async () => {
      const seen = dirty.filter((b) => !watch.touched(b));
      if (seen.length) await deps.store.writer.run(`DELETE FROM ${DIRTY_BUCKETS.name} WHERE bucket IN (${seen.join(', ')})`);
    });
  } finally {
    watch.stop();
  }
  return dirty;
}

/** Step 2: which series have points in the closed dirty buckets, and from where each must be fed. */
async function planFeeds(deps: PassDeps, dirty: readonly number[], closedLimit: number): Promise<FeedPlan> {
  const inDirty = `(${bucketIndexSql('timestamp')}) IN (${dirty.join(', ')})`;
  const touched = await deps.reads.use((c) =>
    readRows(
      c,
      `SELECT service_name, operation, signal, min(epoch_us(timestamp)) AS first_us FROM ${SERIES.name} ` +
        `WHERE timestamp >= ${bucketTs(dirty[0]!)} AND timestamp < ${bucketTs(closedLimit)} AND ${inDirty} GROUP BY ALL`,
    ),
  );
  const plan: FeedPlan = { states: new Map(), resume: new Map(), fresh: new Set(), resetFrom: new Map() };
  const keys = touched.map((r) => keyOf(String(r['service_name']), String(r['operation']), String(r['signal'])));
  for (const k of keys) {
    const st = deps.cache?.get(k);
    if (st) plan.states.set(k, st);
  }
  // Only the states the cache lacks are read (all of them on a process's first pass).
  if (plan.states.size < keys.length) await readStates(deps, keys.filter((k) => !plan.states.has(k)), plan.states);
  touched.forEach((r, i) => {
    const key = keys[i]!;
    const firstDirty = Math.floor(Number(r['first_us']) / BUCKET_US);
    const st = plan.states.get(key);
    if (!st) plan.fresh.add(key);
    else if (firstDirty <= st.last) {
      plan.fresh.add(key); // history changed under the detector (late data or a backfill): refeed it
      plan.resetFrom.set(key, firstDirty);
    } else plan.resume.set(key, st.last + 1);
  });
  return plan;
}

/** Reads the stored states of `keys` into `out`. */
async function readStates(deps: PassDeps, keys: readonly SeriesKey[], out: Map<SeriesKey, SeriesState>): Promise<void> {
  const tuples = keys.map((k) => {
    const { signal, service, operation } = splitKey(k);
    return `(${sqlString(service)}, ${sqlString(operation)}, '${signal}')`;
  });
  const where = keys.length > 1000 ? 'true' : `(service_name, operation, signal) IN (${tuples.join(', ')})`; // one scan beats a long IN list
  const rows = await deps.reads.use((c) => readRows(c, `SELECT service_name, operation, signal, first_bucket, last_bucket, state FROM ${DETECTOR_STATE.name} WHERE ${where}`));
  const wanted = new Set(keys);
  for (const r of rows) {
    const key = keyOf(String(r['service_name']), String(r['operation']), String(r['signal']));
    const last = Number(r['last_bucket']);
    if (wanted.has(key)) out.set(key, { first: Number(r['first_bucket']), last, state: decodeState(String(r['state'])), saved: last });
  }
}

/**
 * Step 3: the points to feed, per series as DuckDB's JSON list of [bucket, value, n, k] (row objects
 * for millions of points cost seconds): for resumed series the new range, for fresh ones their whole
 * retention-bounded history (detectorJobs takes the range it feeds).
 */
async function loadPoints(deps: PassDeps, plan: FeedPlan, closedLimit: number): Promise<Map<SeriesKey, { json: string; firstBucket: number }>> {
  const points = new Map<SeriesKey, { json: string; firstBucket: number }>();
  const load = async (where: string, wanted: (key: SeriesKey) => boolean) => {
    const rows = await deps.reads.use((c) =>
      readRows(
        c,
        `SELECT service_name, operation, signal, min(${bucketIndexSql('timestamp')}) AS first_bucket, ` +
          `to_json(list([${bucketIndexSql('timestamp')}, value, n, coalesce(k, 0)] ORDER BY timestamp))::VARCHAR AS pts ` +
          `FROM ${SERIES.name} WHERE ${where} GROUP BY ALL`,
      ),
    );
    for (const r of rows) {
      const key = keyOf(String(r['service_name']), String(r['operation']), String(r['signal']));
      if (wanted(key)) points.set(key, { json: String(r['pts']), firstBucket: Number(r['first_bucket']) });
    }
  };
  if (plan.resume.size) await load(`timestamp >= ${bucketTs(Math.min(...plan.resume.values()))} AND timestamp < ${bucketTs(closedLimit)}`, (k) => plan.resume.has(k));
  if (plan.fresh.size > 1000) await load('true', (k) => plan.fresh.has(k)); // one scan beats a long IN list
  else if (plan.fresh.size) {
    const tuples = [...plan.fresh].map((k) => {
      const { signal, service, operation } = splitKey(k);
      return `(${sqlString(service)}, ${sqlString(operation)}, '${signal}')`;
    });
    await load(`(service_name, operation, signal) IN (${tuples.join(', ')})`, (k) => plan.fresh.has(k));
  }
  return points;
}

/**
 * The detector's input per signal; the workers build the point arrays from the JSON, off the event
 * loop. A series fed again from its first point (its history changed) keeps its state's seasonal
 * context; it is fed up to the later of the closed buckets and what it was fed before.
 */
function detectorJobs(plan: FeedPlan, points: Map<SeriesKey, { json: string; firstBucket: number }>, closedLimit: number): Map<SignalName, Job[]> {
  const jobs = new Map<SignalName, Job[]>();
  const add = (key: SeriesKey, refeed: boolean) => {
    const pts = points.get(key);
    if (!pts) return;
    const { signal } = splitKey(key);
    const def = signalDef(signal);
    if (!def) return;
    const st = plan.states.get(key);
    const from = refeed || !st ? pts.firstBucket : plan.resume.get(key)!;
    const to = refeed && st ? Math.max(closedLimit - 1, st.last) : closedLimit - 1;
    const len = to - from + 1;
    if (len <= 0) return;
    const input: DetectSeries = { points: pts.json, from, length: len, start: from * BUCKET_US, missing: def.missing };
    if (st) input.state = st.state;
    if (st && refeed) input.refeed = true;
    let list = jobs.get(signal);
    if (!list) jobs.set(signal, (list = []));
    list.push({ key, first: st && !refeed ? st.first : from, from, to, input });
  };
  for (const k of plan.resume.keys()) add(k, false);
  for (const k of plan.fresh) add(k, true);
  return jobs;
}

/** Step 4: the detector per signal in the pool, the tasks in parallel; every reported change, and every series' new state. */
async function runDetectors(deps: PassDeps, jobs: Map<SignalName, Job[]>): Promise<{ shifts: ShiftEvent[]; stateBatch: ColumnBatch; fed: Map<SeriesKey, SeriesState> }> {
  const shifts: ShiftEvent[] = [];
  const fed = new Map<SeriesKey, SeriesState>();
  const stateBatch = newStateBatch();
  const CHUNK = 2000; // bounded task size: a pass over 10,000 series is a few pool tasks per signal
  const parts: Array<{ signal: SignalName; part: Job[] }> = [];
  for (const [signal, list] of jobs) for (let off = 0; off < list.length; off += CHUNK) parts.push({ signal, part: list.slice(off, off + CHUNK) });
  const outs = await Promise.all(parts.map(({ signal, part }) => deps.pool.run({ kind: 'detect', signal, series: part.map((j) => j.input) } satisfies DetectTask) as Promise<DetectOutput[]>));
  parts.forEach(({ signal, part }, p) => {
    part.forEach((job, i) => {
      const r = outs[p]![i]!;
      const { service, operation } = splitKey(job.key);
      for (const ch of r.changes) shifts.push({ service, operation, signal, bucket: job.first + ch.index, before: ch.before, after: ch.after });
      const st: SeriesState = { first: job.first, last: job.to, state: r.state, saved: job.to };
      const cached = deps.cache?.get(job.key);
      if (!cached || job.input.refeed || dueToSave(job.key, cached.saved, job.to)) addState(stateBatch, job.key, st);
      else st.saved = cached.saved;
      fed.set(job.key, st);
    });
  });
  return { shifts, stateBatch, fed };
}

function newStateBatch(): ColumnBatch {
  return { table: DETECTOR_STATE.name, rows: 0, columns: Object.fromEntries(DETECTOR_STATE.columns.map((c) => [c.name, []])) };
}

function addState(batch: ColumnBatch, key: SeriesKey, st: SeriesState): void {
  const { signal, service, operation } = splitKey(key);
  const cols = batch.columns;
  cols['service_name']!.push(service);
  cols['operation']!.push(operation);
  cols['signal']!.push(signal);
  cols['first_bucket']!.push(st.first);
  cols['last_bucket']!.push(st.last);
  cols['last_bucket_ts']!.push(st.last * BUCKET_US);
  cols['state']!.push(encodeState(st.state));
  batch.rows++;
}

/**
 * Writes the states fed in this process that the store does not have yet (at shutdown, so a restart
 * resumes every series where it was). Returns the states written.
 */
export async function flushStates(deps: Pick<PassDeps, 'writer' | 'cache'>): Promise<number> {
  const batch = newStateBatch();
  for (const [key, st] of deps.cache ?? []) {
    if (st.saved >= st.last) continue;
    addState(batch, key, st);
    st.saved = st.last;
  }
  if (batch.rows) await deps.writer.submit({ ...encodeBatches([batch]), services: {} });
  return batch.rows;
}

/** Step 5: anomalies (worsening only, each shift once) and alerts, in one transaction. */
async function writeShifts(deps: PassDeps, shifts: readonly ShiftEvent[], resetFrom: ReadonlyMap<SeriesKey, number>, nowUs: number): Promise<{ anomalies: number; alerts: number }> {
  const w = deps.store.writer;
  const detectedAt = sqlTimestamp(nowUs);
  const out = { anomalies: 0, alerts: 0 };
  await deps.writer.exclusive(() =>
    inTransaction(w, async () => {
      for (const [key, bucket] of resetFrom) {
        const { signal, service, operation } = splitKey(key);
        await w.run(
          `DELETE FROM ${ANOMALIES.name} WHERE service_name = ${sqlString(service)} AND operation = ${sqlString(operation)} ` +
            `AND signal = '${signal}' AND ts_shift_us >= ${bucket * BUCKET_US}`,
        );
      }
      for (const s of shifts.filter((x) => x.after > x.before)) {
        const ts = s.bucket * BUCKET_US;
        const r = await w.run(
          `INSERT INTO ${ANOMALIES.name} (timestamp, service_name, operation, signal, kind, direction, before, after, ts_shift_us, detected_at, drill_down_sql) ` +
            `SELECT ${sqlTimestamp(ts)}, ${sqlString(s.service)}, ${sqlString(s.operation)}, '${s.signal}', 'changepoint', 'worsening', ` +
            `${s.before}, ${s.after}, ${ts}, ${detectedAt}, ${sqlString(drillDownSql(s.signal, s.service, s.operation, ts))} ` +
            `WHERE NOT EXISTS (SELECT 1 FROM ${ANOMALIES.name} WHERE service_name = ${sqlString(s.service)} AND operation = ${sqlString(s.operation)} ` +
            `AND signal = '${s.signal}' AND ts_shift_us = ${ts})`,
        );
        out.anomalies += Number(r.rowsChanged);
      }
      const alertSql = await alertStatements(w, shifts, nowUs);
      for (const s of alertSql) await w.run(s);
      out.alerts = alertSql.length;
    }),
  );
  return out;
}
