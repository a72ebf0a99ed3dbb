// Response checking against the API description, for every test that talks to the API:
//
//   const { status, body } = await apiFetch(srv.api, '/v1/services');        // fetch + validate
//   checkResponse('GET', '/v1/traces/{trace_id}', res.status, await res.json()); // validate only
//
// apiFetch validates against the document the server itself serves (/openapi.json, fetched once per
// base URL); checkResponse, without a `doc`, against the full description built from the route table (api/endpoints.ts)
// (every endpoint of the spec, served or not yet). Both throw an Error naming the operation, the
// status and every schema violation, so a test fails the moment a response drifts from the document.
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

// A CommonJS class seen through NodeNext's default import: typed as the class it is at run time.
const Ajv2020 = Ajv2020Module as unknown as typeof Ajv2020Module.default;
import { buildOpenApi } from '../../src/api/openapi.js';
import { API } from '../../src/api/endpoints.js';
import { type RouteSpec } from '../../src/api/route.js';

export type OpenApiDoc = Record<string, any>;

/** Route stubs for every entry of the route table (handlers never run): the full description's route table. */
export function documentedRoutes(): RouteSpec[] {
  return Object.values(API).map((e) => ({ method: e.method, path: e.path, doc: e, handler: () => ({ status: 500, body: '' }) }));
}

const fullDocs: Partial<Record<'open' | 'keys', OpenApiDoc>> = {};
/** The description of every endpoint of the route table, as an open-mode server (default) or a hosted one (SVC_AUTH=keys) serves it. */
export function fullOpenApi(auth: 'open' | 'keys' = 'open'): OpenApiDoc {
  return (fullDocs[auth] ??= buildOpenApi(documentedRoutes(), auth));
}

interface Checker {
  ajv: InstanceType<typeof Ajv2020>;
  compiled: Map<string, ValidateFunction>;
}
const checkers = new WeakMap<object, Checker>();
const DOC_ID = 'openapi.json';

function checker(doc: OpenApiDoc): Checker {
  let c = checkers.get(doc);
  if (!c) {
    // OpenAPI 3.1 schemas are JSON Schema 2020-12; keywords such as `x-unit` are annotations.
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    (addFormats as unknown as (a: unknown) => void)(ajv);
    ajv.addSchema(doc, DOC_ID);
    c = { ajv, compiled: new Map() };
    checkers.set(doc, c);
  }
  return c;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

function validatorAt(doc: OpenApiDoc, path: string): ValidateFunction {
  const c = checker(doc);
  let v = c.compiled.get(path);
  if (!v) {
    v = c.ajv.compile({ $ref: `${DOC_ID}#/${path}` });
    c.compiled.set(path, v);
  }
  return v!;
}

/** Validates a value against `#/components/schemas/<name>` of the document. */
export function checkSchema(name: string, value: unknown, doc: OpenApiDoc = fullOpenApi()): void {
  if (!doc['components']?.['schemas']?.[name]) throw new Error(`no component schema ${name}`);
  const v = validatorAt(doc, pointer('components', 'schemas', name));
  if (!v(value)) throw new Error(`value does not match schema ${name}:\n${formatErrors(v)}\nvalue: ${preview(value)}`);
}

export interface CheckOptions {
  /** The document to check against; default: the full description (fullOpenApi()). */
  doc?: OpenApiDoc;
  /** The response's Content-Type; when given it must be one the document lists for that status. */
  contentType?: string | null;
}

/**
 * Throws unless `body` (parsed JSON, or the raw text for non-JSON media types; undefined or '' for
 * an empty body) is a documented response of `method pathTemplate` with `status`.
 */
export function checkResponse(method: string, pathTemplate: string, status: number, body: unknown, opts: CheckOptions = {}): void {
  const doc = opts.doc ?? fullOpenApi();
  const m = method.toLowerCase();
  const label = `${method.toUpperCase()} ${pathTemplate} → ${status}`;
  const op = doc['paths']?.[pathTemplate]?.[m];
  if (!op) throw new Error(`${label}: operation not in the API description`);
  const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => op.responses?.[k]);
  if (!key) throw new Error(`${label}: status not documented (documented: ${Object.keys(op.responses ?? {}).join(', ')})\nbody: ${preview(body)}`);
  const content = op.responses[key].content as Record<string, { schema?: unknown }> | undefined;
  if (!content) {
    if (body !== undefined && body !== '' && body !== null) throw new Error(`${label}: documented without a body, got ${preview(body)}`);
    return;
  }
  let mediaType = 'application/json' in content ? 'application/json' : Object.keys(content)[0]!;
  if (opts.contentType) {
    const ct = opts.contentType.split(';')[0]!.trim().toLowerCase();
    if (!(ct in content)) throw new Error(`${label}: Content-Type ${ct} not documented (documented: ${Object.keys(content).join(', ')})`);
    mediaType = ct;
  }
  if (!content[mediaType]?.schema) return;
  const v = validatorAt(doc, pointer('paths', pathTemplate, m, 'responses', key, 'content', mediaType, 'schema'));
  if (!v(body)) throw new Error(`${label}: body does not match the API description:\n${formatErrors(v)}\nbody: ${preview(body)}`);
}

function formatErrors(v: ValidateFunction): string {
  return (v.errors ?? [])
    .slice(0, 20)
    .map((e) => `  ${e.instancePath || '(root)'} ${e.message ?? ''}${e.params && Object.keys(e.params).length ? ' ' + JSON.stringify(e.params) : ''}`)
    .join('\n');
}

function preview(v: unknown): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
  return s.length > 600 ? s.slice(0, 600) + '…' : s;
}

/** The path template of `doc` that a concrete path matches (literal segments win over parameters). */
export function matchPathTemplate(doc: OpenApiDoc, path: string): string | undefined {
  const parts = path.split('/').slice(1);
  let best: { t: string; literals: number } | undefined;
  for (const t of Object.keys(doc['paths'] ?? {})) {
    const segs = t.split('/').slice(1);
    if (segs.length !== parts.length) continue;
    let literals = 0;
    let ok = true;
    for (let i = 0; i < segs.length && ok; i++) {
      if (segs[i]!.startsWith('{') && segs[i]!.endsWith('}')) ok = parts[i] !== '';
      else if (segs[i] === parts[i]) literals++;
      else ok = false;
    }
    if (ok && (!best || literals > best.literals)) best = { t, literals };
  }
  return best?.t;
}

const served = new Map<string, Promise<OpenApiDoc>>();

/** The document a server serves at /openapi.json (fetched once per base URL). */
export function servedOpenApi(base: string): Promise<OpenApiDoc> {
  let p = served.get(base);
  if (!p) {
    p = fetch(`${base}/openapi.json`).then(async (res) => {
      if (res.status !== 200) throw new Error(`GET ${base}/openapi.json → ${res.status}: ${await res.text()}`);
      return (await res.json()) as OpenApiDoc;
    });
    p.catch(() => served.delete(base));
    served.set(base, p);
  }
  return p;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the answer is JSON, else the text. */
  body: T;
  text: string;
  /** The matched path template, e.g. /v1/traces/{trace_id}. */
  template: string | undefined;
}

/**
 * fetch(base + path, init), then check the answer against the served /openapi.json: the status must
 * be documented for the operation and the body must match its schema. Unknown paths and methods
 * (404/405 from the router, not operations of the document) must still carry the error body.
 */
export async function apiFetch<T = any>(base: string, path: string, init: RequestInit = {}): Promise<ApiResponse<T>> {
  const doc = await servedOpenApi(base);
  const res = await fetch(base + path, init);
  const text = await res.text();
  const contentType = res.headers.get('content-type');
  const isJson = /^application\/([\w.+-]*\+)?json\b/i.test(contentType ?? '');
  let body: unknown = text;
  if (isJson && text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`${init.method ?? 'GET'} ${path} → ${res.status}: Content-Type ${contentType} but the body is not JSON: ${text.slice(0, 300)}`);
    }
  }
  const method = (init.method ?? 'GET').toUpperCase();
  const pathname = new URL(path, 'http://x').pathname;
  const template = matchPathTemplate(doc, pathname);
  const documented = template !== undefined && doc['paths'][template][method.toLowerCase()] !== undefined;
  if (documented) checkResponse(method, template, res.status, body, { doc, contentType });
  else if (res.status === 404 || res.status === 405) checkSchema('Error', body, doc);
  else throw new Error(`${method} ${path} → ${res.status}: not an operation of the served API description`);
  return { status: res.status, headers: res.headers, body: body as T, text, template };
}
