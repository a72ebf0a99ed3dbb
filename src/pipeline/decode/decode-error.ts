// The one failure type of every ingest decoder (OTLP, pprof, Pyroscope push, OTLP profiles); its codes
// are members of the one list in core/errors.ts, all permanent (the same bytes cannot succeed on retry). And the one capped gunzip every body goes through: a gzip bomb stops at
// the cap, it is never inflated in full.
import { gunzipSync } from 'node:zlib';

import type { DecodeErrorCode } from '../../core/errors.js';

export type { DecodeErrorCode };

export class DecodeError extends Error {
  constructor(
    readonly code: DecodeErrorCode,
    message: string,
    readonly hint = '',
  ) {
    super(message);
    this.name = 'DecodeError';
  }
}

/** gunzip with a hard cap on the output; TOO_LARGE past `maxBytes`, MALFORMED for bad gzip. */
export function gunzipCapped(body: Uint8Array, maxBytes: number, what = 'body'): Uint8Array {
  try {
    const out = gunzipSync(body, { maxOutputLength: maxBytes });
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      throw new DecodeError('TOO_LARGE', `${what} exceeds ${maxBytes} bytes after decompression`, 'send smaller batches or raise SVC_MAX_BODY_BYTES');
    }
    throw new DecodeError('MALFORMED', `invalid gzip data: ${(err as Error).message}`, 'send the body gzip-compressed (and say so) or uncompressed');
  }
}
