// npm run bench:logs-ingest — end-to-end OTLP/HTTP log ingest with template mining (lines/s until
// durable), and the cost mining adds: one core's decode → CSV of the same batches without mining
// against decode → mine → CSV, measured in the same run.
import { loghubLines, encodeLogs } from './lib/logs.js';
import { serverEnv, startChildServer } from './lib/server.js';
import { poster } from './lib/post.js';
import { decodeOtlp } from '../src/pipeline/decode.js';
import { encodeBatches } from '../src/pipeline/encode.js';
import { createMiner } from '../src/pipeline/logminer/index.js';
import { mineLogs } from '../src/pipeline/logs-task.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);
const BATCH = 1000;
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 8);

function perSecond(seconds: number, fn: () => number): number {
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  let n = 0;
  while (performance.now() < end) n += fn();
  return n / ((performance.now() - start) / 1000);
}

async function main(): Promise<void> {
  const { lines, source } = loghubLines();
  const t0 = Date.now() * 1000 - 600_000_000;
  const bodies: Uint8Array[] = [];
  for (let off = 0; off + BATCH <= lines.length; off += BATCH) bodies.push(encodeLogs(`svc-${(off / BATCH) % 8}`, lines.slice(off, off + BATCH), t0 + off));
  console.log(`log lines: ${source}; batches of ${BATCH}; ${CONCURRENCY} concurrent senders; ${SECONDS}s`);

  let k = 0;
  const plain = perSecond(3, () => {
    const d = decodeOtlp('logs', 'protobuf', bodies[k++ % bodies.length]!);
    return encodeBatches(d.batches).parts[0]!.rows;
  });
  const miner = createMiner();
  const mined = perSecond(3, () => {
    const d = decodeOtlp('logs', 'protobuf', bodies[k++ % bodies.length]!);
    mineLogs(miner, d.batches[0]!);
    return encodeBatches(d.batches).parts[0]!.rows;
  });
  console.log(`reference  decode + CSV (1 core)            ${plain.toFixed(0).padStart(9)} lines/s`);
  console.log(`with       decode + mine + CSV (1 core)     ${mined.toFixed(0).padStart(9)} lines/s  (mining adds ${(1e6 / mined - 1e6 / plain).toFixed(2)} µs a line, ${((plain / mined - 1) * 100).toFixed(0)}%)`);

  const srv = await startChildServer({ SVC_FLUSH_INTERVAL_MS: '50', ...serverEnv() });
  try {
    let acked = 0;
    let refused = 0;
    let stop = false;
    const post = poster(srv.otlpHttp, '/v1/logs', 'application/x-protobuf', CONCURRENCY);
    const started = performance.now();
    const cpu0 = srv.cpuSeconds();
    const senders = Array.from({ length: CONCURRENCY }, async (_v, w) => {
      let i = w;
      while (!stop) {
        const body = bodies[i++ % bodies.length]!;
        if ((await post(body)) === 200) acked += BATCH;
        else refused++;
      }
    });
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    stop = true;
    await Promise.all(senders);
    const wall = (performance.now() - started) / 1000;
    const cpu = srv.cpuSeconds() - cpu0;
    const rate = acked / wall;
    console.log(
      `end-to-end otlp-http/protobuf logs, mined   ${rate.toFixed(0).padStart(9)} lines/s durable (${(rate / mined).toFixed(2)}x the one-core mined reference); ` +
        `server CPU ${((cpu * 1e6) / acked).toFixed(1)} µs a line (${(cpu / wall).toFixed(2)} cores); peak RSS ${(srv.peakRss() / 2 ** 20).toFixed(0)} MiB; refused ${refused}`,
    );
  } finally {
    await srv.stop();
    srv.cleanup();
  }
}

await main();
