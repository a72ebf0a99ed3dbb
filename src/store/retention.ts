// Retention by age: rows older than SVC_RETENTION_HOURS are deleted, table by table, on the writer
// connection between commits. Runs at start and then every 10 minutes.
import type { Store } from './db.js';
import type { Writer } from './writer.js';
import { ALL_TABLES } from './schema.js';
import { HOUR_US } from '../core/time.js';
import { sqlTimestamp } from './sql.js';

export async function applyRetention(store: Store, retentionHours: number, nowUs = Date.now() * 1000): Promise<number> {
  const cutoff = sqlTimestamp(nowUs - retentionHours * HOUR_US);
  let deleted = 0;
  for (const t of ALL_TABLES) {
    if (!t.retentionColumn) continue;
    const r = await store.writer.run(`DELETE FROM ${t.name} WHERE "${t.retentionColumn}" < ${cutoff}`);
    deleted += Number(r.rowsChanged);
  }
  return deleted;
}

export function startRetention(writer: Writer, store: Store, retentionHours: number, log: (f: Record<string, unknown>) => void): { stop(): void } {
  const run = () =>
    writer
      .exclusive(() => applyRetention(store, retentionHours))
      .then((deleted) => deleted && log({ level: 'info', msg: 'retention', deleted, retention_hours: retentionHours }))
      .catch((err) => log({ level: 'error', msg: 'retention failed', error: (err as Error).message }));
  void run();
  const timer = setInterval(run, 10 * 60_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
