// Overload is refused, not buffered without bound: a request is admitted only while the bytes
// received but not yet committed stay under the limit, and only while the disk has room.
import { statfs } from 'node:fs/promises';
import { ApiError } from '../core/errors.js';

export interface Admission {
  /** Reserves `bytes` or throws RATE_LIMITED / STORAGE_FULL; the returned function releases them. */
  admit(bytes: number): () => void;
  inflightBytes(): number;
  diskFree(): number | null;
  stop(): void;
}

export function createAdmission(opts: { maxInflightBytes: number; dataDir: string; minFreeDiskBytes: number; diskCheckMs?: number }): Admission {
  let inflight = 0;
  let free: number | null = null;
  const check = async () => {
    try {
      const s = await statfs(opts.dataDir);
      free = Number(s.bavail) * Number(s.bsize);
    } catch {
      free = null;
    }
  };
  void check();
  const timer = setInterval(() => void check(), opts.diskCheckMs ?? 5000);
  timer.unref();
  return {
    admit(bytes) {
      if (free !== null && free < opts.minFreeDiskBytes) {
        throw new ApiError('STORAGE_FULL', `only ${free} bytes free in the data directory`, 'free disk space or lower retention; retry later', 60);
      }
      // A single request larger than the whole budget is still admitted when nothing else is in flight.
      if (inflight > 0 && inflight + bytes > opts.maxInflightBytes) {
        throw new ApiError('RATE_LIMITED', `ingest is busy: ${inflight} bytes waiting to be committed`, 'retry after the delay in Retry-After', 1);
      }
      const n = Math.max(bytes, 1);
      inflight += n;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        inflight -= n;
      };
    },
    inflightBytes: () => inflight,
    diskFree: () => free,
    stop: () => clearInterval(timer),
  };
}
