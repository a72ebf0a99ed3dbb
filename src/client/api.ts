// The typed client of the service's HTTP API, shared by the CLI and the MCP tools: one method per
// entry of the route table (api/endpoints.ts), named by its operationId, sending its method and path
// with the caller's parameters and body, typed by the entry's schemas. No server code loads with the
// client. The client sends what the caller gave; the server applies its defaults and checks.
import { API, type Api } from '../api/endpoints.js';
import type { AnswerOf, Endpoint, InputOf } from '../api/endpoint.js';
import { HOUR_US } from '../core/time.js';
import { request, type ErrorBody, type FetchFn, type HttpOutcome } from './http.js';

export interface ApiRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: { contentType: string; text: string | Uint8Array };
  /** This call's time limit instead of the transport's. */
  timeoutMs?: number;
}

/** One call of the service's HTTP API: over the network, or loopback from /mcp. */
export type ApiCall = (req: ApiRequest) => Promise<HttpOutcome>;

/** An endpoint's answer: its typed 200 body, or the error body. */
export type Outcome<T> = { ok: true; status: number; body: T } | { ok: false; status: number | null; body: ErrorBody };

export interface ApiTarget {
  baseUrl: string;
  apiKey?: string | undefined;
  timeoutMs: number;
  fetchFn?: FetchFn | undefined;
  /** A 404 is the endpoint's own answer (an unknown trace), not a sign the endpoint is missing. */
  keep404?: boolean;
}

/** The HTTP transport to `target`. */
export function httpTransport(target: ApiTarget): ApiCall {
  return (r) =>
    request({
      baseUrl: target.baseUrl,
      apiKey: target.apiKey,
      timeoutMs: r.timeoutMs ?? target.timeoutMs,
      fetchFn: target.fetchFn,
      method: r.method,
      path: r.path,
      query: r.query,
      body: r.body,
      keep404: target.keep404,
    });
}

/**
 * The window of GET /v1/anomalies, whose bounds the spec requires: to_ts defaults to now, from_ts to
 * an hour before to_ts (before now when to_ts is not a number; the service then refuses it).
 */
export function anomalyWindow<T>(from: T | undefined, to: T | undefined, nowUs: number): { from_ts: T | number; to_ts: T | number } {
  const to_ts = to ?? nowUs;
  return { from_ts: from ?? (typeof to_ts === 'number' ? to_ts : nowUs) - HOUR_US, to_ts };
}

/** This call's options beside its input. */
export interface CallOptions {
  /** This call's time limit instead of the transport's. */
  timeoutMs?: number;
}

/** A method of the client: its input is optional when every field of it is. */
type Method<E> = {} extends InputOf<E>
  ? (input?: InputOf<E>, opts?: CallOptions) => Promise<Outcome<AnswerOf<E>>>
  : (input: InputOf<E>, opts?: CallOptions) => Promise<Outcome<AnswerOf<E>>>;

/** One method per operation of the route table. */
export type ApiClient = { [K in keyof Api]: Method<Api[K]> };

/** The request of one call: the path's parameters filled in, the query's set, the body as its first media type. */
export function requestOf(e: Endpoint, input: Record<string, unknown> = {}, opts: CallOptions = {}): ApiRequest {
  const params = Object.entries(e.params ?? {});
  const path = e.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(input[name])));
  const out: ApiRequest = { method: e.method, path };
  const query = params.filter(([, p]) => p.in === 'query');
  if (query.length) out.query = Object.fromEntries(query.map(([name]) => [name, input[name] as string | number | boolean | undefined]));
  const body = input['body'];
  if (e.body && body !== undefined) {
    const type = Object.keys(e.body.content)[0]!;
    if (type === 'application/json') out.body = { contentType: type, text: JSON.stringify(body) };
    else if (body instanceof Uint8Array) out.body = { contentType: type, text: body };
    else out.body = { contentType: `${type}; charset=utf-8`, text: String(body) };
  }
  if (opts.timeoutMs !== undefined) out.timeoutMs = opts.timeoutMs;
  return out;
}

/** The endpoints over `call`; answers are as the service sent them (typed, not re-checked). */
export function apiClient(call: ApiCall): ApiClient {
  const methods = Object.values(API).map((e: Endpoint) => [e.operationId, (input?: Record<string, unknown>, opts?: CallOptions) => call(requestOf(e, input, opts))]);
  return Object.fromEntries(methods) as ApiClient;
}

export type { ErrorBody, FetchFn, HttpOutcome };
