// Forwarding: a request for a tenant owned by another instance (tenancy/placement.ts) is passed to
// that owner and its answer returned unchanged (status, headers, body), so a client may reach any
// instance. The request body is streamed to the owner as it arrives (what the owner has not read yet
// waits in memory, bounded by the route's body limit); the key stays in `Authorization`. The hop is signed with the cluster secret
// (HMAC of sender, tenant, time, method and path in `x-tds-forwarded`): the owner serves a signed
// request for that tenant without forwarding it again, and refuses a forged one (403). Each forward
// is bounded by SVC_FORWARD_TIMEOUT_MS; an owner that cannot be reached or answers too late gives
// 503 with Retry-After.
//
// OTLP/gRPC calls are unary, so the message is whole when it arrives: it is sent to the owner's
// OTLP/HTTP endpoint as the same protobuf bytes (an OTLP/HTTP protobuf body is the Export request
// message) and the answer translated back (an ExportResponse as is; a google.rpc.Status into the
// call's status). One transport between instances, one place for signing, timeouts and counting, and
// no gRPC address to advertise.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { ApiError, ERROR_STATUS, type ErrorCode } from '../core/errors.js';
import type { Location } from './placement.js';
import type { Reply, UwsResponse } from '../core/http.js';

export const FORWARD_HEADER = 'x-tds-forwarded';
/** How far a signed request's time may be from the receiver's clock. */
const MAX_SKEW_MS = 60_000;

/** Hop-by-hop headers (RFC 9110 §7.6.1) and those the sender sets itself; the rest pass unchanged. */
const REQUEST_DROP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'upgrade', 'proxy-connection', 'host', 'expect', FORWARD_HEADER]);
/** uWS writes its own Content-Length, Date and server header on every answer. */
const RESPONSE_DROP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date', 'uwebsockets']);

function mac(secret: string, fields: string[]): string {
  return createHmac('sha256', secret).update(fields.join('\n')).digest('base64url');
}

/** The `x-tds-forwarded` value for a request from `from` for `tenant`. */
export function signForward(secret: string, from: string, tenant: string, method: string, path: string, nowMs = Date.now()): string {
  const ts = String(nowMs);
  return [from, tenant, ts].map(encodeURIComponent).join(' ') + ' ' + mac(secret, [from, tenant, ts, method.toUpperCase(), path]);
}

/** The tenant of a correctly signed, recent forwarded request; null when it is forged, altered or stale. */
export function verifyForward(secret: string, header: string, method: string, path: string, nowMs = Date.now()): string | null {
  const parts = header.trim().split(' ');
  if (parts.length !== 4) return null;
  let from: string, tenant: string, ts: string;
  try {
    [from, tenant, ts] = parts.slice(0, 3).map(decodeURIComponent) as [string, string, string];
  } catch {
    return null;
  }
  if (!/^\d{1,15}$/.test(ts) || Math.abs(nowMs - Number(ts)) > MAX_SKEW_MS) return null;
  const want = Buffer.from(mac(secret, [from, tenant, ts, method.toUpperCase(), path]));
  const got = Buffer.from(parts[3]!);
  return got.length === want.length && timingSafeEqual(got, want) ? tenant : null;
}

/** A failed gRPC call as the owner answered it (its google.rpc.Status). */
export class ForwardedGrpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly retryAfter?: string,
  ) {
    super(message);
  }
}

/** code (field 1) and message (field 2) of a google.rpc.Status; null when the bytes are not one. */
export function decodeRpcStatus(b: Uint8Array): { code: number; message: string } | null {
  let i = 0;
  let code = 0;
  let message = '';
  const varint = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      if (i >= b.length || shift > 35) throw new Error('truncated');
      const x = b[i++]!;
      v += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) return v;
      shift += 7;
    }
  };
  try {
    while (i < b.length) {
      const tag = varint();
      const wire = tag & 7;
      if (wire === 0) {
        const v = varint();
        if (tag >> 3 === 1) code = v;
      } else if (wire === 2) {
        const n = varint();
        if (i + n > b.length) return null;
        if (tag >> 3 === 2) message = Buffer.from(b.subarray(i, i + n)).toString('utf8');
        i += n;
      } else return null;
    }
  } catch {
    return null;
  }
  return { code, message };
}

export interface ForwardStats {
  forwarded: number;
  received: number;
  /** Forwards that got no answer from the owner, by reason. */
  errors: Record<string, number>;
}

export interface Forwarder {
  /** Checks `x-tds-forwarded`; the tenant it names, or throws 403 (counted by the caller's gate). */
  verify(header: string, method: string, path: string): string;
  /**
   * Takes over a uWS request whose tenant is not surely local: streams its body to the owner and
   * replies with the owner's answer; calls `local` with the whole body when it turns out to be
   * served here. Must be called before the uWS handler returns (it registers onData).
   */
  relay(
    res: UwsResponse,
    rq: { method: string; path: string; query: string; headers: Record<string, string>; tenant: string; listener: 'api' | 'otlpHttp' },
    where: Location | Promise<Location>,
    k: { limit: number; local(body: Buffer): void; reply(r: Reply): void },
  ): void;
  /** One whole request to the owner (gRPC translated to OTLP/HTTP; admin moves, unsigned: `tenant` null); resolves with its answer. */
  send(url: string, method: string, headers: Record<string, string>, body: Buffer, tenant: string | null): Promise<{ status: number; headers: Record<string, string>; body: Buffer }>;
  /** An OTLP/gRPC export for a remote owner: the ExportResponse bytes, or throws ApiError / ForwardedGrpcError. */
  grpcExport(loc: Extract<Location, { kind: 'remote' }>, httpPath: string, authorization: string | undefined, body: Buffer, tenant: string): Promise<Buffer>;
  stats(): ForwardStats;
}

export function unavailableError(loc: Extract<Location, { kind: 'unavailable' }>): ApiError {
  return new ApiError('NOT_READY', `this tenant is not available right now: ${loc.reason}`, 'retry after the delay in Retry-After', loc.retryAfterS);
}

function errorReplyOf(e: ApiError): Reply {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (e.retryAfter !== undefined) headers['retry-after'] = String(e.retryAfter);
  return { status: e.status, headers, body: JSON.stringify(e.toBody()) };
}

export function createForwarder(opts: { secret: string; instanceId: () => string; timeoutMs: number; retryAfterS: number }): Forwarder {
  const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }), https: new https.Agent({ keepAlive: true, maxSockets: 64 }) };
  const counts: ForwardStats = { forwarded: 0, received: 0, errors: {} };
  const failure = (reason: string, message: string): ApiError => {
    counts.errors[reason] = (counts.errors[reason] ?? 0) + 1;
    return new ApiError('NOT_READY', message, 'retry after the delay in Retry-After', opts.retryAfterS);
  };

  /** Opens the request to the owner; `done` gets its whole answer or the failure as an ApiError. */
  const open = (url: URL, method: string, inHeaders: Record<string, string>, tenant: string | null, done: (r: { status: number; headers: Record<string, string>; body: Buffer } | ApiError) => void): http.ClientRequest => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(inHeaders)) if (!REQUEST_DROP.has(k)) headers[k] = v;
    if (tenant !== null) headers[FORWARD_HEADER] = signForward(opts.secret, opts.instanceId(), tenant, method, url.pathname);
    const mod = url.protocol === 'https:' ? https : http;
    let settled = false;
    const settle = (r: Parameters<typeof done>[0]) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done(r);
    };
    counts.forwarded++;
    const req = mod.request(url, { method, headers, agent: url.protocol === 'https:' ? agents.https : agents.http });
    const timer = setTimeout(() => {
      settle(failure('timeout', `the owner of this tenant did not answer within ${opts.timeoutMs} ms`));
      req.destroy();
    }, opts.timeoutMs);
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined && !RESPONSE_DROP.has(k)) out[k] = Array.isArray(v) ? v.join(', ') : v;
        settle({ status: res.statusCode ?? 502, headers: out, body: Buffer.concat(parts) });
      });
      res.on('error', (err) => settle(failure('broken', `the owner's answer broke off: ${err.message}`)));
    });
    req.on('error', (err) => settle(failure('unreachable', `the owner of this tenant is not reachable (${(err as NodeJS.ErrnoException).code ?? err.message})`)));
    return req;
  };

  const send: Forwarder['send'] = (url, method, headers, body, tenant) =>
    new Promise((resolve, reject) => {
      const req = open(new URL(url), method, { ...headers, 'content-length': String(body.length) }, tenant, (r) => (r instanceof ApiError ? reject(r) : resolve(r)));
      req.end(body);
    });

  return {
    verify(header, method, path) {
      const tenant = verifyForward(opts.secret, header, method, path);
      if (tenant === null) throw new ApiError('FORBIDDEN', 'the forwarded request is not signed by an instance of this cluster', 'only instances sharing SVC_CLUSTER_SECRET may send x-tds-forwarded');
      counts.received++;
      return tenant;
    },
    relay(res, rq, where, k) {
      let done = false;
      const reply = (r: Reply) => {
        if (done) return;
        done = true;
        k.reply(r);
      };
      const chunks: Buffer[] = [];
      let size = 0;
      let ended = false;
      let mode: 'pending' | 'local' | 'remote' = 'pending';
      let upstream: http.ClientRequest | null = null;
      const tooLarge = () => {
        upstream?.destroy();
        reply(errorReplyOf(new ApiError('TOO_LARGE', `body exceeds the limit of ${k.limit} bytes`, 'send smaller batches')));
      };
      res.onData((ab, isLast) => {
        if (done) return;
        const chunk = Buffer.from(new Uint8Array(ab)); // a copy: uWS reuses `ab` after this callback
        size += chunk.length;
        if (size > k.limit) return tooLarge();
        // No backpressure on the client: uWS's pause() stalled the body for good (its resume() did not
        // bring the data back), so what the owner has not read yet waits in the socket's buffer,
        // bounded by the route's body limit.
        if (mode === 'remote') upstream!.write(chunk);
        else chunks.push(chunk);
        if (!isLast) return;
        ended = true;
        if (mode === 'remote') upstream!.end();
        else if (mode === 'local') k.local(Buffer.concat(chunks));
      });
      Promise.resolve(where).then(
        (loc) => {
          if (done) return;
          if (loc.kind === 'unavailable') return reply(errorReplyOf(unavailableError(loc)));
          if (loc.kind === 'local') {
            mode = 'local';
            if (ended) k.local(Buffer.concat(chunks));
            return;
          }
          mode = 'remote';
          const base = rq.listener === 'api' ? loc.apiUrl : loc.otlpHttpUrl;
          const url = new URL(base + rq.path + (rq.query ? `?${rq.query}` : ''));
          upstream = open(url, rq.method, rq.headers, rq.tenant, (r) => {
            if (r instanceof ApiError) return reply(errorReplyOf(r));
            reply({ status: r.status, headers: r.headers, body: r.body });
          });
          for (const c of chunks.splice(0)) upstream.write(c);
          if (ended) upstream.end();
        },
        (err) => reply(errorReplyOf(err instanceof ApiError ? err : new ApiError('INTERNAL', String(err)))),
      );
    },
    send,
    async grpcExport(loc, httpPath, authorization, body, tenant) {
      const headers: Record<string, string> = { 'content-type': 'application/x-protobuf' };
      if (authorization !== undefined) headers['authorization'] = authorization;
      const r = await send(loc.otlpHttpUrl + httpPath, 'POST', headers, body, tenant);
      if (r.status === 200) return r.body;
      // Refusals before the OTLP handler (401, 403, 413) come as the JSON error body; OTLP failures as a Status.
      if ((r.headers['content-type'] ?? '').startsWith('application/json')) {
        try {
          const e = (JSON.parse(r.body.toString('utf8')) as { error?: { code?: string; message?: string; hint?: string } }).error;
          if (e?.code && e.code in ERROR_STATUS) {
            const retry = r.headers['retry-after'];
            throw new ApiError(e.code as ErrorCode, e.message ?? '', e.hint ?? '', retry !== undefined ? Number(retry) : undefined);
          }
        } catch (err) {
          if (err instanceof ApiError) throw err;
        }
      }
      const status = decodeRpcStatus(r.body);
      throw new ForwardedGrpcError(status?.code ?? 13, status?.message ?? `the owner answered HTTP ${r.status}`, r.headers['retry-after']);
    },
    stats: () => ({ ...counts, errors: { ...counts.errors } }),
  };
}
