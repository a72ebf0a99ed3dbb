// The OTLP decode task: gunzip within a hard output cap, decode, normalise, encode CSV for the
// store. Runs in a pool thread (worker.ts) so none of this CPU work touches the event loop.
import { decodeOtlp } from './decode/otlp/index.js';
import { DecodeError, gunzipCapped } from './decode/decode-error.js';
import type { EncodedBody, IngestFailure, IngestResult, OtlpTask } from './tasks.js';
import type { ColumnBatch } from '../store/batch.js';
import { encodeBatches } from './encode.js';
import { transcodeSpans } from './decode/otlp/spans-wasm.js';


/** Decodes an OTLP body (gunzipped within the limit); `prepare` may amend the batches (log mining). */
export function runOtlp(task: OtlpTask, prepare?: (batches: ColumnBatch[]) => ColumnBatch[]): IngestResult {
  try {
    const bytes = task.gzip ? gunzipCapped(task.body, task.maxBytes) : task.body;
    if (bytes.byteLength > task.maxBytes) {
      throw new DecodeError('TOO_LARGE', `body exceeds the limit of ${task.maxBytes} bytes`, 'send smaller batches');
    }
    // Protobuf spans go straight to CSV in WASM; what it declines, and every other body, the decoders take.
    const spans = task.signal === 'traces' && task.encoding === 'protobuf' && !prepare ? transcodeSpans(bytes) : null;
    return { ok: true, ...(spans ?? decodeAndEncode(task, bytes, prepare)) };
  } catch (err) {
    return failure(err);
  }
}

function decodeAndEncode(task: OtlpTask, bytes: Uint8Array, prepare?: (batches: ColumnBatch[]) => ColumnBatch[]): EncodedBody {
  const decoded = decodeOtlp(task.signal, task.encoding, bytes);
  const { parts, services, buckets } = encodeBatches(prepare ? prepare(decoded.batches) : decoded.batches);
  return { parts, services, buckets, accepted: decoded.accepted, rejected: decoded.rejected, ...(decoded.errorMessage ? { errorMessage: decoded.errorMessage } : {}) };
}

/** A thrown error as a task failure: decode errors keep their code, anything else is INTERNAL. */
export function failure(err: unknown): IngestFailure {
  if (err instanceof DecodeError) return { ok: false, code: err.code, message: err.message, ...(err.hint ? { hint: err.hint } : {}) }; // OTLP and profile decoders alike
  return { ok: false, code: 'INTERNAL', message: (err as Error).message ?? String(err) };
}
