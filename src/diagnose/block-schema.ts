// The diagnosis block: the answer of POST /v1/diagnose per service, as a schema value (published in
// openapi.json) with its TypeScript type (what assembleBlock returns and the client receives).
// Every listed field is present; values that can be absent in the data (deployment, namespace,
// baselines, an exemplar trace, log correlation ids...) are nullable; `drill_down_sql` is required
// on non-incident findings and `incident` on incident ones.
import { SIGNALS, type SignalName } from '../detect/signals.js';
import { arr, dict, bool, component, int, int64, iso, nnum, nstr, niso, nullable, num, obj, oneOf, opt, str, Type, type Static } from '../core/schema.js';

/** The names of the detection signals (detect/signals.ts is the list), or of those keyed by operation or by service. */
export const signalNames = (entity?: 'operation' | 'service'): SignalName[] => SIGNALS.filter((s) => entity === undefined || s.entity === entity).map((s) => s.name);

export const Signal = component('Signal', Type.Unsafe<SignalName>({ type: 'string', enum: signalNames() }));

/** Every kind a finding may have. */
export const FINDING_KINDS = [
  'incident',
  'error_spike',
  'latency_regression',
  'dependency_failure',
  'saturation',
  'call_pattern_change',
  'new_error_type',
  'new_log_pattern',
  'log_event_vanished',
  'log_event_surge',
  'log_error_burst',
  'deploy_regression',
  'resource_hot_spot',
  'gen_ai_degradation',
  'coverage_gap',
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** The signals a finding names beyond the detection signals. */
const FINDING_SIGNALS = 'gen_ai_finish_reasons, trace_shape (calls per request), resource_saturation (a CPU, memory or restart gauge), deploy or restarts (a change at the onset), or the missing signal of a coverage gap';

const drillSql = () => str('ready-to-run SQL for POST /v1/query; send it verbatim');

export const DiagnosisWindow = component('DiagnosisWindow', obj({ from_ts: int64(), from_iso: iso(), to_ts: int64(), to_iso: iso() }));
export const Dependency = component('Dependency', obj({ service_name: str(), span_count: int(), error_count: int(), error_rate: num() }));
export const DiagnosisContext = component(
  'DiagnosisContext',
  obj({
    service_name: str(),
    deployment: nstr(),
    namespace: nstr(),
    pod_count: int(),
    has_instance_id: bool(),
    first_seen: niso(),
    last_seen: niso(),
    dependencies: arr(Dependency, 'services this one calls'),
    dependents: arr(Dependency, 'services that call this one'),
  }),
);
export const CoverageSignal = component('CoverageSignal', obj({ signal_type: str(), available: bool(), reason: nstr(), severity: nstr() }));
export const Coverage = component(
  'Coverage',
  obj({
    has_spans: bool(),
    has_logs: bool(),
    has_metrics: bool(),
    has_profiles: bool(),
    span_count: int(),
    log_template_count: int(),
    metric_series_count: int(),
    profile_sample_count: int(),
    signals: arr(CoverageSignal),
  }),
);
export const DiagnosisEvent = component(
  'DiagnosisEvent',
  obj({
    event_type: str(),
    description: str(),
    detected_at: iso(),
    detected_at_us: int64(),
  }),
);
export const IncidentShift = component(
  'IncidentShift',
  obj({
    signal: Signal,
    entity: str(),
    before: num(),
    after: num(),
    ts_shift: int64('microseconds'),
    ts_shift_iso: iso(),
    summary: str(),
    drill_down_sql: drillSql(),
  }),
);
export const Incident = component(
  'Incident',
  obj({
    incident_id: opt(nstr('the incident_id GET /v1/anomalies gives these shifts; null for a shift that correlates with no other')),
    started_at: int64('microseconds'),
    started_at_iso: iso(),
    shifts: arr(IncidentShift),
    deploy: opt(
      nullable(
        { service: str(), version: nstr(), image: nstr(), detected_at: iso(), detected_at_us: int64() },
        'the deploy that coincides with the incident, when one does',
      ),
    ),
  }),
);
export const Finding = component(
  'Finding',
  obj(
    {
      kind: oneOf(FINDING_KINDS),
      severity: oneOf(SEVERITIES),
      summary: str('for people; agents read the fields below'),
      service: str('the service at fault; may be another than the one diagnosed'),
      operation: nstr('the operation (or model, or profiled function) the finding is about'),
      signal: str(`${signalNames().join(', ')}, ${FINDING_SIGNALS}`),
      before: nnum('baseline value in raw units (percent, microseconds, records or nanoseconds per 5 minutes)'),
      after: nnum('window value in the same units'),
      score: Type.Number({ minimum: 0, maximum: 1, description: 'orders the list; severity is a band of it' }),
      drill_down_sql: opt(drillSql()),
      incident: opt(Incident),
    },
    {
      if: { properties: { kind: { const: 'incident' } }, required: ['kind'] },
      then: { required: ['incident'] },
      else: { required: ['drill_down_sql'] },
    },
  ),
);
export const OperationSummary = component(
  'OperationSummary',
  obj({
    operation: str(),
    span_name: str(),
    count: int(),
    error_count: int(),
    error_pct: num(),
    duration_p50_us: num(),
    duration_p95_us: num(),
    duration_p99_us: num(),
    baseline_count: int(),
    baseline_error_pct: nnum('null when there is no baseline'),
    baseline_p95_us: nnum('null when there is no baseline'),
    is_anomalous: bool(),
    anomaly_reason: nstr(),
    error_breakdown: arr(obj({ error_type: str(), count: int() })),
    exemplar_error_trace_id: nstr(),
    drill_down_sql: drillSql(),
  }),
);
/** A JSON value the block carries as it was stored (attributes, events), shrunk to a bounded size. */
const jsonValue = (types: string[]) => Type.Unsafe<Record<string, unknown> | unknown[] | null>({ type: types });
export const SpanSample = component(
  'SpanSample',
  obj({
    trace_id: str(),
    span_id: str(),
    parent_span_id: nstr(),
    span_name: str(),
    span_kind: int(),
    status_code: int(),
    status_message: nstr(),
    is_error: bool(),
    start_ts: int64(),
    end_ts: int64(),
    start_iso: iso(),
    duration_us: int64(),
    span_attributes: jsonValue(['object', 'null']),
    events: jsonValue(['object', 'array', 'null']),
    drill_down_sql: drillSql(),
  }),
);
export const SpansSection = component('SpansSection', obj({ total: int(), sampled_by: str(), drill_all_sql: drillSql(), sample: arr(SpanSample, 'bounded') }));
export const LogSample = component(
  'LogSample',
  obj({
    timestamp: int64('microseconds'),
    timestamp_iso: iso(),
    body: str(),
    severity_text: nstr(),
    trace_id: nstr(),
    span_id: nstr(),
    attributes: jsonValue(['object', 'null']),
    event_name: opt(nstr()),
  }),
);
export const LogsSection = component('LogsSection', obj({ total: int(), sampled_by: str(), drill_all_sql: drillSql(), sample: arr(LogSample, 'bounded') }));
export const LogPattern = component(
  'LogPattern',
  obj({
    template_id: int64(),
    pattern: str(),
    example_body: str(),
    severity_text: nstr(),
    count: int(),
    error_count: int(),
    first_seen: iso(),
    last_seen: iso(),
    sample_values: Type.Unsafe<Record<string, unknown> | unknown[]>({ type: 'object' }),
    drill_down_sql: drillSql(),
  }),
);
export const LogCounter = component('LogCounter', obj({ label: str(), pattern: str(), avg_value: num(), min_value: num(), max_value: num(), samples: int(), pinned_zero: bool() }));
export const MetricSummary = component('MetricSummary', obj({ metric_name: str(), bucket: str(), count: int(), avg: nnum(), p95: nnum() }));
export const ProfileHotSpot = component('ProfileHotSpot', obj({ function: str(), profile_type: str(), unit: str(), sample_count: int(), total_value: int64() }));
export const GenAiModel = component(
  'GenAiModel',
  obj({
    model: str(),
    system: nstr(),
    operations: arr(str()),
    call_count: int(),
    error_pct: num(),
    duration_p95_us: num(),
    input_tokens: int64(),
    output_tokens: int64(),
    finish_reasons: arr(obj({ reason: str(), count: int() })),
  }),
);

export const DiagnosisBlock = component(
  'DiagnosisBlock',
  obj({
    service: str(),
    window: DiagnosisWindow,
    context: DiagnosisContext,
    coverage: Coverage,
    error_traces_total: int(),
    events: arr(DiagnosisEvent),
    findings: arr(Finding, 'ranked, most important first'),
    operation_summaries: arr(OperationSummary),
    spans: SpansSection,
    logs: LogsSection,
    log_patterns: arr(LogPattern),
    log_counters: arr(LogCounter),
    metrics: arr(MetricSummary),
    profiles: arr(ProfileHotSpot),
    gen_ai: arr(GenAiModel, 'one entry per model'),
    findings_total: int('findings before the cap of 20'),
    operations_total: int('operations before the cap of 50'),
    log_patterns_total: int('log patterns before the cap of 20'),
    metrics_total: int('metric summaries before the cap of 40'),
    profiles_total: int('profile functions before the cap of 20'),
    baseline: obj(
      { from_ts: int64(), from_iso: iso(), to_ts: int64(), to_iso: iso(), buckets: int('5-minute buckets'), ends_at_onset: bool('true when the current regime began before the window and the baseline ends where it began') },
      'what the window is compared with: at least 4 times the window and an hour, before the onset of the current regime',
    ),
    onset: nullable(
      {
        at_ts: int64(),
        at_iso: iso(),
        found_in_data: bool(),
        baseline_from_ts: int64(),
        baseline_from_iso: iso(),
        baseline_to_ts: int64(),
        baseline_to_iso: iso(),
        mean_duration_before_us: num(),
        mean_duration_after_us: num(),
        requests_after: int(),
      },
      "when the diagnosed service's requests changed, found from them in 10-second bins (null without enough requests on both sides): at_ts/at_iso, found_in_data (false: no change point since a minute before the window, so the window's start stands), baseline_from_ts/iso and baseline_to_ts/iso (the most recent stable stretch before it, earlier incidents left out), mean_duration_before_us, mean_duration_after_us, requests_after",
    ),
    window_sampled: nullable(
      { slices: int(), seconds_read: int(), counts_scaled_by: num() },
      'null when the per-operation statistics (operation_summaries, the tests of the findings) read the whole window; {slices, seconds_read, counts_scaled_by} when the window held more spans than SVC_DIAGNOSE_SCAN_SPANS (2,000,000 by default) and they were read from that many evenly spread slices of it (the first part of every period on the absolute time grid; counts scaled up)',
    ),
    call_graph_sampled: nullable(
      { last_seconds: int(), counts_scaled_by: num() },
      "null when the call graph (dependents, which service each call reaches) was joined over the whole window; {last_seconds, counts_scaled_by} when the window held over 200,000 spans and only its most recent slice was joined (dependents' counts scaled up; dependencies are counted by the service's own client spans either way)",
    ),
  }),
);

export const DiagnoseResponse = component(
  'DiagnoseResponse',
  obj({
    results: dict(DiagnosisBlock, 'one diagnosis block per successfully diagnosed service'),
    errors: dict(str(), 'service → message for services whose diagnosis failed; empty when all succeeded'),
  }),
);

export type DiagnosisBlock = Static<typeof DiagnosisBlock>;
export type Finding = Static<typeof Finding>;
export type Incident = Static<typeof Incident>;
export type DiagnosisEvent = Static<typeof DiagnosisEvent>;
export type DiagnoseResponse = Static<typeof DiagnoseResponse>;
