// npm run bench:logs-ingest — end-to-end OTLP/HTTP log ingest with template mining (lines/s until
// durable), and the cost mining adds: one core's decode → CSV of the same batches without mining
// against decode → mine → CSV, measured in the same run. Runs each sender count of BENCH_CONCURRENCY
// against a fresh server, for 30 s by default: a log checkpoint stops commits for ~2 s about every
// 12 s, and a shorter window that missed one overstated the sustained rate.
import { loghubLines, encodeLogs } from './lib/logs.js';
import { withBenchServer } from '../testkit/server.js';
import { poster } from '../testkit/post.js';
import { runPlan, senderCounts, sustain } from './lib/sustain.js';
import { decodeOtlp } from '../src/pipeline/decode/otlp/index.js';
import { encodeBatches } from '../src/pipeline/encode.js';
import { createMiner } from '../src/pipeline/logminer/index.js';
import { mineLogs } from '../src/pipeline/logs-task.js';

const BATCH = 1000;
const CONCURRENCY = senderCounts([8, 16, 32]);

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
  console.log(`log lines: ${source}; batches of ${BATCH}; ${runPlan(CONCURRENCY)}`);

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

  for (const senders of CONCURRENCY) {
    await withBenchServer(async (srv) => {
      const post = poster(srv.otlpHttp, '/v1/logs', 'application/x-protobuf', senders);
      const r = await sustain({
        bodies,
        perBody: BATCH,
        concurrency: senders,
        send: async (body) => (await post(body)) === 200,
        serverCpuSeconds: () => srv.cpuSeconds(),
      });
      console.log(
        `end-to-end logs, mined, ${String(senders).padStart(3)} senders  ${r.rate.toFixed(0).padStart(9)} lines/s durable (${(r.rate / mined).toFixed(2)}x the one-core mined reference); ` +
          `ack p50 ${r.ackP50.toFixed(0)} ms p99 ${r.ackP99.toFixed(0)} ms; server CPU ${r.cpuUsPerItem.toFixed(1)} µs a line (${r.cores.toFixed(2)} cores; load generator ${r.loadCores.toFixed(2)}); ` +
          `peak RSS ${(srv.peakRss() / 2 ** 20).toFixed(0)} MiB; refused ${r.refused}`,
      );
    });
  }
}

await main();
