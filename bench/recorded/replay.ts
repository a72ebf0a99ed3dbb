// Loads one split of a recording into a store of its own, as telemetry would arrive: OTLP/HTTP
// protobuf in time order, every timestamp moved by one constant so the split's last one lands just
// before now, then a detection pass over every closed bucket. The loaded store is kept (keyed by
// the split and what was kept of it), so later runs only start a server on it.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startChildServer, type ChildServer } from '../../testkit/server.js';
import { sendScenario, waitForDetection } from '../../testkit/scenario/index.js';
import type { ScenarioData } from '../../testkit/scenario/traffic.js';
import type { RecordingSplit } from './recording.js';

/** Shifts are whole 5-minute buckets, so a replay's buckets and 10-second bins fall on the recording's own grid. */
const GRID_US = 300_000_000;

export interface Loaded {
  /** Added to every recorded timestamp. */
  shiftUs: number;
  /** Spans per recorded second (recording clock), for "which faults had traces in their window". */
  spanSeconds: Record<string, number>;
  sent: { spans: number; logs: number; metrics: number };
  loadMs: number;
}

function shifted(d: ScenarioData, by: number): ScenarioData {
  for (const s of d.spans) s.startUs += by;
  for (const l of d.logs) l.timeUs += by;
  for (const m of d.metrics) m.timeUs += by;
  return d;
}

export interface LoadOptions {
  /** Where kept stores live. */
  cacheDir: string;
  /** Part of the cache key: what `keep` keeps. */
  variant: string;
  keep?: (startUs: number, endUs: number) => boolean;
  /** Load again even when a kept store exists. */
  reload?: boolean;
  log?: (msg: string) => void;
}

/** The split's store directory and how it was loaded; loads it first when it is not kept yet. */
export async function loadSplit(split: RecordingSplit, opts: LoadOptions): Promise<{ dir: string; loaded: Loaded }> {
  const dir = join(opts.cacheDir, `${split.name}-${opts.variant}`);
  const meta = join(dir, 'replay.json');
  if (!opts.reload && existsSync(meta)) return { dir, loaded: JSON.parse(readFileSync(meta, 'utf8')) as Loaded };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  // The last bucket ends before now, so the pass can close it.
  const shiftUs = Math.floor((Date.now() * 1000 - GRID_US - split.lastUs) / GRID_US) * GRID_US;
  const spanSeconds: Record<string, number> = {};
  const sent = { spans: 0, logs: 0, metrics: 0 };
  const loader = await startChildServer({ SVC_DETECT_INTERVAL_S: '3600', SVC_DETECT_GRACE_S: '0' }, dir);
  try {
    for await (const chunk of split.chunks({ keep: opts.keep })) {
      for (const s of chunk.spans) {
        const sec = Math.floor(s.startUs / 1e6);
        spanSeconds[sec] = (spanSeconds[sec] ?? 0) + 1;
      }
      const c = await sendScenario(loader, shifted(chunk, shiftUs));
      sent.spans += c.spans;
      sent.logs += c.logs;
      sent.metrics += c.metrics;
    }
  } finally {
    await loader.stop();
  }
  opts.log?.(`${split.name}: sent ${sent.spans} spans, ${sent.logs} logs, ${sent.metrics} metric points in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  // The pass closes every bucket at once: no grace, a short interval.
  const det = await startChildServer({ SVC_DETECT_INTERVAL_S: '2', SVC_DETECT_GRACE_S: '0' }, dir);
  try {
    await waitForDetection(det, split.lastUs + shiftUs + GRID_US, 600_000);
  } finally {
    await det.stop();
  }
  const loaded: Loaded = { shiftUs, spanSeconds, sent, loadMs: Math.round(performance.now() - t0) };
  writeFileSync(meta, JSON.stringify(loaded));
  return { dir, loaded };
}

/** A server on a loaded store with the detection pass held back, for asking. */
export function serveLoaded(dir: string, env: Record<string, string> = {}): Promise<ChildServer> {
  return startChildServer({ SVC_DETECT_INTERVAL_S: '3600', SVC_DETECT_GRACE_S: '3600', ...env }, dir);
}

/** Spans the recording holds in [fromUs, toUs) (recording clock). */
export function spansIn(loaded: Loaded, fromUs: number, toUs: number): number {
  let n = 0;
  for (let s = Math.floor(fromUs / 1e6); s < toUs / 1e6; s++) n += loaded.spanSeconds[s] ?? 0;
  return n;
}
