// The typed client of the service's HTTP API, shared by the CLI and the MCP tools. One method per
// endpoint, typed by the route's own request and response types (type imports only: no server code
// loads with the client). The client sends what the caller gave; the server applies its defaults.
import type { AnomaliesQuery, AnomaliesResponse } from '../api/routes/anomalies.js';
import type { AlertsQuery, AlertsResponse } from '../api/routes/alerts.js';
import type { DiagnoseBody, DiagnoseResponse } from '../api/routes/diagnose.js';
import type { HealthResponse } from '../api/routes/health.js';
import type { QueryResponse } from '../api/routes/query.js';
import type { ServicesResponse } from '../api/routes/services.js';
import type { TraceResponse } from '../api/routes/traces.js';
import type { CreateTenantBody, IssuedKeyResponse, RevokeKeyResponse, StatusResponse, TenantResponse } from '../api/routes/admin.js';
import type { MoveTenantBody, MoveTenantResponse } from '../api/routes/placement.js';
import { HOUR_US } from '../core/time.js';
import { request, type ErrorBody, type FetchFn, type HttpOutcome } from './http.js';

export interface ApiRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: { contentType: string; text: string };
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

const jsonBody = (value: unknown) => ({ contentType: 'application/json', text: JSON.stringify(value) });

export interface ApiClient {
  services(): Promise<Outcome<ServicesResponse>>;
  anomalies(q: AnomaliesQuery): Promise<Outcome<AnomaliesResponse>>;
  diagnose(body: DiagnoseBody): Promise<Outcome<DiagnoseResponse>>;
  query(sql: string): Promise<Outcome<QueryResponse>>;
  trace(traceId: string): Promise<Outcome<TraceResponse>>;
  alerts(q: AlertsQuery): Promise<Outcome<AlertsResponse>>;
  health(opts?: { timeoutMs?: number }): Promise<Outcome<HealthResponse>>;
  status(): Promise<Outcome<StatusResponse>>;
  createTenant(body: CreateTenantBody): Promise<Outcome<TenantResponse>>;
  deactivateTenant(id: string): Promise<Outcome<TenantResponse>>;
  issueKey(tenant: string): Promise<Outcome<IssuedKeyResponse>>;
  revokeKey(shortToken: string): Promise<Outcome<RevokeKeyResponse>>;
  moveTenant(id: string, to?: string): Promise<Outcome<MoveTenantResponse>>;
}

/** The endpoints over `call`; answers are as the service sent them (typed, not re-checked). */
export function apiClient(call: ApiCall): ApiClient {
  const send = <T>(r: ApiRequest) => call(r) as Promise<Outcome<T>>;
  const seg = encodeURIComponent;
  return {
    services: () => send({ method: 'GET', path: '/v1/services' }),
    anomalies: (q) => send({ method: 'GET', path: '/v1/anomalies', query: { service: q.service, from_ts: q.from_ts, to_ts: q.to_ts } }),
    diagnose: (body) => send({ method: 'POST', path: '/v1/diagnose', body: jsonBody(body) }),
    query: (sql) => send({ method: 'POST', path: '/v1/query', body: { contentType: 'text/plain; charset=utf-8', text: sql } }),
    trace: (traceId) => send({ method: 'GET', path: `/v1/traces/${seg(traceId)}` }),
    alerts: (q) => send({ method: 'GET', path: '/v1/alerts', query: { status: q.status } }),
    health: (opts = {}) => send({ method: 'GET', path: '/healthz', ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }) }),
    status: () => send({ method: 'GET', path: '/admin/status' }),
    createTenant: (body) => send({ method: 'POST', path: '/admin/tenants', body: jsonBody(body) }),
    deactivateTenant: (id) => send({ method: 'POST', path: `/admin/tenants/${seg(id)}/deactivate` }),
    issueKey: (tenant) => send({ method: 'POST', path: `/admin/tenants/${seg(tenant)}/keys` }),
    revokeKey: (shortToken) => send({ method: 'DELETE', path: `/admin/keys/${seg(shortToken)}` }),
    moveTenant: (id, to) => send({ method: 'POST', path: `/admin/tenants/${seg(id)}/move`, body: jsonBody(to === undefined ? {} : ({ to } satisfies MoveTenantBody)) }),
  };
}

export type { ErrorBody, FetchFn, HttpOutcome };
