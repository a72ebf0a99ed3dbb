// Sustained load for the end-to-end ingest benchmarks: `concurrency` closed-loop senders cycle
// through the bodies for `seconds`; the server's CPU and the load generator's own are measured over
// the same window, so the figures come out per acknowledged item.

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
}

export async function sustain(o: SustainOptions): Promise<Sustained> {
  let acked = 0;
  let refused = 0;
  let stop = false;
  const started = performance.now();
  const cpu0 = o.serverCpuSeconds();
  const own0 = process.cpuUsage();
  const senders = Array.from({ length: o.concurrency }, async (_v, w) => {
    let i = w;
    while (!stop) {
      if (await o.send(o.bodies[i++ % o.bodies.length]!)) acked += o.perBody;
      else refused++;
    }
  });
  await new Promise((r) => setTimeout(r, o.seconds * 1000));
  stop = true;
  await Promise.all(senders);
  const wall = (performance.now() - started) / 1000;
  const cpu = o.serverCpuSeconds() - cpu0;
  const own = process.cpuUsage(own0);
  return { rate: acked / wall, refused, cpuUsPerItem: (cpu * 1e6) / acked, cores: cpu / wall, loadCores: (own.user + own.system) / 1e6 / wall };
}
