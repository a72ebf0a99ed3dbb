// The one error body of the product: {"error": {"code", "message", "hint"}}. Every code is stable and
// machine-readable; the HTTP status is decided here, once, from the code.

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

/** Any thrown value as an ApiError; unknown failures become INTERNAL without leaking a stack. */
export function toApiError(err: unknown, fallback: ErrorCode = 'INTERNAL'): ApiError {
  if (err instanceof ApiError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ApiError(fallback, message);
}
