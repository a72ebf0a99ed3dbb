// OTLP/HTTP on :4318: POST /v1/traces, /v1/logs, /v1/metrics, protobuf or JSON, optionally gzip.
// Answers in the request's encoding: an Export…ServiceResponse (with partial_success when records
// were rejected) on success, a google.rpc.Status on failure (OTLP specification, "OTLP/HTTP").
import { ApiError, GRPC, otlpHttpStatus, grpcCode, toApiError } from '../core/errors.js';
import type { Encoding, Signal } from '../pipeline/tasks.js';
import { admitIngest, ingest, type IngestContext } from './ingest.js';
import { encodeExportResponse, encodeStatus, exportResponseJson, statusJson } from './otlp-responses.js';
import { tenantOf, type Reply, type Request, type RouteSpec } from '../api/route.js';
import { errorReply } from '../api/http.js';

const SIGNALS: readonly Signal[] = ['traces', 'logs', 'metrics'];

export function contentEncoding(req: Pick<Request, 'headers'>): Encoding | null {
  const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (ct === 'application/x-protobuf' || ct === 'application/protobuf') return 'protobuf';
  if (ct === 'application/json') return 'json';
  return null;
}

export function isGzip(req: Request): boolean {
  const ce = (req.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (ce === '' || ce === 'identity') return false;
  if (ce === 'gzip' || ce === 'x-gzip') return true;
  throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${ce} is not supported`, 'send gzip or an uncompressed body');
}

/**
 * An error as OTLP/HTTP answers it: a google.rpc.Status encoded like the request (JSON for a media type
 * it does not take), the hint after the message, Retry-After when there is one. Also for refusals
 * before the body is read (admission, size), so an exporter decodes them as it decodes the others.
 */
export function otlpErrorReply(err: unknown, encoding: Encoding): Reply {
  const e = toApiError(err);
  const headers: Record<string, string> = e.retryAfter !== undefined ? { 'retry-after': String(e.retryAfter) } : {};
  const message = e.hint ? `${e.message} (${e.hint})` : e.message;
  const code = grpcCode(e);
  return reply(otlpHttpStatus(e), encoding, encoding === 'json' ? statusJson(code, message) : encodeStatus(code, message), headers);
}

function reply(status: number, encoding: Encoding, body: Uint8Array | string, extra: Record<string, string> = {}): Reply {
  const contentType = encoding === 'json' ? 'application/json' : 'application/x-protobuf';
  return { status, headers: { 'content-type': contentType, ...extra }, body };
}

export function otlpHttpRoutes(ctx: IngestContext): RouteSpec[] {
  return [...SIGNALS, 'profiles' as const].map((signal) => ({
    method: 'POST',
    path: signal === 'profiles' ? '/v1development/profiles' : `/v1/${signal}`,
    maxBody: ctx.maxBodyBytes,
    access: 'tenant' as const,
    admit: (n: number, tenant: string | null) => admitIngest(ctx, tenant, n),
    holdRefusal: ctx.pace.hold,
    // A refused key keeps the API's error body on every port (a decision of the hosted variant, tested in test/tenancy).
    errorReply: (err: unknown, headers: Record<string, string> = {}) => (toApiError(err).status === 401 ? errorReply(err) : otlpErrorReply(err, contentEncoding({ headers }) ?? 'json')),
    async handler(req: Request): Promise<Reply> {
      const encoding = contentEncoding(req);
      if (!encoding) {
        const ct = req.headers['content-type'] ?? '(none)';
        const err = new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Type ${ct} is not supported`, 'use application/x-protobuf or application/json');
        return reply(415, 'json', statusJson(GRPC.INVALID_ARGUMENT, err.message));
      }
      try {
        const gzip = isGzip(req);
        if (signal === 'profiles' && encoding === 'json') {
          throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'OTLP/JSON profiles are not accepted', 'send profiles as application/x-protobuf');
        }
        const result =
          signal === 'profiles'
            ? await ingest(ctx, tenantOf(req), { kind: 'profile', source: 'otlp', body: req.body, contentType: 'application/x-protobuf', query: {} })
            : await ingest(ctx, tenantOf(req), { kind: 'otlp', signal, encoding, gzip, body: req.body });
        const body = encoding === 'json' ? exportResponseJson(signal, result.rejected, result.errorMessage) : encodeExportResponse(signal, result.rejected, result.errorMessage);
        return reply(200, encoding, body);
      } catch (err) {
        return otlpErrorReply(err, encoding);
      }
    },
  }));
}
