// Adapter between the worker and the OTLP decoders in receivers/otlp: one failure type with codes.
import type { ColumnBatch } from '../store/batch.js';
import { decodeOtlp as decodeOtlpBody, MalformedError } from '../receivers/otlp/index.js';
import type { Encoding, IngestFailureCode, Signal } from './tasks.js';

export class DecodeError extends Error {
  constructor(
    readonly code: IngestFailureCode,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

export interface Decoded {
  batches: ColumnBatch[];
  accepted: number;
  rejected: number;
  errorMessage?: string;
}

export function decodeOtlp(signal: Signal, encoding: Encoding, bytes: Uint8Array): Decoded {
  try {
    const r = decodeOtlpBody(signal, encoding, bytes);
    const batches = r.batches as ColumnBatch[];
    const out: Decoded = { batches, accepted: batches.reduce((a, b) => a + b.rows, 0), rejected: r.rejected };
    if (r.errorMessage) out.errorMessage = r.errorMessage;
    return out;
  } catch (err) {
    if (err instanceof MalformedError) {
      throw new DecodeError('MALFORMED', err.message, encoding === 'json' ? 'the body is not valid OTLP/JSON' : 'the body is not a valid OTLP protobuf message');
    }
    throw err;
  }
}
