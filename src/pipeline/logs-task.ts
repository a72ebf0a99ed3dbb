// Log ingest with template mining, run in the single-thread logs pool: one miner instance per tenant
// owns that tenant's template ids (a counter), so every log batch of a tenant must reach the same
// one, and no template (id, text or count) is ever shared between tenants. Decode → mine per service
// (WASM) → fill template_id/template_params → CSV, plus the touched svc_log_templates rows, which
// the writer upserts in the same commit as the logs.
import { createMiner, type LogMiner, type StoredTemplateRow, type TemplateRow } from './logminer/index.js';
import type { ColumnBatch } from '../store/batch.js';
import { LOG_TEMPLATES, LOGS } from '../store/schema.js';
import { failure, runOtlp } from './otlp-task.js';
import type { IngestResult, OtlpTask } from './tasks.js';
import { encodeBatches } from './encode.js';
import type { EncodedPart } from '../store/writer.js';

export interface LogsInitTask {
  kind: 'logs-init';
  tenant: string;
  rows: StoredTemplateRow[];
}

/** By tenant: created when its store opens (logs-init), dropped when it closes (logs-flush). */
const miners = new Map<string, LogMiner>();

/**
 * How often a template whose counts merely moved is rewritten in svc_log_templates. Each rewrite is
 * a row of an INSERT OR REPLACE that cost DuckDB as much as the log rows themselves when every batch
 * rewrote every template it touched; the counts in the table lag by at most this much (exact counts:
 * `count(*)` over svc_logs by template_id).
 */
export const COUNTS_EVERY_MS = 5_000;

/** When a tenant's store closes: its template rows still pending (counts held back by COUNTS_EVERY_MS); its miner is dropped. */
export interface LogsFlushTask {
  kind: 'logs-flush';
  tenant: string;
}

export function runLogsFlush(task: LogsFlushTask): EncodedPart[] {
  const rows = miners.get(task.tenant)?.drainDirty(0) ?? [];
  miners.delete(task.tenant);
  return rows.length ? encodeBatches([templatesBatch(rows)]).parts : [];
}

export function runLogsInit(task: LogsInitTask): number {
  const miner = createMiner();
  miner.restore(task.rows);
  miners.set(task.tenant, miner);
  return miner.nextTemplateId();
}

function templatesBatch(rows: readonly TemplateRow[]): ColumnBatch {
  const columns: ColumnBatch['columns'] = {};
  for (const c of LOG_TEMPLATES.columns) {
    columns[c.name] = rows.map((r) => (c.name === 'timestamp' ? r.first_seen : ((r as unknown as Record<string, unknown>)[c.name] ?? null)) as never);
  }
  return { table: LOG_TEMPLATES.name, rows: rows.length, columns };
}

/** Mines the svc_logs batch in place (template_id, template_params); returns the template rows to upsert. */
export function mineLogs(m: LogMiner, batch: ColumnBatch): TemplateRow[] {
  const c = batch.columns;
  const services = c['service_name']!;
  const ids = c['template_id']!;
  const params = c['template_params']!;
  const evicted: TemplateRow[] = [];
  const mine = (service: string, bodies: readonly (string | null)[], timestamps: readonly unknown[], sevTexts: readonly unknown[], sevNumbers: readonly unknown[]) =>
    m.mineBatch(service, bodies.every((b) => b != null) ? (bodies as readonly string[]) : bodies.map((b) => b ?? ''), {
      timestampsUs: timestamps as readonly number[],
      severityTexts: sevTexts as readonly (string | null)[],
      // a missing number (null) counts as 0, below the error levels, as the miner reads it
      severityNumbers: sevNumbers as readonly number[],
      withParamsJson: true,
    });
  // A request usually holds one service's lines: its columns go to the miner as they are.
  const first = services[0] as string;
  let one = batch.rows > 0; // (no lines: no service to mine for)
  for (let i = 1; i < batch.rows && one; i++) one = services[i] === first;
  if (one) {
    const r = mine(first, c['body']! as (string | null)[], c['timestamp']!, c['severity_text']!, c['severity_number']!);
    evicted.push(...r.evicted);
    for (let i = 0; i < batch.rows; i++) {
      ids[i] = r.templateIds[i]!;
      params[i] = r.paramsJson![i]!;
    }
  } else {
    const byService = new Map<string, number[]>();
    for (let i = 0; i < batch.rows; i++) {
      const s = services[i] as string;
      let l = byService.get(s);
      if (!l) byService.set(s, (l = []));
      l.push(i);
    }
    for (const [service, idx] of byService) {
      const pick = (col: string) => idx.map((i) => c[col]![i]);
      const r = mine(service, pick('body') as (string | null)[], pick('timestamp'), pick('severity_text'), pick('severity_number'));
      evicted.push(...r.evicted);
      idx.forEach((row, j) => {
        ids[row] = r.templateIds[j]!;
        params[row] = r.paramsJson![j]!;
      });
    }
  }
  // Created and changed templates at once, evicted ones marked so, counts of busy ones every few seconds.
  const touched = new Map<number, TemplateRow>();
  for (const t of m.drainDirty(COUNTS_EVERY_MS)) touched.set(t.template_id, t);
  for (const t of evicted) touched.set(t.template_id, t);
  return [...touched.values()];
}

export function runLogs(task: OtlpTask): IngestResult {
  const m = miners.get(task.tenant ?? 'default');
  if (!m) return failure(new Error('the log miner of this tenant was not initialised'));
  const templates: TemplateRow[] = [];
  const result = runOtlp(task, (batches) => {
    for (const b of batches) if (b.table === LOGS.name) templates.push(...mineLogs(m, b));
    // Template rows are upserted (latest counts win) in the same commit as the logs.
    return templates.length ? [...batches, templatesBatch(templates)] : batches;
  });
  return result.ok && templates.length ? { ...result, templates: templates.map((t) => t.template_id) } : result;
}

/** A restore (store/snapshot.ts) is about to store templates up to id `above`, `count` of them renumbered: see LogMiner.reserveIds. */
export interface LogsReserveTask {
  kind: 'logs-reserve';
  tenant: string;
  above: number;
  count: number;
}

export function runLogsReserve(task: LogsReserveTask): number {
  const m = miners.get(task.tenant);
  if (!m) throw new Error('the log miner of this tenant was not initialised');
  return m.reserveIds(task.above, task.count);
}

/**
 * A restore stored these templates: the miner takes on those it does not know, so later lines of
 * the same events get the same ids. Templates it knows keep their live counts. Returns how many it took on.
 */
export interface LogsAdoptTask {
  kind: 'logs-adopt';
  tenant: string;
  rows: StoredTemplateRow[];
}

export function runLogsAdopt(task: LogsAdoptTask): number {
  const m = miners.get(task.tenant);
  if (!m) throw new Error('the log miner of this tenant was not initialised');
  const fresh = task.rows.filter((r) => !r.evicted && m.template(Number(r.template_id)) === undefined);
  m.restore(fresh);
  return fresh.length;
}

/** A logs commit failed: its template rows were not stored (logs-task.ts runLogs's `templates`). */
export interface LogsUnsentTask {
  kind: 'logs-unsent';
  tenant: string;
  templates: number[];
}

export function runLogsUnsent(task: LogsUnsentTask): number {
  miners.get(task.tenant)?.unsent(task.templates);
  return task.templates.length;
}
