// The profile ingest task run in the pool: payload bytes → rows (WASM pprof decoder) → CSV parts.
import { ingestOtlpProfiles, ingestPyroscopeBody, type IngestQuery, type ProfileRow } from './decode/profiles/index.js';
import { failure } from './otlp-task.js';
import { multipartField } from './decode/multipart.js';
import type { ColumnBatch } from '../store/batch.js';
import { PROFILES } from '../store/schema.js';
import { encodeBatches } from './encode.js';
import type { IngestResult } from './tasks.js';

export interface ProfileTask {
  kind: 'profile';
  source: 'pyroscope' | 'otlp';
  body: Uint8Array;
  /** Lower-case media type; multipart/form-data carries the payload in the field `profile`. */
  contentType: string;
  query: IngestQuery;
  maxBytes: number;
}

export function rowsToBatch(rows: readonly ProfileRow[]): ColumnBatch {
  const columns: ColumnBatch['columns'] = {};
  for (const c of PROFILES.columns) columns[c.name] = rows.map((r) => ((r as unknown as Record<string, unknown>)[c.name] ?? null) as never);
  return { table: PROFILES.name, rows: rows.length, columns };
}

export function runProfile(task: ProfileTask): IngestResult {
  try {
    let body = task.body;
    if (task.contentType.startsWith('multipart/form-data')) {
      const field = multipartField(body, task.contentType, 'profile');
      if (!field) return { ok: false, code: 'MALFORMED', message: 'multipart body has no `profile` field', hint: 'send the profile in the form field named `profile`' };
      body = field;
    }
    const opts = { maxDecompressed: task.maxBytes };
    const r = task.source === 'otlp' ? ingestOtlpProfiles(body, opts) : ingestPyroscopeBody(body, task.query, opts);
    const { parts, services, buckets } = encodeBatches(r.rows.length ? [rowsToBatch(r.rows)] : []);
    return { ok: true, parts, services, buckets, accepted: r.samples, rejected: 0 };
  } catch (err) {
    return failure(err);
  }
}
