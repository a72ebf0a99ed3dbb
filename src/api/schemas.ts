// The API's answers and bodies other than the diagnosis block (diagnose/block-schema.ts), as schema
// values with their types. Conventions (spec "Resources"): int64 microsecond timestamps and
// durations are `integer` with format int64; ISO timestamps are `string` with format date-time
// (core/time.ts prints them); "string or null" fields are nullable and not required. Objects are
// open (additionalProperties is not restricted) so adding a field is not a breaking change.
import { ERROR_STATUS } from '../core/errors.js';
import { anyObject, arr, bool, component, dict, int, int32, int64, iso, microsInput, niso, nint32, nstr, num, obj, oneOf, opt, str, Type, type Static } from '../core/schema.js';
import { Signal, signalNames } from '../diagnose/block-schema.js';
import { DETAILS, MAX_MAX_BYTES, MAX_SERVICES, MIN_MAX_BYTES } from '../diagnose/request.js';
import { ALERT_STATUSES } from '../detect/alerts.js';
import { StatusSchema } from './status-schema.js';

export const ErrorBody = component(
  'Error',
  obj(
    {
      error: obj({
        code: oneOf(Object.keys(ERROR_STATUS) as (keyof typeof ERROR_STATUS)[], 'stable, machine-readable'),
        message: str('what went wrong'),
        hint: str('how to fix the request (may be empty)'),
      }),
    },
    'The one error body of the API.',
  ),
);

export const SpanDetail = component(
  'SpanDetail',
  obj({
    trace_id: str('32 lower-case hex digits'),
    span_id: str('16 lower-case hex digits'),
    parent_span_id: opt(nstr('null (or absent) on a root span')),
    service_name: str(),
    span_name: str(),
    span_kind: opt(nint32('OTLP SpanKind enum')),
    status_code: int32('OTLP status code enum; 2 means error'),
    timestamp: iso('span start'),
    duration_us: int64('span duration in microseconds'),
    trace_state: opt(nstr()),
    scope_name: opt(nstr()),
    scope_version: opt(nstr()),
    resource_attributes: opt(nstr('JSON object text')),
    span_attributes: opt(nstr('JSON object text')),
    events_json: opt(nstr('JSON array text')),
    links_json: opt(nstr('JSON array text')),
  }),
);
export const ServiceBreakdownEntry = component(
  'ServiceBreakdownEntry',
  obj({
    service: str(),
    duration_us: int64("cumulative inclusive duration of the service's spans"),
    percentage: num('share of the cumulative inclusive span duration across all services'),
  }),
);
export const TraceDetail = component(
  'TraceDetail',
  obj({
    trace_id: str(),
    spans: arr(SpanDetail, 'every span of the trace, parent links included'),
    root_span: SpanDetail,
    span_count: int64(),
    error_count: int64(),
    services: arr(str()),
    critical_path: arr(str(), 'span ids, root first'),
    total_duration_us: int64('elapsed wall-clock time from earliest span start to latest span end'),
    service_breakdown: arr(ServiceBreakdownEntry),
  }),
);

export const AnomalyEntry = component(
  'AnomalyEntry',
  obj({
    service_name: str(),
    operation: str(`operation identity (${signalNames('operation').join(', ')}) or the service name (${signalNames('service').join(', ')})`),
    signal: Signal,
    kind: str('detection kind, for example changepoint'),
    direction: oneOf(['worsening']),
    before: num('series mean before the shift, raw signal units'),
    after: num('series mean from the shift onward'),
    ts_shift: iso('first bucket of the new regime'),
    ts_shift_us: int64('ts_shift in microseconds'),
    detected_at: iso('when the scheduled pass wrote the row'),
    drill_down_sql: opt(nstr('ready-to-run SQL for POST /v1/query returning the raw telemetry behind the shift')),
    incident_id: opt(nstr('shared by rows in the same or an adjacent 5-minute bucket on the same service; null when alone')),
  }),
);
export const AnomaliesResponse = component(
  'AnomaliesResponse',
  obj({
    anomalies: arr(AnomalyEntry, 'ordered by (after - before) / (after + before), descending'),
    truncated: bool('true when the row cap omitted shifts: an incomplete snapshot'),
  }),
);

export const AlertInstance = component(
  'AlertInstance',
  obj({
    fingerprint: str(),
    rule_id: str(),
    status: oneOf(ALERT_STATUSES),
    service_name: str(),
    container_name: str(),
    starts_at: iso(),
    ends_at: opt(niso()),
    occurrence_count: Type.Integer({ format: 'int64', minimum: 0 }),
  }),
);
export const AlertsResponse = component('AlertsResponse', obj({ alerts: arr(AlertInstance) }));

export const ServiceEntry = component(
  'ServiceEntry',
  obj({
    service_name: str(),
    first_seen_ts: int64('microseconds since the Unix epoch'),
    last_seen_ts: int64('microseconds since the Unix epoch'),
    first_seen: iso(),
    last_seen: iso(),
  }),
);
export const ServicesResponse = component('ServicesResponse', obj({ services: arr(ServiceEntry) }));

export const DiagnoseRequest = component(
  'DiagnoseRequest',
  obj(
    {
      services: opt(Type.Array(str(), { minItems: 1, maxItems: MAX_SERVICES, description: `1 to ${MAX_SERVICES} service names, as GET /v1/services lists them` })),
      service: opt(nstr(`a single service; with services too, their union is diagnosed (duplicates removed, at most ${MAX_SERVICES})`)),
      from_ts: opt(microsInput('Window start; with to_ts omitted the window ends now; both omitted: the last 15 minutes.', true)),
      to_ts: opt(microsInput('Window end; must be greater than from_ts; not accepted without from_ts.', true)),
      baseline_from_ts: opt(
        microsInput(
          'Start of a stretch known to be good (before a deploy, the same hour yesterday), with baseline_to_ts: every comparison of the diagnosis is against it. Without both, the service chooses undisturbed stretches itself.',
          true,
        ),
      ),
      baseline_to_ts: opt(microsInput('End of the named good stretch; greater than baseline_from_ts and at or before from_ts.', true)),
      detail: opt(
        oneOf(DETAILS, {
          description:
            '`full` (the default): the diagnosis block per service. `findings`: the compact view per service — the ranked findings with their SQL, the operations flagged anomalous, coverage and events, and for every other part how many entries were left out and the SQL or call that fetches them.',
          default: 'full',
        }),
      ),
      max_bytes: opt(
        Type.Integer({
          minimum: MIN_MAX_BYTES,
          maximum: MAX_MAX_BYTES,
          description: 'With detail `findings`: the most bytes of JSON the answer may take. The lowest-ranked entries are dropped first (anomalous operations, then events, then findings from the lowest score) and counted in each service\'s `omitted`; `budget` says how many went. Not accepted with detail `full`.',
        }),
      ),
    },
    { required: [] },
  ),
);

export const QueryRows = component(
  'QueryRows',
  arr(anyObject('one row keyed by column name or alias; BIGINT beyond 2^53 as a string, TIMESTAMP as an ISO string, LIST/STRUCT/MAP as JSON'), 'one object per row'),
);

export const JsonRpcMessage = component(
  'JsonRpcMessage',
  Type.Unsafe<Record<string, unknown> | unknown[]>({
    type: ['object', 'array'],
    description: 'one JSON-RPC 2.0 message of the Model Context Protocol, or a batch of them (initialize, tools/list, tools/call, resources/read, prompts/get, notifications)',
  }),
);
export const JsonRpcAnswer = component(
  'JsonRpcAnswer',
  Type.Unsafe<Record<string, unknown> | Record<string, unknown>[]>({
    oneOf: [anyObject('a JSON-RPC 2.0 response'), arr(anyObject(), 'the responses of a batch')],
    description: 'the JSON-RPC result or error of each request; a tool that failed answers a result with isError true and the error body as text',
  }),
);
export const JsonRpcError = component(
  'JsonRpcError',
  obj(
    {
      jsonrpc: Type.Literal('2.0', { type: 'string' }),
      id: Type.Null(),
      error: obj({
        code: int('JSON-RPC error code: -32700 parse error, -32600 invalid request, -32603 internal, -32000 transport'),
        message: str(),
        data: opt(anyObject('{code, hint} of the service, when it has them')),
      }),
    },
    'The error answer of the MCP endpoint: a JSON-RPC error, not the error body of the other endpoints.',
  ),
);

export const CreateTenantRequest = component('CreateTenantRequest', obj({ id: Type.String({ minLength: 1 }) }));
export const Tenant = component('Tenant', obj({ id: str(), status: str() }));
export const KeyRevocation = component('KeyRevocation', obj({ revoked: bool(), short_token: str() }));
export const IssuedKey = component(
  'IssuedKey',
  obj({ tenant: str(), key: str('the API key: shown in this answer only'), short_token: str('a prefix of the key hash, for DELETE /admin/keys/{short_token}') }),
);
export const MoveTenantRequest = obj({ to: opt(str('the instance id (GET /admin/status: placement.instances)')) });
export const MoveTenantResponse = obj({
  tenant: Type.String(),
  from: Type.Unsafe<string | null>({ type: ['string', 'null'], description: 'the previous owner; null when no instance held the tenant' }),
  to: Type.String(),
  epoch: Type.Integer({ description: "the lease's generation" }),
});
export const AdminStatus = component('AdminStatus', obj({ status: StatusSchema }));
const nint64 = (d: string) => Type.Unsafe<number | null>({ type: ['integer', 'null'], format: 'int64', description: d });
export const DetectReport = component(
  'DetectReport',
  obj(
    {
      tenant: str('the tenant whose store was detected on (`default` in open mode)'),
      as_of_us: int64('the time the passes were stamped with (`detected_at`, alert times): as_of_ts when given, else the wall clock'),
      passes: int('passes run'),
      idle: bool('whether the last pass found no bucket to close'),
      buckets_closed: int('5-minute buckets closed (aggregated into the series and fed to the detector)'),
      closed_from_us: nint64('start of the first bucket closed; null when none was'),
      closed_to_us: nint64('end of the last bucket closed; null when none was'),
      series_updated: int('series whose detector was fed'),
      points_fed: int('series points fed to the detector'),
      anomalies_written: int('anomaly rows written'),
      alerts_changed: int('alert instances fired, re-fired or resolved'),
      duration_ms: int('time the call took'),
    },
    'What an on-demand detection closed and wrote.',
  ),
);
export const SnapshotRequest = component(
  'SnapshotRequest',
  obj({
    from_ts: microsInput('Window start, inclusive.'),
    to_ts: microsInput('Window end, exclusive; greater than from_ts.'),
    services: opt(arr(str(), 'only these services (default: every service)')),
  }),
);
/** A snapshot as it travels: a tar of manifest.json and one Parquet file per table. */
export const SnapshotArchive = Type.Unsafe<Uint8Array>({ type: 'string', contentMediaType: 'application/x-tar', description: 'a POSIX tar: manifest.json (SnapshotManifest), then `<table>.parquet` per table' });
export const RestoreReport = component(
  'RestoreReport',
  obj(
    {
      tables: dict(obj({ rows: int('rows in the file'), inserted: int('rows stored (svc_services: services whose bounds were merged)'), duplicates: int('rows the store held already, not stored again') })),
      templates_renumbered: int('templates whose id the store used for another template: they (and their log lines) got fresh ids'),
      buckets_reopened: int('buckets now holding restored and earlier rows alike, left to the detection pass to rebuild'),
      window: obj({ from_ts: int64(), to_ts: int64(), from_iso: iso(), to_iso: iso() }),
    },
    'What a restore stored, per table.',
  ),
);
export const Health = component('Health', obj({ status: oneOf(['ok']) }));
export const IngestAccepted = component(
  'IngestAccepted',
  obj({ accepted: obj({ samples: int('samples accepted'), rows: int('rows stored') }) }, 'the profile was accepted and committed'),
);

export type ErrorBody = Static<typeof ErrorBody>;
export type DiagnoseBody = Static<typeof DiagnoseRequest>;
