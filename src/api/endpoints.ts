// The route table: every operation of the API once, keyed by its operationId, with its method, path,
// parameters, body and answers as schema values. From it come request validation (openapi.ts),
// openapi.json (openapi.ts), each handler's typed parameters and answer (routes/*.ts), the client's
// methods (client/api.ts), the MCP tools' input schemas (mcp/tools.ts) and so the CLI's calls.
//
// Where the spec is silent (DESIGN.md decides, or this file does):
// - the error body is {"error": {"code", "message", "hint"}} on every error status;
// - admin endpoints declare the bearer requirement (the admin token, SVC_AUTH=keys); with
//   SVC_AUTH=keys every tenant route declares it too (openapi.ts adds it from `access`);
// - `*_ts` inputs are microseconds: 16 digits, checked as a range so a value in seconds,
//   milliseconds or nanoseconds is refused with a hint naming the unit it looks like.
import { anyObject, microsInput, str, Type, type TSchema } from '../core/schema.js';
import { DiagnoseResponse } from '../diagnose/block-schema.js';
import { CompactDiagnoseResponse } from '../diagnose/compact-schema.js';
import { ALERT_STATUSES } from '../detect/alerts.js';
import { MAX_SERVICES } from '../diagnose/request.js';
import { MAX_PASSES as MAX_DETECT_PASSES } from '../detect/on-demand.js';
import { inPath, inQuery, inQueryRequired, routeTable, type EndpointInput, type ResponseDef } from './endpoint.js';
import * as S from './schemas.js';

const ok = <T extends TSchema>(description: string, schema: T, headers?: Record<string, unknown>) => ({ description, schema, ...(headers ? { headers } : {}) });
/** An error response: always the one error body. */
export const errorResponse = (description: string, headers?: Record<string, unknown>): ResponseDef => ({ description, ...(headers ? { headers } : {}), schema: S.ErrorBody });
const retryAfter = { 'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } } };
const jsonRpcErrorResponse = (description: string): ResponseDef => ({ description, schema: S.JsonRpcError });
const E401 = errorResponse('missing or invalid bearer token (code UNAUTHORIZED)');
const E403 = errorResponse('a tenant key on an admin endpoint, or admin endpoints disabled (SVC_ADMIN_TOKEN unset) (code FORBIDDEN)');
const E413 = errorResponse('body exceeds the limit of this route (code TOO_LARGE)');
const E500 = errorResponse('unexpected failure (code INTERNAL)');
const json = <T extends TSchema>(schema: T) => ({ required: true as const, content: { 'application/json': schema } });

const profileQuery = {
  name: inQuery(str(), {
    description:
      'application name with optional labels, for example `checkout.cpu{env=prod}`. When present the body is a raw pprof profile and the service name is the part before the first `{`; when absent the body is a push.v1.PushRequest whose series each carry a `service_name` label.',
  }),
  from: inQuery(Type.Integer({ format: 'int64', minimum: 0 }), { description: 'profile start, Unix time (seconds as Pyroscope sends; milliseconds, microseconds and nanoseconds are recognised by magnitude)' }),
  until: inQuery(Type.Integer({ format: 'int64', minimum: 0 }), { description: 'profile end, same units as `from`' }),
  sampleRate: inQuery(Type.Number({ exclusiveMinimum: 0 }), { description: 'CPU sampling rate in Hz' }),
  spyName: inQuery(str(), { description: 'the profiler that produced the profile (informational)' }),
  format: inQuery(str(), { description: 'only `pprof` (the default) is accepted; legacy formats (folded, trie, tree, lines, jfr) are refused with code LEGACY_FORMAT' }),
};

const binary = Type.Unsafe<Uint8Array>({ type: 'string', contentMediaType: 'application/octet-stream' });

function ingest(path: string) {
  return {
    method: 'POST',
    path,
    summary: `Ingest a profile (${path})`,
    description:
      'Ingest profiles. The four paths `/`, `/ingest`, `/ingest/pyroscope` and `/push.v1.PusherService/Push` behave identically. ' +
      'A missing Content-Type is treated as a binary body; binary bodies may be gzip-compressed; a multipart/form-data body carries the payload in the form field `profile`.',
    tags: ['ingest'],
    auth: true,
    params: profileQuery,
    body: {
      required: true,
      content: {
        'application/octet-stream': binary,
        'application/proto': binary,
        'binary/octet-stream': binary,
        'multipart/form-data': Type.Object({ profile: Type.Unsafe<Uint8Array>({ type: 'string', contentMediaType: 'application/octet-stream' }) }),
      },
    },
    ok: ok('profile accepted', S.IngestAccepted),
    responses: {
      '400': errorResponse('unsupported media type, malformed payload, missing service name, or empty profile (codes UNSUPPORTED_MEDIA_TYPE, MALFORMED, MISSING_SERVICE_NAME, EMPTY, LEGACY_FORMAT, BAD_REQUEST)'),
      '401': E401,
      '413': errorResponse('body exceeds the configured ingest limit (code TOO_LARGE)'),
      '429': errorResponse('ingest rate limit exceeded (code RATE_LIMITED)', retryAfter),
      '500': errorResponse('ingest failed (code INGEST_FAILED)'),
      '507': errorResponse('storage cannot currently accept ingest (code STORAGE_FULL)', retryAfter),
    },
  } as const satisfies EndpointInput;
}

const diagnoseErrors = {
  '400': errorResponse(`invalid request: timestamps not in microseconds (INVALID_TIMESTAMP), to_ts <= from_ts or to_ts without from_ts (INVALID_WINDOW), 0 or more than ${MAX_SERVICES} services, malformed JSON (BAD_REQUEST)`),
  '401': E401,
  '413': E413,
  '500': E500,
};
/** A diagnosis answer, full or compact (`detail`); Retry-After when the server was too busy to run it (every service in errors). */
const diagnoseAnswer = ok(
  'one diagnosis block per service (the default), or with `"detail": "findings"` the compact view per service; failures in errors (busy included)',
  Type.Union([DiagnoseResponse, CompactDiagnoseResponse]),
  retryAfter,
);

const tenantId = inPath(Type.String({ minLength: 1, maxLength: 63 }), { description: 'the tenant id' });

export const API = routeTable({
  ingestProfileRoot: ingest('/'),
  ingestProfile: ingest('/ingest'),
  ingestProfilePyroscope: ingest('/ingest/pyroscope'),
  ingestProfilePush: ingest('/push.v1.PusherService/Push'),

  listAlerts: {
    method: 'GET',
    path: '/v1/alerts',
    summary: 'List alert instances',
    tags: ['analysis'],
    auth: true,
    params: { status: inQuery(Type.Unsafe<(typeof ALERT_STATUSES)[number]>({ type: 'string', enum: [...ALERT_STATUSES] }), { description: 'only instances in this state', errorCode: 'INVALID_STATUS' }) },
    ok: ok('alert instances', S.AlertsResponse),
    responses: { '400': errorResponse('invalid status filter (code INVALID_STATUS)'), '401': E401, '500': E500 },
  },

  listAnomalies: {
    method: 'GET',
    path: '/v1/anomalies',
    summary: 'List ranked worsening shifts',
    description:
      'What changed: worsening regime shifts found by changepoint detection, ordered by the unit-free magnitude (after - before) / (after + before), descending; ' +
      'ties at zero baseline by |after - before|, then newest first. Nothing is filtered by magnitude. Rows in the same or an adjacent 5-minute bucket on the same service share one incident_id. ' +
      'When `truncated` is true the row cap omitted shifts: the answer is an incomplete snapshot. Reading costs one table scan, never a detection run.',
    tags: ['analysis'],
    auth: true,
    params: {
      service: inQuery(str(), { description: 'restrict to one service' }),
      from_ts: inQueryRequired(microsInput('Only shifts at or after.'), { description: 'only shifts at or after this time', errorCode: 'INVALID_TIMESTAMP' }),
      to_ts: inQueryRequired(microsInput('Only shifts at or before.'), { description: 'only shifts at or before this time', errorCode: 'INVALID_TIMESTAMP' }),
    },
    ok: ok('shifts in the window, ranked', S.AnomaliesResponse),
    responses: { '400': errorResponse('missing or invalid from_ts/to_ts (codes INVALID_TIMESTAMP, INVALID_WINDOW)'), '401': E401, '500': E500 },
  },

  diagnose: {
    method: 'POST',
    path: '/v1/diagnose',
    summary: 'Triage per service',
    description:
      'Why: per service a triage block with ranked findings, per-operation anomaly flags, bounded samples of spans and logs, log patterns, gen_ai statistics and profile hot spots. ' +
      'Both timestamps omitted: the last 15 minutes; from_ts alone: to_ts is now. A failing service appears in `errors`, not as an HTTP error. ' +
      'Every drill_down_sql and drill_all_sql runs as it stands on POST /v1/query. ' +
      'With `"detail": "findings"` each service gets the compact view instead: its findings, the operations flagged anomalous, coverage and events, and what was left out with the SQL or call that fetches it; `max_bytes` bounds that answer. ' +
      'Diagnoses run a few at a time (SVC_DIAGNOSE_CONCURRENCY) and a few wait (SVC_DIAGNOSE_QUEUE); a call that finds no room answers every service in `errors` as busy, with Retry-After; a call identical to one in progress shares its answer.',
    tags: ['analysis'],
    auth: true,
    body: json(S.DiagnoseRequest),
    ok: diagnoseAnswer,
    responses: diagnoseErrors,
  },

  investigate: {
    method: 'POST',
    path: '/v1/investigate',
    summary: 'Triage per service (earlier name of diagnose)',
    description: 'The earlier name of POST /v1/diagnose: the same body and rules (a body with only `service` works), the same answer.',
    tags: ['analysis'],
    auth: true,
    body: json(S.DiagnoseRequest),
    ok: diagnoseAnswer,
    responses: diagnoseErrors,
  },

  runQuery: {
    method: 'POST',
    path: '/v1/query',
    summary: 'Run one SELECT',
    description:
      'Read-only SQL over svc_spans, svc_logs, svc_log_templates, svc_metrics_gauge, svc_metrics_sum, svc_metrics_histogram, svc_metrics_exp_histogram, svc_profiles and svc_anomalies ' +
      '(bare, `lake.` or `main.`), and the view svc_logs_resolved (svc_logs plus resolved_template_id: group by it to count a log event once after template merges). Exactly one SELECT; no WITH/CTE (rewrite as a derived-table subquery); functions are allowlisted; file and network readers are blocked. ' +
      '`timestamp` columns are TIMESTAMP without time zone: bound them with a literal (for example TIMESTAMP \'2024-01-01 00:00:00\') so whole files are skipped; a bound built from now() reads everything.',
    tags: ['query'],
    body: { required: true, content: { 'text/plain': str('the raw SQL statement (not JSON)') } },
    ok: ok('one object per row, keyed by column name or alias', S.QueryRows),
    responses: {
      '400': errorResponse(
        'refused or failed statement: NOT_SELECT, MULTIPLE_STATEMENTS, CTE_NOT_ALLOWED, FUNCTION_NOT_ALLOWED, TABLE_NOT_ALLOWED, SQL_NOT_ALLOWED, SQL_TOO_LARGE, SQL_ERROR, ROW_CAP, or INTERRUPT when the query ran past the time limit',
      ),
      '413': E413,
      '415': errorResponse('the body is not text/plain (code UNSUPPORTED_MEDIA_TYPE)'),
      '500': E500,
      '503': errorResponse('too many queries running or waiting (code OVERLOADED), or shutting down (NOT_READY)', retryAfter),
    },
  },

  snapshot: {
    method: 'POST',
    path: '/v1/snapshot',
    summary: 'A window of every table as Parquet',
    description:
      "The window's rows of every table (telemetry, log templates, anomalies, and the series, rollups, detector states, alerts and open buckets beside them) as a tar: manifest.json (version, schema, window, row counts, SHA-256 checksums) and one zstd Parquet file per table, written by DuckDB in one read transaction. " +
      'ClickHouse, Spark, Trino and DuckDB read the files as they are; POST /v1/restore (`tds restore`) loads them into a store. Only the caller\'s own store is read.',
    tags: ['snapshot'],
    body: json(S.SnapshotRequest),
    ok: { description: 'the snapshot archive', schema: S.SnapshotArchive, mediaType: 'application/x-tar' },
    responses: {
      '400': errorResponse('invalid window or body (codes INVALID_TIMESTAMP, INVALID_WINDOW, BAD_REQUEST)'),
      '413': E413,
      '500': E500,
    },
  },

  restore: {
    method: 'POST',
    path: '/v1/restore',
    summary: 'Load a snapshot into the store',
    description:
      'Loads the archive POST /v1/snapshot answered into the caller\'s store, in one transaction: every checksum and column is checked first, and a file DuckDB cannot load stores nothing. ' +
      'Rows the store holds already are not stored again; template ids and anomaly rows survive (a template id the store uses for another template is renumbered, in its log lines too); buckets that then hold restored and earlier rows are left to the detection pass to rebuild. ' +
      'Ingest commits wait while it runs. Body limit: SVC_RESTORE_MAX_BYTES.',
    tags: ['snapshot'],
    body: { required: true, content: { 'application/x-tar': S.SnapshotArchive } },
    ok: ok('what was stored, per table', S.RestoreReport),
    responses: {
      '400': errorResponse('not a snapshot archive, a checksum or column that does not match, a file DuckDB cannot load, or a snapshot of a newer version (codes MALFORMED, BAD_REQUEST)'),
      '413': E413,
      '500': E500,
      '507': errorResponse('storage cannot currently take the rows (code STORAGE_FULL)', retryAfter),
    },
  },

  listServices: {
    method: 'GET',
    path: '/v1/services',
    summary: 'List reporting services',
    description: 'Every service that has reported telemetry, with the first and last time seen.',
    tags: ['analysis'],
    ok: ok('services', S.ServicesResponse),
    responses: { '500': E500 },
  },

  getTrace: {
    method: 'GET',
    path: '/v1/traces/{trace_id}',
    summary: 'One whole trace',
    tags: ['analysis'],
    params: {
      trace_id: inPath(Type.String({ pattern: '^[0-9a-fA-F]{32}$' }), { description: 'trace id: 32 hex digits (16 bytes), as OTLP/JSON prints it', errorCode: 'INVALID_TRACE_ID' }),
    },
    ok: ok('every span of the trace, with root, critical path and service breakdown', S.TraceDetail),
    responses: { '400': errorResponse('not a trace id (code INVALID_TRACE_ID)'), '404': errorResponse('no spans stored for this trace id (code NOT_FOUND)'), '500': E500 },
  },

  createTenant: {
    method: 'POST',
    path: '/admin/tenants',
    summary: 'Create or reactivate a tenant',
    description:
      'Creates a tenant, or reactivates an existing one with the same id (SVC_AUTH=keys; open mode answers 400 with a hint). ' +
      'The id becomes a directory name: 1-63 characters of lower-case letters, digits, `-` and `_`, starting with a letter or digit.',
    tags: ['admin'],
    auth: true,
    access: 'admin',
    body: json(S.CreateTenantRequest),
    ok: ok('the tenant', S.Tenant),
    responses: { '400': errorResponse('invalid tenant id or body, or open mode (codes BAD_REQUEST, NOT_HOSTED)'), '401': E401, '403': E403, '413': E413, '500': E500 },
  },

  issueKey: {
    method: 'POST',
    path: '/admin/tenants/{id}/keys',
    summary: 'Issue an API key for a tenant',
    description:
      'Issues a new key for an active tenant. The key (`tds_` + 43 base64url characters, 256 random bits) is in this answer only: the service keeps its SHA-256 hash. ' +
      '`short_token`, a prefix of that hash, names the key in DELETE /admin/keys/{short_token}.',
    tags: ['admin'],
    auth: true,
    access: 'admin',
    params: { id: tenantId },
    ok: ok('the new key, shown once', S.IssuedKey),
    responses: {
      '400': errorResponse('invalid tenant id, or open mode (codes BAD_REQUEST, NOT_HOSTED)'),
      '401': E401,
      '403': E403,
      '404': errorResponse('no active tenant with this id (code NOT_FOUND)'),
      '500': E500,
    },
  },

  deactivateTenant: {
    method: 'POST',
    path: '/admin/tenants/{id}/deactivate',
    summary: 'Deactivate a tenant',
    description: "Its keys stop working on every instance (within the control plane's refresh interval); its data stays. POST /admin/tenants with the same id reactivates it.",
    tags: ['admin'],
    auth: true,
    access: 'admin',
    params: { id: tenantId },
    ok: ok('the tenant', S.Tenant),
    responses: {
      '400': errorResponse('invalid tenant id, or open mode (codes BAD_REQUEST, NOT_HOSTED)'),
      '401': E401,
      '403': E403,
      '404': errorResponse('no tenant with this id (code NOT_FOUND)'),
      '500': E500,
    },
  },

  moveTenant: {
    method: 'POST',
    path: '/admin/tenants/{id}/move',
    summary: 'Move a tenant to another instance',
    description:
      "Several instances on one PostgreSQL control plane and one shared SVC_DATA_DIR (SVC_DATA_DIR_SHARED=true): the tenant's owner drains its requests, closes its store and hands its lease to `to` " +
      '(default: the least-loaded other live instance), which opens the store on the tenant\'s next request. Any instance takes the call and passes it to the owner. ' +
      'Local disks or a single instance: 409.',
    tags: ['admin'],
    auth: true,
    access: 'admin',
    params: { id: tenantId },
    body: { required: false, content: { 'application/json': S.MoveTenantRequest } },
    ok: ok('the move', S.MoveTenantResponse),
    responses: {
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
    method: 'DELETE',
    path: '/admin/keys/{short_token}',
    summary: 'Revoke an API key',
    description: 'Revokes the one unrevoked key whose hash starts with `short_token`: `revoked: false` when none does; 409 when several do (none is revoked).',
    tags: ['admin'],
    auth: true,
    access: 'admin',
    params: { short_token: inPath(Type.String({ minLength: 8, maxLength: 64 }), { description: "a prefix of the key's SHA-256 hash, 8 to 64 characters" }) },
    ok: ok('revocation result', S.KeyRevocation),
    responses: {
      '400': errorResponse('short_token is not 8 to 64 hexadecimal characters, or open mode (codes BAD_REQUEST, NOT_HOSTED)'),
      '401': E401,
      '403': E403,
      '409': errorResponse('the prefix matches several keys; none was revoked (code CONFLICT)'),
      '500': E500,
    },
  },

  getAdminStatus: {
    method: 'GET',
    path: '/admin/status',
    summary: 'Instance status rows',
    description: 'One entry per part of the instance (build, control plane, stores, ingest, refusals, memory, detection, disk) and, with SVC_AUTH=keys, one per tenant.',
    tags: ['admin'],
    auth: true,
    access: 'admin',
    ok: ok('all instance status rows', S.AdminStatus),
    responses: { '401': E401, '403': E403, '500': E500 },
  },

  detectNow: {
    method: 'POST',
    path: '/admin/detect',
    summary: 'Run detection now',
    description:
      'Closes every 5-minute bucket that has received data, whatever SVC_DETECT_GRACE_S (the newest too: data arriving later reopens it), runs the detection pass to completion and answers what it closed and wrote. ' +
      'With `as_of_ts` only the buckets that end by then are closed and the rows are stamped with it (`detected_at`), so a recorded window gets the same anomalies whatever the wall clock. ' +
      '`until_idle` repeats the pass until one closes nothing (at most ' + MAX_DETECT_PASSES + ' passes). The pass runs in the scheduler\'s turn, never beside a scheduled one. ' +
      'With SVC_AUTH=keys it takes the admin token and names the tenant.',
    tags: ['admin'],
    auth: true,
    access: 'admin',
    params: {
      tenant: inQuery(Type.String({ minLength: 1, maxLength: 63 }), { description: 'the tenant whose store to detect on: required with SVC_AUTH=keys; open mode has one (`default`)' }),
      as_of_ts: inQuery(microsInput('Close only the buckets that end by then, and stamp the rows with it.'), { description: 'close only the buckets that end by this time and stamp the rows with it', errorCode: 'INVALID_TIMESTAMP' }),
      until_idle: inQuery(Type.Boolean({ default: false }), { description: 'repeat the pass until one closes no bucket' }),
    },
    ok: ok('what the passes closed and wrote', S.DetectReport),
    responses: {
      '400': errorResponse('a bad parameter, or no tenant named with SVC_AUTH=keys (codes BAD_REQUEST, INVALID_TIMESTAMP)'),
      '401': E401,
      '403': E403,
      '404': errorResponse('no active tenant with this id (code NOT_FOUND)'),
      '500': E500,
      '503': errorResponse("the tenant's store is not available right now (code NOT_READY, with Retry-After)", retryAfter),
    },
  },

  mcp: {
    method: 'POST',
    path: '/mcp',
    summary: 'Model Context Protocol (Streamable HTTP)',
    description:
      'The service as MCP tools for agents: list_services, get_anomalies, diagnose, query, get_trace, list_alerts; the resource tds://schema/tables; the prompt triage. ' +
      'Stateless Streamable HTTP with JSON answers: POST one JSON-RPC message or a batch with Accept: application/json, text/event-stream. There is no session and no GET stream (405). ' +
      'Errors here are JSON-RPC errors; a tool that fails answers a result with isError and the error body of the endpoint it called.',
    tags: ['mcp'],
    auth: true,
    body: json(S.JsonRpcMessage),
    ok: ok('the JSON-RPC response(s)', S.JsonRpcAnswer),
    responses: {
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
    method: 'GET',
    path: '/healthz',
    summary: 'Readiness',
    description: '200 once the store is open and the server can take requests; 503 before.',
    tags: ['meta'],
    access: 'public',
    ok: ok('ready', S.Health),
    responses: { '503': errorResponse('not ready yet (code NOT_READY)') },
  },

  getOpenApi: {
    method: 'GET',
    path: '/openapi.json',
    summary: 'This API description (OpenAPI 3.1)',
    tags: ['meta'],
    access: 'public',
    ok: ok('the OpenAPI document', anyObject()),
    responses: {},
  },
});

export type Api = typeof API;
export type OperationId = keyof Api;
