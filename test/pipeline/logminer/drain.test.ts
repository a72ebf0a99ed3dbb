// Which template rows ingest writes back to svc_log_templates, and when.
import { describe, expect, it } from 'vitest';
import { createMiner } from '../../../src/pipeline/logminer/index.js';
import { mineLogs } from '../../../src/pipeline/logs-task.js';
import { LOG_TEMPLATES, LOGS } from '../../../src/store/schema.js';
import type { ColumnBatch } from '../../../src/store/batch.js';
import { batchOf } from '../../store/fixtures.js';

describe('drainDirty', () => {
  it('new templates come at once; count-only changes at most every interval, with the summed counts', () => {
    const m = createMiner();
    const t0 = 1_000_000;
    m.mineBatch('svc', ['user 1 logged in', 'user 2 logged in']);
    const first = m.drainDirty(5_000, t0);
    expect(first.map((r) => [r.pattern, r.count])).toEqual([['user <*> logged in', 2]]);
    // Values already sampled: counts alone move. (A new value would change the samples: at once.)
    m.mineBatch('svc', ['user 1 logged in']);
    expect(m.drainDirty(5_000, t0 + 1_000)).toEqual([]); // within the interval: pending
    m.mineBatch('svc', ['user 2 logged in']);
    expect(m.drainDirty(5_000, t0 + 5_000).map((r) => r.count)).toEqual([4]);
    expect(m.drainDirty(5_000, t0 + 20_000)).toEqual([]); // nothing touched since
  });

  it('a template whose row was not committed (unsent) comes again at once, within the interval', () => {
    const m = createMiner();
    m.mineBatch('svc', ['cache warmed']);
    const [row] = m.drainDirty(5_000, 0);
    m.mineBatch('svc', ['cache warmed']);
    expect(m.drainDirty(5_000, 1)).toEqual([]); // counts only: would wait for the interval
    m.unsent([row!.template_id, 999]); // the commit failed; an unknown id is ignored
    expect(m.drainDirty(5_000, 2).map((r) => [r.template_id, r.count])).toEqual([[row!.template_id, 2]]);
    expect(m.drainDirty(5_000, 3)).toEqual([]);
  });

  it('a template with a new sample value comes at once, within the interval', () => {
    const m = createMiner();
    m.mineBatch('svc', ['user 1 logged in']);
    expect(m.drainDirty(5_000, 0)).toHaveLength(1);
    m.mineBatch('svc', ['user 7 logged in']);
    expect(m.drainDirty(5_000, 1).map((r) => JSON.parse(r.sample_values!))).toEqual([{ user: ['1', '7'] }]);
  });

  it('a template whose pattern changed comes at once, within the interval', () => {
    const m = createMiner();
    m.mineBatch('svc', ['disk nvme0n1 full']);
    expect(m.drainDirty(5_000, 0)).toHaveLength(1);
    m.mineBatch('svc', ['disk nvme1n1 full']); // same shape, a new value (not a plain word): the pattern generalises
    const rows = m.drainDirty(5_000, 1);
    expect(rows.map((r) => [r.pattern, r.count])).toEqual([['disk <*> full', 2]]);
  });
});

function logBatch(service: string, bodies: string[]): ColumnBatch {
  return batchOf(LOGS, bodies.map((body, i) => ({ service_name: service, body, timestamp: 1_700_000_000_000_000 + i })));
}

describe('mineLogs', () => {
  it('fills template_id and template_params alike whether a batch holds one service or several; an empty batch mines nothing', () => {
    const a = ['took 12 ms for user 7', 'took 30 ms for user 8', 'no values here'];
    const b = ['queue depth 4 of 10', 'queue depth 9 of 10'];
    const one = createMiner();
    const sa = logBatch('a', a);
    const sb = logBatch('b', b);
    mineLogs(one, sa);
    mineLogs(one, sb);
    const mixed = createMiner();
    const rows = [...a.map((body, i) => ({ service_name: 'a', body, timestamp: 1_700_000_000_000_000 + i })), ...b.map((body, i) => ({ service_name: 'b', body, timestamp: 1_700_000_000_000_000 + i }))];
    const order = [0, 3, 1, 4, 2];
    const mb = batchOf(LOGS, order.map((k) => rows[k]!));
    mineLogs(mixed, mb);
    const col = (x: ColumnBatch, name: string) => x.columns[name]!;
    const want = [...col(sa, 'template_params'), ...col(sb, 'template_params')];
    expect(order.map((_k, j) => col(mb, 'template_params')[j])).toEqual(order.map((k) => want[k]));
    expect(col(sa, 'template_params')).toEqual(['["12","7"]', '["30","8"]', null]);
    expect(col(mb, 'template_id')[0]).toBe(col(mb, 'template_id')[2]);
    expect(col(mb, 'template_id')[0]).not.toBe(col(mb, 'template_id')[1]);
    const empty = createMiner();
    expect(mineLogs(empty, logBatch('c', []))).toEqual([]);
    expect(empty.liveCount('c')).toBe(0);
  });

  it('returns evicted templates marked evicted, so the table records the eviction', () => {
    const m = createMiner({ maxTemplatesPerService: 2 });
    mineLogs(m, logBatch('svc', ['alpha one', 'beta two three']));
    const rows = mineLogs(m, logBatch('svc', ['gamma four five six']));
    const evicted = rows.filter((r) => r.evicted);
    expect(evicted).toHaveLength(1);
    expect(evicted[0]!.pattern).toBe('alpha one');
    expect(rows.some((r) => !r.evicted && r.pattern === 'gamma four five six')).toBe(true);
  });

  it('returns a merged template as retired with merged_into, and the survivor with both counts', () => {
    const m = createMiner();
    const rows = mineLogs(m, logBatch('svc', [
      'fetch "curl/7.1" user j.doe ok',
      'fetch "wget/1.2" user r.roe ok',
      'fetch "curl/7.2" user r.roe ok',
      'fetch "wget/1.3" user j.doe ok',
      'fetch "httpie/3.0" user j.doe ok',
    ]));
    const merged = rows.filter((r) => r.merged_into !== null);
    expect(merged.map((r) => r.evicted)).toEqual([true]);
    const survivor = rows.find((r) => r.template_id === merged[0]!.merged_into)!;
    expect(survivor).toMatchObject({ evicted: false, count: 5, pattern: 'fetch "<*>/<*>" user <*> ok' });
    // the row's fields are the table's columns (logs-task writes them by name), merged_into included
    expect(LOG_TEMPLATES.columns.map((c) => c.name).sort()).toEqual(Object.keys(survivor).concat('timestamp').sort());
  });
});
