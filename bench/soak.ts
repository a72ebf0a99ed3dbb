// npm run soak — a long steady load, not part of CI: OTLP/HTTP spans sent open-loop at a fixed rate
// (SOAK_SPANS_PER_S, default 20,000, about half of what bench:ingest measures on 2 cores) for
// SOAK_MINUTES (default 30), with a diagnosis of the loaded service every SOAK_DIAGNOSE_S (default 10)
// seconds. Every minute it prints the spans acknowledged, the acknowledgement p50/p99, the diagnosis
// p50 and the server's RSS; at the end the slope of RSS and of ack p99 over the run (a leak or a
// queue that grows shows as a slope), the RSS peak in each 10 minutes, and every error. Open-loop:
// a slow server does not slow the senders down, as real exporters on a timer do not. SVC_* variables
// pass to the server. A diagnosis answered busy (200 with Retry-After, diagnose admission) is expected
// under overload: it is counted apart, not as an error and not in the diagnosis p50; one that ran but
// failed (time limit) too.
// SOAK_BACKFILL_MINUTES (default 0) first sends that many minutes before the start at the same
// density, as fast as the server takes them, so that the diagnosis window is full from the first
// minute: the steady state of a 15-minute window is reached without waiting 15 minutes for it.
// Each minute also prints what GET /admin/status says of the writer (checkpoints and the last one's
// time), DuckDB's memory in use (and each of its tags' highest reading in the minute, sampled every
// 5 s), the estimated ack wait and the last detection pass; the server's own
// log is written to SOAK_LOG (default <tmpdir>/soak-server-<time>.jsonl), so a failure can be traced.
import { startChildServer, serverEnv } from '../testkit/server.js';
import { poster } from '../testkit/post.js';
import { freshIdsBatch, realisticBatch } from '../testkit/spans.js';
import { quantile } from './lib/sustain.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MINUTES = Number(process.env['SOAK_MINUTES'] ?? 30);
const RATE = Number(process.env['SOAK_SPANS_PER_S'] ?? 20_000);
const DIAGNOSE_S = Number(process.env['SOAK_DIAGNOSE_S'] ?? 10);
const BACKFILL_MINUTES = Number(process.env['SOAK_BACKFILL_MINUTES'] ?? 0);
const PER_BODY = 512;
const SERVICE = 'soak';
const LOG = process.env['SOAK_LOG'] ?? join(tmpdir(), `soak-server-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`);

interface Minute {
  acked: number;
  refused: number;
  errors: number;
  acks: number[];
  diagnoses: number[];
  /** Diagnoses answered busy (not run), and run but answered with every service in errors (e.g. the time limit). */
  busy: number;
  failed: number;
  rssMiB: number;
  /** The highest RSS sampled (every 5 s) in the minute. */
  peakRssMiB: number;
}

interface Status {
  ingest: { checkpoints: number; lastCheckpointMs: number; lastCommitMs: number; estimated_ack_wait_ms: number; refused_for_wait: number; queued_tasks: number; inflight_bytes: number };
  memory: { duckdb: { memory_used_bytes: number; temporary_storage_bytes: number; by_tag: Record<string, number> }; js_heap_bytes: number };
  diagnoses: { running: number; waiting: number };
  detection: { passes: number; last: { duration_ms: number; buckets_closed: number } | null };
}

const status = async (api: string): Promise<Status> =>
  ((await (await fetch(`${api}/admin/status`, { signal: AbortSignal.timeout(5000) })).json()) as { status: Status }).status;

/**
 * DuckDB's memory by tag, sampled every few seconds: the minute's highest reading of each tag. The
 * table-block cache (BASE_TABLE) gives way under pressure and the rest mostly does not, so the line
 * shows what else held memory when DuckDB neared its limit.
 */
const duckdbPeaks = new Map<string, number>();
let spilledPeak = 0;
async function sampleDuckdb(api: string): Promise<void> {
  try {
    const m = (await status(api)).memory.duckdb;
    for (const [tag, bytes] of Object.entries(m.by_tag)) duckdbPeaks.set(tag, Math.max(duckdbPeaks.get(tag) ?? 0, bytes));
    spilledPeak = Math.max(spilledPeak, m.temporary_storage_bytes);
  } catch {
    // the minute's status line says when the server does not answer
  }
}
function duckdbPeakText(): string {
  const mib = (b: number) => (b / 2 ** 20).toFixed(0);
  const tags = [...duckdbPeaks].filter(([, b]) => b >= 2 ** 20).sort((a, b) => b[1] - a[1]).map(([t, b]) => `${t} ${mib(b)}`);
  const text = `DuckDB peaks by tag (MiB): ${tags.join(', ') || 'none'}; spilled ${mib(spilledPeak)} MiB`;
  duckdbPeaks.clear();
  spilledPeak = 0;
  return text;
}

/** One line of the server's own state, from /admin/status; the reading's failure is itself the line. */
async function statusLine(api: string, checkpointsBefore: number): Promise<[string, number]> {
  try {
    const s = await status(api);
    const d = s.detection.last;
    return [
      // The writer's counters start again when the store is reopened.
      `  server: ${s.ingest.checkpoints >= checkpointsBefore ? s.ingest.checkpoints - checkpointsBefore : `${s.ingest.checkpoints} (store reopened)`} checkpoints (last ${s.ingest.lastCheckpointMs.toFixed(0)} ms), last commit ${s.ingest.lastCommitMs.toFixed(0)} ms, ` +
        `ack wait est. ${s.ingest.estimated_ack_wait_ms.toFixed(0)} ms, ${s.ingest.queued_tasks} queued tasks, ${(s.ingest.inflight_bytes / 2 ** 20).toFixed(0)} MiB in flight, ` +
        `DuckDB ${(s.memory.duckdb.memory_used_bytes / 2 ** 20).toFixed(0)} MiB, JS heap ${(s.memory.js_heap_bytes / 2 ** 20).toFixed(0)} MiB, diagnoses ${s.diagnoses.running} running ${s.diagnoses.waiting} waiting, ` +
        `detection pass ${s.detection.passes}${d ? ` ${(d.duration_ms / 1000).toFixed(1)} s (${d.buckets_closed} buckets)` : ''}\n  ${duckdbPeakText()}`,
      s.ingest.checkpoints,
    ];
  } catch (e) {
    return [`  server: /admin/status did not answer (${(e as Error).message})`, checkpointsBefore];
  }
}

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** Least-squares slope of ys against their index. */
function slope(ys: readonly number[]): number {
  const n = ys.length;
  if (n < 2) return 0;
  const mx = (n - 1) / 2;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  ys.forEach((y, x) => {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  });
  return num / den;
}

/** The minutes before the start at the offered density, 32 bodies in flight, each sent again until acknowledged. */
async function backfill(send: (body: Uint8Array) => Promise<number>): Promise<void> {
  const startUs = (Date.now() - BACKFILL_MINUTES * 60_000) * 1000;
  const stepUs = (PER_BODY / RATE) * 1e6;
  const total = Math.floor((BACKFILL_MINUTES * 60e6) / stepUs);
  const t = performance.now();
  let next = 0;
  let refused = 0;
  const worker = async () => {
    for (let k = next++; k < total; k = next++) {
      const body = realisticBatch(PER_BODY, Math.round(startUs + k * stepUs), SERVICE);
      for (;;) {
        const status = await send(body);
        if (status === 200) break;
        if (status !== 429 && status !== 503) throw new Error(`backfill: ingest answered ${status}`);
        refused++;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  const s = (performance.now() - t) / 1000;
  console.log(`backfill: ${BACKFILL_MINUTES} min, ${(total * PER_BODY).toLocaleString()} spans in ${s.toFixed(0)} s (${Math.round((total * PER_BODY) / s)} spans/s, ${refused} refused and sent again)`);
}

const srv = await startChildServer({ SVC_RETENTION_HOURS: '1', ...serverEnv() });
const errors: string[] = [];
/** Why diagnoses that ran failed, each reason once. */
const failures = new Set<string>();
const minutes: Minute[] = [];
const fresh = (): Minute => ({ acked: 0, refused: 0, errors: 0, acks: [], diagnoses: [], busy: 0, failed: 0, rssMiB: 0, peakRssMiB: 0 });
let cur = fresh();
let peakMiB = 0;
try {
  const send = poster(srv.otlpHttp, '/v1/traces', 'application/x-protobuf', 64);
  if (BACKFILL_MINUTES > 0) await backfill(send);
  const t0 = Date.now();
  const end = t0 + MINUTES * 60_000;
  // Bodies stamped with the current minute, made again each minute so the diagnosis window holds them;
  // each is sent ~37 times a minute, with new trace and span ids every time.
  const stamp = () => Array.from({ length: 64 }, (_v, i) => freshIdsBatch(PER_BODY, Date.now() * 1000 + i * 900_000, SERVICE));
  let bodies = stamp();
  const interval = (PER_BODY / RATE) * 1000;
  let sent = 0;
  const inflight = new Set<Promise<void>>();
  const diagnose = setInterval(() => {
    const t = performance.now();
    const to = Date.now() * 1000;
    void fetch(`${srv.api}/v1/diagnose`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ services: [SERVICE], from_ts: to - 15 * 60e6, to_ts: to }) })
      .then(async (r) => {
        const body = (await r.json()) as { results?: Record<string, unknown>; errors?: Record<string, string> };
        if (r.status !== 200) errors.push(`diagnose answered ${r.status}`);
        else if (r.headers.has('retry-after')) cur.busy++;
        else if (!body.results?.[SERVICE]) {
          cur.failed++;
          failures.add(body.errors?.[SERVICE] ?? 'no result and no error');
        }
        else cur.diagnoses.push(performance.now() - t);
      })
      .catch((e: Error) => errors.push(`diagnose failed: ${e.message}`));
  }, DIAGNOSE_S * 1000);
  const sampler = setInterval(() => {
    cur.peakRssMiB = Math.max(cur.peakRssMiB, rssMiB(srv.child.pid!));
    void sampleDuckdb(srv.api);
  }, 5000);
  let minuteEnd = t0 + 60_000;
  let checkpoints = 0;
  while (Date.now() < end) {
    const due = t0 + sent * interval;
    if (Date.now() < due) await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    const t = performance.now();
    const m = cur;
    const p: Promise<void> = send(bodies[sent % bodies.length]!())
      .then((status) => {
        if (status === 200) {
          m.acked += PER_BODY;
          m.acks.push(performance.now() - t);
        } else if (status === 429 || status === 503) m.refused++;
        else {
          m.errors++;
          errors.push(`ingest answered ${status}`);
        }
      })
      .catch((e: Error) => {
        m.errors++;
        errors.push(`ingest failed: ${e.message}`);
      })
      .finally(() => inflight.delete(p));
    inflight.add(p);
    sent++;
    if (Date.now() >= minuteEnd) {
      cur.rssMiB = rssMiB(srv.child.pid!);
      cur.peakRssMiB = Math.max(cur.peakRssMiB, cur.rssMiB);
      minutes.push(cur);
      const i = minutes.length;
      console.log(
        `minute ${String(i).padStart(2)}: ${Math.round(cur.acked / 60)} spans/s acked, ${cur.refused} refused, ack p50 ${quantile(cur.acks, 0.5).toFixed(0)} ms p99 ${quantile(cur.acks, 0.99).toFixed(0)} ms, ` +
          `diagnose p50 ${quantile(cur.diagnoses, 0.5).toFixed(0)} ms (${cur.diagnoses.length}, ${cur.busy} busy, ${cur.failed} failed), RSS ${cur.rssMiB.toFixed(0)} MiB` +
          (cur.errors ? `, ${cur.errors} ingest errors` : ''),
      );
      void statusLine(srv.api, checkpoints).then(([line, n]) => {
        checkpoints = n;
        console.log(line);
      });
      cur = fresh();
      minuteEnd += 60_000;
      bodies = stamp();
    }
  }
  clearInterval(diagnose);
  clearInterval(sampler);
  await Promise.all(inflight);
  peakMiB = srv.peakRss() / 2 ** 20;
} finally {
  await srv.stop();
  writeFileSync(LOG, srv.logs.map((l) => JSON.stringify(l)).join('\n') + '\n');
  console.log(`server log: ${LOG} (${srv.logs.length} lines)`);
  srv.cleanup();
}
const steady = minutes.slice(1); // the first minute warms caches and the JIT
// DuckDB's cache fills to its limit in the first minutes, a rise that is not a leak: the second half's slope is the leak's.
const late = minutes.slice(Math.floor(minutes.length / 2));
console.log(
  `\n${MINUTES} min at ${RATE} spans/s offered: RSS slope ${slope(steady.map((m) => m.rssMiB)).toFixed(1)} MiB/min (second half ${slope(late.map((m) => m.rssMiB)).toFixed(1)}), ack p99 slope ${slope(steady.map((m) => quantile(m.acks, 0.99))).toFixed(1)} ms/min; ` +
    `peak RSS ${peakMiB.toFixed(0)} MiB; diagnoses ${minutes.reduce((n, m) => n + m.diagnoses.length, 0)} answered, ${minutes.reduce((n, m) => n + m.busy, 0)} busy, ${minutes.reduce((n, m) => n + m.failed, 0)} failed; ${errors.length} errors${errors.length ? `: ${[...new Set(errors)].slice(0, 5).join('; ')}` : ''}`,
);
// The store's reopen (every ~9 minutes at 20,000 spans/s) makes RSS a sawtooth, which a slope over
// a few teeth misreads: a leak shows as peaks that keep rising from one block of minutes to the next.
const BLOCK = 10;
const blockPeaks = Array.from({ length: Math.floor(steady.length / BLOCK) }, (_v, b) => Math.max(...steady.slice(b * BLOCK, (b + 1) * BLOCK).map((m) => m.peakRssMiB)));
if (blockPeaks.length) console.log(`RSS peak in each ${BLOCK} minutes (from minute 2): ${blockPeaks.map((p) => p.toFixed(0)).join(', ')} MiB`);
if (failures.size) console.log(`diagnoses failed with: ${[...failures].slice(0, 5).join('; ')}`);
