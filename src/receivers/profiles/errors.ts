// The one error type of profile decoding. Each code is stable and machine-readable and matches a
// code of src/api/errors.ts, so the route maps it with no table of its own:
// MALFORMED, EMPTY, LEGACY_FORMAT, MISSING_SERVICE_NAME → 400; TOO_LARGE → 413.
// Every one is permanent (retrying the same bytes cannot succeed).

export type ProfileErrorCode = 'MALFORMED' | 'TOO_LARGE' | 'EMPTY' | 'LEGACY_FORMAT' | 'MISSING_SERVICE_NAME';

export class ProfileDecodeError extends Error {
  readonly code: ProfileErrorCode;
  readonly hint: string;

  constructor(code: ProfileErrorCode, message: string, hint = '') {
    super(message);
    this.name = 'ProfileDecodeError';
    this.code = code;
    this.hint = hint;
  }

  get status(): 400 | 413 {
    return this.code === 'TOO_LARGE' ? 413 : 400;
  }

  /** Plain form for crossing a worker boundary (structured clone drops an Error's own fields). */
  toJSON(): { name: 'ProfileDecodeError'; code: ProfileErrorCode; message: string; hint: string } {
    return { name: 'ProfileDecodeError', code: this.code, message: this.message, hint: this.hint };
  }

  /** Rebuilds the error from toJSON() output (e.g. on the main thread after a pool task failed). */
  static fromJSON(o: { code: ProfileErrorCode; message: string; hint?: string }): ProfileDecodeError {
    return new ProfileDecodeError(o.code, o.message, o.hint ?? '');
  }
}

export function isProfileDecodeError(e: unknown): e is ProfileDecodeError {
  return e instanceof ProfileDecodeError;
}
