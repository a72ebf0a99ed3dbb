// Request validation: the query and path parameters of a request, checked and typed against the
// parameters of its route table entry (the same ones openapi.json publishes), with a hint that says
// how to fix a bad one.
import { ApiError, type ErrorCode } from '../core/errors.js';
import { checkMicros } from '../core/time.js';
import type { Endpoint, ParamDef } from './endpoint.js';
import type { Request } from './route.js';

/** The parameter as the checks read it: its name and its schema's keywords. */
interface ParamObject {
  name: string;
  description?: string | undefined;
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
 * Checks the query and path parameters of a request against its entry's parameters and returns the
 * values typed by their schemas (integer and number as numbers, boolean as booleans); absent
 * optional parameters are omitted (or take the schema's `default`). Unknown query parameters are
 * ignored. Throws ApiError with the parameter's `errorCode` (else BAD_REQUEST) and a hint that says
 * how to fix the request.
 */
export function validateRequest(doc: { params?: Endpoint['params'] }, req: Pick<Request, 'query' | 'params'>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(doc.params ?? {})) {
    const p: ParamObject & ParamDef = { name, ...def };
    const code: ErrorCode = def.errorCode ?? 'BAD_REQUEST';
    const where = `${p.in} parameter ${p.name}`;
    const schema = p.schema as ParamSchema;
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
