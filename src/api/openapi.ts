// openapi.json from the mounted routes' entries of the route table (endpoints.ts): the operations,
// and as components every named schema they reach. Request validation (validate.ts) reads the same
// entries, so what the document says is what the server enforces.
import { collectComponents } from '../core/schema.js';
import { errorResponse } from './endpoints.js';
import type { Endpoint, ResponseDef } from './endpoint.js';
import { ErrorBody } from './schemas.js';
import { SERVICE_VERSION } from '../core/version.js';
import { routeAccess, type RouteSpec } from './route.js';

export const OPENAPI_VERSION = '3.1.0';

const SECURITY_SCHEME = 'bearerAuth';

/**
 * The OpenAPI 3.1 document for the routes that carry a `doc` (others, if any, are not part of the
 * API description). Deterministic: the same routes give the same document. With SVC_AUTH=keys every
 * tenant route declares the bearer requirement and its 401, whatever open mode's description says,
 * and its 503 while the instance owning the tenant is unavailable.
 */
/** Several instances (SVC_CONTROL_PLANE_URL): a tenant whose owning instance is down or changing answers 503. */
const TENANT_UNAVAILABLE = errorResponse('the tenant is not available right now: its owning instance is down, being replaced or moving (several instances; code NOT_READY, with Retry-After)');

export function buildOpenApi(routes: readonly RouteSpec[], auth: 'open' | 'keys' = 'open'): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const seen = new Set<string>();
  for (const r of routes) {
    const doc = r.doc;
    if (!doc) continue;
    if (seen.has(doc.operationId)) throw new Error(`operationId ${doc.operationId} is used by two routes`);
    seen.add(doc.operationId);
    const method = r.method.toLowerCase();
    const item = (paths[r.path] ??= {});
    if (item[method]) throw new Error(`${r.method} ${r.path} is documented twice`);
    item[method] = operation(auth === 'keys' && routeAccess(r) === 'tenant' ? { ...doc, auth: true, responses: { ...doc.responses, '503': doc.responses['503'] ?? TENANT_UNAVAILABLE } } : doc);
  }
  // The error body is a component even where no route answers it (a route table without errors).
  const schemas = collectComponents([ErrorBody, paths]);
  // Plain JSON: the document as clients read it, without the schema values' symbol-keyed metadata.
  return JSON.parse(JSON.stringify(document(paths, schemas, auth))) as Record<string, unknown>;
}

function document(paths: Record<string, unknown>, schemas: Record<string, unknown>, auth: 'open' | 'keys'): Record<string, unknown> {
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Telemetry Diagnosis Service',
      version: SERVICE_VERSION,
      description:
        'An observability backend for automated agents: it ingests OpenTelemetry data and profiles, detects worsening shifts in the health of services, ranks them and explains them. ' +
        'Typical loop: GET /v1/services, POST /v1/diagnose, then run each lead\'s drill_down_sql through POST /v1/query verbatim. ' +
        'Timestamps named *_ts are int64 microseconds since the Unix epoch (16 digits). Every error answer is {"error": {"code", "message", "hint"}}.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    tags: [
      { name: 'ingest', description: 'profile ingest (OTLP is served on its own ports)' },
      { name: 'analysis', description: 'what changed and why' },
      { name: 'query', description: 'read-only SQL over the telemetry tables' },
      { name: 'snapshot', description: 'a window of the store as Parquet files, and back' },
      { name: 'admin', description: 'tenants, keys, instance status and detection on demand' },
      { name: 'mcp', description: 'the same capabilities as Model Context Protocol tools' },
      { name: 'meta', description: 'health and this description' },
    ],
    paths,
    components: {
      schemas,
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'prefixed API key',
          description:
            auth === 'keys'
              ? '`Authorization: Bearer <API_KEY>`: a tenant key (`tds_` + 43 base64url characters) on ingest and read paths, which alone decides the tenant; the admin endpoints take the instance admin token (SVC_ADMIN_TOKEN) instead.'
              : '`Authorization: Bearer <API_KEY>`, a prefixed API key. A self-hosted server runs in open mode and checks no key (the network is the security boundary); tenant keys apply to the hosted variant.',
        },
      },
    },
  };
}

/** A response object: its description, headers and body schema (JSON unless the entry names another media type). */
function response(r: ResponseDef): Record<string, unknown> {
  return { description: r.description, ...(r.headers ? { headers: r.headers } : {}), ...(r.schema ? { content: { [r.mediaType ?? 'application/json']: { schema: r.schema } } } : {}) };
}

function operation(doc: Endpoint): Record<string, unknown> {
  const params = Object.entries(doc.params ?? {});
  const responses: Record<string, unknown> = { '200': response(doc.ok) };
  for (const [status, r] of Object.entries(doc.responses)) responses[status] = response(r);
  if (params.length && !responses['400']) responses['400'] = response(errorResponse('invalid parameter (code BAD_REQUEST)'));
  if (doc.auth && !responses['401']) responses['401'] = response(errorResponse('missing or invalid bearer token (code UNAUTHORIZED)'));
  const op: Record<string, unknown> = { operationId: doc.operationId, summary: doc.summary };
  if (doc.description) op['description'] = doc.description;
  if (doc.tags.length) op['tags'] = doc.tags;
  if (params.length) {
    op['parameters'] = params.map(([name, p]) => ({
      name,
      in: p.in,
      required: p.required,
      ...(p.description ? { description: p.description } : {}),
      schema: p.schema,
      ...(p.errorCode ? { 'x-error-code': p.errorCode } : {}),
    }));
  }
  if (doc.body) op['requestBody'] = { required: doc.body.required, content: Object.fromEntries(Object.entries(doc.body.content).map(([type, schema]) => [type, { schema }])) };
  op['responses'] = sortKeys(responses);
  if (doc.auth) op['security'] = [{ [SECURITY_SCHEME]: [] }];
  return op;
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

