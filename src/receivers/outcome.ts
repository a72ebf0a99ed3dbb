// "Retryable or permanent" is decided once, here, and mapped to HTTP and gRPC status (as the
// OpenTelemetry Collector does): bad data is permanent (400 / INVALID_ARGUMENT); overload and
// storage trouble are retryable (429 or 503 / UNAVAILABLE, with Retry-After).
import { ApiError } from '../api/errors.js';
import type { IngestFailure } from '../pipeline/tasks.js';

export const GRPC = { OK: 0, INVALID_ARGUMENT: 3, RESOURCE_EXHAUSTED: 8, INTERNAL: 13, UNAVAILABLE: 14, UNAUTHENTICATED: 16 } as const;

export function failureToApiError(f: IngestFailure): ApiError {
  switch (f.code) {
    case 'TOO_LARGE':
      return new ApiError('TOO_LARGE', f.message, f.hint ?? 'send smaller batches');
    case 'INTERNAL':
      return new ApiError('INGEST_FAILED', f.message, f.hint ?? 'retry later');
    default:
      return new ApiError(f.code, f.message, f.hint ?? 'the payload could not be decoded; it is not retryable as it is');
  }
}

export function isRetryable(e: ApiError): boolean {
  return e.status === 429 || e.status >= 500;
}

/** HTTP status for an OTLP/HTTP answer: retryable failures are 429 or 503 per the OTLP spec. */
export function otlpHttpStatus(e: ApiError): number {
  if (e.status === 429) return 429;
  if (isRetryable(e)) return 503;
  return e.status;
}

export function grpcCode(e: ApiError): number {
  if (e.status === 401) return GRPC.UNAUTHENTICATED;
  if (e.status === 413) return GRPC.RESOURCE_EXHAUSTED;
  if (isRetryable(e)) return GRPC.UNAVAILABLE;
  return GRPC.INVALID_ARGUMENT;
}
