// Sustained load for the end-to-end ingest benchmarks: `concurrency` closed-loop senders cycle
// through the bodies for SECONDS; the server's CPU and the load generator's own are measured over
// the same window, so the figures come out per acknowledged item. Closed-loop senders offer at most
// `concurrency` requests at a time, so the rate they see is capped by concurrency / acknowledgement
// latency (Little's law) before the server is: the benchmarks run several sender counts.

/** Seconds measured in each run (BENCH_SECONDS), after WARMUP_SECONDS that are not counted. */
export const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 30);
export const WARMUP_SECONDS = 5;

/** The sender counts to run: BENCH_CONCURRENCY (a comma list) or the benchmark's own. */
export function senderCounts(defaults: readonly number[]): number[] {
  const raw = process.env['BENCH_CONCURRENCY'];
  return raw ? raw.split(',').map(Number) : [...defaults];
}

/** How the runs are made, for a benchmark's header line. */
export function runPlan(senders: readonly number[]): string {
  return `${senders.join(' and ')} concurrent senders; ${SECONDS}s per run after ${WARMUP_SECONDS}s of warm-up`;
}

export interface SustainOptions {
  bodies: readonly Uint8Array[];
  /** Items (spans, lines) in each body. */
  perBody: number;
  concurrency: number;
  /** Sends one body; true when it was acknowledged. */
  send(body: Uint8Array): Promise<boolean>;
  /** CPU seconds the server has used so far. */
  serverCpuSeconds(): number;
}

export interface Sustained {
  /** Items acknowledged per second. */
  rate: number;
  refused: number;
  /** Server CPU per acknowledged item, µs. */
  cpuUsPerItem: number;
  /** Cores the server used on average. */
  cores: number;
  /** Cores this process (the load generator) used on average. */
  loadCores: number;
  /** Time from sending a request to its acknowledgement, ms. */
  ackP50: number;
  ackP99: number;
  /** Time from sending a request to its refusal, ms (NaN when none was refused). */
  refusalP50: number;
  refusalP99: number;
}

export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
}

export async function sustain(o: SustainOptions): Promise<Sustained> {
  let acked = 0;
  let stop = false;
  let acks: number[] = [];
  let refusals: number[] = [];
  const senders = Array.from({ length: o.concurrency }, async (_v, w) => {
    let i = w;
    while (!stop) {
      const sent = performance.now();
      if (await o.send(o.bodies[i++ % o.bodies.length]!)) {
        acked += o.perBody;
        acks.push(performance.now() - sent);
      } else refusals.push(performance.now() - sent);
    }
  });
  // An empty store and a WAL far from its first checkpoint would flatter the first seconds.
  await new Promise((r) => setTimeout(r, WARMUP_SECONDS * 1000));
  acked = 0;
  acks = [];
  refusals = [];
  const started = performance.now();
  const cpu0 = o.serverCpuSeconds();
  const own0 = process.cpuUsage();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const wall = (performance.now() - started) / 1000;
  const cpu = o.serverCpuSeconds() - cpu0;
  const own = process.cpuUsage(own0);
  const done = { acked, acks, refusals };
  stop = true;
  await Promise.all(senders);
  return {
    rate: done.acked / wall,
    refused: done.refusals.length,
    cpuUsPerItem: (cpu * 1e6) / done.acked,
    cores: cpu / wall,
    loadCores: (own.user + own.system) / 1e6 / wall,
    ackP50: quantile(done.acks, 0.5),
    ackP99: quantile(done.acks, 0.99),
    refusalP50: quantile(done.refusals, 0.5),
    refusalP99: quantile(done.refusals, 0.99),
  };
}
