// The OTLP decode task: gunzip within a hard output cap, decode, normalise, encode CSV for the
// store. Runs in a pool thread (compute/worker.ts) so none of this CPU work touches the event loop.
import { gunzipSync } from 'node:zlib';
import { decodeOtlp, DecodeError } from './decode.js';
import type { IngestFailure, IngestResult, OtlpTask } from './tasks.js';
import type { ColumnBatch } from '../store/batch.js';
import { encodeBatches } from './encode.js';

export function gunzipCapped(body: Uint8Array, maxBytes: number): Buffer {
  try {
    return gunzipSync(body, { maxOutputLength: maxBytes });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      throw new DecodeError('TOO_LARGE', `decompressed body exceeds the limit of ${maxBytes} bytes`, 'send smaller batches');
    }
    throw new DecodeError('MALFORMED', `gzip body could not be decompressed: ${(err as Error).message}`, 'check Content-Encoding: gzip matches the body');
  }
}

/** Decodes an OTLP body (gunzipped within the limit); `prepare` may amend the batches (log mining). */
export function runOtlp(task: OtlpTask, prepare?: (batches: ColumnBatch[]) => ColumnBatch[]): IngestResult {
  try {
    const bytes = task.gzip ? gunzipCapped(task.body, task.maxBytes) : task.body;
    if (bytes.byteLength > task.maxBytes) {
      throw new DecodeError('TOO_LARGE', `body exceeds the limit of ${task.maxBytes} bytes`, 'send smaller batches');
    }
    const decoded = decodeOtlp(task.signal, task.encoding, bytes);
    const { parts, services, buckets } = encodeBatches(prepare ? prepare(decoded.batches) : decoded.batches);
    const out: IngestResult = { ok: true, parts, services, buckets, accepted: decoded.accepted, rejected: decoded.rejected };
    if (decoded.errorMessage) out.errorMessage = decoded.errorMessage;
    return out;
  } catch (err) {
    return failure(err);
  }
}

/** A thrown error as a task failure: decode errors keep their code, anything else is INTERNAL. */
export function failure(err: unknown): IngestFailure {
  if (err instanceof DecodeError) return { ok: false, code: err.code, message: err.message, ...(err.hint ? { hint: err.hint } : {}) };
  return { ok: false, code: 'INTERNAL', message: (err as Error).message ?? String(err) };
}
