// What decoders hand to the store: rows of one table as columns, in the table's column order.
// Timestamps are integer microseconds; lists are JS arrays; absent values are null.

import { BUCKET_US } from '../core/time.js';

export type CellValue = string | number | bigint | boolean | null | readonly unknown[];

export interface ColumnBatch {
  table: string;
  rows: number;
  columns: Record<string, CellValue[]>;
}

/** Per service, the earliest and latest timestamp (µs) in a batch; feeds GET /v1/services. */
export type ServiceSpans = Record<string, [first: number, last: number]>;

/**
 * An empty ServiceSpans. Without a prototype: service names come from clients, and one named
 * `__proto__`, `constructor` or `toString` must be a service like any other, not a lookup that finds
 * Object.prototype's member (which lost such services and made diagnose answer 500).
 */
export function emptyServiceSpans(): ServiceSpans {
  return Object.create(null) as ServiceSpans;
}

/** Widens service `s`'s [first, last] to include [a, b]. */
function widen(out: ServiceSpans, s: string, a: number, b: number): void {
  const cur = out[s];
  if (!cur) out[s] = [a, b];
  else {
    if (a < cur[0]) cur[0] = a;
    if (b > cur[1]) cur[1] = b;
  }
}

export function serviceSpans(batches: readonly ColumnBatch[]): ServiceSpans {
  const out = emptyServiceSpans();
  for (const b of batches) {
    const svc = b.columns['service_name'];
    const ts = b.columns['timestamp'];
    if (!svc || !ts) continue;
    for (let i = 0; i < b.rows; i++) widen(out, svc[i] as string, ts[i] as number, ts[i] as number);
  }
  return out;
}

export function mergeServiceSpans(into: ServiceSpans, from: ServiceSpans): ServiceSpans {
  for (const [s, [a, b]] of Object.entries(from)) widen(into, s, a, b);
  return into;
}

/** Tables whose rows feed detection signals; a commit to them marks its buckets for the next pass. */
export const SIGNAL_TABLES: ReadonlySet<string> = new Set(['svc_spans', 'svc_logs', 'svc_profiles']);

/** Distinct 5-minute bucket indexes touched by the batches that feed detection. */
export function touchedBuckets(batches: readonly ColumnBatch[]): number[] {
  const out = new Set<number>();
  for (const b of batches) {
    if (!SIGNAL_TABLES.has(b.table)) continue;
    const ts = b.columns['timestamp'];
    if (!ts) continue;
    let last = NaN;
    for (let i = 0; i < b.rows; i++) {
      const k = Math.floor((ts[i] as number) / BUCKET_US);
      if (k !== last) out.add((last = k));
    }
  }
  return [...out];
}
