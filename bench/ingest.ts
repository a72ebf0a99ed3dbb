// npm run bench:ingest — sustained end-to-end OTLP ingest (spans/s until durable) over gRPC and
// HTTP/protobuf, against references measured in the same run on the same spans: decoding alone
// (one core) and the storage limit (the fastest bulk load of the same rows into DuckDB found).
// Also reports the server's peak RSS and GET /v1/services p99 latency while the load runs.
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realisticBatch } from './lib/spans.js';
import { serverEnv, startChildServer } from './lib/server.js';
import { grpcUnary, poster } from './lib/post.js';
import { decodeOtlp } from '../src/pipeline/decode.js';
import { encodeBatches } from '../src/pipeline/encode.js';
import { loadSql } from '../src/store/csv.js';
import { STORE_CHECKPOINT_THRESHOLD } from '../src/store/db.js';
import { SPANS, createTableSql } from '../src/store/schema.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 15);
const BATCH = 512;
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 12);
const T0 = Date.now() * 1000 - 3_600_000_000;
const bodies = Array.from({ length: 32 }, (_v, i) => realisticBatch(BATCH, T0 + i * 10_000_000));
const spanBytes = bodies.reduce((a, b) => a + b.length, 0) / (bodies.length * BATCH);

function timed(seconds: number, fn: () => number): number {
  const end = performance.now() + seconds * 1000;
  let n = 0;
  const start = performance.now();
  while (performance.now() < end) n += fn();
  return n / ((performance.now() - start) / 1000);
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
}

interface Limit {
  /** Rows/s into the WAL: the load alone, below the checkpoint threshold. */
  load: number;
  /** Rows/s with the checkpoint that moves them into the database file, which sustained ingest pays too. */
  sustained: number;
}

/** One bulk load of the CSV files into a fresh svc_spans (one commit per file, like group commits). */
async function bulkLoad(dir: string, files: readonly string[], rows: number, threads: number): Promise<Limit> {
  const inst = await DuckDBInstance.create(join(dir, `lake-${threads}.duckdb`), { checkpoint_threshold: STORE_CHECKPOINT_THRESHOLD, threads: String(threads) });
  const conn = await inst.connect();
  await conn.run(createTableSql(SPANS));
  const start = performance.now();
  for (const f of files) await conn.run(loadSql(SPANS, [f]));
  const loaded = performance.now();
  await conn.run('CHECKPOINT');
  const done = performance.now();
  conn.closeSync();
  inst.closeSync();
  return { load: rows / ((loaded - start) / 1000), sustained: rows / ((done - start) / 1000) };
}

/** The fastest of the bulk loads tried: the store's CSV form and checkpoint threshold, on 1 and 2 threads. */
async function storageLimit(): Promise<Limit> {
  const dir = mkdtempSync(join(tmpdir(), 'tds-bench-'));
  try {
    const files: string[] = [];
    let rows = 0;
    for (let k = 0; k < 8; k++) {
      const parts = bodies.map((b) => encodeBatches(decodeOtlp('traces', 'protobuf', b).batches).parts[0]!);
      const f = join(dir, `${k}.csv`);
      writeFileSync(f, Buffer.concat(parts.map((p) => p.csv)));
      files.push(f);
      rows += parts.reduce((a, p) => a + p.rows, 0);
    }
    const rates: Limit[] = [];
    for (const threads of [1, 2]) rates.push(await bulkLoad(dir, files, rows, threads));
    const show = (k: keyof Limit) => rates.map((r) => r[k].toFixed(0)).join(' and ');
    console.log(`           bulk load on 1 and 2 DuckDB threads: ${show('load')} spans/s; with the checkpoint: ${show('sustained')}`);
    return { load: Math.max(...rates.map((r) => r.load)), sustained: Math.max(...rates.map((r) => r.sustained)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Sender = (body: Uint8Array) => Promise<boolean>;

async function load(send: Sender, apiBase: string, cpuSeconds: () => number): Promise<{ spansPerSec: number; servicesP99: number; servicesP50: number; errors: number; cpuUsPerSpan: number; cores: number; loadCores: number }> {
  let acked = 0;
  let errors = 0;
  let stop = false;
  const lat: number[] = [];
  const started = performance.now();
  const cpu0 = cpuSeconds();
  const own0 = process.cpuUsage();
  const workers = Array.from({ length: CONCURRENCY }, async (_v, w) => {
    let i = w;
    while (!stop) {
      if (await send(bodies[i++ % bodies.length]!)) acked += BATCH;
      else errors++;
    }
  });
  const poller = (async () => {
    while (!stop) {
      const t = performance.now();
      const res = await fetch(`${apiBase}/v1/services`);
      await res.arrayBuffer();
      lat.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  stop = true;
  await Promise.all([...workers, poller]);
  const wall = (performance.now() - started) / 1000;
  const cpu = cpuSeconds() - cpu0;
  const own = process.cpuUsage(own0);
  const loadCores = (own.user + own.system) / 1e6 / wall;
  return { spansPerSec: acked / wall, servicesP50: quantile(lat, 0.5), servicesP99: quantile(lat, 0.99), errors, cpuUsPerSpan: (cpu * 1e6) / acked, cores: cpu / wall, loadCores };
}

async function main(): Promise<void> {
  console.log(`realistic span: ${spanBytes.toFixed(0)} bytes on the wire; batches of ${BATCH}; ${CONCURRENCY} concurrent senders; ${SECONDS}s per run`);
  const decodeRate = timed(3, () => decodeOtlp('traces', 'protobuf', bodies[0]!).accepted);
  const workerRate = timed(3, () => encodeBatches(decodeOtlp('traces', 'protobuf', bodies[0]!).batches).parts[0]!.rows);
  const storage = await storageLimit();
  console.log(`reference  decode alone (1 core)            ${decodeRate.toFixed(0).padStart(9)} spans/s`);
  console.log(`reference  decode + CSV encode (1 core)     ${workerRate.toFixed(0).padStart(9)} spans/s`);
  console.log(`reference  storage limit (read_csv INSERT)  ${storage.load.toFixed(0).padStart(9)} spans/s`);
  console.log(`reference  ... with its checkpoint          ${storage.sustained.toFixed(0).padStart(9)} spans/s`);

  for (const transport of ['otlp-http/protobuf', 'otlp-grpc'] as const) {
    const srv = await startChildServer({ SVC_FLUSH_INTERVAL_MS: '50', ...serverEnv() });
    try {
      let send: Sender;
      let close = () => {};
      if (transport === 'otlp-grpc') {
        const client = grpcUnary(srv.otlpGrpc, '/opentelemetry.proto.collector.trace.v1.TraceService/Export');
        send = async (body) => (await client.send(body)) === 0;
        close = () => client.close();
      } else {
        const post = poster(srv.otlpHttp, '/v1/traces', 'application/x-protobuf', CONCURRENCY);
        send = async (body) => (await post(body)) === 200;
      }
      const r = await load(send, srv.api, () => srv.cpuSeconds());
      close();
      const rss = srv.peakRss();
      console.log(
        `end-to-end ${transport.padEnd(20)} ${r.spansPerSec.toFixed(0).padStart(9)} spans/s durable  ` +
          `= ${((100 * r.spansPerSec) / storage.load).toFixed(0)}% of the storage limit (${((100 * r.spansPerSec) / storage.sustained).toFixed(0)}% with its checkpoint), ${(r.spansPerSec / decodeRate).toFixed(2)}x decode-alone; ` +
          `server CPU ${r.cpuUsPerSpan.toFixed(1)} µs a span (${r.cores.toFixed(2)} cores; load generator ${r.loadCores.toFixed(2)}); ` +
          `peak RSS ${(rss / 2 ** 20).toFixed(0)} MiB; /v1/services p50 ${r.servicesP50.toFixed(1)} ms p99 ${r.servicesP99.toFixed(1)} ms; refused ${r.errors}`,
      );
    } finally {
      await srv.stop();
      srv.cleanup();
    }
  }
}

await main();
