// What one entry of the route table (endpoints.ts) says about an operation: where it is served, who
// may call it, its parameters, body and answers as schema values. The types here read the entry's
// TypeScript types off those values: the handler's typed parameters, the client's input and answer.
import type { ErrorCode } from '../core/errors.js';
import type { Static, TSchema } from '../core/schema.js';
import type { Access } from '../tenancy/gate.js';

export type Method = 'GET' | 'POST' | 'DELETE';

/** A query or path parameter. */
export interface ParamDef<T extends TSchema = TSchema, R extends boolean = boolean> {
  in: 'query' | 'path';
  required: R;
  schema: T;
  description?: string;
  /** The error code of a bad value (default BAD_REQUEST). */
  errorCode?: ErrorCode;
}

interface ParamOptions {
  description?: string;
  errorCode?: ErrorCode;
}
export const inQuery = <T extends TSchema>(schema: T, o: ParamOptions = {}): ParamDef<T, false> => ({ in: 'query', required: false, schema, ...o });
export const inQueryRequired = <T extends TSchema>(schema: T, o: ParamOptions = {}): ParamDef<T, true> => ({ in: 'query', required: true, schema, ...o });
export const inPath = <T extends TSchema>(schema: T, o: ParamOptions = {}): ParamDef<T, true> => ({ in: 'path', required: true, schema, ...o });

/** An answer of the operation other than its 200: a description, and the schema of its body if it has one. */
export interface ResponseDef {
  description: string;
  headers?: Record<string, unknown>;
  schema?: TSchema;
  /** The body's media type; default application/json. */
  mediaType?: string;
}

export interface EndpointInput {
  method: Method;
  /** Literal segments and `{name}` path parameters, e.g. /v1/traces/{trace_id}. */
  path: string;
  summary: string;
  description?: string;
  tags: readonly string[];
  /** True when the route declares the bearer requirement in open mode's description (the spec's list). */
  auth?: boolean;
  /** Who may call it (see tenancy/gate.ts); absent = `tenant`, so a new route is never open by mistake. */
  access?: Access;
  /** Query and path parameters, in the order the description lists them. */
  params?: Record<string, ParamDef>;
  /** The request body: its schema per media type (the client sends the first). */
  body?: { required: boolean; content: Record<string, TSchema> };
  /** The 200 answer: JSON unless `mediaType` says otherwise (a snapshot's tar). */
  ok: { description: string; schema: TSchema; headers?: Record<string, unknown>; mediaType?: string };
  /** Every other documented status. */
  responses: Record<string, ResponseDef>;
}

export interface Endpoint extends EndpointInput {
  operationId: string;
}

type Params<E> = E extends { params: infer P } ? P : {};
type Req<P> = { [K in keyof P as P[K] extends ParamDef<TSchema, true> ? K : never]: P[K] extends ParamDef<infer T> ? Static<T> : never };
type Opt<P> = { [K in keyof P as P[K] extends ParamDef<TSchema, true> ? never : K]?: P[K] extends ParamDef<infer T> ? Static<T> | undefined : never };

/** The checked query and path parameters of a call, typed by their schemas. */
export type ParamsOf<E> = Req<Params<E>> & Opt<Params<E>>;

/** The body of a call: the schema of its first media type. */
export type BodyOf<E> = E extends { body: { content: infer C } } ? (C[keyof C] extends infer T extends TSchema ? Static<T> : never) : never;

/** The 200 answer of an operation. */
export type AnswerOf<E> = E extends { ok: { schema: infer T extends TSchema } } ? Static<T> : never;

/** What a client passes: the parameters by name, and `body` when the operation takes one. */
export type InputOf<E> = ParamsOf<E> & (E extends { body: { required: true } } ? { body: BodyOf<E> } : E extends { body: object } ? { body?: BodyOf<E> } : {});

/** The table's entries keyed by operationId, each carrying its operationId. */
export function routeTable<const T extends Record<string, EndpointInput>>(table: T): { [K in keyof T]: T[K] & { operationId: K & string } } {
  const out: Record<string, Endpoint> = {};
  for (const [operationId, e] of Object.entries(table)) {
    checkPathParams(operationId, e);
    out[operationId] = { operationId, ...e };
  }
  return out as { [K in keyof T]: T[K] & { operationId: K & string } };
}

/** Every `{name}` of the path is a path parameter and every path parameter is in the path. */
function checkPathParams(op: string, e: EndpointInput): void {
  const inPathTemplate = [...e.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).sort();
  const declared = Object.entries(e.params ?? {}).filter(([, p]) => p.in === 'path').map(([n]) => n).sort();
  if (inPathTemplate.join() !== declared.join()) throw new Error(`${op}: path ${e.path} has parameters [${inPathTemplate}] but declares [${declared}]`);
  if (e.params && 'body' in e.params) throw new Error(`${op}: a parameter may not be named body (the client's input uses the name)`);
}
