// Column batches → the CSV parts the store's writer loads (one part per table).
import type { ColumnBatch } from '../store/batch.js';
import { serviceSpans, touchedBuckets, type ServiceSpans } from '../store/batch.js';
import { encodeCsv } from '../store/csv.js';
import { tableByName } from '../store/schema.js';
import type { EncodedPart } from '../store/writer.js';

export function encodeBatches(batches: readonly ColumnBatch[]): { parts: EncodedPart[]; services: ServiceSpans; buckets: number[] } {
  const parts: EncodedPart[] = [];
  for (const b of batches) {
    if (!b.rows) continue;
    const table = tableByName(b.table);
    const part: EncodedPart = { table: b.table, rows: b.rows, csv: encodeCsv(table, b) };
    // A table with a primary key holds the latest row per key (log templates as counts move).
    if (table.primaryKey) part.upsert = true;
    parts.push(part);
  }
  return { parts, services: serviceSpans(batches), buckets: touchedBuckets(batches) };
}
