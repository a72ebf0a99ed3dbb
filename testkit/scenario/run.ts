// Running a scenario against the real server, and scoring a diagnosis against its expectation.
import { startChildServer, type ChildServer } from '../server.js';
import { BUCKET_US, planScenario, type CaseSpec, type Expectation, type Scenario } from './faults.js';
import { generateScenario } from './traffic.js';
import { sendScenario, type SendCounts, type SendTargets } from './send.js';
import type { Topology } from './topology.js';

export interface ScenarioRun {
  expectation: Expectation;
  topology: Topology;
  scenario: Scenario;
  sent: SendCounts;
  sendMs: number;
}

/** Generates one case relative to `nowUs` (default: now), sends it to `srv` and returns what a diagnosis must say. */
export async function runScenario(srv: SendTargets, spec: CaseSpec, opts: { nowUs?: number } = {}): Promise<ScenarioRun> {
  const scenario = planScenario(spec, opts.nowUs ?? Date.now() * 1000);
  const data = generateScenario(scenario);
  const t0 = performance.now();
  const sent = await sendScenario(srv, data);
  return { expectation: scenario.expectation, topology: scenario.topology, scenario, sent, sendMs: performance.now() - t0 };
}

interface Status {
  status?: { detection?: { passes: number; last: { closed_before_bucket: number } | null; last_error: string | null } };
}

/** Waits until a detection pass has closed every bucket before `endUs`'s (the backfill), as a live server would have. */
export async function waitForDetection(srv: { api: string }, endUs: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const want = Math.floor(endUs / BUCKET_US);
  for (;;) {
    const st = (await (await fetch(`${srv.api}/admin/status`)).json()) as Status;
    const d = st.status?.detection;
    if (d && d.passes >= 1 && (d.last?.closed_before_bucket ?? 0) >= want) return;
    if (Date.now() > deadline) throw new Error(`detection did not close the backfill in ${timeoutMs} ms: ${JSON.stringify(d)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * One case on a fresh server: the data is backfilled with the detector idle, then the server restarts
 * with no grace and a short interval so its pass takes in every closed bucket at once; `fn` runs once
 * that pass is done. The server is stopped and its data removed afterwards.
 */
export async function withScenarioServer<T>(spec: CaseSpec, fn: (srv: ChildServer, run: ScenarioRun) => Promise<T>, env: Record<string, string> = {}): Promise<T> {
  return withLoadedServer((srv) => runScenario(srv, spec), (run) => run.expectation.endUs, fn, env);
}

/** The lifecycle of withScenarioServer for any loader: `load` sends the data, `endUs` says where it ends. */
export async function withLoadedServer<R, T>(load: (srv: ChildServer) => Promise<R>, endUs: (run: R) => number, fn: (srv: ChildServer, run: R) => Promise<T>, env: Record<string, string> = {}): Promise<T> {
  const loader = await startChildServer({ SVC_DETECT_INTERVAL_S: '3600', SVC_DETECT_GRACE_S: '0', ...env });
  let srv: ChildServer = loader;
  try {
    const run = await load(loader);
    await loader.stop();
    srv = await startChildServer({ SVC_DETECT_INTERVAL_S: '2', SVC_DETECT_GRACE_S: '0', ...env }, loader.dataDir);
    await waitForDetection(srv, endUs(run));
    return await fn(srv, run);
  } finally {
    await srv.stop();
    loader.cleanup();
  }
}

// ---- diagnosis and scoring ----

export interface Finding {
  kind: string;
  severity: string;
  summary: string;
  service?: string | null;
  operation?: string | null;
  signal?: string | null;
  before?: number | null;
  after?: number | null;
  score?: number;
  drill_down_sql?: string;
}

export interface DiagnoseAnswer {
  status: number;
  ms: number;
  findings: Finding[] | null;
  /** Why there are no findings: HTTP status and body, or the per-service error. */
  error: string | null;
}

/** POST /v1/diagnose for one service, over `window` or the default one (the last 15 minutes). Never throws on an HTTP answer. */
export async function diagnose(srv: { api: string }, service: string, window?: { fromUs: number; toUs: number } | null): Promise<DiagnoseAnswer> {
  const t0 = performance.now();
  const range = window ? { from_ts: Math.round(window.fromUs), to_ts: Math.round(window.toUs) } : {};
  const res = await fetch(`${srv.api}/v1/diagnose`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ services: [service], ...range }) });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) return { status: res.status, ms, findings: null, error: `HTTP ${res.status}: ${text.slice(0, 200)}` };
  try {
    const body = JSON.parse(text) as { results?: Record<string, { findings?: Finding[] }>; errors?: Record<string, string> };
    const block = body.results?.[service];
    if (!block) return { status: 200, ms, findings: null, error: body.errors?.[service] ?? 'no block for the service' };
    return { status: 200, ms, findings: block.findings ?? [], error: null };
  } catch (e) {
    return { status: 200, ms, findings: null, error: `unparsable answer: ${(e as Error).message}` };
  }
}

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
const rank = (s: string | undefined): number => SEVERITIES.indexOf((s ?? '') as (typeof SEVERITIES)[number]);

export interface CaseScore {
  top1: boolean;
  top3: boolean;
  /** The held-out rule: the finding's service alone (a fault-free case: as `pass`). */
  top1Service: boolean;
  top3Service: boolean;
  /** Highest severity among the findings ('none' when there are none). */
  maxSeverity: string;
  /** A fault-free case passes with no finding above low; a faulty one with a top-1 hit. */
  pass: boolean;
}

/** What scoring needs of an expectation; `signals` empty means any non-null signal on the service. */
export type Target = Pick<Expectation, 'service' | 'signals'>;

const sameService = (e: Target, f: Finding | undefined): boolean => !!f && f.service === e.service;
const matches = (e: Target, f: Finding | undefined): boolean =>
  sameService(e, f) && (e.signals.length ? e.signals.includes(String(f!.signal)) : f!.signal !== null && f!.signal !== undefined);

/** Scores one answer: top-1/top-3 against the expected service and signal, and the service alone; fault-free: nothing above `low`. */
export function scoreCase(e: Target, a: DiagnoseAnswer): CaseScore {
  const f = a.findings ?? [];
  const max = f.reduce((m, x) => Math.max(m, rank(x.severity)), -1);
  const maxSeverity = max < 0 ? 'none' : SEVERITIES[max]!;
  if (e.service === null) {
    const pass = a.findings !== null && max <= rank('low');
    return { top1: pass, top3: pass, top1Service: pass, top3Service: pass, maxSeverity, pass };
  }
  const top1 = matches(e, f[0]);
  const top3 = f.slice(0, 3).some((x) => matches(e, x));
  return { top1, top3, top1Service: sameService(e, f[0]), top3Service: f.slice(0, 3).some((x) => sameService(e, x)), maxSeverity, pass: top1 };
}
