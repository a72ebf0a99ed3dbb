// Overload is refused, not buffered without bound: a request is admitted only while the bytes
// received but not yet committed stay under the limit, and only while the disk has room.
//
// Disk room is refused before a write fails, not after: free space is measured every second, the
// bytes admitted since the last measurement count as already written (a body becomes at least as
// many bytes of spool CSV before it is loaded), and a commit that hit ENOSPC anyway marks the disk
// full until the next measurement. SVC_MIN_FREE_DISK_BYTES is the margin that keeps what is in flight
// (at most SVC_MAX_INFLIGHT_BYTES) and DuckDB's own writes from reaching the end of the disk.
import { statfs } from 'node:fs/promises';
import { statfsSync } from 'node:fs';
import { ApiError } from '../core/errors.js';

export interface Admission {
  /** Reserves `bytes` or throws RATE_LIMITED / STORAGE_FULL; the returned function releases them. */
  admit(bytes: number): () => void;
  /** A write failed for want of space: refuse ingest until the next measurement says otherwise. */
  diskFull(): void;
  inflightBytes(): number;
  /** Free bytes in the data directory at the last measurement (null when it cannot be measured). */
  diskFree(): number | null;
  stop(): void;
}

/** The one STORAGE_FULL answer of the instance's disk (the tenant's stored-bytes limit has its own). */
export function storageFullError(message: string): ApiError {
  return ApiError.refusal('STORAGE_FULL', message, 'free disk space in the data directory (or lower SVC_RETENTION_HOURS); ingest resumes by itself once there is room', 60);
}

function measure(s: { bavail: number | bigint; bsize: number | bigint }): number {
  return Number(s.bavail) * Number(s.bsize);
}

export function createAdmission(opts: { maxInflightBytes: number; dataDir: string; minFreeDiskBytes: number; diskCheckMs?: number }): Admission {
  let inflight = 0;
  let free: number | null = null;
  let sinceMeasured = 0; // bytes admitted since `free` was measured
  let full = false; // a write ran out of space since the last measurement
  try {
    free = measure(statfsSync(opts.dataDir)); // the first answer already knows the disk
  } catch {
    free = null;
  }
  const check = async () => {
    const counted = sinceMeasured;
    try {
      free = measure(await statfs(opts.dataDir));
      sinceMeasured -= counted; // what was admitted while statfs ran still counts
      full = false;
    } catch {
      free = null;
    }
  };
  const refusal = (bytes: number): ApiError | null => {
    if (full) return storageFullError('the data directory ran out of space');
    if (free !== null && free - sinceMeasured < opts.minFreeDiskBytes) {
      return storageFullError(`only ${Math.max(0, free - sinceMeasured)} bytes free in the data directory, below SVC_MIN_FREE_DISK_BYTES (${opts.minFreeDiskBytes})`);
    }
    // A single request larger than the whole budget is still admitted when nothing else is in flight.
    if (inflight > 0 && inflight + bytes > opts.maxInflightBytes) {
      return ApiError.refusal('RATE_LIMITED', `ingest is busy: ${inflight} bytes waiting to be committed`, 'retry after the delay in Retry-After', 1);
    }
    return null;
  };
  const timer = setInterval(() => void check(), opts.diskCheckMs ?? 1000);
  timer.unref();
  return {
    admit(bytes) {
      const refusedWith = refusal(bytes);
      if (refusedWith) throw refusedWith;
      const n = Math.max(bytes, 1);
      inflight += n;
      sinceMeasured += n;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        inflight -= n;
      };
    },
    diskFull() {
      full = true;
    },
    inflightBytes: () => inflight,
    diskFree: () => free,
    stop: () => clearInterval(timer),
  };
}
