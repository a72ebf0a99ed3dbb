// Adapter between the worker and the OTLP decoders in receivers/otlp: counts what was accepted.
// Undecodable bodies throw the decoders' DecodeError (receivers/decode-error.ts), handled by the task.
import type { ColumnBatch } from '../store/batch.js';
import { decodeOtlp as decodeOtlpBody } from '../receivers/otlp/index.js';
import type { Encoding, Signal } from './tasks.js';


export interface Decoded {
  batches: ColumnBatch[];
  accepted: number;
  rejected: number;
  errorMessage?: string;
}

export function decodeOtlp(signal: Signal, encoding: Encoding, bytes: Uint8Array): Decoded {
  const r = decodeOtlpBody(signal, encoding, bytes);
  const batches = r.batches as ColumnBatch[];
  const out: Decoded = { batches, accepted: batches.reduce((a, b) => a + b.rows, 0), rejected: r.rejected };
  if (r.errorMessage) out.errorMessage = r.errorMessage;
  return out;
}
