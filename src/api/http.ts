// A small request/response layer over uWebSockets.js: read the whole body within a limit, run an
// async handler, write one answer. uWS gives the request object only synchronously and the body as
// ArrayBuffers valid only inside the callback, so everything is copied out before any await.
import { createRequire } from 'node:module';
import { ApiError, errorBody, toApiError } from '../core/errors.js';
import { validateRequest } from './validate.js';
import type { AnswerOf, Endpoint } from './endpoint.js';
import type { Gate } from '../tenancy/gate.js';
import { routeAccess, type Reply, type Request, type RouteSpec } from './route.js';
import type { UwsResponse } from '../core/http.js';

export type { UwsResponse };
import { FORWARD_HEADER } from '../tenancy/forward.js';
import type { Location } from '../tenancy/placement.js';

const require = createRequire(import.meta.url);

interface UwsRequest {
  getMethod(): string;
  getUrl(): string;
  getQuery(): string | undefined;
  forEach(cb: (k: string, v: string) => void): void;
}
export interface UwsApp {
  any(pattern: string, handler: (res: UwsResponse, req: UwsRequest) => void): UwsApp;
  listen(host: string, port: number, cb: (token: unknown) => void): UwsApp;
}
interface UwsModule {
  App(): UwsApp;
  us_listen_socket_close(token: unknown): void;
  us_socket_local_port(token: unknown): number;
}

/** Loads the native uWebSockets.js addon, refusing the package's silent pure-JS fallback. */
export function loadUws(): UwsModule {
  const warn = console.warn;
  const warnings: string[] = [];
  console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));
  let mod: UwsModule;
  try {
    mod = require('@trufflesuite/uws-js-unofficial') as UwsModule;
  } finally {
    console.warn = warn;
  }
  const fallback = Object.keys(require.cache).some((k) => k.includes('uws-js-unofficial') && k.includes(`dist${'/'}index.js`));
  if (fallback || typeof mod.us_socket_local_port !== 'function') {
    throw new Error(
      `uWebSockets.js native addon did not load for Node ${process.version} (ABI ${process.versions.modules}); ` +
        `refusing the slow pure-JS fallback. Use Node 20 (the package ships ABIs 93/108/115). ${warnings.join(' ').trim()}`,
    );
  }
  return mod;
}

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 202: '202 Accepted', 400: '400 Bad Request', 401: '401 Unauthorized', 403: '403 Forbidden', 404: '404 Not Found', 405: '405 Method Not Allowed',
  406: '406 Not Acceptable', 409: '409 Conflict', 413: '413 Payload Too Large', 415: '415 Unsupported Media Type', 429: '429 Too Many Requests', 500: '500 Internal Server Error', 501: '501 Not Implemented',
  503: '503 Service Unavailable', 507: '507 Insufficient Storage',
};

export function json(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(value) };
}

/** The 200 answer of a route of the table, typed by its entry. */
export function ok<E extends Endpoint>(_endpoint: E, value: AnswerOf<E>, headers: Record<string, string> = {}): Reply {
  return json(200, value, headers);
}

export function errorReply(err: unknown): Reply {
  const e = toApiError(err);
  const headers: Record<string, string> = {};
  if (e.retryAfter !== undefined) headers['retry-after'] = String(e.retryAfter);
  if (e.status === 401) headers['www-authenticate'] = 'Bearer';
  return json(e.status, e.toBody(), headers);
}

interface Compiled {
  spec: RouteSpec;
  segments: string[];
}

function match(c: Compiled, parts: string[]): Record<string, string> | null {
  if (c.segments.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const s = c.segments[i]!;
    if (s.startsWith('{')) params[s.slice(1, -1)] = decodeURIComponent(parts[i]!);
    else if (s !== parts[i]) return null;
  }
  return params;
}

const LOCAL_HERE: Location = { kind: 'local' };
const isHere = (w: Location | Promise<Location>): boolean => !(w instanceof Promise) && w.kind === 'local';

export interface Server {
  /** Requests started and not yet answered. */
  inflight(): number;
}

/**
 * Mounts the routes on a uWS app; unknown paths get 404 and known paths with another method 405.
 * Every route goes through the gate: the caller is decided before the body is read, and a tenant
 * route's handler runs inside the gate's `use` of that tenant.
 */
export function mountRoutes(app: UwsApp, routes: readonly RouteSpec[], gate: Gate, listener: 'api' | 'otlpHttp' = 'api'): Server {
  const compiled: Compiled[] = routes.map((spec) => ({ spec, segments: spec.path.split('/').slice(1) }));
  let inflight = 0;
  app.any('/*', (res, req) => {
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const query = new URLSearchParams(rawQuery);
    const headers: Record<string, string> = {};
    req.forEach((k, v) => (headers[k] = v));
    let aborted = false;
    let admitted: { arrived(): void; release(): void } | void = undefined;
    let bodyArrived = false;
    res.onAborted(() => {
      aborted = true;
      if (!bodyArrived) admitted?.release(); // the sender went away mid-body: nothing will answer it
    });
    inflight++;
    // A 429 given before a declared body was read closes the connection after it: reading the body
    // only to drop it is what a refused sender's retry costs the server otherwise, and under a flood
    // those uploads were the load that admitted bodies queued behind (bench/README.md,
    // bench:overload). The sender's next request opens a new connection. A client still sending
    // may see the reset rather than the 429, which it retries the same way; other answers (413, 507,
    // 401...) are not retried by exporters, so their bodies are still read and dropped and the answer
    // always reaches the client.
    let bodyRead = !(Number(headers['content-length'] ?? 0) > 0 || headers['transfer-encoding'] !== undefined);
    const finish = (reply: Reply) => {
      inflight--;
      if (aborted) return;
      res.cork(() => {
        res.writeStatus(STATUS_TEXT[reply.status] ?? String(reply.status));
        for (const [k, v] of Object.entries(reply.headers ?? {})) res.writeHeader(k, v);
        res.end(reply.body, !bodyRead && reply.status === 429);
      });
    };
    const parts = path.split('/').slice(1);
    let found: Compiled | undefined;
    let params: Record<string, string> | null = null;
    let pathKnown = false;
    try {
      for (const c of compiled) {
        const p = match(c, parts);
        if (!p) continue;
        pathKnown = true;
        if (c.spec.method === method) {
          found = c;
          params = p;
          break;
        }
      }
    } catch {
      return finish(errorReply(new ApiError('BAD_REQUEST', 'malformed percent-encoding in the path')));
    }
    if (!found || !params) {
      const err = pathKnown
        ? new ApiError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}`, `allowed: ${compiled.filter((c) => match(c, parts)).map((c) => c.spec.method).join(', ')}`)
        : new ApiError('NOT_FOUND', `no route for ${method} ${path}`, 'see /openapi.json for the routes this server has');
      return finish(errorReply(err));
    }
    const spec = found.spec;
    const failed = (err: unknown) => finish(spec.errorReply ? spec.errorReply(err, headers) : errorReply(err));
    const limit = spec.maxBody ?? 1024 * 1024;
    const declared = Number(headers['content-length'] ?? 0);
    let tenant: string | null;
    // Several instances: a tenant's request is served where its store is (tenancy/placement.ts).
    const forwardedBy = headers[FORWARD_HEADER];
    let where: Location | Promise<Location> = LOCAL_HERE;
    try {
      tenant = gate.admit(routeAccess(spec), headers['authorization'], forwardedBy === undefined ? undefined : { header: forwardedBy, method, path });
      if (declared > limit) throw new ApiError('TOO_LARGE', `body of ${declared} bytes exceeds the limit of ${limit} bytes`, 'send smaller batches');
      if (tenant !== null) where = gate.place(tenant, forwardedBy !== undefined);
      if (isHere(where)) admitted = spec.admit?.(declared, tenant);
    } catch (err) {
      // A 429 of ingest admission waits its turn (receivers/refusal-pace.ts), the body unread meanwhile.
      if (spec.holdRefusal && !bodyRead && toApiError(err).code === 'RATE_LIMITED') {
        res.pause();
        return spec.holdRefusal(() => failed(err));
      }
      return failed(err);
    }
    const routeParams = params;
    const serve = (body: Buffer) => {
      bodyArrived = true;
      admitted?.arrived();
      const request: Request = { method, path, query, headers, params: routeParams, body };
      Promise.resolve()
        .then(() => {
          if (spec.doc?.params) request.valid = validateRequest(spec.doc, request);
          if (tenant === null) return spec.handler(request);
          return gate.use(tenant, (rt) => {
            request.tenant = rt;
            return spec.handler(request);
          });
        })
        .then(finish, failed)
        .finally(() => admitted?.release());
    };
    if (!isHere(where)) {
      bodyRead = true; // the forwarder reads the body itself (tenancy/forward.ts), answered before or after it
      const owner = tenant!;
      gate.forwarder!.relay(res, { method, path, query: rawQuery, headers, tenant: owner, listener }, where, {
        limit,
        local(body) {
          try {
            admitted = spec.admit?.(body.length, owner);
          } catch (err) {
            return failed(err);
          }
          serve(body);
        },
        reply: finish,
      });
      return;
    }
    // The body is copied once, into one ArrayBuffer owned by it alone (never the shared Buffer pool,
    // so it can be transferred to a worker): of the declared length when there is one, else grown.
    // (Copying each chunk, then joining them, copied and allocated every body twice.)
    let body = Buffer.from(new ArrayBuffer(declared > 0 ? declared : 0));
    let size = 0;
    let tooLarge = false;
    res.onData((ab, isLast) => {
      if (!tooLarge) {
        if (size + ab.byteLength > limit) tooLarge = true;
        else {
          if (size + ab.byteLength > body.length) {
            const grown = Buffer.from(new ArrayBuffer(Math.min(limit, Math.max(size + ab.byteLength, 2 * body.length))));
            body.copy(grown, 0, 0, size);
            body = grown;
          }
          body.set(new Uint8Array(ab), size);
          size += ab.byteLength;
        }
      }
      if (!isLast) return;
      bodyRead = true;
      if (tooLarge) {
        bodyArrived = true;
        admitted?.release();
        return failed(new ApiError('TOO_LARGE', `body exceeds the limit of ${limit} bytes`, 'send smaller batches'));
      }
      // Shorter than declared (or grown past its end): only the bytes received, still owning their buffer.
      if (size !== body.length) body = Buffer.from(body.buffer.slice(0, size));
      serve(body);
    });
  });
  return { inflight: () => inflight };
}

export { errorBody };
