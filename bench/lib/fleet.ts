// A fleet of closed-loop OTLP senders in processes of their own: each sends its next export as soon
// as the last one is answered, acknowledged or refused alike (a fleet that never backs off), and
// times every answer from the moment the export was handed to the socket. Processes of their own keep
// the benchmark's sampling of the server off the fleet's event loops; at most SENDERS_PER_PROCESS
// senders share one, as 400 senders on one event loop waited for it longer than for the server.
import { fork, type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { grpcUnary, poster } from '../../testkit/post.js';
import { realisticBatch } from '../../testkit/spans.js';
import type { Transport } from './quiet-sender.js';

export interface FleetOptions {
  transport: Transport;
  /** gRPC: host:port; HTTP: the base URL. */
  target: string;
  senders: number;
  spansPerExport: number;
  /** Seconds sent before the counted window (answers in it are tallied, not timed). */
  warmupSeconds: number;
  seconds: number;
  service: string;
}

export interface FleetResult {
  /** Acknowledged spans over the whole run, warm-up and the last answers after the window included (what the store must hold). */
  ackedSpans: number;
  /** Spans acknowledged within the counted window, and its length. */
  windowAckedSpans: number;
  windowSeconds: number;
  /** ms from handing an export to the socket to its acknowledgement / refusal, within the window. */
  acks: number[];
  refusals: number[];
  /** Answers by HTTP status or `grpc <code>`, and transport errors by message, over the whole run. */
  answers: Record<string, number>;
  /** Cores the fleet's processes used over the window, and the longest of their event loops' delays at p99 (ms): what of the timings is the fleet's own wait. */
  cores: number;
  loopDelayP99: number;
}

/** Answers a refusal of ours gives: 429 over OTLP/HTTP, UNAVAILABLE over gRPC. */
const REFUSED = new Set(['429', 'grpc 14']);
/**
 * What an OTLP/HTTP sender still writing its body sees when the server answered 429 before reading it
 * and closed the connection (api/http.ts): the reset can reach node:http before the answer does. It is
 * timed as a refusal; the benchmark tallies it apart, and any other transport error is a fault.
 */
export const RESET_AFTER_REFUSAL = new Set(['error EPIPE', 'error ECONNRESET']);
const ACKED = new Set(['200', 'grpc 0']);

/** Senders that share one process (event loop). */
const SENDERS_PER_PROCESS = 100;

/** Runs a fleet in child processes that start sending together; resolves with their tallies once every last export is answered. */
export async function runFleet(o: FleetOptions): Promise<FleetResult> {
  const processes = Math.ceil(o.senders / SENDERS_PER_PROCESS);
  const shares = Array.from({ length: processes }, (_v, i) => Math.floor(o.senders / processes) + (i < o.senders % processes ? 1 : 0));
  const children = shares.map((senders) => fork(fileURLToPath(import.meta.url), [JSON.stringify({ ...o, senders })], { stdio: 'inherit' }));
  const message = (child: ChildProcess) =>
    new Promise<unknown>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`fleet process exited (${code}) without its tallies`));
      child.once('exit', onExit);
      child.once('message', (m) => {
        child.off('exit', onExit);
        resolve(m);
      });
    });
  await Promise.all(children.map(message)); // ready: bodies made
  const results = children.map((child) => message(child) as Promise<FleetResult>);
  for (const child of children) child.send('go');
  return merge(await Promise.all(results));
}

function merge(parts: readonly FleetResult[]): FleetResult {
  const answers: Record<string, number> = {};
  for (const p of parts) for (const [k, n] of Object.entries(p.answers)) answers[k] = (answers[k] ?? 0) + n;
  return {
    ackedSpans: parts.reduce((a, p) => a + p.ackedSpans, 0),
    windowAckedSpans: parts.reduce((a, p) => a + p.windowAckedSpans, 0),
    windowSeconds: parts[0]!.windowSeconds,
    acks: parts.flatMap((p) => p.acks),
    refusals: parts.flatMap((p) => p.refusals),
    answers,
    cores: parts.reduce((a, p) => a + p.cores, 0),
    loopDelayP99: Math.max(...parts.map((p) => p.loopDelayP99)),
  };
}

async function main(o: FleetOptions): Promise<void> {
  // A few distinct bodies, as many exporters' batches differ; each about 650 bytes a span.
  const t0 = Date.now() * 1000 - 600_000_000;
  const bodies = Array.from({ length: 4 }, (_v, i) => realisticBatch(o.spansPerExport, t0 + i * 1_000_000, o.service));
  let send: (body: Uint8Array) => Promise<string>;
  let close = () => {};
  if (o.transport === 'otlp-grpc') {
    const client = grpcUnary(o.target, '/opentelemetry.proto.collector.trace.v1.TraceService/Export', o.senders);
    send = async (body) => `grpc ${await client.send(body)}`;
    close = () => client.close();
  } else {
    const post = poster(o.target, '/v1/traces', 'application/x-protobuf', o.senders);
    send = async (body) => String(await post(body));
  }
  process.send!('ready');
  await new Promise((resolve) => process.once('message', resolve));
  const start = performance.now();
  const from = start + o.warmupSeconds * 1000;
  const until = from + o.seconds * 1000;
  const r: FleetResult = { ackedSpans: 0, windowAckedSpans: 0, windowSeconds: o.seconds, acks: [], refusals: [], answers: {}, cores: 0, loopDelayP99: 0 };
  const delay = monitorEventLoopDelay({ resolution: 10 });
  let cpu0 = process.cpuUsage();
  let cpu: NodeJS.CpuUsage | undefined;
  setTimeout(() => {
    cpu0 = process.cpuUsage();
    delay.enable();
  }, o.warmupSeconds * 1000).unref();
  setTimeout(() => {
    cpu = process.cpuUsage(cpu0);
    delay.disable();
  }, (o.warmupSeconds + o.seconds) * 1000).unref();
  const sender = async (w: number) => {
    for (let i = w; performance.now() < until; i++) {
      const sent = performance.now();
      let answer: string;
      try {
        answer = await send(bodies[i % bodies.length]!);
      } catch (e) {
        answer = `error ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
      }
      const done = performance.now();
      r.answers[answer] = (r.answers[answer] ?? 0) + 1;
      if (ACKED.has(answer)) r.ackedSpans += o.spansPerExport;
      if (sent < from || done > until) continue;
      if (ACKED.has(answer)) {
        r.windowAckedSpans += o.spansPerExport;
        r.acks.push(done - sent);
      } else if (REFUSED.has(answer) || (o.transport !== 'otlp-grpc' && RESET_AFTER_REFUSAL.has(answer))) r.refusals.push(done - sent);
    }
  };
  await Promise.all(Array.from({ length: o.senders }, (_v, w) => sender(w)));
  cpu ??= process.cpuUsage(cpu0);
  r.cores = (cpu.user + cpu.system) / 1e6 / o.seconds;
  r.loopDelayP99 = delay.percentile(99) / 1e6;
  close();
  process.send!(r, () => process.exit(0));
}

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) await main(JSON.parse(process.argv[2]!) as FleetOptions);
