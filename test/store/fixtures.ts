import { serviceSpans, type CellValue, type ColumnBatch } from '../../src/store/batch.js';
import { encodeCsv } from '../../src/store/csv.js';
import { METRICS_HISTOGRAM, SPANS, tableByName, type Table } from '../../src/store/schema.js';

/** A batch of `table` from row objects; a column a row leaves out is null. */
export function batchOf(table: Table, rows: readonly Record<string, CellValue>[]): ColumnBatch {
  const columns: Record<string, CellValue[]> = {};
  for (const c of table.columns) columns[c.name] = rows.map((r) => r[c.name] ?? null);
  return { table: table.name, rows: rows.length, columns };
}

function spanDefaults(i: number): Record<string, CellValue> {
  return {
    timestamp: 1_700_000_000_000_000 + i * 1000,
    service_name: 'checkout',
    trace_id: i.toString(16).padStart(32, '0'),
    span_id: i.toString(16).padStart(16, '0'),
    span_name: 'GET /cart',
    operation: 'GET /cart',
    status_code: 0,
    duration_us: 1000 + i,
    is_error: false,
  };
}

/** A span batch of n rows; `over` changes any column of row i. */
export function spanBatch(n: number, over: (i: number) => Record<string, CellValue> = () => ({})): ColumnBatch {
  return batchOf(SPANS, Array.from({ length: n }, (_v, i) => ({ ...spanDefaults(i), ...over(i) })));
}

const hist: Record<string, CellValue[]> = {};
for (const c of METRICS_HISTOGRAM.columns) hist[c.name] = [null];
Object.assign(hist, {
  timestamp: [1_700_000_000_000_000],
  service_name: ['checkout'],
  metric_name: ['http.server.duration'],
  metric_type: ['histogram'],
  count: [21],
  sum: [NaN],
  min: [0.1],
  bucket_counts: [[1, 2, 18446744073709551615n]],
  explicit_bounds: [[0.5, 1]],
});
export const HISTOGRAM_FIXTURE: ColumnBatch = { table: METRICS_HISTOGRAM.name, rows: 1, columns: hist };

/** A writer submission of `batch`: its CSV and the services it saw. */
export function submitOf(batch: ColumnBatch) {
  return { parts: [{ table: batch.table, rows: batch.rows, csv: Buffer.from(encodeCsv(tableByName(batch.table), batch)) }], services: serviceSpans([batch]) };
}
