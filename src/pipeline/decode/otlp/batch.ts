// The decoders' output: one column batch per target table, columns in src/store/schema.ts order.
import type { Table } from '../../../store/schema.js';
import type { CellValue, ColumnBatch } from '../../../store/batch.js';
import { DecodeError } from '../decode-error.js';

// Values in a batch's columns: TIMESTAMP as integer microseconds since the epoch (number);
// BIGINT/UBIGINT as number when safe, else bigint; INTEGER/DOUBLE as number; VARCHAR as string or
// null; BOOLEAN as boolean; list types as arrays (or null). Nullable columns may hold null.
export type { ColumnBatch };

/** What every OTLP decode function returns. */
export interface DecodeResult {
  /** Non-empty batches only (traces: svc_spans; logs: svc_logs; metrics: up to four metric tables). */
  batches: ColumnBatch[];
  /** Records invalid per the OTLP spec (spans, log records or data points) that were dropped: report as partial success. */
  rejected: number;
  /** Why records were rejected (the first few reasons), when rejected > 0. */
  errorMessage?: string;
}

export interface DecodeOptions {
  /** "Now" in microseconds, used for missing timestamps (tests pin it). Default: Date.now() * 1000. */
  nowUs?: number;
}

/** Thrown for payloads that cannot be decoded at all (answer 400 / INVALID_ARGUMENT). */
export class MalformedError extends DecodeError {
  constructor(message: string) {
    super('MALFORMED', message);
    this.name = 'MalformedError';
  }
}

/** Accumulates rows for one table; rows are pushed as arrays in schema column order. */
export class BatchBuilder {
  readonly cols: CellValue[][];
  rows = 0;
  readonly width: number;
  constructor(readonly table: Table) {
    this.width = table.columns.length;
    this.cols = table.columns.map(() => []);
  }
  /** Index of each column by name. */
  static indexOf(table: Table): Record<string, number> {
    const m: Record<string, number> = {};
    table.columns.forEach((c, i) => (m[c.name] = i));
    return m;
  }
  push(row: readonly unknown[]): void {
    const cols = this.cols;
    for (let i = 0; i < this.width; i++) {
      const v = row[i];
      cols[i]!.push(v === undefined ? null : (v as CellValue));
    }
    this.rows++;
  }
  finish(): ColumnBatch {
    const columns: ColumnBatch['columns'] = {};
    this.table.columns.forEach((c, i) => (columns[c.name] = this.cols[i]!));
    return { table: this.table.name, rows: this.rows, columns };
  }
}

/** Collects rejection reasons (kept short: the first few distinct ones). */
export class Rejections {
  count = 0;
  private reasons: string[] = [];
  add(reason: string, n = 1): void {
    this.count += n;
    if (this.reasons.length < 3 && !this.reasons.includes(reason)) this.reasons.push(reason);
  }
  /** The reasons, for the partial-success error_message. */
  get message(): string {
    return this.reasons.join('; ');
  }
  apply(r: DecodeResult): DecodeResult {
    if (this.count > 0) {
      r.rejected = this.count;
      r.errorMessage = this.message;
    }
    return r;
  }
}
