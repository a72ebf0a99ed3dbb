// A quiet sender beside a load: one export every 50 ms from a process of its own, timed from send to
// answer. The load generator's own timings include its event loop's wait, which 400 senders on the
// same 2 cores make long; this sender's loop is idle, so its timings are the server's answer plus
// the network, as one exporter among a fleet would see them.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { grpcUnary, poster } from '../../testkit/post.js';
import { realisticBatch } from '../../testkit/spans.js';
import { WARMUP_SECONDS } from './sustain.js';

const ALL_TRANSPORTS = ['otlp-http/protobuf', 'otlp-grpc'] as const;
export type Transport = (typeof ALL_TRANSPORTS)[number];

/** BENCH_TRANSPORTS: a comma list of the transports a benchmark runs (default both). */
export function benchTransports(): Transport[] {
  return (process.env['BENCH_TRANSPORTS']?.split(',') ?? ALL_TRANSPORTS).map((t) => {
    const known = ALL_TRANSPORTS.find((k) => k === t.trim());
    if (!known) throw new Error(`BENCH_TRANSPORTS: unknown transport ${t} (known: ${ALL_TRANSPORTS.join(', ')})`);
    return known;
  });
}

export interface QuietTimings {
  /** ms from sending an export to its refusal, and to its acknowledgement. */
  refused: number[];
  acked: number[];
  /** Spans acknowledged over the whole run, warm-up included (what the store must hold). */
  ackedSpans: number;
}

const EVERY_MS = 50;

/** Starts the sender against `target` (gRPC: host:port; HTTP: the base URL); stop() ends it and gives its timings after the warm-up. */
export function quietSender(transport: Transport, target: string): { stop(): Promise<QuietTimings> } {
  const child = fork(fileURLToPath(import.meta.url), [transport, target], { stdio: 'inherit' });
  const done = new Promise<QuietTimings>((resolve, reject) => {
    child.once('message', (m) => resolve(m as QuietTimings));
    child.once('exit', (code) => reject(new Error(`quiet sender exited (${code}) without its timings`)));
  });
  done.catch(() => {}); // a sender that died early is reported by stop(), not as an unhandled rejection mid-run
  return {
    stop: () => {
      child.send('stop');
      return done;
    },
  };
}

async function main(transport: Transport, target: string): Promise<void> {
  const PER_BODY = 512;
  const body = realisticBatch(PER_BODY, Date.now() * 1000, 'quiet');
  let send: () => Promise<boolean>;
  let close = () => {};
  if (transport === 'otlp-grpc') {
    const client = grpcUnary(target, '/opentelemetry.proto.collector.trace.v1.TraceService/Export');
    send = async () => (await client.send(body)) === 0;
    close = () => client.close();
  } else {
    const post = poster(target, '/v1/traces', 'application/x-protobuf', 1);
    send = async () => (await post(body)) === 200;
  }
  let stop = false;
  process.once('message', () => (stop = true));
  process.once('disconnect', () => process.exit(0)); // the benchmark ended without asking
  const counted = performance.now() + WARMUP_SECONDS * 1000;
  const timings: QuietTimings = { refused: [], acked: [], ackedSpans: 0 };
  while (!stop) {
    const t = performance.now();
    const ok = await send();
    if (ok) timings.ackedSpans += PER_BODY;
    if (t >= counted) (ok ? timings.acked : timings.refused).push(performance.now() - t);
    await new Promise((r) => setTimeout(r, EVERY_MS));
  }
  close();
  process.send!(timings, () => process.exit(0));
}

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2] as Transport, process.argv[3]!);
