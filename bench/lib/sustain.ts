// Sustained load for the end-to-end ingest benchmarks: `concurrency` closed-loop senders cycle
// through the bodies for `seconds`; the server's CPU and the load generator's own are measured over
// the same window, so the figures come out per acknowledged item. Closed-loop senders offer at most
// `concurrency` requests at a time, so the rate they see is capped by concurrency / acknowledgement
// latency (Little's law) before the server is: the benchmarks run several sender counts.

export interface SustainOptions {
  bodies: readonly Uint8Array[];
  /** Items (spans, lines) in each body. */
  perBody: number;
  concurrency: number;
  seconds: number;
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
}

export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
}

export async function sustain(o: SustainOptions): Promise<Sustained> {
  let acked = 0;
  let refused = 0;
  let stop = false;
  const started = performance.now();
  const cpu0 = o.serverCpuSeconds();
  const own0 = process.cpuUsage();
  const acks: number[] = [];
  const senders = Array.from({ length: o.concurrency }, async (_v, w) => {
    let i = w;
    while (!stop) {
      const sent = performance.now();
      if (await o.send(o.bodies[i++ % o.bodies.length]!)) {
        acked += o.perBody;
        acks.push(performance.now() - sent);
      } else refused++;
    }
  });
  await new Promise((r) => setTimeout(r, o.seconds * 1000));
  stop = true;
  await Promise.all(senders);
  const wall = (performance.now() - started) / 1000;
  const cpu = o.serverCpuSeconds() - cpu0;
  const own = process.cpuUsage(own0);
  return {
    rate: acked / wall,
    refused,
    cpuUsPerItem: (cpu * 1e6) / acked,
    cores: cpu / wall,
    loadCores: (own.user + own.system) / 1e6 / wall,
    ackP50: quantile(acks, 0.5),
    ackP99: quantile(acks, 0.99),
  };
}
