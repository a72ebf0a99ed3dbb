// npm run bench:harness — benchmark-harness runs (issue 48), each against a reference measured in
// the same run on the same spans:
//   - replay: `tds replay` (the CLI as a process of its own) of a recording of the ingest benchmark's
//     spans, protobuf as the Collector file exporter frames it and OTLP/JSON lines, against live
//     ingest of the same bodies by closed-loop senders (lib/sustain.ts) in the same encoding, with
//     as many requests in flight;
//   - snapshot: `tds snapshot` of a store of 1,048,576 spans, against DuckDB's own COPY of the same
//     rows to zstd Parquet on the store's file (the server's DuckDB threads);
//   - restore: `tds restore` of that snapshot into a fresh server, and again into the same one (every
//     row a duplicate), against DuckDB's own INSERT of the Parquet into a fresh store file.
// BENCH_CONCURRENCY: requests in flight (default 32); BENCH_SECONDS: seconds of each live run.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { freshIdsBatch, protoRoot } from '../testkit/spans.js';
import { withBenchServer, type ChildServer } from '../testkit/server.js';
import { poster } from '../testkit/post.js';
import { SECONDS, WARMUP_SECONDS, senderCounts, sustain } from './lib/sustain.js';
import { PACKAGE_ROOT } from '../src/core/paths.js';
import { walkRequest } from '../src/cli/replay/wire.js';
import { duckdbThreads, loadConfig } from '../src/core/config.js';
import { STORE_CHECKPOINT_THRESHOLD, storeAttachOptions } from '../src/store/db.js';
import { SPANS, createTableSql } from '../src/store/schema.js';

const BATCH = 512;
const CONCURRENCY = senderCounts([32])[0]!;
/** Requests of the recordings: 2,048 × 512 = 1,048,576 spans in protobuf, half of them in OTLP/JSON (its lines are three times larger). */
const PB_REQUESTS = 2048;
const JSON_REQUESTS = 1024;
/** Bodies the live senders cycle through (the ingest benchmark's way: 32 there). */
const LIVE_BODIES = 256;
const T0 = Date.now() * 1000 - 3_600_000_000;
/** The recordings' spans, each with ids of its own (one body a second of the hour before now). */
const fresh = freshIdsBatch(BATCH, T0);
/** Request k of a recording: fresh ids, its timestamps k seconds after the first request's. */
const body = (k: number) => {
  const b = fresh();
  walkRequest(b, 'traces', { shiftNs: BigInt(k) * 1_000_000_000n });
  return b;
};
const THREADS = duckdbThreads(loadConfig(process.env));

/** The same request as OTLP/JSON: protojson's names, 64-bit integers as strings, ids as hex. */
function otlpJson(body: Uint8Array): string {
  const T = protoRoot().lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  return JSON.stringify(T.toObject(T.decode(body), { longs: String, bytes: String }), (k, v) =>
    (k === 'traceId' || k === 'spanId' || k === 'parentSpanId') && typeof v === 'string' ? Buffer.from(v, 'base64').toString('hex') : v,
  );
}
/**
 * A recording directory of `requests` requests in files of 256, protobuf as the Collector file
 * exporter frames it or OTLP/JSON lines; the first LIVE_BODIES requests are also what the live
 * senders send.
 */
function recording(root: string, kind: 'pb' | 'jsonl', requests: number): { dir: string; live: Uint8Array[]; spans: number } {
  const dir = join(root, kind);
  mkdirSync(dir);
  const live: Uint8Array[] = [];
  let fd = -1;
  for (let k = 0; k < requests; k++) {
    if (k % 256 === 0) {
      if (fd >= 0) closeSync(fd);
      fd = openSync(join(dir, `traces-${String(k / 256).padStart(3, '0')}.${kind}`), 'w');
    }
    const b = body(k);
    const payload = kind === 'pb' ? b : Buffer.from(otlpJson(b));
    if (k < LIVE_BODIES) live.push(payload);
    if (kind === 'pb') {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(b.length);
      writeSync(fd, len);
      writeSync(fd, b);
    } else {
      writeSync(fd, payload);
      writeSync(fd, '\n');
    }
  }
  closeSync(fd);
  return { dir, live, spans: requests * BATCH };
}

interface CliRun {
  out: any;
  seconds: number;
  /** The progress lines the CLI wrote to stderr (replay), parsed. */
  progress: { elapsed_s: number; records_acknowledged: number }[];
  /** CPU seconds of the CLI process (user + system). */
  cpu: number;
  serverCpu: number;
}

/** Runs the built CLI as its own process (as a harness does), timed from spawn to exit. */
function tds(srv: ChildServer, args: string[]): Promise<CliRun> {
  const cli = join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');
  const quoted = [cli, ...args, '--url', srv.api].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const cpu0 = srv.cpuSeconds();
    const start = performance.now();
    const child = spawn('bash', ['-c', `TIMEFORMAT='%U %S'; time ${process.execPath} ${quoted}`], { env: { PATH: process.env['PATH'] ?? '', SVC_OTLP_URL: srv.otlpHttp }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      const seconds = (performance.now() - start) / 1000;
      const lines = err.trim().split('\n');
      const times = lines.at(-1)!.split(' ').map(Number);
      if (code !== 0) return reject(new Error(`tds ${args[0]} exited ${code}: ${out.slice(0, 2000)} ${err.slice(-2000)}`));
      const progress = lines.filter((l) => l.startsWith('{"event":"progress"')).map((l) => JSON.parse(l) as { elapsed_s: number; records_acknowledged: number });
      resolve({ out: JSON.parse(out), seconds, progress, cpu: times[0]! + times[1]!, serverCpu: srv.cpuSeconds() - cpu0 });
    });
  });
}

async function live(contentType: string, payloads: readonly Uint8Array[]) {
  return withBenchServer(async (srv) => {
    const post = poster(srv.otlpHttp, '/v1/traces', contentType, CONCURRENCY);
    return sustain({ bodies: payloads, perBody: BATCH, concurrency: CONCURRENCY, send: async (b) => (await post(b)) === 200, serverCpuSeconds: () => srv.cpuSeconds() });
  });
}

async function replay(dir: string, spans: number) {
  return withBenchServer(async (srv) => {
    const r = await tds(srv, ['replay', dir, '--concurrency', String(CONCURRENCY)]);
    const acked = r.out.records.acknowledged as number;
    if (acked !== spans || r.out.records.rejected) throw new Error(`replay acknowledged ${acked} of ${spans}: ${JSON.stringify(r.out).slice(0, 1000)}`);
    // After the same warm-up the live runs leave out, from the CLI's own progress lines.
    const from = r.progress.find((p) => p.elapsed_s >= WARMUP_SECONDS);
    const to = r.progress.at(-1);
    const steady = from && to && to.elapsed_s > from.elapsed_s ? (to.records_acknowledged - from.records_acknowledged) / (to.elapsed_s - from.elapsed_s) : NaN;
    return { rate: acked / r.seconds, steady, seconds: r.seconds, cpuUs: (r.cpu * 1e6) / acked, serverCpuUs: (r.serverCpu * 1e6) / acked };
  });
}

/** DuckDB's own COPY of the store's spans to zstd Parquet, on the server's thread count: the reference of a snapshot. */
async function copyReference(storeFile: string, out: string): Promise<number> {
  const inst = await DuckDBInstance.create(':memory:', { threads: String(THREADS) });
  const c = await inst.connect();
  try {
    await c.run(`ATTACH '${storeFile}' AS lake (READ_ONLY)`);
    const start = performance.now();
    await c.run(`COPY (SELECT * FROM lake.svc_spans) TO '${out}' (FORMAT parquet, COMPRESSION zstd)`);
    return (performance.now() - start) / 1000;
  } finally {
    c.closeSync();
    inst.closeSync();
  }
}

/** DuckDB's own INSERT of a spans Parquet file into a fresh store file, checkpoint included: the reference of a restore. */
async function insertReference(dir: string, parquet: string): Promise<number> {
  const path = join(dir, 'reference.duckdb');
  const inst = await DuckDBInstance.create(':memory:', { threads: String(THREADS), checkpoint_threshold: STORE_CHECKPOINT_THRESHOLD, max_vacuum_tasks: '0' });
  const c = await inst.connect();
  try {
    await c.run(`ATTACH '${path}' AS lake ${storeAttachOptions()}`);
    await c.run('USE lake');
    await c.run(createTableSql(SPANS));
    const start = performance.now();
    await c.run(`INSERT INTO svc_spans SELECT * FROM read_parquet('${parquet}')`);
    await c.run('CHECKPOINT');
    return (performance.now() - start) / 1000;
  } finally {
    c.closeSync();
    inst.closeSync();
    rmSync(path, { force: true });
  }
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'tds-bench-harness-'));
  try {
    const pb = recording(root, 'pb', PB_REQUESTS);
    const jsonl = recording(root, 'jsonl', JSON_REQUESTS);
    console.log(
      `bench:harness — recordings of ${fmt(pb.spans)} (protobuf) and ${fmt(jsonl.spans)} (OTLP/JSON) spans with ids of their own, ${BATCH} a request; ${CONCURRENCY} requests in flight; ` +
        `live runs ${SECONDS}s after ${WARMUP_SECONDS}s of warm-up over ${LIVE_BODIES} of the same requests; DuckDB threads ${THREADS}`,
    );
    for (const [name, contentType, rec] of [
      ['protobuf', 'application/x-protobuf', pb],
      ['OTLP/JSON', 'application/json', jsonl],
    ] as const) {
      const a = await live(contentType, rec.live);
      const r = await replay(rec.dir, rec.spans);
      const b = await live(contentType, rec.live);
      const ref = (a.rate + b.rate) / 2;
      console.log(
        `replay ${name.padEnd(9)} ${fmt(r.steady).padStart(8)} spans/s after ${WARMUP_SECONDS} s = ${((100 * r.steady) / ref).toFixed(0)}% of live ingest ${fmt(ref)} spans/s ` +
          `(runs before and after: ${fmt(a.rate)}, ${fmt(b.rate)}; server ${a.cpuUsPerItem.toFixed(1)} µs a span); ` +
          `start to exit ${fmt(r.rate)} spans/s, ${((100 * r.rate) / ref).toFixed(0)}% (${r.seconds.toFixed(1)} s; CLI ${r.cpuUs.toFixed(1)} µs and server ${r.serverCpuUs.toFixed(1)} µs of CPU a span)`,
      );
    }
    // Snapshot and restore of a 1,048,576-span store.
    const snap = join(root, 'snap');
    let storeFile = '';
    const filled = await withBenchServer(async (srv) => {
      await tds(srv, ['replay', pb.dir, '--concurrency', String(CONCURRENCY)]);
      const s = await tds(srv, ['snapshot', '--from-ts', String(T0 - 3_600_000_000), '--to-ts', String(Date.now() * 1000), snap]);
      storeFile = join(srv.dataDir, 'lake.duckdb');
      // The reference reads the same file once the server has closed it (withBenchServer removes it after).
      await srv.stop();
      const ref = await copyReference(storeFile, join(root, 'reference.parquet'));
      return { s, ref };
    });
    const spansRows = filled.s.out.tables.find((t: { name: string }) => t.name === 'svc_spans').rows as number;
    console.log(
      `snapshot  ${fmt(spansRows)} spans (${fmt(filled.s.out.rows)} rows in all, ${(filled.s.out.bytes / 2 ** 20).toFixed(0)} MiB of Parquet): ${filled.s.seconds.toFixed(2)} s ` +
        `(server ${filled.s.serverCpu.toFixed(1)} CPU s); DuckDB's own COPY of the spans ${filled.ref.toFixed(2)} s: ${(filled.s.seconds / filled.ref).toFixed(2)}x`,
    );
    const manifest = JSON.parse(readFileSync(join(snap, 'manifest.json'), 'utf8')) as { tables: { rows: number }[] };
    const total = manifest.tables.reduce((a, t) => a + t.rows, 0);
    const ref = await insertReference(root, join(snap, 'svc_spans.parquet'));
    await withBenchServer(async (srv) => {
      const fresh = await tds(srv, ['restore', snap]);
      const again = await tds(srv, ['restore', snap]);
      console.log(
        `restore   into a fresh store ${fmt(total / fresh.seconds)} rows/s (${fmt(total)} rows in ${fresh.seconds.toFixed(2)} s); again, every row a duplicate, ${fmt(total / again.seconds)} rows/s (${again.seconds.toFixed(2)} s); ` +
          `DuckDB's own INSERT of the spans ${fmt(spansRows / ref)} rows/s: ${(total / fresh.seconds / (spansRows / ref)).toFixed(2)}x`,
      );
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
