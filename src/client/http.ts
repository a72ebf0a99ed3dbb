// The client's transport: node's built-in fetch (undici) with a time limit, every outcome mapped to
// either a parsed JSON body or the service's error body shape {error: {code, message, hint}}.

import { errorBody, type ErrorBody } from '../core/errors.js';

export type { ErrorBody };

export type FetchFn = typeof fetch;

export interface RequestOptions {
  baseUrl: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** The request body: text, or bytes (a Parquet or tar upload). */
  body?: { contentType: string; text: string | Uint8Array };
  apiKey?: string;
  timeoutMs: number;
  fetchFn?: FetchFn;
  /** A 404 is the endpoint's own answer (an unknown trace), not a sign the endpoint is missing. */
  keep404?: boolean;
}

export type HttpOutcome =
  | { ok: true; status: number; body: unknown }
  | { ok: false; status: number | null; body: ErrorBody };

function causeCode(e: unknown): string | undefined {
  let x: unknown = e;
  for (let depth = 0; depth < 5 && x && typeof x === 'object'; depth++) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errs = (x as { errors?: unknown }).errors; // AggregateError (IPv4 + IPv6 attempts)
    if (Array.isArray(errs) && errs.length) x = errs[0];
    else x = (x as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Whether an answer's Content-Type is JSON (absent counts as JSON: the error and empty answers). */
function isJson(contentType: string | null): boolean {
  return contentType === null || /^application\/([\w.+-]*\+)?json\b/i.test(contentType);
}

export function buildUrl(baseUrl: string, path: string, query?: RequestOptions['query']): URL {
  const base = baseUrl.endsWith('/') ? baseUrl : baseUrl + '/';
  const url = new URL(path.replace(/^\//, ''), base);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

/** Normalises any server error body to {error: {code, message, hint}} (strings, always present). */
function normaliseServerError(status: number, statusText: string, text: string): ErrorBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const e = parsed && typeof parsed === 'object' ? (parsed as { error?: unknown }).error : undefined;
  if (e && typeof e === 'object') {
    const o = e as Record<string, unknown>;
    return errorBody(
      typeof o.code === 'string' ? o.code : `HTTP_${status}`,
      typeof o.message === 'string' ? o.message : statusText || `HTTP ${status}`,
      typeof o.hint === 'string' ? o.hint : '',
    );
  }
  if (typeof e === 'string') return errorBody(`HTTP_${status}`, e);
  const snippet = text.trim().slice(0, 500);
  return errorBody(`HTTP_${status}`, snippet || statusText || `HTTP ${status}`);
}

export async function request(o: RequestOptions): Promise<HttpOutcome> {
  let url: URL;
  try {
    url = buildUrl(o.baseUrl, o.path, o.query);
  } catch {
    return { ok: false, status: null, body: errorBody('USAGE', `invalid server URL ${JSON.stringify(o.baseUrl)}`, 'pass --url http://host:port or set SVC_URL') };
  }
  const headers: Record<string, string> = { accept: 'application/json' };
  if (o.apiKey) headers.authorization = `Bearer ${o.apiKey}`;
  if (o.body) headers['content-type'] = o.body.contentType;
  const fetchFn = o.fetchFn ?? fetch;
  let res: Response;
  let text: string;
  let bytes: Uint8Array | null = null;
  try {
    res = await fetchFn(url, { method: o.method, headers, body: o.body?.text as BodyInit | undefined, signal: AbortSignal.timeout(o.timeoutMs) });
    // A 200 that is not JSON (a snapshot's tar) is kept as bytes; every other answer is read as text.
    if (res.status >= 200 && res.status < 300 && !isJson(res.headers.get('content-type'))) {
      bytes = new Uint8Array(await res.arrayBuffer());
      text = '';
    } else text = await res.text();
  } catch (e) {
    const name = e instanceof Error ? e.name : '';
    if (name === 'TimeoutError' || name === 'AbortError') {
      return { ok: false, status: null, body: errorBody('TIMEOUT', `no answer from ${url.origin} within ${o.timeoutMs} ms`, 'raise --timeout-ms, or narrow the request (a shorter window, a literal timestamp bound)') };
    }
    const code = causeCode(e);
    if (code === 'ECONNREFUSED') {
      return { ok: false, status: null, body: errorBody('CONNECTION_REFUSED', `nothing is listening at ${url.origin}`, 'start the server (npm start) or point the CLI at it with --url / SVC_URL') };
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      return { ok: false, status: null, body: errorBody('HOST_NOT_FOUND', `cannot resolve ${url.hostname}`, 'check --url / SVC_URL') };
    }
    const msg = e instanceof Error ? e.message : String(e);
    const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : '';
    if (cause === 'bad port') {
      return { ok: false, status: null, body: errorBody('CONNECTION_FAILED', `port ${url.port} of ${url.origin} is blocked by fetch (a "bad port" under the Fetch standard)`, 'run the server on another port and point --url / SVC_URL at it') };
    }
    const detail = [cause, code].filter((x) => x).join(', ');
    return { ok: false, status: null, body: errorBody('CONNECTION_FAILED', `${msg}${detail ? ` (${detail})` : ''} while calling ${url.origin}`, 'check --url / SVC_URL and that the server is running') };
  }
  if (res.status >= 200 && res.status < 300) {
    if (bytes) return { ok: true, status: res.status, body: bytes };
    if (text === '') return { ok: true, status: res.status, body: {} };
    try {
      return { ok: true, status: res.status, body: JSON.parse(text) };
    } catch {
      return { ok: false, status: res.status, body: errorBody('BAD_RESPONSE', `the server answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`) };
    }
  }
  const body = normaliseServerError(res.status, res.statusText, text);
  if (res.status === 404 && !o.keep404) {
    // None of the CLI's endpoints has a meaningful 404: it means the endpoint is not served (yet).
    return {
      ok: false,
      status: 404,
      body: errorBody('NOT_AVAILABLE', `${o.method} ${url.pathname} is not available on this server (404${body.error.message ? `: ${body.error.message}` : ''})`, 'the server does not provide this endpoint yet; upgrade the server or check --url'),
    };
  }
  if (res.status === 401 && !body.error.hint) body.error.hint = o.apiKey ? 'the API key was refused; check --api-key / SVC_API_KEY' : 'pass an API key with --api-key or SVC_API_KEY';
  return { ok: false, status: res.status, body };
}
