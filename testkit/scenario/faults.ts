// One case of the diagnosis evaluation: a seeded topology, one injected fault (or none) and what a
// correct diagnosis of the entry service must say. Pure: the same spec and clock give the same plan.
import { rng } from '../rng.js';
import { between, buildTopology, intBetween, leavesOf, pick, reachProbabilities, shuffled, type Topology } from './topology.js';

export const FAULT_KINDS = [
  'latency_leaf',
  'errors_leaf',
  'bad_deploy',
  'error_log_burst',
  'cpu_hot_spot',
  'llm_degradation',
  'dependency_outage',
  'none',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface CaseSpec {
  seed: number;
  kind: FaultKind;
  /** Hours of 5-minute-aligned history before the current bucket (default 2). */
  hours?: number;
  /** Span budget of the whole case (default 130,000): sets the request rate. */
  maxSpans?: number;
}

/** The injected fault's parameters; which fields apply depends on `kind`. */
export interface FaultPlan {
  kind: FaultKind;
  target: string | null;
  onsetUs: number;
  /** latency_leaf: self time × factor + extra (µs median); cpu_hot_spot: self time × factor. */
  latencyFactor: number;
  latencyExtraUs: number;
  /** errors_leaf, bad_deploy: share of the target's requests that fail from the onset. */
  errorShare: number;
  errorType: string;
  /** bad_deploy: the new version. */
  newVersion: string;
  /** error_log_burst: background ERROR lines a minute, and their message. */
  burstPerMinute: number;
  burstTemplate: number;
  /** cpu_hot_spot: the function that gets costlier, and the service's CPU per request it multiplies (1.8-3x). */
  hotFunction: number;
  hotFactor: number;
  /** llm_degradation: share of calls cut at max tokens, share that fail. */
  llmLengthShare: number;
  llmErrorShare: number;
  /**
   * errors_leaf, bad_deploy: how the failures are recorded — an exception event and error.type, the
   * error.type attribute alone, or only the span status and a 5xx / gRPC status code.
   */
  errorStyle: 'exception' | 'error_type' | 'status_only';
  /** dependency_outage: callers are refused at once, or wait for their client timeout. */
  outageMode: 'refused' | 'timeout';
  timeoutUs: number;
}

/** What the evaluation scores against (the brief's case record). */
export interface Expectation {
  seed: number;
  kind: FaultKind;
  topology: string;
  entry: string;
  /** The service the first finding must blame (null for a fault-free case). */
  service: string | null;
  /** Any of these signals on that service is a hit. */
  signals: string[];
  onsetUs: number;
  startUs: number;
  endUs: number;
  /** What was injected, for people reading the table. */
  detail: string;
}

export interface Scenario {
  spec: CaseSpec;
  topology: Topology;
  fault: FaultPlan;
  expectation: Expectation;
  startUs: number;
  endUs: number;
  /** Entry requests a second (set from the span budget). */
  rate: number;
}

export const BUCKET_US = 300_000_000;
const MINUTE_US = 60_000_000;

export const EXPECTED_SIGNALS: Record<FaultKind, string[]> = {
  latency_leaf: ['latency_p95'],
  errors_leaf: ['error_rate'],
  bad_deploy: ['error_rate'],
  error_log_burst: ['error_log_rate'],
  cpu_hot_spot: ['profile_cost'],
  llm_degradation: ['gen_ai_finish_reasons', 'error_rate'],
  dependency_outage: ['error_rate'],
  none: [],
};

/** One-line topology summary: services by level, edges, where the DB, LLM and noisy service sit. */
export function describeTopology(t: Topology): string {
  const edges = t.edges.map((e) => `${e.caller}>${e.callee}${e.protocol === 'grpc' ? '(g)' : ''}`).join(' ');
  return `${t.services.length} svc, depth ${t.depth}: ${edges}; db@${t.db.service} llm@${t.llm.service} noisy@${t.noisy}`;
}

/** Expected spans per entry request, from the call probabilities (server + client + DB + LLM spans). */
export function expectedSpansPerRequest(t: Topology): number {
  const p = new Map<string, number>();
  const key = (s: string, i: number) => `${s}#${i}`;
  t.entryMix.forEach((w, i) => p.set(key(t.entry, i), w));
  let spans = 0;
  for (const s of [...t.services].sort((a, b) => a.level - b.level)) {
    s.ops.forEach((op, i) => {
      const q = p.get(key(s.name, i)) ?? 0;
      spans += q * (1 + op.dbCalls + op.llmProbability);
      for (const c of op.calls) {
        spans += q * c.probability; // the caller's client span
        p.set(key(c.callee, c.op), (p.get(key(c.callee, c.op)) ?? 0) + q * c.probability);
      }
    });
  }
  return spans;
}

const ERROR_TYPES = ['UpstreamTimeoutError', 'IllegalStateException', 'KeyError', 'InvariantViolation', 'StaleReadError', 'DeadlineExceeded'];
const DEPLOY_ERRORS = ['NullPointerException', "TypeError: Cannot read properties of undefined (reading 'id')", 'SerializationException', 'AttributeError'];

/** Targets reached by a fair share of entry traffic, so the fault shows at the entry; else the best reached. */
function reached(r: () => number, t: Topology, names: string[], minReach = 0.35): string {
  const reach = reachProbabilities(t);
  const sorted = [...names].sort((a, b) => (reach.get(b) ?? 0) - (reach.get(a) ?? 0) || (a < b ? -1 : 1));
  const good = sorted.filter((n) => (reach.get(n) ?? 0) >= minReach);
  if (!sorted.length) throw new Error(`seed ${t.seed}: no candidate service`);
  return good.length ? pick(r, good) : sorted[0]!;
}

function chooseTarget(r: () => number, t: Topology, kind: FaultKind): string | null {
  const nonEntry = t.services.filter((s) => s.level > 0 && !s.noisy).map((s) => s.name);
  const leaves = leavesOf(t).filter((n) => n !== t.noisy);
  switch (kind) {
    case 'none':
      return null;
    case 'llm_degradation':
      return t.llm.service;
    case 'latency_leaf':
      // The LLM host's latency is the model's: its own work slowing would hide in it.
      return reached(r, t, leaves.filter((n) => n !== t.llm.service).length ? leaves.filter((n) => n !== t.llm.service) : leaves);
    case 'errors_leaf':
    case 'dependency_outage':
      return reached(r, t, leaves);
    case 'bad_deploy':
      return reached(r, t, nonEntry);
    case 'error_log_burst':
      return pick(r, nonEntry);
    case 'cpu_hot_spot': {
      const profiled = t.services.filter((s) => s.profiled && s.level > 0 && !s.noisy && s.name !== t.llm.service).map((s) => s.name);
      return reached(r, t, profiled.length ? profiled : nonEntry);
    }
  }
}

function detailOf(f: FaultPlan, t: Topology): string {
  switch (f.kind) {
    case 'none':
      return 'no fault';
    case 'latency_leaf':
      return `${f.target} self time x${f.latencyFactor.toFixed(1)} + ~${Math.round(f.latencyExtraUs / 1000)} ms`;
    case 'errors_leaf':
      return `${f.target} fails ${(f.errorShare * 100).toFixed(0)}% (${f.errorStyle === 'status_only' ? 'status only' : f.errorType + (f.errorStyle === 'error_type' ? ', no exception event' : '')})`;
    case 'bad_deploy':
      return `${f.target} → ${f.newVersion}, fails ${(f.errorShare * 100).toFixed(0)}% (${f.errorStyle === 'status_only' ? 'status only' : f.errorType + (f.errorStyle === 'error_type' ? ', no exception event' : '')})`;
    case 'error_log_burst':
      return `${f.target} logs ${f.burstPerMinute} ERROR lines/min`;
    case 'cpu_hot_spot':
      return `${f.target} function #${f.hotFunction} takes the service's CPU x${f.hotFactor.toFixed(1)}, self time x${f.latencyFactor.toFixed(2)}`;
    case 'llm_degradation':
      return `${t.llm.model} length ${(f.llmLengthShare * 100).toFixed(0)}%, errors ${(f.llmErrorShare * 100).toFixed(0)}%`;
    case 'dependency_outage':
      return `${f.target} down (no telemetry), callers ${f.outageMode === 'refused' ? 'get ECONNREFUSED' : `time out after ${f.timeoutUs / 1e6} s`}`;
  }
}

/** The whole case, relative to `nowUs`: topology, fault, time range, rate and expectation. */
export function planScenario(spec: CaseSpec, nowUs: number): Scenario {
  const topology = buildTopology(spec.seed);
  const r = rng(spec.seed * 104729 + spec.kind.length * 31 + FAULT_KINDS.indexOf(spec.kind));
  const hours = spec.hours ?? 2;
  const startUs = Math.floor(nowUs / BUCKET_US) * BUCKET_US - hours * 12 * BUCKET_US;
  const endUs = nowUs;
  const target = chooseTarget(r, topology, spec.kind);
  const onsetUs = nowUs - intBetween(r, 10, 45) * MINUTE_US - Math.floor(r() * MINUTE_US);
  const isHot = spec.kind === 'cpu_hot_spot';
  const [major, minor] = (topology.services.find((s) => s.name === target)?.version ?? '1.0.0').split('.').map(Number) as [number, number];
  const fault: FaultPlan = {
    kind: spec.kind,
    target,
    onsetUs,
    latencyFactor: isHot ? between(r, 1.3, 1.6) : between(r, 3, 6),
    latencyExtraUs: isHot ? 0 : Math.round(between(r, 60_000, 200_000)),
    errorShare: spec.kind === 'bad_deploy' ? between(r, 0.15, 0.4) : between(r, 0.2, 0.5),
    errorType: spec.kind === 'bad_deploy' ? pick(r, DEPLOY_ERRORS) : pick(r, ERROR_TYPES),
    newVersion: `${major}.${minor + 1}.0`,
    burstPerMinute: intBetween(r, 60, 240),
    burstTemplate: intBetween(r, 0, 2),
    hotFunction: 0, // set below: an index into the target's business functions (see traffic.ts)
    hotFactor: between(r, 1.8, 3),
    llmLengthShare: between(r, 0.4, 0.7),
    llmErrorShare: between(r, 0.05, 0.15),
    errorStyle: 'exception',
    outageMode: 'refused',
    timeoutUs: 0,
  };
  fault.hotFunction = shuffled(r, [0, 1, 2, 3])[0]!;
  fault.errorStyle = pick(r, ['exception', 'error_type', 'status_only'] as const);
  fault.outageMode = r() < 0.5 ? 'refused' : 'timeout';
  fault.timeoutUs = Math.round(between(r, 1, 3)) * 1_000_000;
  const perRequest = expectedSpansPerRequest(topology);
  const rate = Math.min(4, Math.max(0.3, (spec.maxSpans ?? 130_000) / (perRequest * ((endUs - startUs) / 1e6))));
  const expectation: Expectation = {
    seed: spec.seed,
    kind: spec.kind,
    topology: describeTopology(topology),
    entry: topology.entry,
    service: target,
    signals: EXPECTED_SIGNALS[spec.kind],
    onsetUs,
    startUs,
    endUs,
    detail: detailOf(fault, topology),
  };
  return { spec, topology, fault, expectation, startUs, endUs, rate };
}
