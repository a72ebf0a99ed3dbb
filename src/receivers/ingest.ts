// One ingest step shared by every receiver: admit, decode in the pool, commit, report counts.
import type { Pool } from '../compute/pool.js';
import type { Writer } from '../store/writer.js';
import type { Admission } from './admission.js';
import { failureToApiError } from './outcome.js';
import type { IngestResult, IngestSuccess, OtlpTask } from '../pipeline/tasks.js';
import type { ProfileTask } from '../pipeline/profile-task.js';
import { ApiError } from '../api/errors.js';

export interface IngestContext {
  pool: Pool;
  /** One thread: log mining needs a single miner (it numbers the templates). */
  logPool: Pool;
  writer: Writer;
  admission: Admission;
  maxBodyBytes: number;
}

/** Decodes and commits; resolves after the rows are durable. Throws ApiError on failure. */
export async function ingest(ctx: IngestContext, task: Omit<OtlpTask, 'maxBytes'> | Omit<ProfileTask, 'maxBytes'>): Promise<IngestSuccess> {
  let result: IngestResult;
  try {
    const pool = task.kind === 'otlp' && task.signal === 'logs' ? ctx.logPool : ctx.pool;
    // A body that owns its whole ArrayBuffer moves to the worker instead of being copied.
    const b = task.body;
    const transferList = b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer ? [b.buffer] : undefined;
    result = (await pool.run({ ...task, maxBytes: ctx.maxBodyBytes }, transferList ? { transferList } : {})) as IngestResult;
  } catch (err) {
    throw new ApiError('INGEST_FAILED', `decode worker failed: ${(err as Error).message}`, 'retry later', 1);
  }
  if (!result.ok) throw failureToApiError(result);
  if (result.parts.length) {
    try {
      await ctx.writer.submit({ parts: result.parts, services: result.services, buckets: result.buckets });
    } catch (err) {
      throw new ApiError('INGEST_FAILED', `commit failed: ${(err as Error).message}`, 'retry later', 1);
    }
  }
  return result;
}
