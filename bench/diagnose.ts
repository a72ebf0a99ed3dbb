// npm run bench:diagnose — POST /v1/diagnose on a store of 10+ million spans and 2+ million logs
// over 6 hours (bench/lib/diagnose-store.ts; built once with DuckDB SQL and cached), one service
// diagnosed over a 15-minute window holding 1+ million of its spans and log lines. Compared with a
// reference measured in the same run: one raw DuckDB aggregate pass over that window's spans of the
// service (count, errors, p95 per operation) on a direct connection to the file while no server runs
// (before starting it and after stopping it; the faster counts). Then ten services in one call, and a
// sustained OTLP/HTTP span ingest alone and with diagnoses back to back (ingest must not stall).
// Every answer is checked (200, a block for every service asked) so a failing diagnosis cannot pass
// for a fast one. Last, each statement of the diagnosis timed alone on a direct connection, to show
// where its time goes.
//
// Knobs: BENCH_DIAGNOSE_CALLS (20), BENCH_REFERENCE_REPS (15), BENCH_SECONDS (15 here) and
// BENCH_SENDERS (16) for the ingest runs, BENCH_DIAGNOSE_DIR (the cache), BENCH_DIAGNOSE_SCALE (1;
// smaller for a quick try), BENCH_DIAGNOSE_STATEMENTS=only (the statements' times alone), SVC_* passed
// to the server.
import http from 'node:http';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { buildOrReuse, defaultStoreDir, fileBytes, scrub, SCALE, WINDOW_US, type StoreMeta } from './lib/diagnose-store.js';
import { type ChildServer } from '../testkit/server.js';
import { detectionDone, serveStore } from './lib/diagnose-server.js';
import { poster } from '../testkit/post.js';
import { realisticBatch } from '../testkit/spans.js';
import { settingDefault } from '../src/core/config.js';
import { boundsFor } from '../src/diagnose/index.js';
import { SQL, EDGE_SAMPLE_SPANS, structureRead, windowSample } from '../src/diagnose/reads/index.js';
import { BUCKET_US, FINE_BIN_US } from '../src/core/time.js';
import { sqlString, sqlTimestamp } from '../src/store/sql.js';

// The ingest runs are shorter than bench:ingest's default 30 s: the figure wanted is a ratio.
process.env['BENCH_SECONDS'] ??= '15';
const { sustain, quantile: q, SECONDS, WARMUP_SECONDS } = await import('./lib/sustain.js');

const CALLS = Number(process.env['BENCH_DIAGNOSE_CALLS'] ?? 20);
const REF_REPS = Number(process.env['BENCH_REFERENCE_REPS'] ?? 15);
const SENDERS = Number(process.env['BENCH_SENDERS'] ?? 16);
/** Only the statements' times: where a diagnosis spends them, in a minute instead of ten. */
const STATEMENTS_ONLY = process.env['BENCH_DIAGNOSE_STATEMENTS'] === 'only';

const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(x < 10 ? 2 : x < 100 ? 1 : 0) : 'n/a');
const secs = (x: number) => `${(x / 1000).toFixed(1)} s`;
const p50 = (xs: number[]) => q(xs, 0.5);
const p95 = (xs: number[]) => q(xs, 0.95);

// ---------------------------------------------------------------------------------------------
// The reference: one raw DuckDB pass over the window's spans of the service.

function referenceSql(meta: StoreMeta): string {
  return (
    `SELECT operation, count(*) AS n, count_if(is_error) AS errors, quantile_cont(duration_us, 0.95) AS p95_us FROM svc_spans ` +
    `WHERE service_name = ${sqlString(meta.service)} AND timestamp >= ${sqlTimestamp(meta.endUs - WINDOW_US)} AND timestamp < ${sqlTimestamp(meta.endUs)} GROUP BY operation`
  );
}

async function withDirect<T>(dir: string, threads: number, fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  const inst = await DuckDBInstance.create(join(dir, 'lake.duckdb'), { access_mode: 'READ_ONLY', threads: String(threads) });
  const c = await inst.connect();
  try {
    return await fn(c);
  } finally {
    c.closeSync();
    inst.closeSync();
  }
}

async function timeSql(c: DuckDBConnection, sql: string, warm: number, reps: number): Promise<{ times: number[]; rows: number }> {
  let rows = 0;
  for (let i = 0; i < warm; i++) rows = (await c.runAndReadAll(sql)).currentRowCount;
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    rows = (await c.runAndReadAll(sql)).currentRowCount;
    times.push(performance.now() - t0);
  }
  return { times, rows };
}

interface Reference {
  label: string;
  byThreads: Record<number, number>;
  p50: number;
  rows: number;
}

/** p50 of the reference on 1 thread (the server's DuckDB on 2 cores) and 2 (DuckDB's default here); the faster is the reference. */
async function reference(dir: string, meta: StoreMeta, label: string): Promise<Reference> {
  const byThreads: Record<number, number> = {};
  let rows = 0;
  for (const threads of [1, 2]) {
    await withDirect(dir, threads, async (c) => {
      const r = await timeSql(c, referenceSql(meta), 3, REF_REPS);
      byThreads[threads] = p50(r.times);
      rows = r.rows;
    });
  }
  return { label, byThreads, p50: Math.min(...Object.values(byThreads)), rows };
}

// ---------------------------------------------------------------------------------------------
// Diagnose calls.

const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });

/** POSTs JSON; resolves with the status and the body text. node:http, as the load generators (fetch costs the 2 cores more). */
function postJson(base: string, path: string, body: unknown): Promise<{ status: number; text: string }> {
  const u = new URL(path, base);
  const data = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent, host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': data.byteLength } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

interface Answer {
  ms: number;
  status: number;
  /** Why the answer does not count, or null. */
  problem: string | null;
  body: { results?: Record<string, Record<string, unknown>>; errors?: Record<string, string> } | null;
  bytes: number;
}

async function diagnoseOnce(srv: ChildServer, services: string[], meta: StoreMeta): Promise<Answer> {
  const t0 = performance.now();
  const r = await postJson(srv.api, '/v1/diagnose', { services, from_ts: meta.endUs - WINDOW_US, to_ts: meta.endUs });
  const elapsed = performance.now() - t0;
  let body: Answer['body'] = null;
  try {
    body = JSON.parse(r.text) as Answer['body'];
  } catch {
    /* reported below */
  }
  let problem: string | null = null;
  if (r.status !== 200) problem = `HTTP ${r.status}: ${r.text.slice(0, 400)}`;
  else if (!body?.results) problem = `no results in the answer: ${r.text.slice(0, 400)}`;
  else {
    const missing = services.filter((s) => !body!.results![s]);
    if (missing.length) problem = `no block for ${missing.join(', ')}: errors ${JSON.stringify(body.errors ?? {}).slice(0, 400)}`;
  }
  return { ms: elapsed, status: r.status, problem, body, bytes: r.text.length };
}

/** `n` calls one after another after `warm` unmeasured ones; throws on the first answer that does not count. */
async function diagnoseRun(srv: ChildServer, services: string[], meta: StoreMeta, warm: number, n: number): Promise<{ times: number[]; last: Answer; cpuS: number }> {
  let last!: Answer;
  const times: number[] = [];
  let cpu0 = 0;
  for (let i = 0; i < warm + n; i++) {
    if (i === warm) cpu0 = srv.cpuSeconds();
    last = await diagnoseOnce(srv, services, meta);
    if (last.problem) throw new Error(`diagnose ${services.length === 1 ? services[0] : `${services.length} services`}: ${last.problem}`);
    if (i >= warm) times.push(last.ms);
  }
  // Server CPU a call (all its threads: DuckDB's and the event loop's), to tell work from waiting on a shared machine.
  return { times, last, cpuS: (srv.cpuSeconds() - cpu0) / n };
}

// ---------------------------------------------------------------------------------------------
// Server.

/** Sustained OTLP/HTTP span ingest (realistic 512-span batches) for WARMUP_SECONDS + SECONDS. */
async function ingest(srv: ChildServer) {
  const t0 = Date.now() * 1000;
  // A service of its own and timestamps after the generated data: scrub() takes them out afterwards.
  const bodies = Array.from({ length: 32 }, (_v, i) => realisticBatch(512, t0 + i * 10_000_000, 'bench-ingest'));
  const send = poster(srv.otlpHttp, '/v1/traces', 'application/x-protobuf', SENDERS);
  return sustain({ bodies, perBody: 512, concurrency: SENDERS, send: async (b) => (await send(b)) === 200, serverCpuSeconds: () => srv.cpuSeconds() });
}

// ---------------------------------------------------------------------------------------------
// Each statement of a diagnosis alone, on a direct connection.

async function statementTimes(dir: string, meta: StoreMeta, threads: number): Promise<[string, number, number][]> {
  const { bounds: b } = boundsFor(meta.endUs - WINDOW_US, meta.endUs);
  const S = meta.service;
  const fns = SQL as unknown as Record<string, (...a: unknown[]) => string>;
  return withDirect(dir, threads, async (c) => {
    // As readShared does: the call graph on the window's most recent slice of about EDGE_SAMPLE_SPANS
    // spans; the rollups with no bucket left open (the server's pass closed them all).
    const n = Number((await c.runAndReadAll(`SELECT count(*) FROM svc_spans WHERE timestamp >= ${sqlTimestamp(b.from)} AND timestamp < ${sqlTimestamp(b.to)}`)).getRows()[0]![0]);
    const w = b.to - b.from;
    // The structure reads over the range and trace sample readShared picks for this window.
    const structure = structureRead(b, n);
    const { lo } = structure;
    const sample = windowSample(b, n, Number(process.env['SVC_DIAGNOSE_SCAN_SPANS'] ?? settingDefault('SVC_DIAGNOSE_SCAN_SPANS')));
    const args: Record<string, unknown[]> = {
      windowOps: [sample],
      callTree: [structure, b.to, FINE_BIN_US],
      callSequences: [structure, b.to, FINE_BIN_US],
      callStructure: [structure, b.to, FINE_BIN_US],
      templateBins: [structure, b.to, FINE_BIN_US],
      logLevels: [lo, b.to, []],
      resourceGauges: [lo, b.to],
      edges: [b, n > EDGE_SAMPLE_SPANS ? Math.max(60_000_000, Math.floor((w * EDGE_SAMPLE_SPANS) / n)) : w],
      deployments: [b, []],
      errorTypesFirstSeen: [b, []],
      genAiBefore: [b, []],
      metrics: [b, [S]],
      metricSeries: [b, [S]],
      errorSpanKeys: [b, [S], 20],
      slowSpanKeys: [sample, [S], 20],
      exemplarSpanKeys: [b, [{ service: S, from: b.to - 60_000_000 }]],
      errorLogKeys: [b, [S], 20],
      newestLogKeys: [b, [{ service: S, from: b.to - 60_000_000 }], 20],
      errorTraces: [b, [S]],
      templates: [[1_000_100, 1_000_101, 1_000_102, 1_000_103, 1_000_104, 1_000_105, 1_000_140]], // checkout's (diagnose-store.ts numbering)
      templateParams: [b, [{ service: S, from: b.to - 60_000_000 }], [1_000_100, 1_000_101, 1_000_102, 1_000_103, 1_000_104, 1_000_105, 1_000_140], 200],
    };
    const out: [string, number, number][] = [];
    for (const [name, fn] of Object.entries(fns)) {
      // spansByKey and logsByKey take the keys an earlier read chose: not timed alone.
      const a = name.endsWith('ByKey') ? null : (args[name] ?? (fn.length === 1 ? [b] : null));
      if (!a) continue; // needs rows of an earlier read (templates, exceedances, spansById, ...)
      try {
        const r = await timeSql(c, fn(...a), 1, 3);
        out.push([name, Math.min(...r.times), r.rows]);
      } catch (err) {
        out.push([`${name} (failed: ${(err as Error).message.slice(0, 80)})`, NaN, 0]);
      }
    }
    return out.sort((x, y) => (y[1] || 0) - (x[1] || 0));
  });
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const dir = defaultStoreDir();
  console.log(`bench:diagnose — store in ${dir}${SCALE === 1 ? '' : ` (BENCH_DIAGNOSE_SCALE=${SCALE}: the targets are for 1)`}`);
  const { meta, built } = await buildOrReuse(dir, (m) => console.log(m));
  const S = meta.service;
  const c = meta.counts;
  console.log(
    `store: ${c['svc_spans']!.toLocaleString()} spans, ${c['svc_logs']!.toLocaleString()} logs, ${c['svc_profiles']!.toLocaleString()} profile rows, ` +
      `${(c['svc_metrics_gauge']! + c['svc_metrics_sum']! + c['svc_metrics_histogram']!).toLocaleString()} metric points, ${c['svc_log_templates']} templates over 6 h; ` +
      `${(fileBytes(dir) / 2 ** 30).toFixed(2)} GiB; ${built ? 'built' : 'reused; built'} in ${secs(meta.buildMs)} (${meta.buildCpuS ? meta.buildCpuS.toFixed(0) : '?'} CPU-s on 2 shared cores)`,
  );
  console.log(`window: ${new Date(meta.endUs / 1000 - WINDOW_US / 1000).toISOString()} – ${new Date(meta.endUs / 1000).toISOString()}, ${S}: ${meta.windowSpans.toLocaleString()} spans, ${meta.windowLogs.toLocaleString()} logs`);
  if (STATEMENTS_ONLY) return printStatementTimes(dir, meta);

  const refBefore = await reference(dir, meta, 'before the server');
  console.log(`reference before the server: p50 ${ms(refBefore.byThreads[1]!)} ms on 1 thread, ${ms(refBefore.byThreads[2]!)} ms on 2 (${refBefore.rows} operations, ${REF_REPS} runs after 3 warm-up)`);

  const t0 = performance.now();
  const srv = await serveStore(dir);
  let pass: Record<string, unknown> = {};
  let one: { times: number[]; last: Answer; cpuS: number } | null = null;
  let first: Answer | null = null;
  let ten: { times: number[]; last: Answer; cpuS: number } | null = null;
  let alone: Awaited<ReturnType<typeof ingest>> | null = null;
  let withDiag: Awaited<ReturnType<typeof ingest>> | null = null;
  const underIngest: number[] = [];
  let notImplemented = false;
  let peakRss = 0;
  try {
    pass = await detectionDone(srv, 15 * 60_000);
    console.log(
      `server up and detection pass done ${secs(performance.now() - t0)} after start (pass: ${String(pass['buckets_closed'])} buckets closed, ` +
        `${String(pass['series_updated'])} series, ${secs(Number(pass['duration_ms']))}${Number(pass['buckets_closed']) ? '' : ': closed by an earlier run'})`,
    );
    first = await diagnoseOnce(srv, [S], meta);
    if (first.status === 501) {
      notImplemented = true;
      console.log(`POST /v1/diagnose answers 501 (not implemented yet): no diagnose figures. ${first.problem}`);
    } else if (first.problem) {
      throw new Error(`diagnose ${S}: ${first.problem}`);
    } else {
      console.log(`first call (cold caches): ${ms(first.ms)} ms, ${(first.bytes / 1024).toFixed(1)} KiB`);
      one = await diagnoseRun(srv, [S], meta, 3, CALLS);
      ten = await diagnoseRun(srv, meta.services, meta, 2, Math.max(5, Math.ceil(CALLS / 2)));
    }
    alone = await ingest(srv);
    if (!notImplemented) {
      let stop = false;
      const problems: string[] = [];
      const loop = (async () => {
        while (!stop) {
          const a = await diagnoseOnce(srv, [S], meta);
          if (a.problem) problems.push(a.problem);
          else underIngest.push(a.ms);
        }
      })();
      withDiag = await ingest(srv);
      stop = true;
      await loop;
      if (problems.length) throw new Error(`diagnose under ingest: ${problems.length} answers did not count, e.g. ${problems[0]}`);
    }
    peakRss = srv.peakRss();
  } finally {
    await srv.stop();
  }
  await scrub(dir, meta);
  const refAfter = await reference(dir, meta, 'after the server');
  const ref = refBefore.p50 <= refAfter.p50 ? refBefore : refAfter;

  console.log(`reference after the server: p50 ${ms(refAfter.byThreads[1]!)} ms on 1 thread, ${ms(refAfter.byThreads[2]!)} ms on 2`);
  console.log(`\nreference (the faster): ${ms(ref.p50)} ms — ${ref.label}: count, errors and p95 per operation of ${S}'s ${meta.windowSpans.toLocaleString()} window spans, raw DuckDB`);
  if (one && ten && first) {
    const r1 = p50(one.times) / ref.p50;
    const findings = (one.last.body?.results?.[S]?.['findings'] as unknown[] | undefined)?.length ?? 0;
    console.log(`\n${'call'.padEnd(44)} ${'calls'.padStart(5)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'x ref'.padStart(6)}  target`);
    const row = (label: string, t: number[], target: string) =>
      console.log(`${label.padEnd(44)} ${String(t.length).padStart(5)} ${ms(p50(t)).padStart(8)} ${ms(p95(t)).padStart(8)} ${(p50(t) / ref.p50).toFixed(1).padStart(6)}  ${target}`);
    row(`diagnose ${S}, 15 min`, one.times, `p50 <= 3x ref (${r1 <= 3 ? 'met' : 'NOT met'}) and < 500 ms (${p50(one.times) < 500 ? 'met' : 'NOT met'})`);
    row(`diagnose all ${meta.services.length} services in one call`, ten.times, `< 2 s (${p50(ten.times) < 2000 ? 'met' : 'NOT met'} at p50, ${p95(ten.times) < 2000 ? 'met' : 'NOT met'} at p95)`);
    row(`diagnose ${S} during ingest`, underIngest, '');
    console.log(`answer: ${(one.last.bytes / 1024).toFixed(1)} KiB for ${S}, ${findings} findings; ten services ${(ten.last.bytes / 1024).toFixed(1)} KiB; first call ${ms(first.ms)} ms`);
    console.log(`server CPU a call: ${one.cpuS.toFixed(2)} s for ${S}, ${ten.cpuS.toFixed(2)} s for ten services (all threads; wall time above it is waiting)`);
  }
  if (alone) {
    console.log(`\ningest (OTLP/HTTP, ${SENDERS} senders of 512-span batches, ${SECONDS} s after ${WARMUP_SECONDS} s warm-up), spans/s acknowledged:`);
    // The server's cores over each run: if they stay the same while spans/s falls, the diagnoses took the CPU; if they fall, something waited.
    console.log(`  alone ${Math.round(alone.rate).toLocaleString()} (ack p99 ${ms(alone.ackP99)} ms; server on ${alone.cores.toFixed(2)} cores)`);
    if (withDiag) {
      console.log(
        `  with diagnoses back to back ${Math.round(withDiag.rate).toLocaleString()} (ack p99 ${ms(withDiag.ackP99)} ms; server on ${withDiag.cores.toFixed(2)} cores): ${((100 * withDiag.rate) / alone.rate).toFixed(0)}% of alone; ` +
          `${underIngest.length} diagnoses meanwhile, p50 ${ms(p50(underIngest))} ms`,
      );
    }
  }
  console.log(`server peak RSS ${(peakRss / 2 ** 30).toFixed(2)} GiB`);

  // Where a diagnosis spends its time: each statement alone, 1 thread as the server's DuckDB here.
  if (!notImplemented) await printStatementTimes(dir, meta);
}

async function printStatementTimes(dir: string, meta: StoreMeta): Promise<void> {
  console.log(`\nstatements of one diagnosis of ${meta.service}, each alone on a direct connection (1 thread, best of 3 after 1 warm-up):`);
  const st = await statementTimes(dir, meta, 1);
  const total = st.reduce((a, [, t]) => a + (t || 0), 0);
  for (const [name, t, rows] of st) console.log(`  ${name.padEnd(24)} ${ms(t).padStart(8)} ms ${String(rows).padStart(7)} rows`);
  console.log(`  ${'sum'.padEnd(24)} ${ms(total).padStart(8)} ms (the server runs them side by side on its read pool)`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
