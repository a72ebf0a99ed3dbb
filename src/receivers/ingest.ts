// One ingest step shared by every receiver: admit, decode in the pool, commit, report counts.
import type { Pool } from '../compute/pool.js';
import { storageFullError, type Admission } from './admission.js';
import type { LatencyAdmission, Waiting } from './latency-admission.js';
import type { RefusalPace } from './refusal-pace.js';
import type { Gate } from '../tenancy/gate.js';
import type { TenantRuntime } from '../tenancy/runtime.js';
import type { IngestFailure, IngestResult, IngestSuccess, OtlpTask } from '../pipeline/tasks.js';
import type { ProfileTask } from '../pipeline/profile-task.js';
import { ApiError, isDiskFull } from '../core/errors.js';

/** What every receiver shares; the tenant's own parts (writer, miner) come with each call. */
export interface IngestContext {
  pool: Pool;
  /** One thread: log mining needs a single miner per tenant (it numbers the templates). */
  logPool: Pool;
  /** The instance's budget: bytes in flight and free disk. */
  admission: Admission;
  /** The instance's bound on the wait for an acknowledgement. */
  latency: LatencyAdmission;
  /** The pace at which refusals are answered (refusal-pace.ts). */
  pace: RefusalPace;
  gate: Gate;
  maxBodyBytes: number;
  /** Told after each committed ingest (status: a tenant's last ingest). */
  ingested(tenant: string): void;
}

/** Ingest admitted: told when its body has arrived (the acknowledgement-wait estimate counts processing from then), and released once answered. */
export interface Admitted {
  arrived(): void;
  release(): void;
}

/**
 * Admits `bytes` of ingest for `tenant`: its own limits first (507, 429), then the instance's
 * (admitInstance).
 */
export function admitIngest(ctx: IngestContext, tenant: string | null, bytes: number): Admitted {
  if (tenant === null) throw new Error('ingest reached admission without a tenant');
  ctx.gate.admitIngest(tenant, bytes);
  return admitInstance(ctx, bytes);
}

/** Admits `bytes` of ingest on the instance: disk (507), bytes in flight (429), then the estimated wait for the acknowledgement (429). */
export function admitInstance(ctx: IngestContext, bytes: number): Admitted {
  const releaseBytes = ctx.admission.admit(bytes);
  let waited: Waiting;
  try {
    waited = ctx.latency.admit(bytes);
  } catch (err) {
    releaseBytes();
    throw err;
  }
  return {
    arrived: () => waited.arrived(),
    release() {
      waited.answered();
      releaseBytes();
    },
  };
}

/** Decodes and commits into the tenant's store; resolves after the rows are durable. Throws ApiError on failure. */
export async function ingest(ctx: IngestContext, rt: TenantRuntime, task: Omit<OtlpTask, 'maxBytes'> | Omit<ProfileTask, 'maxBytes'>): Promise<IngestSuccess> {
  const writer = rt.writer;
  // The writer waits for rows on their way rather than commit fewer than a row group (store/writer.ts).
  const arrived = writer.expect();
  let committed: Promise<void> | null = null;
  let result: IngestResult;
  try {
    try {
      const pool = task.kind === 'otlp' && task.signal === 'logs' ? ctx.logPool : ctx.pool;
      const b = task.body;
      const transferList = ownsBuffer(b) ? [b.buffer as ArrayBuffer] : undefined;
      result = (await pool.run({ ...task, maxBytes: ctx.maxBodyBytes, tenant: rt.tenant }, transferList ? { transferList } : {})) as IngestResult;
    } catch (err) {
      throw new ApiError('INGEST_FAILED', `decode worker failed: ${(err as Error).message}`, 'retry later', 1);
    }
    if (!result.ok) throw failureToApiError(result);
    if (result.parts.length) committed = writer.submit({ parts: result.parts, services: result.services, buckets: result.buckets });
  } finally {
    arrived(); // after submit, which queues synchronously, so a commit this starts includes these rows
  }
  try {
    await committed;
  } catch (err) {
    // The miner counts these templates as stored: have it write them again with the next batch.
    if (result.ok && result.templates?.length) await ctx.logPool.run({ kind: 'logs-unsent', tenant: rt.tenant, templates: result.templates }).catch(() => {});
    // Out of space despite the margin (a burst, DuckDB's own writes): the rows were not committed;
    // refuse more until the disk is measured again, and say so (507), not 500.
    if (isDiskFull(err)) {
      ctx.admission.diskFull();
      throw storageFullError(`the data directory ran out of space: ${(err as Error).message}`);
    }
    throw new ApiError('INGEST_FAILED', `commit failed: ${(err as Error).message}`, 'retry later', 1);
  }
  ctx.ingested(rt.tenant);
  return result;
}

/**
 * Whether a body may move to the worker instead of being copied: it spans its whole ArrayBuffer but
 * for at most a gRPC frame header (grpc-js hands the message as a view past its 5-byte prefix).
 * Moving also frees the bytes on the event loop's thread at once: the gRPC messages left behind
 * cause a large share of its full garbage collections under OTLP/gRPC load. A pooled
 * Buffer never qualifies: the pool's 8 KiB slabs serve only allocations under 4 KiB.
 */
export function ownsBuffer(b: Uint8Array): boolean {
  return b.buffer instanceof ArrayBuffer && b.byteLength > 4096 && b.byteOffset <= 5 && b.byteOffset + b.byteLength === b.buffer.byteLength;
}

/** A worker's failure as the API's error: decode codes are permanent, INTERNAL is retryable. */
function failureToApiError(f: IngestFailure): ApiError {
  switch (f.code) {
    case 'TOO_LARGE':
      return new ApiError('TOO_LARGE', f.message, f.hint ?? 'send smaller batches');
    case 'INTERNAL':
      return new ApiError('INGEST_FAILED', f.message, f.hint ?? 'retry later');
    default:
      return new ApiError(f.code, f.message, f.hint ?? 'the payload could not be decoded; it is not retryable as it is');
  }
}
