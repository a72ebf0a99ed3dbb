// npm run bench:overload — a fleet that never backs off, then the steady load after it, on one
// server per transport (issue 43's shapes). Phases, each a fleet of closed-loop senders
// (lib/fleet.ts) in a process of its own:
//   unloaded  8 senders of the flood's 4,000-span exports: the ingest rate with nothing refused,
//             the reference the flood's accepted rate is compared with (after a warm-up);
//   before    8 senders of 1,000 spans: the steady load, and the RSS it settles at;
//   flood     400 senders of 4,000 spans (~2.6 MB) that send again as soon as they are answered,
//             a quiet sender (lib/quiet-sender.ts) beside them timing refusals as one exporter sees them;
//   after     8 senders of 1,000 spans again: does RSS come back to where it was before the flood.
// It prints for each phase the accepted spans/s against the unloaded rate, the acknowledgement and
// refusal times, every answer by status, and RSS (peak, and the median of the phase's last 10 s);
// then, with the server stopped, the spans its file holds against those acknowledged. Each figure
// is checked against its target (issue 43) and the line says met or not. BENCH_TRANSPORTS picks the
// transports; OVERLOAD_STEADY_SECONDS (45) and OVERLOAD_FLOOD_SECONDS (45) the phases' lengths.
// SVC_* variables pass to the server.
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESET_AFTER_REFUSAL, runFleet, type FleetResult } from './lib/fleet.js';
import { benchTransports, quietSender, type QuietTimings, type Transport } from './lib/quiet-sender.js';
import { withBenchServer, type ChildServer } from '../testkit/server.js';
import { quantile } from './lib/sustain.js';
import { memoryClasses, memoryClassesText, type MemoryClasses } from './lib/smaps.js';
import { settingDefault } from '../src/core/config.js';

const STEADY_SECONDS = Number(process.env['OVERLOAD_STEADY_SECONDS'] ?? 45);
const FLOOD_SECONDS = Number(process.env['OVERLOAD_FLOOD_SECONDS'] ?? 45);
const MAX_ACK_WAIT_MS = Number(process.env['SVC_MAX_ACK_WAIT_MS'] ?? settingDefault('SVC_MAX_ACK_WAIT_MS'));
const MiB = 2 ** 20;

/** Issue 43's targets. */
const TARGET = {
  ackP99Ms: 2 * MAX_ACK_WAIT_MS,
  refusalP99Ms: 100,
  shareOfUnloaded: 0.7,
  peakRssBytes: 1.1 * 1024 * MiB,
  rssAfterWithin: 0.1,
};

interface Phase {
  name: 'unloaded' | 'before' | 'flood' | 'after';
  senders: number;
  spans: number;
  seconds: number;
  warmupSeconds: number;
}

const PHASES: readonly Phase[] = [
  { name: 'unloaded', senders: 8, spans: 4000, seconds: STEADY_SECONDS, warmupSeconds: 5 },
  { name: 'before', senders: 8, spans: 1000, seconds: STEADY_SECONDS, warmupSeconds: 0 },
  { name: 'flood', senders: 400, spans: 4000, seconds: FLOOD_SECONDS, warmupSeconds: 0 },
  { name: 'after', senders: 8, spans: 1000, seconds: STEADY_SECONDS, warmupSeconds: 0 },
];

/** The window over which a phase's settled RSS is taken (the median of its samples). */
const SETTLED_SECONDS = 10;
const SAMPLE_MS = 250;
const PEAK_MAP_MS = 2000;

interface PhaseResult {
  phase: Phase;
  fleet: FleetResult;
  quiet: QuietTimings | null;
  rssPeak: number;
  rssSettled: number;
  /** Where the memory was near the peak (smaps). */
  peakMap: string;
  serverCores: number;
  status: string;
}

const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

/**
 * From the server's status: DuckDB's memory in use (and its larger tags), the JS heap, and the waits
 * the server saw over its last minute (high quantiles: the phase's exports, whatever came before).
 */
async function statusText(api: string): Promise<string> {
  try {
    const s = (await (await fetch(`${api}/admin/status`, { signal: AbortSignal.timeout(5000) })).json()) as {
      status: {
        memory: { duckdb?: { memory_used_bytes: number; by_tag: Record<string, number> }; js_heap_bytes: number; array_buffers_bytes: number; inflight_bytes: number };
        ingest: { ack_wait_limit_ms: number; observed_ack_wait: { window_s: number; requests: number; over_limit: number; p99_ms: number | null; arrival_p99_ms: number | null } };
      };
    };
    const m = s.status.memory;
    const w = s.status.ingest.observed_ack_wait;
    const tags = Object.entries(m.duckdb?.by_tag ?? {}).filter(([, b]) => b >= 8 * MiB).sort((a, b) => b[1] - a[1]).map(([t, b]) => `${t} ${mib(b)}`);
    return (
      `DuckDB ${mib(m.duckdb?.memory_used_bytes ?? 0)}${tags.length ? ` (${tags.join(', ')})` : ''}, JS heap ${mib(m.js_heap_bytes)}, buffers ${mib(m.array_buffers_bytes)}; ` +
      `server's last ${w.window_s} s: wait p99 ${ms(w.p99_ms ?? NaN)}, of it arriving p99 ${ms(w.arrival_p99_ms ?? NaN)}, ${w.over_limit} of ${w.requests} past the limit, now ${ms(s.status.ingest.ack_wait_limit_ms)}`
    );
  } catch (e) {
    return `status did not answer (${(e as Error).message})`;
  }
}

async function runPhase(srv: ChildServer, transport: Transport, phase: Phase): Promise<PhaseResult> {
  const target = transport === 'otlp-grpc' ? srv.otlpGrpc : srv.otlpHttp;
  const pid = srv.child.pid!;
  const samples: { t: number; rss: number }[] = [];
  // Where the memory is at the phase's peak: smaps read again when RSS passes the peak so far, at
  // most every PEAK_MAP_MS (a read takes a few ms of this process, none of the server's).
  let peakMap: { rss: number; t: number; classes: MemoryClasses } = { rss: 0, t: -Infinity, classes: {} };
  const sampler = setInterval(() => {
    const s = { t: performance.now(), rss: rssOf(pid) };
    samples.push(s);
    if (s.rss > peakMap.rss && s.t - peakMap.t >= PEAK_MAP_MS) peakMap = { ...s, classes: memoryClasses(pid) };
  }, SAMPLE_MS);
  const quiet = phase.name === 'flood' ? quietSender(transport, target) : null;
  const cpu0 = srv.cpuSeconds();
  const t0 = performance.now();
  const fleet = await runFleet({ transport, target, senders: phase.senders, spansPerExport: phase.spans, warmupSeconds: phase.warmupSeconds, seconds: phase.seconds, service: `overload-${phase.name}` });
  const serverCores = (srv.cpuSeconds() - cpu0) / ((performance.now() - t0) / 1000);
  clearInterval(sampler);
  const end = samples.at(-1)?.t ?? performance.now();
  const settled = samples.filter((s) => s.t >= end - SETTLED_SECONDS * 1000).map((s) => s.rss);
  return {
    phase,
    fleet,
    quiet: (await quiet?.stop()) ?? null,
    rssPeak: Math.max(0, ...samples.map((s) => s.rss)),
    rssSettled: quantile(settled, 0.5),
    peakMap: `${mib(peakMap.rss)}: ${memoryClassesText(peakMap.classes)}`,
    serverCores,
    status: await statusText(srv.api),
  };
}

/** The spans the stopped server's file holds. */
async function storedSpans(dataDir: string): Promise<number> {
  const inst = await DuckDBInstance.create(join(dataDir, 'lake.duckdb'), { access_mode: 'READ_ONLY' });
  const conn = await inst.connect();
  try {
    return Number((await conn.runAndReadAll('SELECT count(*) AS n FROM svc_spans')).getRowObjectsJS()[0]!['n']);
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
}

const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} ms` : '-');
const mib = (b: number) => `${(b / MiB).toFixed(0)} MiB`;
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT MET');
const rateOf = (f: FleetResult) => f.windowAckedSpans / f.windowSeconds;

function phaseLine(transport: Transport, r: PhaseResult, unloaded: number): string {
  const f = r.fleet;
  const p = r.phase;
  const answers = Object.entries(f.answers).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}: ${n}`).join(', ');
  const quiet = r.quiet
    ? `; quiet sender: ${r.quiet.refused.length} refused in p50 ${ms(quantile(r.quiet.refused, 0.5))} p99 ${ms(quantile(r.quiet.refused, 0.99))}, ${r.quiet.acked.length} acked in p50 ${ms(quantile(r.quiet.acked, 0.5))} p99 ${ms(quantile(r.quiet.acked, 0.99))}`
    : '';
  return (
    `${transport.padEnd(18)} ${p.name.padEnd(8)} ${String(p.senders).padStart(3)} × ${p.spans} spans, ${p.seconds} s: ` +
    `${rateOf(f).toFixed(0).padStart(6)} spans/s accepted (${((100 * rateOf(f)) / unloaded).toFixed(0)}% of unloaded); ` +
    `ack p50 ${ms(quantile(f.acks, 0.5))} p99 ${ms(quantile(f.acks, 0.99))} (${f.acks.length}); refused ${f.refusals.length} in p50 ${ms(quantile(f.refusals, 0.5))} p99 ${ms(quantile(f.refusals, 0.99))}; ` +
    `answers {${answers}}; RSS peak ${mib(r.rssPeak)}, settled ${mib(r.rssSettled)} (at ${r.peakMap}); ${r.status}; server ${r.serverCores.toFixed(2)} cores, fleet ${f.cores.toFixed(2)} (loop delay p99 ${ms(f.loopDelayP99)})${quiet}`
  );
}

/**
 * Answers other than an acknowledgement or a documented refusal (429, 503, 507; gRPC UNAVAILABLE; on
 * OTLP/HTTP the reset of a connection an early 429 closed, RESET_AFTER_REFUSAL),
 * transport errors included: a flood must not make the server fail requests.
 */
function undocumented(transport: Transport, results: readonly PhaseResult[]): string[] {
  const documented = new Set(['200', '429', '503', '507', 'grpc 0', 'grpc 14', ...(transport === 'otlp-grpc' ? [] : RESET_AFTER_REFUSAL)]);
  return results.flatMap((r) => Object.entries(r.fleet.answers).filter(([k]) => !documented.has(k)).map(([k, n]) => `${r.phase.name} ${k} × ${n}`));
}

async function runTransport(transport: Transport): Promise<void> {
  await withBenchServer(async (srv) => {
    const results: PhaseResult[] = [];
    for (const phase of PHASES) {
      const r = await runPhase(srv, transport, phase);
      results.push(r);
      console.log(phaseLine(transport, r, rateOf(results[0]!.fleet)));
    }
    const by = (name: Phase['name']) => results.find((r) => r.phase.name === name)!;
    const unloaded = rateOf(by('unloaded').fleet);
    const flood = by('flood');
    const acked = results.reduce((a, r) => a + r.fleet.ackedSpans + (r.quiet?.ackedSpans ?? 0), 0);
    await srv.stop();
    const stored = await storedSpans(srv.dataDir);
    const ackP99 = quantile(flood.fleet.acks, 0.99);
    const refusalP99 = Math.max(quantile(flood.fleet.refusals, 0.99) || 0, quantile(flood.quiet?.refused ?? [], 0.99) || 0);
    const quietRefusalP99 = quantile(flood.quiet?.refused ?? [], 0.99);
    const share = rateOf(flood.fleet) / unloaded;
    const peak = Math.max(...results.map((r) => r.rssPeak));
    const drift = by('after').rssSettled / by('before').rssSettled - 1;
    const faults = undocumented(transport, results);
    console.log(
      `${transport.padEnd(18)} targets: flood ack p99 ${ms(ackP99)} ≤ ${ms(TARGET.ackP99Ms)} ${verdict(ackP99 <= TARGET.ackP99Ms)}; ` +
        `refusals p99 ${ms(refusalP99)} (fleet ${ms(quantile(flood.fleet.refusals, 0.99))}, quiet sender ${ms(quietRefusalP99)}) ≤ ${ms(TARGET.refusalP99Ms)} ${verdict(refusalP99 <= TARGET.refusalP99Ms)}; ` +
        `flood accepted ${(100 * share).toFixed(0)}% of unloaded ≥ ${100 * TARGET.shareOfUnloaded}% ${verdict(share >= TARGET.shareOfUnloaded)}; ` +
        `peak RSS ${mib(peak)} ≤ ${mib(TARGET.peakRssBytes)} ${verdict(peak <= TARGET.peakRssBytes)}; ` +
        `RSS after ${mib(by('after').rssSettled)} vs before ${mib(by('before').rssSettled)} (${drift >= 0 ? '+' : ''}${(100 * drift).toFixed(1)}%) ${verdict(Math.abs(drift) <= TARGET.rssAfterWithin)}; ` +
        `stored ${stored} of ${acked} acknowledged spans ${verdict(stored >= acked)}; other answers: ${faults.length ? faults.join(', ') : 'none'} ${verdict(!faults.length)}`,
    );
  });
}

console.log(
  `bench:overload: phases ${PHASES.map((p) => `${p.name} ${p.senders} × ${p.spans} spans ${p.seconds} s`).join(', ')}; ` +
    `SVC_MAX_ACK_WAIT_MS ${MAX_ACK_WAIT_MS}; memory budget ${process.env['SVC_MEMORY_BUDGET'] ?? 'default'}; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
);
for (const transport of benchTransports()) await runTransport(transport);
