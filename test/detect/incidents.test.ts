// One grouping of worsening shifts into incidents, shared by GET /v1/anomalies and the diagnosis.
import { describe, expect, it } from 'vitest';
import { groupShifts, incidentId, incidentIds } from '../../src/detect/incidents.js';
import { BUCKET_US } from '../../src/core/time.js';

const T = 1_790_000_000_000_000 - (1_790_000_000_000_000 % BUCKET_US);
const shift = (service: string, bucket: number, tag = '') => ({ service_name: service, ts_shift_us: T + bucket * BUCKET_US + 1000, tag });

describe('groupShifts', () => {
  it('chains shifts of one service in the same or adjacent buckets, per service in order of first appearance', () => {
    const rows = [shift('b', 5, 'b5'), shift('a', 3, 'a3'), shift('a', 0, 'a0'), shift('a', 1, 'a1'), shift('b', 7, 'b7'), shift('a', 2, 'a2')];
    expect(groupShifts(rows).map((g) => g.map((r) => r.tag))).toEqual([['b5'], ['b7'], ['a0', 'a1', 'a2', 'a3']]);
  });

  it('keeps the input order of shifts at the same time', () => {
    const rows = [shift('a', 0, 'second'), shift('a', 0, 'first')];
    expect(groupShifts(rows).map((g) => g.map((r) => r.tag))).toEqual([['second', 'first']]);
  });
});

describe('incident ids', () => {
  it('a group of one has none; a group is named by its service and first bucket', () => {
    const [lone, pair] = groupShifts([shift('a', 0), shift('a', 4), shift('a', 5)]);
    expect(incidentId(lone!)).toBeNull();
    expect(incidentId(pair!)).toMatch(/^inc_[0-9a-f]{16}$/);
    expect(incidentId(pair!)).toBe(incidentId([shift('a', 4), shift('a', 4)]));
    expect(incidentId(pair!)).not.toBe(incidentId([shift('b', 4), shift('b', 5)]));
  });

  it('incidentIds gives each row its group id, in the rows order', () => {
    const rows = [shift('a', 5), shift('a', 0), shift('a', 4)];
    const ids = incidentIds(rows);
    expect(ids[1]).toBeNull();
    expect(ids[0]).toBe(ids[2]);
    expect(ids[0]).toBe(incidentId([rows[2]!, rows[0]!]));
  });
});
