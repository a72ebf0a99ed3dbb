// Adapter between the worker and the OTLP decoders in receivers/otlp.
import type { ColumnBatch } from '../store/batch.js';
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
  void signal;
  void encoding;
  void bytes;
  throw new DecodeError('INTERNAL', 'OTLP decoder not wired yet');
}
