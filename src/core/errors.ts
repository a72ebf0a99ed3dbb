// The one error body of the product: {"error": {"code", "message", "hint"}}. Every code is stable and
// machine-readable; the HTTP and gRPC status and "retryable or permanent" are decided here, once, from
// the code (as the OpenTelemetry Collector does): bad data is permanent (400 / INVALID_ARGUMENT);
// overload and storage trouble are retryable (429 or 503 / UNAVAILABLE, with Retry-After).

export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  NOT_HOSTED: 400,
  INVALID_TIMESTAMP: 400,
  INVALID_WINDOW: 400,
  INVALID_TRACE_ID: 400,
  INVALID_STATUS: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  MALFORMED: 400,
  EMPTY: 400,
  MISSING_SERVICE_NAME: 400,
  LEGACY_FORMAT: 400,
  NOT_SELECT: 400,
  MULTIPLE_STATEMENTS: 400,
  CTE_NOT_ALLOWED: 400,
  FUNCTION_NOT_ALLOWED: 400,
  TABLE_NOT_ALLOWED: 400,
  SQL_TOO_LARGE: 400,
  SQL_ERROR: 400,
  SQL_NOT_ALLOWED: 400,
  INTERRUPT: 400,
  ROW_CAP: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  INGEST_FAILED: 500,
  NOT_IMPLEMENTED: 501,
  NOT_READY: 503,
  OVERLOADED: 503,
  STORAGE_FULL: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** What an ingest decoder can say of a body: permanent, the same bytes cannot succeed on retry. */
export type DecodeErrorCode = Extract<ErrorCode, 'MALFORMED' | 'TOO_LARGE' | 'EMPTY' | 'LEGACY_FORMAT' | 'MISSING_SERVICE_NAME'>;

/**
 * Codes a client (the CLI, the MCP server) reports itself when no answer of the server's exists; they
 * never come from the server, so they have no HTTP status and are not in the served description.
 */
export const CLIENT_ERROR_CODES = ['USAGE', 'TIMEOUT', 'CONNECTION_REFUSED', 'HOST_NOT_FOUND', 'CONNECTION_FAILED', 'BAD_RESPONSE', 'NOT_AVAILABLE'] as const;
export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[number];

export interface ErrorBody {
  error: { code: string; message: string; hint: string };
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly hint: string;
  /** Seconds, for 429/503 answers. */
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message: string, hint = '', retryAfter?: number) {
    super(message);
    this.code = code;
    this.hint = hint;
    if (retryAfter !== undefined) this.retryAfter = retryAfter;
  }

  /**
   * An overload refusal: an answer, not a fault, so no stack is captured. Under a flood of senders
   * that never back off one is made for every request refused, and capturing the stack was the
   * largest part of a refusal's cost on the event loop after the HTTP/2 stream's own.
   */
  static refusal(code: ErrorCode, message: string, hint: string, retryAfter: number): ApiError {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return new ApiError(code, message, hint, retryAfter);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  toBody(): ErrorBody {
    return errorBody(this.code, this.message, this.hint);
  }
}

export function errorBody(code: string, message: string, hint = ''): ErrorBody {
  return { error: { code, message, hint } };
}

/**
 * A client's value as an error message shows it: scalars as they were written (a long string cut at
 * 64 characters), arrays and objects by kind only; never serialized, as they may nest deeper than
 * JSON.stringify's recursion can go.
 */
export function shownValue(v: unknown): string {
  if (Array.isArray(v)) return 'an array';
  if (v !== null && typeof v === 'object') return 'an object';
  if (typeof v === 'string') return JSON.stringify(v.length > 64 ? v.slice(0, 64) + '…' : v);
  return String(v);
}

/** Any thrown value as an ApiError; unknown failures become INTERNAL without leaking a stack. */
export function toApiError(err: unknown, fallback: ErrorCode = 'INTERNAL'): ApiError {
  if (err instanceof ApiError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ApiError(fallback, message);
}

/** gRPC / google.rpc.Code values the receivers answer with. */
export const GRPC = { OK: 0, INVALID_ARGUMENT: 3, RESOURCE_EXHAUSTED: 8, INTERNAL: 13, UNIMPLEMENTED: 12, UNAVAILABLE: 14, UNAUTHENTICATED: 16 } as const;

/** Whether a failure is the disk being full: Node's ENOSPC or EDQUOT, or DuckDB's message for them. */
export function isDiskFull(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code === 'ENOSPC' || e?.code === 'EDQUOT') return true;
  return typeof e?.message === 'string' && /No space left on device|Disk quota exceeded|ENOSPC/i.test(e.message);
}

export function isRetryable(e: ApiError): boolean {
  return e.status === 429 || e.status >= 500;
}

/**
 * HTTP status for an OTLP/HTTP answer: retryable failures are 429 or 503 per the OTLP spec, but for a
 * full disk, which answers the spec's 507 on every ingest path (as admission does before the body is
 * read), so a commit that ran out of space says the same as a request refused for want of it.
 */
export function otlpHttpStatus(e: ApiError): number {
  if (e.status === 429 || e.code === 'STORAGE_FULL') return e.status;
  if (isRetryable(e)) return 503;
  return e.status;
}

export function grpcCode(e: ApiError): number {
  if (e.status === 401) return GRPC.UNAUTHENTICATED;
  if (e.status === 413) return GRPC.RESOURCE_EXHAUSTED;
  if (isRetryable(e)) return GRPC.UNAVAILABLE;
  return GRPC.INVALID_ARGUMENT;
}
