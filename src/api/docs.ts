// The API description of every endpoint of the interface specification: one RouteDoc per operation
// (keyed by operationId) plus the shared component schemas. Routes reference these (`doc: DOCS.x`);
// openapi.ts turns the mounted route table into /openapi.json, and validateRequest checks query and
// path parameters against the same parameter objects, so the served description cannot drift from
// what the server enforces.
//
// Conventions (spec "Resources"): int64 microsecond timestamps and durations are `integer` with
// format int64; ISO timestamps are `string` with format date-time (core/time.ts prints them);
// "string or null" fields are nullable and not required. Objects are open (additionalProperties is
// not restricted) so adding a field is not a breaking change.
//
// Where the spec is silent (DESIGN.md decides, or this file does):
// - the error body is {"error": {"code", "message", "hint"}} on every error status;
// - the diagnosis block: every listed field is present (required); values that can be absent in
//   the data (deployment, namespace, baselines, an exemplar trace, log correlation ids...) are
//   nullable; `drill_down_sql` is required on non-incident findings, `incident` on incident ones;
// - admin endpoints declare the bearer requirement (the admin token, SVC_AUTH=keys); with
//   SVC_AUTH=keys every tenant route declares it too (openapi.ts adds it from `access`);
// - `*_ts` inputs are microseconds: 16 digits, checked as a range so a value in seconds,
//   milliseconds or nanoseconds is refused with a hint naming the unit it looks like.
import { ERROR_STATUS } from '../core/errors.js';
import { MAX_MICROS, MIN_MICROS } from '../core/time.js';
import { type RouteDoc } from './route.js';
import { FINDING_KINDS } from '../diagnose/findings.js';

export type Schema = Record<string, unknown>;

/** A RouteDoc with a longer description (an OpenAPI operation `description`). */
export interface OpDoc extends RouteDoc {
  description?: string;
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const str = (description?: string): Schema => (description ? { type: 'string', description } : { type: 'string' });
const nstr = (description?: string): Schema => (description ? { type: ['string', 'null'], description } : { type: ['string', 'null'] });
const int = (description?: string): Schema => (description ? { type: 'integer', description } : { type: 'integer' });
const int64 = (description?: string): Schema => (description ? { type: 'integer', format: 'int64', description } : { type: 'integer', format: 'int64' });
const int32 = (description?: string): Schema => (description ? { type: 'integer', format: 'int32', description } : { type: 'integer', format: 'int32' });
const num = (description?: string): Schema => (description ? { type: 'number', format: 'double', description } : { type: 'number', format: 'double' });
const nnum = (description?: string): Schema => (description ? { type: ['number', 'null'], format: 'double', description } : { type: ['number', 'null'], format: 'double' });
const bool = (description?: string): Schema => (description ? { type: 'boolean', description } : { type: 'boolean' });
const iso = (description?: string): Schema => (description ? { type: 'string', format: 'date-time', description } : { type: 'string', format: 'date-time' });
const niso = (description?: string): Schema => (description ? { type: ['string', 'null'], format: 'date-time', description } : { type: ['string', 'null'], format: 'date-time' });
const arr = (items: Schema, description?: string): Schema => (description ? { type: 'array', items, description } : { type: 'array', items });
const anyObject = (description?: string): Schema => (description ? { type: 'object', description } : { type: 'object' });
const nobject = (description?: string): Schema => (description ? { type: ['object', 'null'], description } : { type: ['object', 'null'] });

/** An object schema; `required` defaults to every property. */
function obj(properties: Record<string, Schema>, required: string[] = Object.keys(properties), extra: Schema = {}): Schema {
  return { type: 'object', properties, required, ...extra };
}

/** A microsecond timestamp input (`*_ts`). `x-unit` lets validateRequest name the unit a bad value looks like. */
function microsInput(description: string, nullable = false): Schema {
  return {
    type: nullable ? ['integer', 'null'] : 'integer',
    format: 'int64',
    minimum: MIN_MICROS,
    maximum: MAX_MICROS,
    'x-unit': 'microseconds',
    description: `${description} Microseconds since the Unix epoch (16 digits); seconds, milliseconds and nanoseconds are rejected with a hint.`,
  };
}

export const SIGNALS = ['error_rate', 'latency_p95', 'log_volume', 'error_log_rate', 'profile_cost'] as const;

// ---------------------------------------------------------------------------------------------
// Component schemas
// ---------------------------------------------------------------------------------------------

const spanDetail = obj(
  {
    trace_id: str('32 lower-case hex digits'),
    span_id: str('16 lower-case hex digits'),
    parent_span_id: nstr('null (or absent) on a root span'),
    service_name: str(),
    span_name: str(),
    span_kind: { type: ['integer', 'null'], format: 'int32', description: 'OTLP SpanKind enum' },
    status_code: int32('OTLP status code enum; 2 means error'),
    timestamp: iso('span start'),
    duration_us: int64('span duration in microseconds'),
    trace_state: nstr(),
    scope_name: nstr(),
    scope_version: nstr(),
    resource_attributes: nstr('JSON object text'),
    span_attributes: nstr('JSON object text'),
    events_json: nstr('JSON array text'),
    links_json: nstr('JSON array text'),
  },
  ['trace_id', 'span_id', 'service_name', 'span_name', 'status_code', 'timestamp', 'duration_us'],
);

const diagnosisBlock = obj({
  service: str(),
  window: ref('DiagnosisWindow'),
  context: ref('DiagnosisContext'),
  coverage: ref('Coverage'),
  error_traces_total: int(),
  events: arr(ref('DiagnosisEvent')),
  findings: arr(ref('Finding'), 'ranked, most important first'),
  operation_summaries: arr(ref('OperationSummary')),
  spans: ref('SpansSection'),
  logs: ref('LogsSection'),
  log_patterns: arr(ref('LogPattern')),
  log_counters: arr(ref('LogCounter')),
  metrics: arr(ref('MetricSummary')),
  profiles: arr(ref('ProfileHotSpot')),
  gen_ai: arr(ref('GenAiModel'), 'one entry per model'),
  findings_total: int('findings before the cap of 20'),
  operations_total: int('operations before the cap of 50'),
  log_patterns_total: int('log patterns before the cap of 20'),
  metrics_total: int('metric summaries before the cap of 40'),
  profiles_total: int('profile functions before the cap of 20'),
  baseline: obj(
    { from_ts: int64(), from_iso: iso(), to_ts: int64(), to_iso: iso(), buckets: int('5-minute buckets'), ends_at_onset: bool('true when the current regime began before the window and the baseline ends where it began') },
    undefined,
    { description: 'what the window is compared with: at least 4 times the window and an hour, before the onset of the current regime' },
  ),
  onset: nobject(
    'when the diagnosed service\'s requests changed, found from them in 10-second bins (null without enough requests on both sides): at_ts/at_iso, found_in_data (false: no change point since a minute before the window, so the window\'s start stands), baseline_from_ts/iso and baseline_to_ts/iso (the most recent stable stretch before it, earlier incidents left out), mean_duration_before_us, mean_duration_after_us, requests_after',
  ),
  window_sampled: nobject(
    'null when the per-operation statistics (operation_summaries, the tests of the findings) read the whole window; {slices, seconds_read, counts_scaled_by} when the window held more spans than SVC_DIAGNOSE_SCAN_SPANS (2,000,000 by default) and they were read from that many evenly spread slices of it (the first part of every period on the absolute time grid; counts scaled up)',
  ),
  call_graph_sampled: nobject('null when the call graph (dependents, which service each call reaches) was joined over the whole window; {last_seconds, counts_scaled_by} when the window held over 200,000 spans and only its most recent slice was joined (dependents\' counts scaled up; dependencies are counted by the service\'s own client spans either way)'),
});

const drillSql = str('ready-to-run SQL for POST /v1/query; send it verbatim');

export const SCHEMAS: Record<string, Schema> = {
  Error: obj(
    {
      error: obj({
        code: { type: 'string', enum: Object.keys(ERROR_STATUS), description: 'stable, machine-readable' },
        message: str('what went wrong'),
        hint: str('how to fix the request (may be empty)'),
      }),
    },
    ['error'],
    { description: 'The one error body of the API.' },
  ),

  SpanDetail: spanDetail,
  ServiceBreakdownEntry: obj({
    service: str(),
    duration_us: int64("cumulative inclusive duration of the service's spans"),
    percentage: num('share of the cumulative inclusive span duration across all services'),
  }),
  TraceDetail: obj({
    trace_id: str(),
    spans: arr(ref('SpanDetail'), 'every span of the trace, parent links included'),
    root_span: ref('SpanDetail'),
    span_count: int64(),
    error_count: int64(),
    services: arr(str()),
    critical_path: arr(str(), 'span ids, root first'),
    total_duration_us: int64('elapsed wall-clock time from earliest span start to latest span end'),
    service_breakdown: arr(ref('ServiceBreakdownEntry')),
  }),

  Signal: { type: 'string', enum: [...SIGNALS] },
  AnomalyEntry: obj(
    {
      service_name: str(),
      operation: str('operation identity (error_rate, latency_p95) or the service name (log_volume, error_log_rate, profile_cost)'),
      signal: ref('Signal'),
      kind: str('detection kind, for example changepoint'),
      direction: { type: 'string', enum: ['worsening'] },
      before: num('series mean before the shift, raw signal units'),
      after: num('series mean from the shift onward'),
      ts_shift: iso('first bucket of the new regime'),
      ts_shift_us: int64('ts_shift in microseconds'),
      detected_at: iso('when the scheduled pass wrote the row'),
      drill_down_sql: nstr('ready-to-run SQL for POST /v1/query returning the raw telemetry behind the shift'),
      incident_id: nstr('shared by rows in the same or an adjacent 5-minute bucket on the same service; null when alone'),
    },
    ['service_name', 'operation', 'signal', 'kind', 'direction', 'before', 'after', 'ts_shift', 'ts_shift_us', 'detected_at'],
  ),
  AnomaliesResponse: obj({
    anomalies: arr(ref('AnomalyEntry'), 'ordered by (after - before) / (after + before), descending'),
    truncated: bool('true when the row cap omitted shifts: an incomplete snapshot'),
  }),

  AlertInstance: obj(
    {
      fingerprint: str(),
      rule_id: str(),
      status: { type: 'string', enum: ['firing', 'resolved'] },
      service_name: str(),
      container_name: str(),
      starts_at: iso(),
      ends_at: niso(),
      occurrence_count: { type: 'integer', format: 'int64', minimum: 0 },
    },
    ['fingerprint', 'rule_id', 'status', 'service_name', 'container_name', 'starts_at', 'occurrence_count'],
  ),
  AlertsResponse: obj({ alerts: arr(ref('AlertInstance')) }),

  ServiceEntry: obj({
    service_name: str(),
    first_seen_ts: int64('microseconds since the Unix epoch'),
    last_seen_ts: int64('microseconds since the Unix epoch'),
    first_seen: iso(),
    last_seen: iso(),
  }),
  ServicesResponse: obj({ services: arr(ref('ServiceEntry')) }),

  DiagnoseRequest: obj(
    {
      services: { type: 'array', items: str(), minItems: 1, maxItems: 10, description: '1 to 10 service names, as GET /v1/services lists them' },
      service: nstr('a single service; with services too, their union is diagnosed (duplicates removed, at most 10)'),
      from_ts: microsInput('Window start; with to_ts omitted the window ends now; both omitted: the last 15 minutes.', true),
      to_ts: microsInput('Window end; must be greater than from_ts; not accepted without from_ts.', true),
    },
    [],
  ),
  DiagnoseResponse: obj({
    results: { type: 'object', additionalProperties: ref('DiagnosisBlock'), description: 'one diagnosis block per successfully diagnosed service' },
    errors: { type: 'object', additionalProperties: str(), description: 'service → message for services whose diagnosis failed; empty when all succeeded' },
  }),
  DiagnosisBlock: diagnosisBlock,
  DiagnosisWindow: obj({ from_ts: int64(), from_iso: iso(), to_ts: int64(), to_iso: iso() }),
  Dependency: obj({ service_name: str(), span_count: int(), error_count: int(), error_rate: num() }),
  DiagnosisContext: obj({
    service_name: str(),
    deployment: nstr(),
    namespace: nstr(),
    pod_count: int(),
    has_instance_id: bool(),
    first_seen: niso(),
    last_seen: niso(),
    dependencies: arr(ref('Dependency'), 'services this one calls'),
    dependents: arr(ref('Dependency'), 'services that call this one'),
  }),
  CoverageSignal: obj({ signal_type: str(), available: bool(), reason: nstr(), severity: nstr() }),
  Coverage: obj({
    has_spans: bool(),
    has_logs: bool(),
    has_metrics: bool(),
    has_profiles: bool(),
    span_count: int(),
    log_template_count: int(),
    metric_series_count: int(),
    profile_sample_count: int(),
    signals: arr(ref('CoverageSignal')),
  }),
  DiagnosisEvent: obj({ event_type: str(), description: str(), detected_at: iso(), detected_at_us: int64() }),
  IncidentShift: obj({
    signal: ref('Signal'),
    entity: str(),
    before: num(),
    after: num(),
    ts_shift: int64('microseconds'),
    ts_shift_iso: iso(),
    summary: str(),
    drill_down_sql: drillSql,
  }),
  Incident: obj(
    {
      incident_id: nstr('the incident_id GET /v1/anomalies gives these shifts; null for a shift that correlates with no other'),
      started_at: int64('microseconds'),
      started_at_iso: iso(),
      shifts: arr(ref('IncidentShift')),
      deploy: nobject('the deploy that coincides with the incident, when one does'),
    },
    ['started_at', 'started_at_iso', 'shifts'],
  ),
  Finding: obj(
    {
      kind: {
        type: 'string',
        enum: [...FINDING_KINDS],
      },
      severity: { type: 'string', enum: ['critical', 'high', 'medium', 'low', 'info'] },
      summary: str('for people; agents read the fields below'),
      service: str('the service at fault; may be another than the one diagnosed'),
      operation: nstr('the operation (or model, or profiled function) the finding is about'),
      signal: str('error_rate, latency_p95, log_volume, error_log_rate, profile_cost, gen_ai_finish_reasons, trace_shape (calls per request), resource_saturation (a CPU, memory or restart gauge), or the missing signal of a coverage gap'),
      before: nnum('baseline value in raw units (percent, microseconds, records or nanoseconds per 5 minutes)'),
      after: nnum('window value in the same units'),
      score: { type: 'number', minimum: 0, maximum: 1, description: 'orders the list; severity is a band of it' },
      drill_down_sql: drillSql,
      incident: ref('Incident'),
    },
    ['kind', 'severity', 'summary', 'service', 'operation', 'signal', 'before', 'after', 'score'],
    {
      if: { properties: { kind: { const: 'incident' } }, required: ['kind'] },
      then: { required: ['incident'] },
      else: { required: ['drill_down_sql'] },
    },
  ),
  OperationSummary: obj({
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
    drill_down_sql: drillSql,
  }),
  SpanSample: obj({
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
    span_attributes: nobject(),
    events: { type: ['object', 'array', 'null'] },
    drill_down_sql: drillSql,
  }),
  SpansSection: obj({ total: int(), sampled_by: str(), drill_all_sql: drillSql, sample: arr(ref('SpanSample'), 'bounded') }),
  LogSample: obj(
    {
      timestamp: int64('microseconds'),
      timestamp_iso: iso(),
      body: str(),
      severity_text: nstr(),
      trace_id: nstr(),
      span_id: nstr(),
      attributes: nobject(),
      event_name: nstr(),
    },
    ['timestamp', 'timestamp_iso', 'body', 'severity_text', 'trace_id', 'span_id', 'attributes'],
  ),
  LogsSection: obj({ total: int(), sampled_by: str(), drill_all_sql: drillSql, sample: arr(ref('LogSample'), 'bounded') }),
  LogPattern: obj({
    template_id: int64(),
    pattern: str(),
    example_body: str(),
    severity_text: nstr(),
    count: int(),
    error_count: int(),
    first_seen: iso(),
    last_seen: iso(),
    sample_values: anyObject(),
    drill_down_sql: drillSql,
  }),
  LogCounter: obj({ label: str(), pattern: str(), avg_value: num(), min_value: num(), max_value: num(), samples: int(), pinned_zero: bool() }),
  MetricSummary: obj({ metric_name: str(), bucket: str(), count: int(), avg: nnum(), p95: nnum() }),
  ProfileHotSpot: obj({ function: str(), profile_type: str(), unit: str(), sample_count: int(), total_value: int64() }),
  GenAiModel: obj({
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

  QueryRows: arr(anyObject('one row keyed by column name or alias; BIGINT beyond 2^53 as a string, TIMESTAMP as an ISO string, LIST/STRUCT/MAP as JSON'), 'one object per row'),

  JsonRpcMessage: {
    type: ['object', 'array'],
    description: 'one JSON-RPC 2.0 message of the Model Context Protocol, or a batch of them (initialize, tools/list, tools/call, resources/read, prompts/get, notifications)',
  },
  JsonRpcAnswer: {
    oneOf: [anyObject('a JSON-RPC 2.0 response'), arr(anyObject(), 'the responses of a batch')],
    description: 'the JSON-RPC result or error of each request; a tool that failed answers a result with isError true and the error body as text',
  },
  JsonRpcError: obj(
    {
      jsonrpc: { type: 'string', const: '2.0' },
      id: { type: 'null' },
      error: obj({ code: int('JSON-RPC error code: -32700 parse error, -32600 invalid request, -32603 internal, -32000 transport'), message: str(), data: anyObject('{code, hint} of the service, when it has them') }, ['code', 'message']),
    },
    ['jsonrpc', 'id', 'error'],
    { description: 'The error answer of the MCP endpoint: a JSON-RPC error, not the error body of the other endpoints.' },
  ),

  CreateTenantRequest: obj({ id: { type: 'string', minLength: 1 } }),
  Tenant: obj({ id: str(), status: str() }),
  KeyRevocation: obj({ revoked: bool(), short_token: str() }),
  IssuedKey: obj({ tenant: str(), key: str('the API key: shown in this answer only'), short_token: str('a prefix of the key hash, for DELETE /admin/keys/{short_token}') }),
  AdminStatus: obj({ status: anyObject('all instance status rows') }),
  Health: obj({ status: { type: 'string', enum: ['ok'] } }),
  IngestAccepted: anyObject('the profile was accepted and committed'),
};

// ---------------------------------------------------------------------------------------------
// Responses and parameters
// ---------------------------------------------------------------------------------------------

const json = (description: string, schema: Schema) => ({ description, content: { 'application/json': { schema } } });
/** An error response: always the one error body. */
export const errorResponse = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: ref('Error') } },
});
const retryAfter = { 'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } } };

/** A diagnosis answer; Retry-After when the server was too busy to run it (every service in errors). */
const diagnoseAnswer = { ...json('one diagnosis block per service, failures in errors (busy included)', ref('DiagnoseResponse')), headers: retryAfter };

const jsonRpcErrorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ref('JsonRpcError') } } });
const E401 = errorResponse('missing or invalid bearer token (code UNAUTHORIZED)');
const E403 = errorResponse('a tenant key on an admin endpoint, or admin endpoints disabled (SVC_ADMIN_TOKEN unset) (code FORBIDDEN)');
const E413 = errorResponse('body exceeds the limit of this route (code TOO_LARGE)');
const E500 = errorResponse('unexpected failure (code INTERNAL)');

const profileQuery = [
  {
    name: 'name',
    in: 'query',
    required: false,
    description: 'application name with optional labels, for example `checkout.cpu{env=prod}`. When present the body is a raw pprof profile and the service name is the part before the first `{`; when absent the body is a push.v1.PushRequest whose series each carry a `service_name` label.',
    schema: { type: 'string' },
  },
  { name: 'from', in: 'query', required: false, description: 'profile start, Unix time (seconds as Pyroscope sends; milliseconds, microseconds and nanoseconds are recognised by magnitude)', schema: { type: 'integer', format: 'int64', minimum: 0 } },
  { name: 'until', in: 'query', required: false, description: 'profile end, same units as `from`', schema: { type: 'integer', format: 'int64', minimum: 0 } },
  { name: 'sampleRate', in: 'query', required: false, description: 'CPU sampling rate in Hz', schema: { type: 'number', exclusiveMinimum: 0 } },
  { name: 'spyName', in: 'query', required: false, description: 'the profiler that produced the profile (informational)', schema: { type: 'string' } },
  { name: 'format', in: 'query', required: false, description: 'only `pprof` (the default) is accepted; legacy formats (folded, trie, tree, lines, jfr) are refused with code LEGACY_FORMAT', schema: { type: 'string' } },
];

const binary = { schema: { type: 'string', contentMediaType: 'application/octet-stream' } };

function ingestDoc(operationId: string, path: string): OpDoc {
  return {
    operationId,
    summary: `Ingest a profile (${path})`,
    description:
      'Ingest profiles. The four paths `/`, `/ingest`, `/ingest/pyroscope` and `/push.v1.PusherService/Push` behave identically. ' +
      'A missing Content-Type is treated as a binary body; binary bodies may be gzip-compressed; a multipart/form-data body carries the payload in the form field `profile`.',
    tags: ['ingest'],
    auth: true,
    parameters: profileQuery,
    requestBody: {
      required: true,
      content: {
        'application/octet-stream': binary,
        'application/proto': binary,
        'binary/octet-stream': binary,
        'multipart/form-data': {
          schema: { type: 'object', properties: { profile: { type: 'string', contentMediaType: 'application/octet-stream' } }, required: ['profile'] },
        },
      },
    },
    responses: {
      '200': json('profile accepted', ref('IngestAccepted')),
      '400': errorResponse('unsupported media type, malformed payload, missing service name, or empty profile (codes UNSUPPORTED_MEDIA_TYPE, MALFORMED, MISSING_SERVICE_NAME, EMPTY, LEGACY_FORMAT, BAD_REQUEST)'),
      '401': E401,
      '413': errorResponse('body exceeds the configured ingest limit (code TOO_LARGE)'),
      '429': errorResponse('ingest rate limit exceeded (code RATE_LIMITED)', retryAfter),
      '500': errorResponse('ingest failed (code INGEST_FAILED)'),
      '507': errorResponse('storage cannot currently accept ingest (code STORAGE_FULL)', retryAfter),
    },
  };
}

const diagnoseErrors = {
  '400': errorResponse('invalid request: timestamps not in microseconds (INVALID_TIMESTAMP), to_ts <= from_ts or to_ts without from_ts (INVALID_WINDOW), 0 or more than 10 services, malformed JSON (BAD_REQUEST)'),
  '401': E401,
  '413': E413,
  '500': E500,
};

// ---------------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------------

export const DOCS = {
  ingestProfileRoot: ingestDoc('ingestProfileRoot', '/'),
  ingestProfile: ingestDoc('ingestProfile', '/ingest'),
  ingestProfilePyroscope: ingestDoc('ingestProfilePyroscope', '/ingest/pyroscope'),
  ingestProfilePush: ingestDoc('ingestProfilePush', '/push.v1.PusherService/Push'),

  listAlerts: {
    operationId: 'listAlerts',
    summary: 'List alert instances',
    tags: ['analysis'],
    auth: true,
    parameters: [
      {
        name: 'status',
        in: 'query',
        required: false,
        description: 'only instances in this state',
        schema: { type: 'string', enum: ['firing', 'resolved'] },
        'x-error-code': 'INVALID_STATUS',
      },
    ],
    responses: {
      '200': json('alert instances', ref('AlertsResponse')),
      '400': errorResponse('invalid status filter (code INVALID_STATUS)'),
      '401': E401,
      '500': E500,
    },
  },

  listAnomalies: {
    operationId: 'listAnomalies',
    summary: 'List ranked worsening shifts',
    description:
      'What changed: worsening regime shifts found by changepoint detection, ordered by the unit-free magnitude (after - before) / (after + before), descending; ' +
      'ties at zero baseline by |after - before|, then newest first. Nothing is filtered by magnitude. Rows in the same or an adjacent 5-minute bucket on the same service share one incident_id. ' +
      'When `truncated` is true the row cap omitted shifts: the answer is an incomplete snapshot. Reading costs one table scan, never a detection run.',
    tags: ['analysis'],
    auth: true,
    parameters: [
      { name: 'service', in: 'query', required: false, description: 'restrict to one service', schema: { type: 'string' } },
      { name: 'from_ts', in: 'query', required: true, description: 'only shifts at or after this time', schema: microsInput('Only shifts at or after.'), 'x-error-code': 'INVALID_TIMESTAMP' },
      { name: 'to_ts', in: 'query', required: true, description: 'only shifts at or before this time', schema: microsInput('Only shifts at or before.'), 'x-error-code': 'INVALID_TIMESTAMP' },
    ],
    responses: {
      '200': json('shifts in the window, ranked', ref('AnomaliesResponse')),
      '400': errorResponse('missing or invalid from_ts/to_ts (codes INVALID_TIMESTAMP, INVALID_WINDOW)'),
      '401': E401,
      '500': E500,
    },
  },

  diagnose: {
    operationId: 'diagnose',
    summary: 'Triage per service',
    description:
      'Why: per service a triage block with ranked findings, per-operation anomaly flags, bounded samples of spans and logs, log patterns, gen_ai statistics and profile hot spots. ' +
      'Both timestamps omitted: the last 15 minutes; from_ts alone: to_ts is now. A failing service appears in `errors`, not as an HTTP error. ' +
      'Every drill_down_sql and drill_all_sql runs as it stands on POST /v1/query. ' +
      'Diagnoses run a few at a time (SVC_DIAGNOSE_CONCURRENCY) and a few wait (SVC_DIAGNOSE_QUEUE); a call that finds no room answers every service in `errors` as busy, with Retry-After; a call identical to one in progress shares its answer.',
    tags: ['analysis'],
    auth: true,
    requestBody: { required: true, content: { 'application/json': { schema: ref('DiagnoseRequest') } } },
    responses: { '200': diagnoseAnswer, ...diagnoseErrors },
  },

  investigate: {
    operationId: 'investigate',
    summary: 'Triage per service (earlier name of diagnose)',
    description: 'The earlier name of POST /v1/diagnose: the same body and rules (a body with only `service` works), the same answer.',
    tags: ['analysis'],
    auth: true,
    requestBody: { required: true, content: { 'application/json': { schema: ref('DiagnoseRequest') } } },
    responses: { '200': diagnoseAnswer, ...diagnoseErrors },
  },

  runQuery: {
    operationId: 'runQuery',
    summary: 'Run one SELECT',
    description:
      'Read-only SQL over svc_spans, svc_logs, svc_log_templates, svc_metrics_gauge, svc_metrics_sum, svc_metrics_histogram, svc_metrics_exp_histogram, svc_profiles and svc_anomalies ' +
      '(bare, `lake.` or `main.`), and the view svc_logs_resolved (svc_logs plus resolved_template_id: group by it to count a log event once after template merges). Exactly one SELECT; no WITH/CTE (rewrite as a derived-table subquery); functions are allowlisted; file and network readers are blocked. ' +
      '`timestamp` columns are TIMESTAMP without time zone: bound them with a literal (for example TIMESTAMP \'2024-01-01 00:00:00\') so whole files are skipped; a bound built from now() reads everything.',
    tags: ['query'],
    requestBody: { required: true, content: { 'text/plain': { schema: { type: 'string', description: 'the raw SQL statement (not JSON)' } } } },
    responses: {
      '200': json('one object per row, keyed by column name or alias', ref('QueryRows')),
      '400': errorResponse(
        'refused or failed statement: NOT_SELECT, MULTIPLE_STATEMENTS, CTE_NOT_ALLOWED, FUNCTION_NOT_ALLOWED, TABLE_NOT_ALLOWED, SQL_NOT_ALLOWED, SQL_TOO_LARGE, SQL_ERROR, ROW_CAP, or INTERRUPT when the query ran past the time limit',
      ),
      '413': E413,
      '415': errorResponse('the body is not text/plain (code UNSUPPORTED_MEDIA_TYPE)'),
      '500': E500,
      '503': errorResponse('too many queries running or waiting (code OVERLOADED), or shutting down (NOT_READY)', retryAfter),
    },
  },

  listServices: {
    operationId: 'listServices',
    summary: 'List reporting services',
    description: 'Every service that has reported telemetry, with the first and last time seen.',
    tags: ['analysis'],
    responses: { '200': json('services', ref('ServicesResponse')), '500': E500 },
  },

  getTrace: {
    operationId: 'getTrace',
    summary: 'One whole trace',
    tags: ['analysis'],
    parameters: [
      {
        name: 'trace_id',
        in: 'path',
        required: true,
        description: 'trace id: 32 hex digits (16 bytes), as OTLP/JSON prints it',
        schema: { type: 'string', pattern: '^[0-9a-fA-F]{32}$' },
        'x-error-code': 'INVALID_TRACE_ID',
      },
    ],
    responses: {
      '200': json('every span of the trace, with root, critical path and service breakdown', ref('TraceDetail')),
      '400': errorResponse('not a trace id (code INVALID_TRACE_ID)'),
      '404': errorResponse('no spans stored for this trace id (code NOT_FOUND)'),
      '500': E500,
    },
  },

  createTenant: {
    operationId: 'createTenant',
    summary: 'Create or reactivate a tenant',
    description:
      'Creates a tenant, or reactivates an existing one with the same id (SVC_AUTH=keys; open mode answers 400 with a hint). ' +
      'The id becomes a directory name: 1-63 characters of lower-case letters, digits, `-` and `_`, starting with a letter or digit.',
    tags: ['admin'],
    auth: true,
    access: 'admin',
    requestBody: { required: true, content: { 'application/json': { schema: ref('CreateTenantRequest') } } },
    responses: { '200': json('the tenant', ref('Tenant')), '400': errorResponse('invalid tenant id or body, or open mode (codes BAD_REQUEST, NOT_HOSTED)'), '401': E401, '403': E403, '413': E413, '500': E500 },
  },

  issueKey: {
    operationId: 'issueKey',
    summary: 'Issue an API key for a tenant',
    description:
      'Issues a new key for an active tenant. The key (`tds_` + 43 base64url characters, 256 random bits) is in this answer only: the service keeps its SHA-256 hash. ' +
      '`short_token`, a prefix of that hash, names the key in DELETE /admin/keys/{short_token}.',
    tags: ['admin'],
    auth: true,
    access: 'admin',
    parameters: [{ name: 'id', in: 'path', required: true, description: 'the tenant id', schema: { type: 'string', minLength: 1, maxLength: 63 } }],
    responses: {
      '200': json('the new key, shown once', ref('IssuedKey')),
      '400': errorResponse('invalid tenant id, or open mode (codes BAD_REQUEST, NOT_HOSTED)'),
      '401': E401,
      '403': E403,
      '404': errorResponse('no active tenant with this id (code NOT_FOUND)'),
      '500': E500,
    },
  },

  deactivateTenant: {
    operationId: 'deactivateTenant',
    summary: 'Deactivate a tenant',
    description: "Its keys stop working on every instance (within the control plane's refresh interval); its data stays. POST /admin/tenants with the same id reactivates it.",
    tags: ['admin'],
    auth: true,
    access: 'admin',
    parameters: [{ name: 'id', in: 'path', required: true, description: 'the tenant id', schema: { type: 'string', minLength: 1, maxLength: 63 } }],
    responses: {
      '200': json('the tenant', ref('Tenant')),
      '400': errorResponse('invalid tenant id, or open mode (codes BAD_REQUEST, NOT_HOSTED)'),
      '401': E401,
      '403': E403,
      '404': errorResponse('no tenant with this id (code NOT_FOUND)'),
      '500': E500,
    },
  },

  moveTenant: {
    operationId: 'moveTenant',
    summary: 'Move a tenant to another instance',
    description:
      'Several instances on one PostgreSQL control plane and one shared SVC_DATA_DIR (SVC_DATA_DIR_SHARED=true): the tenant\'s owner drains its requests, closes its store and hands its lease to `to` ' +
      '(default: the least-loaded other live instance), which opens the store on the tenant\'s next request. Any instance takes the call and passes it to the owner. ' +
      'Local disks or a single instance: 409.',
    tags: ['admin'],
    auth: true,
    access: 'admin',
    parameters: [{ name: 'id', in: 'path', required: true, description: 'the tenant id', schema: { type: 'string', minLength: 1, maxLength: 63 } }],
    requestBody: {
      required: false,
      content: { 'application/json': { schema: { type: 'object', properties: { to: { type: 'string', description: 'the instance id (GET /admin/status: placement.instances)' } } } } },
    },
    responses: {
      '200': json('the move', {
        type: 'object',
        required: ['tenant', 'from', 'to', 'epoch'],
        properties: { tenant: { type: 'string' }, from: { type: ['string', 'null'], description: 'the previous owner; null when no instance held the tenant' }, to: { type: 'string' }, epoch: { type: 'integer', description: 'the lease\'s generation' } },
      }),
      '400': errorResponse('invalid tenant id or body (code BAD_REQUEST)'),
      '401': E401,
      '403': E403,
      '404': errorResponse('no active tenant, or no live instance `to` (code NOT_FOUND)'),
      '409': errorResponse('local disks, a single instance, no other live instance, or the owner changed during the move (code CONFLICT)'),
      '413': E413,
      '500': E500,
      '503': errorResponse('the owner could not be reached (code NOT_READY, with Retry-After)'),
    },
  },

  revokeKey: {
    operationId: 'revokeKey',
    summary: 'Revoke an API key',
    description: 'Revokes the one unrevoked key whose hash starts with `short_token`: `revoked: false` when none does; 409 when several do (none is revoked).',
    tags: ['admin'],
    auth: true,
    access: 'admin',
    parameters: [
      {
        name: 'short_token',
        in: 'path',
        required: true,
        description: "a prefix of the key's SHA-256 hash, 8 to 64 characters",
        schema: { type: 'string', minLength: 8, maxLength: 64 },
      },
    ],
    responses: {
      '200': json('revocation result', ref('KeyRevocation')),
      '400': errorResponse('short_token is not 8 to 64 hexadecimal characters, or open mode (codes BAD_REQUEST, NOT_HOSTED)'),
      '401': E401,
      '403': E403,
      '409': errorResponse('the prefix matches several keys; none was revoked (code CONFLICT)'),
      '500': E500,
    },
  },

  getAdminStatus: {
    operationId: 'getAdminStatus',
    summary: 'Instance status rows',
    description: 'One entry per part of the instance (build, control plane, stores, ingest, refusals, memory, detection, disk) and, with SVC_AUTH=keys, one per tenant.',
    tags: ['admin'],
    auth: true,
    access: 'admin',
    responses: { '200': json('all instance status rows', ref('AdminStatus')), '401': E401, '403': E403, '500': E500 },
  },

  mcp: {
    operationId: 'mcp',
    summary: 'Model Context Protocol (Streamable HTTP)',
    description:
      'The service as MCP tools for agents: list_services, get_anomalies, diagnose, query, get_trace, list_alerts; the resource tds://schema/tables; the prompt triage. ' +
      'Stateless Streamable HTTP with JSON answers: POST one JSON-RPC message or a batch with Accept: application/json, text/event-stream. There is no session and no GET stream (405). ' +
      'Errors here are JSON-RPC errors; a tool that fails answers a result with isError and the error body of the endpoint it called.',
    tags: ['mcp'],
    auth: true,
    requestBody: { required: true, content: { 'application/json': { schema: ref('JsonRpcMessage') } } },
    responses: {
      '200': json('the JSON-RPC response(s)', ref('JsonRpcAnswer')),
      '202': { description: 'notifications or responses only: accepted, no body' },
      '400': jsonRpcErrorResponse('not JSON, not a JSON-RPC message, or a batch over the limit'),
      '401': E401,
      '403': jsonRpcErrorResponse('a browser Origin other than localhost (DNS rebinding protection)'),
      '406': jsonRpcErrorResponse('Accept does not list both application/json and text/event-stream'),
      '413': jsonRpcErrorResponse('body over the limit of the endpoint'),
      '415': jsonRpcErrorResponse('Content-Type is not application/json'),
      '500': jsonRpcErrorResponse('unexpected failure'),
    },
  },

  getHealth: {
    operationId: 'getHealth',
    summary: 'Readiness',
    description: '200 once the store is open and the server can take requests; 503 before.',
    tags: ['meta'],
    access: 'public',
    responses: { '200': json('ready', ref('Health')), '503': errorResponse('not ready yet (code NOT_READY)') },
  },

  getOpenApi: {
    operationId: 'getOpenApi',
    summary: 'This API description (OpenAPI 3.1)',
    tags: ['meta'],
    access: 'public',
    responses: { '200': json('the OpenAPI document', { type: 'object' }) },
  },
} satisfies Record<string, OpDoc>;

export type OperationId = keyof typeof DOCS;

/** Where each documented operation is served: the spec's endpoints plus /healthz and /openapi.json. */
export const ENDPOINTS: readonly { method: string; path: string; operationId: OperationId }[] = [
  { method: 'POST', path: '/', operationId: 'ingestProfileRoot' },
  { method: 'POST', path: '/ingest', operationId: 'ingestProfile' },
  { method: 'POST', path: '/ingest/pyroscope', operationId: 'ingestProfilePyroscope' },
  { method: 'POST', path: '/push.v1.PusherService/Push', operationId: 'ingestProfilePush' },
  { method: 'GET', path: '/v1/alerts', operationId: 'listAlerts' },
  { method: 'GET', path: '/v1/anomalies', operationId: 'listAnomalies' },
  { method: 'POST', path: '/v1/diagnose', operationId: 'diagnose' },
  { method: 'POST', path: '/v1/investigate', operationId: 'investigate' },
  { method: 'POST', path: '/v1/query', operationId: 'runQuery' },
  { method: 'GET', path: '/v1/services', operationId: 'listServices' },
  { method: 'GET', path: '/v1/traces/{trace_id}', operationId: 'getTrace' },
  { method: 'POST', path: '/admin/tenants', operationId: 'createTenant' },
  { method: 'POST', path: '/admin/tenants/{id}/keys', operationId: 'issueKey' },
  { method: 'POST', path: '/admin/tenants/{id}/deactivate', operationId: 'deactivateTenant' },
  { method: 'POST', path: '/admin/tenants/{id}/move', operationId: 'moveTenant' },
  { method: 'DELETE', path: '/admin/keys/{short_token}', operationId: 'revokeKey' },
  { method: 'GET', path: '/admin/status', operationId: 'getAdminStatus' },
  { method: 'POST', path: '/mcp', operationId: 'mcp' },
  { method: 'GET', path: '/healthz', operationId: 'getHealth' },
  { method: 'GET', path: '/openapi.json', operationId: 'getOpenApi' },
];
