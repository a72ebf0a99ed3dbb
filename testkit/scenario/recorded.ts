// Recorded-style cases for the diagnosis evaluation (issue 27): telemetry shaped like a real
// system's recording rather than a well-instrumented one, and the failure classes seen on such
// recordings. Spans carry trace/span/parent ids, service, pod, name, start and end and nothing else
// (no kind, no status, no attributes); logs carry trace/span ids and their level only as a word in
// the body (severity fields unset); per-pod gauges once a minute, named like the Kubernetes and
// container conventions or plainly. Noise: heavy-tailed noisy services, lost spans, a pod's
// telemetry gap, clock skew between pods, jittered and missing gauge points.
//
// Each case has a shape (what the case tests) and an effect (the injected fault). Pure and seeded:
// the same spec and clock give the same bytes, and the onset sits at a seeded offset in the
// 5-minute grid, so a case does not depend on when it is run.
import { rng } from '../rng.js';
import { between, buildTopology, intBetween, pick, reachProbabilities, serviceOf, type Call, type Rand, type ServiceNode, type Topology } from './topology.js';
import { BUCKET_US, describeTopology, expectedSpansPerRequest, type Expectation } from './faults.js';
import { arrivals, lognormal, type GenLog, type GenMetric, type GenSpan, type ScenarioData } from './traffic.js';

export const RECORDED_SHAPES = [
  'bare_spans',
  'short_history',
  'hour_gaps',
  'earlier_incident',
  'network_delay',
  'cpu_starved',
  'exception_logs',
  'wrong_return',
  'default_window',
  'grid_shift',
  'fault_free',
  'packet_loss',
  'callee_down',
  'java_exception',
  'java_wrong_return',
  'overlapping_burst',
] as const;
export type RecordedShape = (typeof RECORDED_SHAPES)[number];

/** The fault injected: own latency, a pod's network delay or packet loss, a starved caller, a thrown exception, a wrong return value. */
export type RecordedEffect = 'self_latency' | 'network_delay' | 'packet_loss' | 'unreachable' | 'cpu_starved' | 'exception' | 'wrong_return' | 'none';

export interface RecordedSpec {
  seed: number;
  shape: RecordedShape;
  /** Span budget of the case (default 40,000): sets the request rate. */
  maxSpans?: number;
  /** Services in the topology, fewest and most (default 8–11; the Java shapes 36–44). */
  services?: readonly [number, number];
}

/** How a Java-style case logs and how callers react to a wrong answer (null outside the Java shapes). */
export interface JavaStyle {
  /** A stack trace as one record (the trace in the body) or one record a line, each with the trace and span ids. */
  stack: 'one_record' | 'record_per_line';
  /** Share of failed calls whose caller logs its own ERROR with a stack trace. */
  callerError: number;
  /** What a caller does after a wrong answer: ask again, call a fallback service instead of the rest, or give up with an error. */
  onWrong: 'retry' | 'fallback' | 'abort';
  /** Share of wrong answers whose caller logs anything about it. */
  wrongLogShare: number;
}

/** A generated case's expectation with what recorded shapes add; an empty `signals` takes any non-null signal (the right one is ambiguous). */
export interface RecordedExpectation extends Omit<Expectation, 'kind'> {
  kind: RecordedShape;
  effect: RecordedEffect;
  /** The diagnosis window (the fault's first 3 minutes), or null for the default window. */
  window: { fromUs: number; toUs: number } | null;
  /** Seconds from the start of the onset's 5-minute bucket to the onset. */
  gridOffsetS: number;
}

export interface RecordedPlan {
  spec: RecordedSpec;
  /** The seed of the topology, fault and traffic: the spec's, or a grid_shift pair's even one. */
  dataSeed: number;
  topology: Topology;
  effect: RecordedEffect;
  target: string | null;
  /** The pod (replica index) a network delay or CPU contention is confined to. */
  pod: number;
  onsetUs: number;
  startUs: number;
  endUs: number;
  /** self_latency, cpu_starved: own work × factor (+ extra median µs for self_latency). */
  factor: number;
  extraUs: number;
  /** network_delay: median µs added to each call to the pod; cpu_starved: median µs a call waits for a core. */
  delayUs: number;
  /** exception, wrong_return: share of the target's requests affected. */
  share: number;
  /** The same effect on the same service, earlier and over (earlier_incident). */
  earlier: { fromUs: number; toUs: number } | null;
  /** No telemetry at all in these ranges (recording gaps), and one pod's short gap. */
  gaps: [number, number][];
  podGap: { resource: string; fromUs: number; toUs: number } | null;
  /** Stationary noisy services: heavy-tailed latency, a steady share of ERROR logs. */
  noisy: string[];
  /** gauge names: Kubernetes/container conventions or plain. */
  metricStyle: 'semconv' | 'plain';
  java: JavaStyle | null;
  rate: number;
  expectation: RecordedExpectation;
}

const MINUTE_US = 60_000_000;
/** The held-out evaluation diagnoses each fault's first 3 minutes. */
const WINDOW_US = 3 * MINUTE_US;

const EFFECT_OF: Record<RecordedShape, RecordedEffect | 'latency_or_exception'> = {
  bare_spans: 'self_latency',
  short_history: 'self_latency',
  hour_gaps: 'self_latency',
  earlier_incident: 'latency_or_exception',
  network_delay: 'network_delay',
  cpu_starved: 'cpu_starved',
  exception_logs: 'exception',
  wrong_return: 'wrong_return',
  default_window: 'self_latency',
  grid_shift: 'self_latency',
  fault_free: 'none',
  packet_loss: 'packet_loss',
  callee_down: 'unreachable',
  java_exception: 'exception',
  java_wrong_return: 'wrong_return',
  overlapping_burst: 'exception',
};

/**
 * Shapes of a Java system's recording at its size and load (issue 27's held-out conditions): about
 * 40 services unless the spec sizes them, 20-60 minutes of history, a target few requests reach (so
 * it sees tens of calls in the fault's first 3 minutes), Spring-style logging: an exception's stack
 * trace shipped as one record or as one record a line, and callers that log their own ERROR with a
 * stack trace when a call fails; a wrong answer shows only in what its callers do next (ask again,
 * take another path, or give up with an error of their own), rarely in a log.
 */
export const JAVA_SHAPES: ReadonlySet<RecordedShape> = new Set(['java_exception', 'java_wrong_return']);
const JAVA_SERVICES: readonly [number, number] = [36, 44];

/**
 * The signal rule: own latency and a callee's network delay are latency; an exception seen only in
 * logs is log (or error) evidence; a starved caller may be named by its latency, its profile or a
 * saturation finding, a wrong return value by whatever structural evidence there is, and a packet
 * loss by latency or by the callers' failed calls, so those three accept any non-null signal. The held-out evaluation counts the service only; so does the
 * service-only score.
 */
export const RECORDED_SIGNALS: Record<RecordedEffect, string[]> = {
  self_latency: ['latency_p95'],
  network_delay: ['latency_p95'],
  packet_loss: [],
  unreachable: [],
  cpu_starved: [],
  exception: ['error_log_rate', 'error_rate', 'log_volume'],
  wrong_return: [],
  none: [],
};

/** Non-entry, non-noisy services ranked by how much entry traffic reaches them; a seeded pick among the well-reached. */
function reachedPick(r: Rand, t: Topology, names: string[]): string {
  const reach = reachProbabilities(t);
  const sorted = [...names].sort((a, b) => (reach.get(b) ?? 0) - (reach.get(a) ?? 0) || (a < b ? -1 : 1));
  if (!sorted.length) throw new Error(`seed ${t.seed}: no candidate service`);
  const good = sorted.filter((n) => (reach.get(n) ?? 0) >= 0.35);
  return good.length ? pick(r, good) : sorted[0]!;
}

const callersOf = (t: Topology, s: string) => t.edges.filter((e) => e.callee === s).map((e) => e.caller);
const calleesOf = (t: Topology, s: string) => t.edges.filter((e) => e.caller === s).map((e) => e.callee);

function chooseTarget(r: Rand, t: Topology, effect: RecordedEffect, thin = false): string | null {
  const nonEntry = t.services.filter((s) => s.level > 0 && s.name !== t.noisy).map((s) => s.name);
  if (thin && (effect === 'exception' || effect === 'wrong_return')) {
    // Few requests reach it (5-40% of the entry's), as a service deep in a large system; a wrong
    // answer needs a caller to notice it.
    const reach = reachProbabilities(t);
    const fit = nonEntry.filter((n) => (reach.get(n) ?? 0) >= 0.05 && (reach.get(n) ?? 0) <= 0.4);
    if (fit.length) return pick(r, [...fit].sort());
  }
  switch (effect) {
    case 'none':
      return null;
    case 'network_delay':
    case 'packet_loss': {
      // Several callers seeing the delay is the common-node case; a single caller is the hard one.
      const most = Math.max(...nonEntry.map((n) => callersOf(t, n).length));
      return reachedPick(r, t, most > 1 && r() < 0.6 ? nonEntry.filter((n) => callersOf(t, n).length === most) : nonEntry);
    }
    case 'cpu_starved': {
      // A caller with several callees (the entry only when no other service has two).
      const several = nonEntry.filter((n) => calleesOf(t, n).length >= 2);
      if (several.length) return reachedPick(r, t, several);
      const all = t.services.map((s) => s.name).filter((n) => n !== t.noisy);
      return [...all].sort((a, b) => calleesOf(t, b).length - calleesOf(t, a).length || (a < b ? -1 : 1))[0]!;
    }
    default:
      return reachedPick(r, t, nonEntry);
  }
}

function detailOf(p: RecordedPlan): string {
  const pod = (s: string) => `${s} pod #${p.pod}`;
  const e = p.target ?? '';
  switch (p.effect) {
    case 'none':
      return `no fault; noisy: ${p.noisy.join(', ')}`;
    case 'self_latency':
      return `${e} own work x${p.factor.toFixed(1)} + ~${Math.round(p.extraUs / 1000)} ms`;
    case 'network_delay':
      return `${pod(e)}: +~${Math.round(p.delayUs / 1000)} ms on the wire, own spans flat; callers ${callersOf(p.topology, e).join(', ')}`;
    case 'packet_loss':
      return `${pod(e)} loses packets: ${(p.share * 100).toFixed(0)}% of calls to it wait for a retransmission, ${(p.share * TIMEOUT_SHARE * 100).toFixed(1)}% time out after ~${Math.round(p.delayUs / 1000)} ms; callers ${callersOf(p.topology, e).join(', ')}`;
    case 'unreachable':
      return `${e} stopped answering: ${(p.share * 100).toFixed(0)}% of the calls to it time out after ~${Math.round(p.delayUs / 1000)} ms, the rest are refused at once; no spans from it; callers ${callersOf(p.topology, e).join(', ')}`;
    case 'cpu_starved':
      return `${pod(e)} starved: own work x${p.factor.toFixed(1)}, ~${Math.round(p.delayUs / 1000)} ms wait per call; callees ${calleesOf(p.topology, e).join(', ')}`;
    case 'exception':
      return `${e} throws on ${(p.share * 100).toFixed(0)}% (ERROR logs with stack traces, no span status)`;
    case 'wrong_return':
      return `${e} returns a wrong value on ${(p.share * 100).toFixed(0)}%: ${p.java ? `callers ${p.java.onWrong === 'retry' ? 'retry and skip their later calls' : p.java.onWrong === 'fallback' ? 'call a fallback service instead of their later calls' : 'give up with an error'}` : 'callers retry and skip their later calls'}`;
  }
}

/** The seed's topology, or the first one after it where a service below the entry calls two or more services. */
function starvable(seed: number, size?: readonly [number, number]): Topology {
  for (let k = 0; k < 50; k++) {
    const t = buildTopology(seed + k * 7919, size);
    if (t.services.some((s) => s.level > 0 && s.name !== t.noisy && calleesOf(t, s.name).length >= 2)) return t;
  }
  return buildTopology(seed, size);
}

/** One recorded-style case relative to the clock `nowUs`. */
export function planRecorded(spec: RecordedSpec, nowUs: number): RecordedPlan {
  // grid_shift cases come in pairs on one data seed; the odd one moves the onset 150 s along the grid.
  const dataSeed = spec.shape === 'grid_shift' ? spec.seed - (spec.seed % 2) : spec.seed;
  const java = JAVA_SHAPES.has(spec.shape);
  const size = spec.services ?? (java ? JAVA_SERVICES : undefined);
  const topology = spec.shape === 'cpu_starved' ? starvable(dataSeed, size) : buildTopology(dataSeed, size);
  const r = rng(dataSeed * 92821 + RECORDED_SHAPES.indexOf(spec.shape) * 7 + 3);
  const chosen = EFFECT_OF[spec.shape];
  const effect: RecordedEffect = chosen === 'latency_or_exception' ? (r() < 0.5 ? 'self_latency' : 'exception') : chosen;
  const target = chooseTarget(r, topology, effect, java);
  const baseOffsetS = Math.floor(r() * 300);
  const gridOffsetS = spec.shape === 'grid_shift' && spec.seed % 2 === 1 ? (baseOffsetS + 150) % 300 : baseOffsetS;
  // The onset 5-10 minutes before now, inside the default window, so every case has data after its window.
  const aligned = Math.floor(nowUs / BUCKET_US) * BUCKET_US;
  const onsetUs = aligned - 2 * BUCKET_US + gridOffsetS * 1_000_000 + Math.floor(r() * 1_000_000);
  const historyUs = spec.shape === 'short_history' ? 2 * MINUTE_US : spec.shape === 'hour_gaps' ? 150 * MINUTE_US : java ? intBetween(r, 20, 60) * MINUTE_US : 60 * MINUTE_US;
  const startUs = onsetUs - historyUs;
  const endUs = nowUs - 5_000_000;
  const gaps: [number, number][] = [];
  if (spec.shape === 'hour_gaps') {
    const to = onsetUs - intBetween(r, 15, 30) * MINUTE_US;
    gaps.push([to - intBetween(r, 60, 75) * MINUTE_US, to]);
  }
  const noisy = [topology.noisy];
  if (spec.shape === 'fault_free') noisy.push(pick(r, topology.services.filter((s) => s.level > 0 && s.name !== topology.noisy)).name);
  const targetNode = target ? serviceOf(topology, target) : null;
  const plan: RecordedPlan = {
    spec,
    dataSeed,
    topology,
    effect,
    target,
    pod: targetNode ? Math.floor(r() * targetNode.replicas) : 0,
    onsetUs,
    startUs,
    endUs,
    factor: effect === 'cpu_starved' ? between(r, 2.5, 5) : between(r, 3, 6),
    extraUs: Math.round(between(r, 60_000, 200_000)),
    delayUs: effect === 'cpu_starved' ? Math.round(between(r, 30_000, 150_000)) : effect === 'packet_loss' || effect === 'unreachable' ? Math.round(between(r, 1_000_000, 3_000_000)) : Math.round(between(r, 200_000, 1_000_000)),
    share: effect === 'wrong_return' ? between(r, 0.3, 0.6) : effect === 'packet_loss' ? between(r, 0.1, 0.3) : effect === 'unreachable' ? between(r, 0.2, 0.8) : between(r, 0.2, 0.5),
    earlier: spec.shape === 'earlier_incident' ? { fromUs: onsetUs - 10 * MINUTE_US, toUs: onsetUs - 10 * MINUTE_US + intBetween(r, 3, 5) * MINUTE_US } : null,
    gaps,
    podGap: null,
    noisy,
    metricStyle: r() < 0.5 ? 'semconv' : 'plain',
    java: null,
    rate: 0,
    expectation: undefined as unknown as RecordedExpectation,
  };
  if (java)
    plan.java = {
      stack: r() < 0.5 ? 'one_record' : 'record_per_line',
      callerError: between(r, 0.5, 1),
      onWrong: pick(r, ['retry', 'fallback', 'abort'] as const),
      wrongLogShare: between(r, 0, 0.3),
    };
  // A pod drops out of the recording for 1-2 minutes, long before the onset (when the history allows).
  if (historyUs >= 30 * MINUTE_US) {
    const s = pick(r, topology.services);
    const from = onsetUs - intBetween(r, 15, 28) * MINUTE_US;
    plan.podGap = { resource: `${s.name}|${Math.floor(r() * s.replicas)}`, fromUs: from, toUs: from + intBetween(r, 60, 120) * 1_000_000 };
  }
  // The rate from a nominal length (history + 10 minutes), so it does not depend on the clock.
  const recorded = historyUs + 10 * MINUTE_US - gaps.reduce((a, [f, t]) => a + t - f, 0);
  const perRequest = expectedSpansPerRequest(topology);
  plan.rate = Math.min(4, Math.max(0.3, (spec.maxSpans ?? 40_000) / (perRequest * (recorded / 1e6))));
  plan.expectation = {
    seed: spec.seed,
    kind: spec.shape,
    effect,
    topology: describeTopology(topology),
    entry: topology.entry,
    service: target,
    signals: RECORDED_SIGNALS[effect],
    onsetUs,
    startUs,
    endUs,
    window: spec.shape === 'default_window' ? null : { fromUs: onsetUs, toUs: onsetUs + WINDOW_US },
    gridOffsetS,
    detail: `${detailOf(plan)}${plan.java ? `; java: stack ${plan.java.stack}, callers log ERROR on ${(plan.java.callerError * 100).toFixed(0)}%${effect === 'wrong_return' ? `, on a wrong answer: ${plan.java.onWrong}, logged on ${(plan.java.wrongLogShare * 100).toFixed(0)}%` : ''}` : ''}${spec.shape === 'overlapping_burst' ? `; at the same time a job (${JOB}) on traces of its own logs ERROR on most runs` : ''}${plan.earlier ? `; the same ${effect === 'exception' ? 'exception' : 'slowdown'} 10 min before, for ${Math.round((plan.earlier.toUs - plan.earlier.fromUs) / MINUTE_US)} min` : ''}${gaps.length ? `; no telemetry for ${Math.round((gaps[0]![1] - gaps[0]![0]) / MINUTE_US)} min ending ${Math.round((onsetUs - gaps[0]![1]) / MINUTE_US)} min before the onset` : ''}; onset at +${gridOffsetS} s in its bucket, ${Math.round(historyUs / 1e6)} s of history`,
  };
  return plan;
}

/**
 * `perShape` cases of every shape, each on its own seed from `baseSeed` (default 1000, clear of the
 * generated cases' seeds); grid_shift cases come in pairs on one data seed, the onset 150 s apart.
 */
export function recordedCaseList(opts: { baseSeed?: number; perShape?: number; shapes?: readonly RecordedShape[] } = {}): RecordedSpec[] {
  const base = opts.baseSeed ?? 1000;
  const out: RecordedSpec[] = [];
  let seed = base;
  for (let round = 0; round < (opts.perShape ?? 10); round++)
    for (const shape of opts.shapes ?? RECORDED_SHAPES)
      // grid_shift pairs: an even seed and the odd one after it, on seeds of their own (2 × base and up).
      // A shape added later (packet_loss, callee_down, the Java ones) draws seeds of its own (3 × base and up), so the others keep theirs.
      out.push({ seed: shape === 'grid_shift' ? 2 * base + 2 * Math.floor(round / 2) + (round % 2) : shape === 'packet_loss' ? 3 * base + round : shape === 'callee_down' ? 4 * base + round : shape === 'java_exception' ? 5 * base + round : shape === 'java_wrong_return' ? 6 * base + round : shape === 'overlapping_burst' ? 7 * base + round : seed++, shape });
  return out;
}

// ---- generation ----

const hex = (r: Rand, bytes: number): string => {
  let s = '';
  for (let i = 0; i < bytes; i++) s += Math.floor(r() * 256).toString(16).padStart(2, '0');
  return s;
};

interface PodMinute {
  n: number;
  ok: number;
  durUs: number[];
  selfUs: number;
}

interface Gen {
  r: Rand;
  p: RecordedPlan;
  out: ScenarioData;
  /** Per resource and minute: requests served, successes, durations, own work (drives the gauges). */
  stats: Map<string, PodMinute>;
  /** Per resource: a clock skew of a few milliseconds, as pods' clocks differ. */
  skew: Map<string, number>;
}

interface Outcome {
  endUs: number;
  failed: boolean;
  wrong: boolean;
}

const within = (range: { fromUs: number; toUs: number } | null, t: number) => !!range && t >= range.fromUs && t < range.toUs;
const on = (g: Gen, t: number) => g.p.effect !== 'none' && t >= g.p.onsetUs;
/** The plan's effect applies to `s` at `t` (the fault, or the earlier incident of earlier_incident). */
const hits = (g: Gen, s: ServiceNode, t: number) => g.p.target === s.name && (on(g, t) || within(g.p.earlier, t));
const recordedOut = (g: Gen, resource: string, t: number) =>
  g.p.gaps.some(([f, to]) => t >= f && t < to) || (!!g.p.podGap && g.p.podGap.resource === resource && t >= g.p.podGap.fromUs && t < g.p.podGap.toUs);

function podName(t: Topology, s: ServiceNode, replica: number): string {
  const r = rng(t.seed * 31 + s.name.length * 7 + replica);
  return `${s.name}-${hex(r, 4).slice(0, 7)}-${hex(r, 3).slice(0, 5)}`;
}

function resourceOf(g: Gen, s: ServiceNode, replica: number): string {
  const key = `${s.name}|${replica}`;
  if (!g.out.resources[key]) {
    const pod = podName(g.p.topology, s, replica);
    // What a recording keeps of the resource: the service and the pod, nothing else.
    g.out.resources[key] = { 'service.name': s.name, 'service.instance.id': pod, 'k8s.pod.name': pod };
    g.skew.set(key, Math.round(between(g.r, -3_000, 3_000)));
  }
  return key;
}

const LEVEL_PAD: Record<string, string> = { INFO: ' INFO', WARN: ' WARN', ERROR: 'ERROR' };

function stamp(us: number): string {
  return new Date(us / 1000).toISOString().replace('T', ' ').replace('Z', '');
}

/** A log line as a Java service writes it: timestamp, level word, [service,trace,span], thread, logger, message; severity fields unset. */
function log(g: Gen, s: ServiceNode, resource: string, timeUs: number, level: 'INFO' | 'WARN' | 'ERROR', msg: string, traceId: string | null, spanId: string | null, stack?: string[]) {
  if (recordedOut(g, resource, timeUs)) return;
  const pkg = `com.acme.${s.name.replace(/-/g, '')}`;
  const head = `${stamp(timeUs)} ${LEVEL_PAD[level]} [${s.name},${traceId ?? ''},${spanId ?? ''}] 1 --- [nio-8080-exec-${1 + Math.floor(g.r() * 10)}] ${pkg}.service.Handler : ${msg}`;
  // A shipper without a multi-line rule sends every line of a stack trace as a record of its own
  // (no level word, the same trace and span ids).
  const lines = stack && g.p.java?.stack === 'record_per_line' ? [head, ...stack] : [stack ? head + '\n' + stack.join('\n') : head];
  lines.forEach((body, i) => {
    const l: GenLog = { service: s.name, resource, timeUs: timeUs + i, severityNumber: 0, severityText: '', body, traceId, spanId };
    g.out.logs.push(l);
  });
}

const EXCEPTIONS = ['java.lang.NullPointerException', 'java.lang.IllegalStateException: order already settled', 'java.lang.ArithmeticException: / by zero', 'java.util.NoSuchElementException: No value present'];

function stackTrace(s: ServiceNode, exception: string, r: Rand): string[] {
  const pkg = `com.acme.${s.name.replace(/-/g, '')}`;
  const frames = [
    `${pkg}.service.${s.name[0]!.toUpperCase()}${s.name.slice(1).replace(/-(\w)/g, (_m, c: string) => c.toUpperCase())}ServiceImpl.process(ServiceImpl.java:${100 + Math.floor(r() * 300)})`,
    `${pkg}.controller.ApiController.handle(ApiController.java:${40 + Math.floor(r() * 60)})`,
    'org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:897)',
    'org.apache.catalina.core.ApplicationFilterChain.doFilter(ApplicationFilterChain.java:166)',
  ];
  return [exception, ...frames.map((f) => `\tat ${f}`), '\t... 42 common frames omitted'];
}

/** The stack trace a Spring caller logs when a call it made answered 500. */
function clientErrorTrace(s: ServiceNode, callee: string, r: Rand): string[] {
  const pkg = `com.acme.${s.name.replace(/-/g, '')}`;
  return [
    `org.springframework.web.client.HttpServerErrorException$InternalServerError: 500 : [{"status":500,"error":"Internal Server Error","path":"/api/v1/${callee}"}]`,
    '\tat org.springframework.web.client.DefaultResponseErrorHandler.handleError(DefaultResponseErrorHandler.java:186)',
    '\tat org.springframework.web.client.RestTemplate.doExecute(RestTemplate.java:782)',
    `\tat ${pkg}.client.${callee.replace(/-(\w)/g, (_m, c: string) => c.toUpperCase())}Client.call(Client.java:${30 + Math.floor(r() * 90)})`,
    '\t... 87 common frames omitted',
  ];
}

/**
 * Java shapes: the service a caller turns to after a wrong answer instead of the rest of its path
 * (a fallback or compensation): one deeper than it that it does not call already, the same for every
 * request of the caller; null when there is none.
 */
function fallbackOf(g: Gen, s: ServiceNode, op: { calls: Call[] }): Call | null {
  const t = g.p.topology;
  const called = new Set(op.calls.map((c) => c.callee));
  const options = t.services.filter((x) => x.level > s.level && x.name !== g.p.target && !called.has(x.name) && !g.p.noisy.includes(x.name)).map((x) => x.name).sort();
  if (!options.length) return null;
  let h = 0;
  for (const ch of s.name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return { callee: options[h % options.length]!, op: 0, probability: 1, propagate: 0 };
}

function emitSpan(g: Gen, s: GenSpan): void {
  if (recordedOut(g, s.resource, s.startUs)) return;
  if (g.r() < 0.005) return; // a lost span: its children become orphans, as in any recording
  g.out.spans.push(s);
}

function span(g: Gen, traceId: string, spanId: string, parent: string | null, s: ServiceNode, resource: string, name: string, startUs: number, endUs: number): GenSpan {
  const skew = g.skew.get(resource) ?? 0;
  return { traceId, spanId, parentSpanId: parent, service: s.name, resource, name, kind: 0, startUs: startUs + skew, durationUs: Math.max(1, endUs - startUs), error: false, statusMessage: '', attributes: {}, events: [] };
}

function observe(g: Gen, resource: string, t: number, durUs: number, selfUs: number, ok: boolean) {
  const k = `${resource}|${Math.floor(t / MINUTE_US) * MINUTE_US}`;
  const v = g.stats.get(k) ?? { n: 0, ok: 0, durUs: [], selfUs: 0 };
  v.n++;
  if (ok) v.ok++;
  v.durUs.push(durUs);
  v.selfUs += selfUs;
  g.stats.set(k, v);
}

const replicaOf = (s: ServiceNode, hint: number) => hint % s.replicas;

/** packet_loss: the share of the lossy calls that time out rather than wait for a retransmission. */
const TIMEOUT_SHARE = 0.15;

/** A call as the caller records it: one span (named as its client would name it) around the callee's work. */
function call(g: Gen, caller: ServiceNode, resource: string, c: Call, traceId: string, parent: string, start: number, hint: number, waitUs: number): Outcome {
  const { r, p } = g;
  const callee = serviceOf(p.topology, c.callee);
  const op = callee.ops[c.op]!;
  const spanId = hex(r, 8);
  const name = op.protocol === 'http' ? op.method : `${op.route}/${op.method}`;
  const net = Math.round(between(r, 150, 750));
  // A delayed pod: the time goes on the wire, both ways; the callee's own span does not see it.
  const onPod = hits(g, callee, start) && replicaOf(callee, hint) === p.pod;
  const delayed = p.effect === 'network_delay' && onPod;
  // A lossy pod: some calls wait for TCP retransmissions (200 ms, doubling); a few never reach it and
  // the caller gives up at its timeout, with no span from the callee.
  const lossy = p.effect === 'packet_loss' && onPod && r() < p.share;
  // A service that stopped answering: the call times out, or is refused at once.
  const down = p.effect === 'unreachable' && hits(g, callee, start);
  if (down || (lossy && r() < TIMEOUT_SHARE)) {
    const end = start + (down && r() >= p.share ? Math.round(between(r, 1_000, 5_000)) : Math.round(lognormal(r, p.delayUs, 0.1)));
    emitSpan(g, span(g, traceId, spanId, parent, caller, resource, name, start, end));
    return { endUs: end, failed: true, wrong: false };
  }
  const rto = lossy ? 200_000 * 2 ** (r() < 0.7 ? 0 : r() < 0.8 ? 1 : 2) : 0;
  const extra = delayed ? Math.round(lognormal(r, p.delayUs, 0.3)) : rto ? Math.round(rto * between(r, 1, 1.2)) : 0;
  const before = Math.round(waitUs / 2) + net + Math.round(extra / 2);
  const inner = serve(g, callee, c.op, traceId, spanId, start + before, hint);
  const end = inner.endUs + net + (extra - Math.round(extra / 2)) + (waitUs - Math.round(waitUs / 2));
  emitSpan(g, span(g, traceId, spanId, parent, caller, resource, name, start, end));
  return { endUs: end, failed: inner.failed, wrong: inner.wrong };
}

/** One request served by `s`'s operation: its span, its calls (retried or cut short), its logs. */
function serve(g: Gen, s: ServiceNode, opIndex: number, traceId: string, parent: string | null, start: number, hint: number): Outcome {
  const { r, p } = g;
  const op = s.ops[opIndex]!;
  const replica = replicaOf(s, hint);
  const resource = resourceOf(g, s, replica);
  const spanId = hex(r, 8);
  const noisy = p.noisy.includes(s.name);
  const here = hits(g, s, start);
  let self = lognormal(r, op.selfMedianUs, noisy ? 0.9 : op.selfSigma);
  if (noisy && r() < 0.04) self *= Math.min(60, Math.pow(1 - r(), -1 / 1.3));
  if (here && p.effect === 'self_latency') self = self * p.factor + lognormal(r, p.extraUs, 0.35);
  const starved = here && p.effect === 'cpu_starved' && replica === p.pod;
  if (starved) self *= p.factor;
  self = Math.max(50, Math.round(self));
  const threw = here && p.effect === 'exception' && r() < p.share;
  const wrong = here && p.effect === 'wrong_return' && r() < p.share;
  const ownFail = !threw && r() < (noisy ? Math.max(s.baseErrorRate, 0.06) : s.baseErrorRate);
  let cursor = start + Math.round(self * 0.4);
  let failed = threw || ownFail;
  // An exception thrown before the calls skips them; one thrown after them cuts the remaining work.
  const calls = threw && r() < 0.5 ? [] : op.calls.filter((c) => r() < c.probability);
  const fanStart = cursor;
  for (const c of calls) {
    const begin = op.parallel ? fanStart + Math.round(between(r, 10, 200)) : cursor + 40;
    const wait = starved ? Math.round(lognormal(r, p.delayUs, 0.5)) : 0;
    let o = call(g, s, resource, c, traceId, spanId, begin, hint, wait);
    let last = o.endUs;
    let abort = false;
    if (o.wrong) {
      const j = p.java;
      const fallback = j?.onWrong === 'fallback' ? fallbackOf(g, s, op) : null;
      const logged = r() < (j ? j.wrongLogShare : 0.5);
      if (j?.onWrong === 'abort') {
        // The caller's check of the answer fails: it gives up with an error of its own.
        abort = true;
        failed = true;
        if (logged) log(g, s, resource, last + 10, 'ERROR', `validation of the response from ${c.callee} failed`, traceId, spanId, stackTrace(s, 'java.lang.IllegalArgumentException: invalid response', r));
      } else if (fallback) {
        // The caller takes another path: a fallback call instead of the rest of its own.
        o = { ...call(g, s, resource, fallback, traceId, spanId, last + 200, hint, 0), wrong: true };
        last = o.endUs;
        if (logged) log(g, s, resource, last + 10, 'WARN', `unexpected response from ${c.callee}, falling back to ${fallback.callee}`, traceId, spanId);
      } else {
        // A wrong answer: the caller asks again (a retry), then gives up on the rest of its path.
        for (let k = 0, n = 1 + Math.floor(r() * 2); k < n; k++) {
          o = call(g, s, resource, c, traceId, spanId, last + 200, hint, 0);
          last = o.endUs;
        }
        if (logged) log(g, s, resource, last + 10, 'WARN', `unexpected response from ${c.callee}, retried`, traceId, spanId);
      }
    }
    cursor = op.parallel ? Math.max(cursor, last) : last;
    if (o.failed) {
      const j = p.java;
      if (j) {
        if (r() < j.callerError) log(g, s, resource, last + 5, 'ERROR', `call to ${c.callee} failed`, traceId, spanId, clientErrorTrace(s, c.callee, r));
      } else if (r() < 0.4) log(g, s, resource, last + 5, 'WARN', `call to ${c.callee} failed: 500 Internal Server Error`, traceId, spanId);
      if (r() < c.propagate) failed = true;
    }
    if (abort || (o.wrong && !op.parallel)) break;
  }
  const end = cursor + Math.round(self * (threw ? 0.1 : 0.6));
  emitSpan(g, span(g, traceId, spanId, parent, s, resource, op.protocol === 'http' ? `${op.method} ${op.route}` : `${op.route}/${op.method}`, start, end));
  if (!recordedOut(g, resource, start)) observe(g, resource, start, end - start, self, !failed);
  if (r() < 0.3) log(g, s, resource, start + Math.round(self * 0.2), 'INFO', `processed request ${100000 + Math.floor(r() * 900000)} in ${Math.round((end - start) / 1000)} ms`, traceId, spanId);
  if (threw) log(g, s, resource, end - 5, 'ERROR', `request processing failed`, traceId, spanId, stackTrace(s, EXCEPTIONS[p.topology.seed % EXCEPTIONS.length]!, r));
  else if (ownFail && r() < 0.8) log(g, s, resource, end - 5, 'ERROR', noisy ? `upstream timeout after ${Math.round(between(r, 500, 3000))} ms` : 'transient failure, giving up', traceId, spanId, r() < 0.5 ? stackTrace(s, 'java.util.concurrent.TimeoutException', r) : undefined);
  return { endUs: end, failed, wrong };
}

const quantileOf = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};

const GAUGE_NAMES = {
  semconv: { cpu: 'container.cpu.utilization', mem: 'k8s.pod.memory.working_set', rx: 'k8s.pod.network.io.receive', tx: 'k8s.pod.network.io.transmit', p50: 'latency.p50', p90: 'latency.p90', p99: 'latency.p99', rate: 'request.rate', success: 'success.rate' },
  plain: { cpu: 'cpu_usage', mem: 'memory_usage_bytes', rx: 'network_receive_bytes', tx: 'network_transmit_bytes', p50: 'latency_p50_ms', p90: 'latency_p90_ms', p99: 'latency_p99_ms', rate: 'request_rate', success: 'success_rate' },
} as const;

/** Per-pod gauges once a minute, from the requests the pod served: some points missing, times jittered. */
function gauges(g: Gen): void {
  const { r, p } = g;
  const names = GAUGE_NAMES[p.metricStyle];
  const memBase = new Map<string, number>();
  for (const [k, v] of [...g.stats].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const i = k.lastIndexOf('|');
    const resource = k.slice(0, i);
    const minute = Number(k.slice(i + 1));
    const [svc, rep] = resource.split('|') as [string, string];
    if (!memBase.has(resource)) memBase.set(resource, between(r, 300e6, 900e6));
    const starved = p.effect === 'cpu_starved' && p.target === svc && Number(rep) === p.pod && (minute >= p.onsetUs || within(p.earlier, minute));
    const cpu = starved ? between(r, 0.93, 1) : Math.min(1, 0.04 + v.selfUs / (MINUTE_US * 2) + between(r, -0.015, 0.015));
    const perReq = between(r, 2_000, 8_000);
    const values: [string, number, string][] = [
      [names.cpu, Math.max(0, cpu), '1'],
      [names.mem, memBase.get(resource)! * between(r, 0.97, 1.03), 'By'],
      [names.rx, v.n * perReq * between(r, 0.9, 1.1), 'By'],
      [names.tx, v.n * perReq * 3 * between(r, 0.9, 1.1), 'By'],
      [names.p50, quantileOf(v.durUs, 0.5) / 1000, 'ms'],
      [names.p90, quantileOf(v.durUs, 0.9) / 1000, 'ms'],
      [names.p99, quantileOf(v.durUs, 0.99) / 1000, 'ms'],
      [names.rate, v.n / 60, '{request}/s'],
      [names.success, v.n ? v.ok / v.n : 1, '1'],
    ];
    const jitter = Math.round(between(r, 0, 3_000_000));
    for (const [name, gauge, unit] of values) {
      if (r() < 0.02) continue; // a scrape that did not arrive
      const m: GenMetric = { service: svc, resource, name, unit, timeUs: minute + jitter, gauge };
      g.out.metrics.push(m);
    }
  }
}

/** The overlapping incident's service: a job nobody calls, on traces of its own. */
const JOB = 'report-job';

/**
 * overlapping_burst: a scheduled job runs about once a second on traces of its own (a root span and
 * an INFO record), failing on 2% of runs before the onset and on 70% from it, each failure an ERROR
 * record with a stack trace: an incident at the same time as the fault, elsewhere. On a stream of
 * its own, after the requests, so the rest of the case is as it would be without it.
 */
function job(g: Gen): void {
  const { p } = g;
  const r = rng(p.dataSeed * 48271 + 13);
  const node: ServiceNode = { ...p.topology.services[0]!, name: JOB, level: 1, ops: [], replicas: 1, noisy: false, profiled: false };
  const resource = resourceOf(g, node, 0);
  const jg: Gen = { ...g, r };
  for (let t = p.startUs + Math.round(r() * 1e6); t < p.endUs - 2_000_000; t += Math.round(between(r, 0.7e6, 1.3e6))) {
    if (p.gaps.some(([f, to]) => t >= f && t < to)) continue;
    const traceId = hex(r, 16);
    const spanId = hex(r, 8);
    const d = Math.round(lognormal(r, 40_000, 0.4));
    emitSpan(jg, span(jg, traceId, spanId, null, node, resource, 'ReportJob.run', t, t + d));
    log(jg, node, resource, t + 100, 'INFO', `report batch ${Math.floor(r() * 1e6)} started`, traceId, spanId);
    if (r() < (t >= p.onsetUs ? 0.7 : 0.02)) log(jg, node, resource, t + d - 10, 'ERROR', 'report batch failed', traceId, spanId, stackTrace(node, 'java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available', r));
  }
}

/** Every span, log and gauge point of a recorded-style case (no profiles), in time order per signal. */
export function generateRecorded(p: RecordedPlan): ScenarioData {
  const r = rng(p.dataSeed * 48271 + 7);
  const g: Gen = { r, p, out: { resources: {}, spans: [], logs: [], metrics: [], profiles: [] }, stats: new Map(), skew: new Map() };
  const t = p.topology;
  const entry = serviceOf(t, t.entry);
  const cumulative: number[] = [];
  for (const w of t.entryMix) cumulative.push((cumulative[cumulative.length - 1] ?? 0) + w);
  // Every pod's resource (and skew) in a fixed order, so skews do not depend on traffic.
  for (const s of t.services) for (let i = 0; i < s.replicas; i++) resourceOf(g, s, i);
  let i = 0;
  // Arrivals on a stream of their own: where the data ends must not change what comes before it.
  // The same arrival process as the generated systems; none while the recording has a gap (drawn, then dropped, so the gaps move no other arrival).
  for (const t0 of arrivals(rng(p.dataSeed * 48271 + 11), p).filter((t) => !p.gaps.some(([f, to]) => t >= f && t < to))) {
    const u = r();
    serve(g, entry, Math.max(0, cumulative.findIndex((c) => u < c)), hex(r, 16), null, t0, i++);
  }
  if (p.spec.shape === 'overlapping_burst') job(g);
  gauges(g);
  g.out.spans.sort((a, b) => a.startUs - b.startUs);
  g.out.logs.sort((a, b) => a.timeUs - b.timeUs);
  g.out.metrics.sort((a, b) => a.timeUs - b.timeUs);
  return g.out;
}
