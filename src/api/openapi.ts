// openapi.json from the mounted route table (each route's `doc`, see api/docs.ts), and the request
// check that uses the very same parameter objects: what the document says is what the server enforces.
import { ApiError, type ErrorCode, ERROR_STATUS } from '../core/errors.js';
import { errorResponse, SCHEMAS, type OpDoc } from './docs.js';
import { checkMicros } from '../core/time.js';
import { SERVICE_VERSION } from '../core/version.js';
import { routeAccess, type Request, type RouteDoc, type RouteSpec } from './route.js';

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
    const doc = r.doc as OpDoc | undefined;
    if (!doc) continue;
    if (seen.has(doc.operationId)) throw new Error(`operationId ${doc.operationId} is used by two routes`);
    seen.add(doc.operationId);
    const method = r.method.toLowerCase();
    const item = (paths[r.path] ??= {});
    if (item[method]) throw new Error(`${r.method} ${r.path} is documented twice`);
    item[method] = operation(auth === 'keys' && routeAccess(r) === 'tenant' ? { ...doc, auth: true, responses: { ...doc.responses, '503': doc.responses['503'] ?? TENANT_UNAVAILABLE } } : doc);
  }
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
      { name: 'admin', description: 'tenants, keys and instance status' },
      { name: 'mcp', description: 'the same capabilities as Model Context Protocol tools' },
      { name: 'meta', description: 'health and this description' },
    ],
    paths,
    components: {
      schemas: SCHEMAS,
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

function operation(doc: OpDoc): Record<string, unknown> {
  const responses: Record<string, unknown> = { ...doc.responses };
  if (doc.parameters?.length && !responses['400']) responses['400'] = errorResponse('invalid parameter (code BAD_REQUEST)');
  if (doc.auth && !responses['401']) responses['401'] = errorResponse('missing or invalid bearer token (code UNAUTHORIZED)');
  const op: Record<string, unknown> = { operationId: doc.operationId, summary: doc.summary };
  if (doc.description) op['description'] = doc.description;
  if (doc.tags?.length) op['tags'] = doc.tags;
  if (doc.parameters?.length) op['parameters'] = doc.parameters;
  if (doc.requestBody) op['requestBody'] = doc.requestBody;
  op['responses'] = sortKeys(responses);
  if (doc.auth) op['security'] = [{ [SECURITY_SCHEME]: [] }];
  return op;
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

// ---------------------------------------------------------------------------------------------
// Request validation
// ---------------------------------------------------------------------------------------------

interface ParamObject {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: ParamSchema;
  'x-error-code'?: string;
}

interface ParamSchema {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  default?: unknown;
  'x-unit'?: string;
}

const patterns = new Map<string, RegExp>();
function compiled(p: string): RegExp {
  let re = patterns.get(p);
  if (!re) patterns.set(p, (re = new RegExp(p, 'u')));
  return re;
}

/**
 * Checks the query and path parameters of a request against the route's parameter objects and
 * returns the values typed by their schemas (integer and number as numbers, boolean as booleans);
 * absent optional parameters are omitted (or take the schema's `default`). Unknown query
 * parameters are ignored. Throws ApiError with the parameter's `x-error-code` (else BAD_REQUEST)
 * and a hint that says how to fix the request.
 */
export function validateRequest(doc: RouteDoc, req: Pick<Request, 'query' | 'params'>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const raw of doc.parameters ?? []) {
    const p = raw as ParamObject;
    if (p.in !== 'query' && p.in !== 'path') continue;
    const code = errorCode(p);
    const where = `${p.in} parameter ${p.name}`;
    const schema = p.schema ?? {};
    let value: string | undefined;
    if (p.in === 'path') value = req.params[p.name];
    else {
      const all = req.query.getAll(p.name);
      if (all.length > 1) throw new ApiError(code, `${where} is given ${all.length} times`, `send ${p.name} once`);
      value = all[0];
    }
    if (value === undefined) {
      if (p.required) throw new ApiError(code, `missing required ${where}`, `add ${p.name}=<${typeLabel(schema)}>${p.description ? `: ${p.description}` : ''}`);
      if (schema.default !== undefined) out[p.name] = schema.default;
      continue;
    }
    out[p.name] = coerce(p, schema, value, where, code);
  }
  return out;
}

function errorCode(p: ParamObject): ErrorCode {
  const c = p['x-error-code'];
  return c !== undefined && Object.prototype.hasOwnProperty.call(ERROR_STATUS, c) ? (c as ErrorCode) : 'BAD_REQUEST';
}

function baseType(s: ParamSchema): string {
  const t = s.type;
  if (Array.isArray(t)) return t.find((x) => x !== 'null') ?? 'string';
  return t ?? 'string';
}

function typeLabel(s: ParamSchema): string {
  if (s.enum) return s.enum.join('|');
  if (s['x-unit'] === 'microseconds') return 'microseconds since the Unix epoch, 16 digits';
  return baseType(s);
}

const quote = (v: string) => JSON.stringify(v.length > 80 ? v.slice(0, 80) + '…' : v);

function coerce(p: ParamObject, s: ParamSchema, raw: string, where: string, code: ErrorCode): unknown {
  const bad = (what: string, hint: string): never => {
    throw new ApiError(code, `${where} ${what}, got ${quote(raw)}`, hint || p.description || '');
  };
  let value: unknown;
  switch (baseType(s)) {
    case 'integer': {
      if (!/^-?\d+$/.test(raw)) bad('must be an integer', microsHint(s, raw));
      const n = Number(raw);
      if (!Number.isSafeInteger(n)) bad('is out of range', microsHint(s, raw) || `use a whole number of magnitude below 2^53`);
      checkRange(s, n, bad, raw);
      value = n;
      break;
    }
    case 'number': {
      if (!/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) bad('must be a number', '');
      const n = Number(raw);
      if (!Number.isFinite(n)) bad('is out of range', '');
      checkRange(s, n, bad, raw);
      value = n;
      break;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') bad('must be true or false', 'use true or false');
      value = raw === 'true';
      break;
    default: {
      const len = [...raw].length;
      if (s.minLength !== undefined && len < s.minLength) bad(`must be at least ${s.minLength} characters`, lengthHint(p.name, s));
      if (s.maxLength !== undefined && len > s.maxLength) bad(`must be at most ${s.maxLength} characters`, lengthHint(p.name, s));
      if (s.pattern !== undefined && !compiled(s.pattern).test(raw)) bad(`does not match ${s.pattern}`, '');
      value = raw;
    }
  }
  if (s.enum && !s.enum.includes(value)) bad(`must be one of ${s.enum.join(', ')}`, `use ${p.name}=${s.enum.join(' or ')}, or leave it out`);
  return value;
}

function lengthHint(name: string, s: ParamSchema): string {
  if (s.minLength !== undefined && s.maxLength !== undefined) return `${name} is ${s.minLength} to ${s.maxLength} characters long`;
  if (s.minLength !== undefined) return `${name} is at least ${s.minLength} characters long`;
  return `${name} is at most ${s.maxLength} characters long`;
}

function checkRange(s: ParamSchema, n: number, bad: (what: string, hint: string) => never, raw: string): void {
  const hint = microsHint(s, raw);
  if (s.minimum !== undefined && n < s.minimum) bad(`must be at least ${s.minimum}`, hint);
  if (s.maximum !== undefined && n > s.maximum) bad(`must be at most ${s.maximum}`, hint);
  if (s.exclusiveMinimum !== undefined && n <= s.exclusiveMinimum) bad(`must be greater than ${s.exclusiveMinimum}`, hint);
  if (s.exclusiveMaximum !== undefined && n >= s.exclusiveMaximum) bad(`must be less than ${s.exclusiveMaximum}`, hint);
}

/** For microsecond timestamps: which unit the value looks like and how to convert it ('' otherwise). */
function microsHint(s: ParamSchema, raw: string): string {
  if (s['x-unit'] !== 'microseconds') return '';
  if (/^\d+$/.test(raw)) {
    const problem = checkMicros(raw);
    if (problem) return problem.hint;
  }
  return 'timestamps are whole microseconds since the Unix epoch: 16 digits for current dates';
}
