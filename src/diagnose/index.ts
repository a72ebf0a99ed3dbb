// POST /v1/diagnose, the "why": the reads (queries.ts) run concurrently on the read pool, shared by
// every service of the request; the reasoning (model, findings) and the block are pure functions of
// the rows. A service that fails, or that never reported, is an entry in `errors`, never a failed
// response.
import type { ReadPool } from '../store/readers.js';
import type { ServiceSpans } from '../store/batch.js';
import {
  DiagnoseTimeout,
  STATEMENTS as S,
  bucketStart,
  readShared,
  run,
  sampleAt,
  scaleCounts,
  type Bounds,
  type LogRow,
  type MetricRow,
  type Reader,
  type SharedRows,
  type SpanRow,
  type TemplateParamsRow,
  type TemplateRow,
  type WindowLogRow,
} from './reads/index.js';
import { applyExceedances, buildModel, downstream, latencyCandidates, type Model } from './model.js';
import { prepareStructure, rootChange, type PreparedStructure } from './calltree.js';
import { gatherEvidence, silentCallees, type Candidate, type EvidenceInputs } from './evidence/index.js';
import { rankFindings, scopeOf } from './rank.js';
import { findDeploys, serviceEvents, serviceIdentity, type DeployEvent } from './events.js';
import {
  CAPS,
  assembleBlock,
  coverage,
  dependencies,
  genAiModels,
  logCounters,
  logPatterns,
  logSample,
  mergeLogSamples,
  mergeSpanSamples,
  inKeyOrder,
  metricSummaries,
  operationSummaries,
  profileHotSpots,
  spanSample,
} from './block.js';
import type { DiagnoseRequest } from './request.js';
import type { DiagnoseResponse, DiagnosisBlock } from './block-schema.js';
import { BUCKET_US, HOUR_US, MINUTE_US } from '../core/time.js';

export { parseDiagnoseRequest, type DiagnoseRequest } from './request.js';

/** Above this many spans (or logs) of the service in the window, "the newest" reads use its last slice only. */
const SLICE_ABOVE_ROWS = 100_000;

export interface DiagnoseDeps {
  reads: ReadPool;
  /** Time limit of one call (SVC_DIAGNOSE_TIMEOUT_MS). */
  timeoutMs: number;
  /** Spans of the window read for its statistics, about (SVC_DIAGNOSE_SCAN_SPANS); more are read as slices. */
  scanSpans: number;
  /** When the time limit ends, ms since the epoch: counted from the request's arrival, so time spent waiting for a turn counts. Default: now + timeoutMs. */
  deadline?: number;
  /** First and last time seen per service (the writer's copy of the services table). */
  services(): Readonly<ServiceSpans>;
  /** If given, filled with the ms each statement ran, by name (the slow-diagnosis log). */
  timings?: Map<string, number>;
}

export type { DiagnoseResponse };

/**
 * The time bounds of a diagnosis: the baseline is at least 4 times the window and at least an hour
 * (in whole buckets, ending at the window's bucket); the look-back reaches half as far again, so a
 * regime that began before the window can be found and cut out of the baseline.
 */
export function boundsFor(from: number, to: number, reference?: { from: number; to: number }): { bounds: Bounds; baseBuckets: number } {
  const baseBuckets = Math.ceil(Math.max(4 * (to - from), HOUR_US) / BUCKET_US);
  const lookFrom = bucketStart(from) - Math.ceil(baseBuckets * 1.5) * BUCKET_US;
  if (!reference) return { bounds: { from, to, lookFrom, newSince: bucketStart(from) - baseBuckets * BUCKET_US }, baseBuckets };
  // A named reference: the series and events read from it on, and what began after it is new.
  return { bounds: { from, to, lookFrom: Math.min(lookFrom, bucketStart(reference.from)), newSince: reference.to, reference }, baseBuckets };
}

/** Error types in the window first seen since `newSince` (new with the incident): service → type → count, and since when. */
function newErrorTypes(shared: SharedRows, b: Bounds): { counts: Map<string, Map<string, number>>; firstAt: Map<string, Map<string, number>> } {
  const first = new Map(shared.errorTypesFirstSeen.map((r) => [`${r.service_name}\u0000${r.error_type}`, r.first_us]));
  const counts = new Map<string, Map<string, number>>();
  const firstAt = new Map<string, Map<string, number>>();
  for (const r of shared.windowErrors) {
    const { service_name: s, error_type: t } = r;
    const since = first.get(`${s}\u0000${t}`) ?? r.first_us;
    if (since < b.newSince) continue;
    const c = counts.get(s) ?? counts.set(s, new Map()).get(s)!;
    c.set(t, (c.get(t) ?? 0) + r.n);
    (firstAt.get(s) ?? firstAt.set(s, new Map()).get(s)!).set(t, since);
  }
  return { counts, firstAt };
}

/** The shared reads of a call and the model built on them: what the services' own reads need. */
interface Base {
  deps: DiagnoseDeps;
  reader: Reader;
  model: Model;
  shared: SharedRows;
}

interface Context extends Base {
  templates: Map<number, TemplateRow>;
  deploys: DeployEvent[];
  newErrors: ReturnType<typeof newErrorTypes>;
  /** The call tree, log levels and gauges, prepared once for every service of the call. */
  structure: PreparedStructure;
  /** Log events per service and fine bin. */
  templateBins: SharedRows['templateBins'];
}

/** Whether the store has anything of `service` to diagnose: it reported, and the window holds its telemetry or calls to it. */
function hasTelemetry(ctx: Base, service: string): boolean {
  const m = ctx.model;
  return (
    m.byService.has(service) ||
    ctx.shared.windowLogs.some((r) => r.service_name === service) ||
    ctx.shared.profiles.some((r) => r.service_name === service && r.in_window) ||
    ctx.shared.gauges.some((r) => r.service_name === service && r.minute >= m.bounds.from) ||
    (m.callers.get(service)?.size ?? 0) > 0
  );
}

/** Raw id → the id it merged into, for the templates merged into these rows' (their lines carry the raw id). */
function mergedInto(rows: readonly WindowLogRow[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const r of rows) if (r.template_id !== null) for (const from of r.merged_ids ?? []) m.set(from, r.template_id);
  return m;
}

/** What a service's block shows of its own rows: the sampled spans and logs whole, log parameters, metrics, counts. */
interface Samples {
  spans: SpanRow[];
  logs: LogRow[];
  paramRows: TemplateParamsRow[];
  metricRows: MetricRow[];
  metricSeries: number;
  errorTraces: number;
}

/**
 * The services' own reads, one statement of each kind for all of them (a call naming ten services
 * reads each table once, not ten times): sample keys, then the sampled spans and logs whole.
 */
async function readSamples(ctx: Base, services: readonly string[]): Promise<Map<string, Samples>> {
  const b = ctx.model.bounds;
  const reads = ctx.reader;
  // Exemplars, the newest logs and log parameters of a busy service come from the window's most
  // recent slice (a fifteenth, at least a minute); a quiet one's whole window is cheap to read and
  // has an exemplar of every operation.
  const w = b.to - b.from;
  const sliceFrom = (rows: number) => b.to - (rows > SLICE_ABOVE_ROWS ? Math.min(w, Math.max(MINUTE_US, w / 15)) : w);
  const asked = services.map((service) => {
    const ops = ctx.model.byService.get(service) ?? [];
    const logs = ctx.shared.windowLogs.filter((r) => r.service_name === service);
    // A record without a template sorts and reads as template 0 (ids start at 1: it matches none).
    const topTemplates = [...logs].sort((x, y) => y.n - x.n || (x.template_id ?? 0) - (y.template_id ?? 0)).slice(0, 8);
    return {
      service,
      spanFrom: sliceFrom(ops.reduce((s, o) => s + o.n, 0)),
      logFrom: sliceFrom(logs.reduce((s, r) => s + r.n, 0)),
      hasSpans: ops.length > 0,
      hasErrors: ops.some((o) => o.k > 0),
      hasLogs: logs.length > 0,
      hasErrorLogs: logs.some((r) => r.k > 0),
      topTemplates,
    };
  });
  type Ask = (typeof asked)[number];
  const names = (keep: (a: Ask) => boolean) => asked.filter(keep).map((a) => a.service);
  const slices = (keep: (a: Ask) => boolean, from: (a: Ask) => number) => asked.filter(keep).map((a) => ({ service: a.service, from: from(a) }));
  const withErrors = names((a) => a.hasErrors);
  const withSpans = names((a) => a.hasSpans);
  const withErrorLogs = names((a) => a.hasErrorLogs);
  const logSlices = slices((a) => a.hasLogs, (a) => a.logFrom);
  const topTemplates = asked.flatMap((a) => a.topTemplates);
  const [errorKeys, slowKeys, exemplarKeys, errorLogKeys, newestLogKeys, paramRows, metricRows, metricSeries, errorTraces] = await Promise.all([
    withErrors.length ? run(reads, S.errorSpanKeys, b, withErrors, CAPS.span_sample) : [],
    withSpans.length ? run(reads, S.slowSpanKeys, ctx.shared.windowSample, withSpans, CAPS.span_sample) : [],
    withSpans.length ? run(reads, S.exemplarSpanKeys, b, slices((a) => a.hasSpans, (a) => a.spanFrom)) : [],
    withErrorLogs.length ? run(reads, S.errorLogKeys, b, withErrorLogs, CAPS.log_sample) : [],
    logSlices.length ? run(reads, S.newestLogKeys, b, logSlices, CAPS.log_sample) : [],
    topTemplates.length
      ? run(reads, S.templateParams, b, slices((a) => a.topTemplates.length > 0, (a) => a.logFrom), topTemplates.map((r) => r.template_id ?? 0), 200, mergedInto(topTemplates))
      : [],
    run(reads, S.metrics, b, services),
    run(reads, S.metricSeries, b, services),
    withErrors.length ? run(reads, S.errorTraces, b, withErrors) : [],
  ]);
  const of = <R extends { service_name: string }>(rows: readonly R[], service: string) => rows.filter((r) => r.service_name === service);
  const spanKeys = new Map(services.map((s) => [s, mergeSpanSamples(of(errorKeys, s), of(slowKeys, s), of(exemplarKeys, s))]));
  const logKeys = new Map(services.map((s) => [s, mergeLogSamples(of(errorLogKeys, s), of(newestLogKeys, s))]));
  const allSpanKeys = [...spanKeys.values()].flat();
  const allLogKeys = [...logKeys.values()].flat();
  const [spanRows, logRows] = await Promise.all([
    allSpanKeys.length ? run(reads, S.spansByKey, allSpanKeys) : [],
    allLogKeys.length ? run(reads, S.logsByKey, allLogKeys) : [],
  ]);
  return new Map(
    services.map((s) => [
      s,
      {
        spans: inKeyOrder(of(spanRows, s), spanKeys.get(s)!, (r) => r.span_id),
        logs: inKeyOrder(of(logRows, s), logKeys.get(s)!, (r) => String(r.rid)),
        paramRows: of(paramRows, s),
        metricRows: of(metricRows, s),
        metricSeries: of(metricSeries, s)[0]?.n ?? 0,
        errorTraces: of(errorTraces, s)[0]?.n ?? 0,
      },
    ]),
  );
}

function diagnoseOne(ctx: Context, service: string, samples: Samples): DiagnosisBlock {
  const { model: m, shared } = ctx;
  const b = m.bounds;
  const ops = m.byService.get(service) ?? [];
  const myLogs = shared.windowLogs.filter((r) => r.service_name === service);
  const { spans, logs, paramRows, metricRows, metricSeries, errorTraces } = samples;
  const identity = serviceIdentity(shared.deployments, service, b.from);
  const known = ctx.deps.services()[service];
  const spanTotal = ops.reduce((s, o) => s + o.n, 0);
  const logTotal = myLogs.reduce((s, r) => s + r.n, 0);
  const profileRows = shared.profiles.filter((r) => r.service_name === service && r.in_window);
  const cov = coverage({
    spans: spanTotal,
    logs: logTotal,
    templates: myLogs.filter((r) => r.template_id !== null).length,
    metricSeries,
    profileSamples: profileRows.reduce((s, r) => s + r.samples, 0),
  });
  const inputs = inputsFor(ctx, service);
  const change = inputs.change;
  const findings = rankFindings(inputs, gatherEvidence(inputs), { spans: cov.has_spans, logs: cov.has_logs, metrics: cov.has_metrics, profiles: cov.has_profiles });
  const newPatterns = myLogs
    .map((r) => (r.template_id === null ? undefined : ctx.templates.get(r.template_id)))
    .filter((t): t is TemplateRow => t !== undefined && t.first_us >= b.newSince)
    .map((t) => ({ template_id: t.template_id, pattern: t.pattern, first_us: t.first_us }));
  const events = serviceEvents({
    service,
    from: b.from,
    lookFrom: b.lookFrom,
    deploys: ctx.deploys,
    deployments: shared.deployments,
    identity,
    newErrorTypes: ctx.newErrors.counts.get(service) ?? new Map(),
    firstErrorAt: ctx.newErrors.firstAt.get(service) ?? new Map(),
    newPatterns,
  });
  // The baseline the service's operations were compared with: before the earliest onset when a
  // regime began before the window, else the stretch just before the window.
  const onsets = ops.map((o) => o.base.onset_us).filter((t): t is number => t !== null);
  const baselineTo = onsets.length ? Math.min(...onsets) : bucketStart(b.from);
  return assembleBlock({
    service,
    bounds: b,
    identity,
    firstSeenUs: known ? known[0] : identity.first_seen_us,
    lastSeenUs: known ? known[1] : identity.last_seen_us,
    deps: dependencies(m, service),
    coverage: cov,
    errorTracesTotal: errorTraces,
    events,
    findings,
    operations: operationSummaries(m, service, shared.windowErrors, shared.anomalies, b),
    spanTotal,
    spanSample: spanSample(spans, b),
    logTotal,
    logSample: logSample(logs),
    patterns: logPatterns(service, shared.windowLogs, ctx.templates, b),
    counters: logCounters(paramRows, ctx.templates),
    metrics: metricSummaries(metricRows),
    profiles: profileHotSpots(shared.profiles, service),
    genAi: genAiModels(shared.genAi, service),
    baseline: b.reference ? { ...b.reference, cut: false } : { from: baselineTo - m.baseBuckets * BUCKET_US, to: baselineTo, cut: onsets.length > 0 },
    onset: change,
    edgeScale: shared.edgeScale,
    windowSample: shared.windowSample,
  });
}


/** The shared reads of a call and the model built on them. */
async function readBase(deps: DiagnoseDeps, reader: Reader, req: DiagnoseRequest): Promise<Base> {
  const { bounds, baseBuckets } = boundsFor(req.from, req.to, req.reference);
  const shared = await readShared(reader, bounds, deps.scanSpans);
  return { deps, reader, shared, model: buildModel(shared, bounds, baseBuckets, Object.keys(deps.services())) };
}

/** What is derived from the shared reads once for every service asked: the reads that depend on the model, the call tree prepared. */
async function completeContext(base: Base, req: DiagnoseRequest): Promise<Context> {
  const { deps, reader, model, shared } = base;
  const { bounds } = model;
  const tested = latencyCandidates(model);
  const templateIds = new Set<number>();
  const wanted = new Set(req.services.flatMap((s) => downstream(model, s).map((n) => n.service)));
  for (const r of shared.windowLogs) if (r.template_id !== null && wanted.has(r.service_name)) templateIds.add(r.template_id);
  for (const r of shared.templateBins) templateIds.add(r.template_id);
  const [above, templateRows] = await Promise.all([
    tested.length
      ? run(reader, S.exceedances, shared.windowSample, tested.map((o) => ({ service: o.service, operation: o.operation, threshold: o.base.p95 }))).then((rows) =>
          scaleCounts(rows, shared.windowSample.scale, ['above']),
        )
      : [],
    templateIds.size ? run(reader, S.templates, [...templateIds]) : [],
  ]);
  applyExceedances(model, above);
  return {
    deps,
    reader,
    model,
    shared,
    templates: new Map(templateRows.map((r) => [r.template_id, r])),
    deploys: findDeploys(shared.deployments, bounds.lookFrom),
    newErrors: newErrorTypes(shared, bounds),
    structure: prepareStructure(shared.callTree, shared.logLevels, shared.gauges, bounds.from, bounds.to, (t) => sampleAt(shared.structureRead, t), shared.callSequences, bounds.reference ?? null),
    templateBins: shared.templateBins,
  };
}

/** What every evidence module reads about one diagnosed service. */
function inputsFor(ctx: Context, service: string): EvidenceInputs {
  const { model: m, shared } = ctx;
  const inputs: EvidenceInputs = {
    root: service,
    bounds: m.bounds,
    model: m,
    tree: ctx.structure,
    change: rootChange(ctx.structure, service),
    silent: new Set(),
    deploys: ctx.deploys,
    deployments: shared.deployments,
    newErrorTypes: ctx.newErrors.counts,
    windowLogs: shared.windowLogs,
    templates: ctx.templates,
    templateBins: ctx.templateBins,
    profiles: shared.profiles,
    genAi: shared.genAi,
    genAiBefore: shared.genAiBefore,
    anomalies: shared.anomalies,
    firstSeen: (s) => ctx.deps.services()[s]?.[0],
  };
  inputs.silent = new Set(silentCallees(inputs).keys());
  return inputs;
}

/**
 * Every candidate of every module for each service asked, unranked and unfiltered, with the
 * diagnosed service's change and world: what the ranking started from (bench/recorded/explain.ts).
 */
export async function explain(deps: DiagnoseDeps, req: DiagnoseRequest): Promise<Record<string, { inputs: EvidenceInputs; candidates: Candidate[]; scope: string[] }>> {
  const reader: Reader = { reads: deps.reads, deadline: deps.deadline ?? Date.now() + deps.timeoutMs };
  const ctx = await completeContext(await readBase(deps, reader, req), req);
  return Object.fromEntries(
    req.services.map((service) => {
      const inputs = inputsFor(ctx, service);
      return [service, { inputs, candidates: gatherEvidence(inputs), scope: [...scopeOf(inputs)] }];
    }),
  );
}

export async function diagnose(deps: DiagnoseDeps, req: DiagnoseRequest): Promise<DiagnoseResponse> {
  // Keyed by the client's service names: no prototype, so that `__proto__` is a name like any other.
  const response: DiagnoseResponse = { results: Object.create(null) as DiagnoseResponse['results'], errors: Object.create(null) as DiagnoseResponse['errors'] };
  const reader: Reader = { reads: deps.reads, deadline: deps.deadline ?? Date.now() + deps.timeoutMs, timings: deps.timings };
  const failure = (err: unknown) =>
    err instanceof DiagnoseTimeout
      ? `diagnosis took longer than ${deps.timeoutMs} ms (SVC_DIAGNOSE_TIMEOUT_MS, from the request's arrival); narrow the window or ask for fewer services`
      : `diagnosis failed: ${(err as Error).message}`;
  let base: Base;
  try {
    base = await readBase(deps, reader, req);
  } catch (err) {
    for (const s of req.services) response.errors[s] = failure(err);
    return response;
  }
  const known = deps.services();
  const diagnosable: string[] = [];
  const absent = new Map<string, string>();
  for (const service of req.services) {
    if (hasTelemetry(base, service)) diagnosable.push(service);
    else if (!known[service]) absent.set(service, `no telemetry from '${service}' has been received; see GET /v1/services for the services that reported`);
    else absent.set(service, `no telemetry from '${service}' in the window (last seen ${new Date(known[service]![1] / 1000).toISOString()}); widen the window or see GET /v1/services`);
  }
  // The services' own reads need only the model: they run beside the context's own reads, not after them.
  const context = completeContext(base, req);
  const sampled = diagnosable.length ? readSamples(base, diagnosable) : Promise.resolve(new Map<string, Samples>());
  sampled.catch(() => {}); // a failure is reported below, after the context's
  let ctx: Context;
  try {
    ctx = await context;
  } catch (err) {
    for (const s of req.services) response.errors[s] = failure(err);
    return response;
  }
  for (const [service, message] of absent) response.errors[service] = message;
  let samples: Map<string, Samples>;
  try {
    samples = await sampled;
  } catch (err) {
    for (const s of diagnosable) response.errors[s] = failure(err);
    return response;
  }
  for (const service of diagnosable) {
    try {
      response.results[service] = diagnoseOne(ctx, service, samples.get(service)!);
    } catch (err) {
      response.errors[service] = failure(err);
    }
  }
  // Keys in the request's order, whatever finished first.
  response.results = Object.fromEntries(req.services.filter((s) => s in response.results).map((s) => [s, response.results[s]!]));
  return response;
}
