// The built-in alert rules over detector changes, on a real store: a worsening shift fires, a change
// back towards the earlier level resolves, a later worsening re-fires (occurrence_count 2), and an
// old shift reported again by a refed series does not re-fire a resolved alert.
import { afterEach, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/db.js';
import { alertStatements, fingerprint, type ShiftEvent } from '../../src/detect/alerts.js';
import { tempDir } from '../helpers/tmp.js';
import { BUCKET_US } from '../../src/core/time.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function apply(store: Store, shifts: ShiftEvent[]): Promise<void> {
  for (const s of await alertStatements(store.writer, shifts, Date.now() * 1000)) await store.writer.run(s);
}

async function alert(store: Store): Promise<{ status: string; occurrence_count: number; starts: number; ends: number | null }> {
  const r = await store.writer.runAndReadAll(`SELECT status, occurrence_count, epoch_us(starts_at) AS s, epoch_us(ends_at) AS e FROM svc_alerts WHERE fingerprint = '${fingerprint('shop', 'POST /pay', 'error_rate')}'`);
  const row = r.getRowObjectsJS()[0]!;
  return { status: String(row['status']), occurrence_count: Number(row['occurrence_count']), starts: Number(row['s']), ends: row['e'] === null ? null : Number(row['e']) };
}

it('fires, resolves, re-fires, and ignores old shifts of a refed series', async () => {
  const t = tempDir();
  const store = await openStore(t.dir);
  cleanups.push(t.cleanup, () => store.close());
  const b0 = Math.floor(Date.now() * 1000 / BUCKET_US) - 100;
  const shift = (bucket: number, before: number, after: number): ShiftEvent => ({ service: 'shop', operation: 'POST /pay', signal: 'error_rate', bucket, before, after });

  await apply(store, [shift(b0 + 10, 1, 20)]);
  expect(await alert(store)).toMatchObject({ status: 'firing', occurrence_count: 1, starts: (b0 + 10) * BUCKET_US, ends: null });

  await apply(store, [shift(b0 + 12, 20, 30)]); // worse again: still the same firing instance
  expect(await alert(store)).toMatchObject({ status: 'firing', occurrence_count: 1, starts: (b0 + 10) * BUCKET_US });

  await apply(store, [shift(b0 + 20, 30, 2)]); // back near the earlier level
  expect(await alert(store)).toMatchObject({ status: 'resolved', ends: (b0 + 20) * BUCKET_US });

  await apply(store, [shift(b0 + 10, 1, 20), shift(b0 + 20, 20, 2)]); // a refed series reports history again
  expect(await alert(store)).toMatchObject({ status: 'resolved', occurrence_count: 1 });

  await apply(store, [shift(b0 + 30, 2, 25)]); // a new worsening
  expect(await alert(store)).toMatchObject({ status: 'firing', occurrence_count: 2, starts: (b0 + 30) * BUCKET_US, ends: null });
});
