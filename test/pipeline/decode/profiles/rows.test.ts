// Row building on hand-built profiles: leaf/stack order with inlined frames, merging, labels and
// span/trace columns, sample types (missing, several, default), sampleRate scaling, hot spots.
import { describe, expect, test } from 'vitest';
import { hotSpots, pprofToRows, referenceDecoder, wasmDecoder, type PprofDecoder } from '../../../../src/pipeline/decode/profiles/index.js';
import { StringReader } from '../../../../src/pipeline/decode/profiles/decoded.js';
import { encodeProfile, type TinyProfile } from './helpers.js';

const base: TinyProfile = {
  types: [
    ['samples', 'count'],
    ['cpu', 'nanoseconds'],
  ],
  period: ['cpu', 'nanoseconds', 10_000_000],
  timeNanos: 1_700_000_000_123_456_789n,
  // location 1 inlines `inner` into `outer`: lines innermost first
  locations: { 1: ['inner', 'outer'], 2: ['main'], 3: ['other'] },
  samples: [
    { locs: [1, 2], values: [2, 20_000_000] },
    { locs: [1, 2], values: [1, 10_000_000] },
    { locs: [3, 2], values: [5, 50_000_000], labels: [{ key: 'span_id', str: 'abcd' }, { key: 'trace_id', str: 'ffee' }, { key: 'region', str: 'eu' }] },
    { locs: [3, 2], values: [1, 10_000_000], labels: [{ key: 'bytes', num: 512 }] },
  ],
};

describe.each<[string, PprofDecoder]>([
  ['wasm', wasmDecoder],
  ['reference', referenceDecoder],
])('rows from the %s decoder', (_name, decoder) => {
  const rowsOf = (p: TinyProfile, o: Partial<Parameters<typeof pprofToRows>[1]> = {}) =>
    pprofToRows(decoder.decode(encodeProfile(p)), { service: 'checkout', ...o });

  test('stack is root → leaf with inlined frames expanded; function is the innermost frame', () => {
    const rows = rowsOf(base).filter((r) => r.profile_type === 'cpu');
    const inner = rows.find((r) => r.function === 'inner')!;
    expect(inner.stack).toEqual(['main', 'outer', 'inner']);
    expect(inner.value).toBe(30_000_000); // two samples with the same stack merged
    expect(inner.sample_count).toBe(3); // the samples/count value, not the number of pprof samples
    expect(inner.unit).toBe('nanoseconds');
    expect(inner.timestamp).toBe(1_700_000_000_123_456);
    expect(inner.period).toBe(10_000_000);
    expect(inner.period_type).toBe('cpu:nanoseconds');
    expect(inner.service_name).toBe('checkout');
    expect(inner.source).toBe('pprof');
  });

  test('labels split the rows; span_id/trace_id go to columns; numeric labels stay numbers', () => {
    const rows = rowsOf(base).filter((r) => r.profile_type === 'cpu' && r.function === 'other');
    expect(rows).toHaveLength(2);
    const traced = rows.find((r) => r.span_id)!;
    expect(traced.span_id).toBe('abcd');
    expect(traced.trace_id).toBe('ffee');
    expect(traced.labels).toBe('{"region":"eu"}');
    const num = rows.find((r) => !r.span_id)!;
    expect(num.labels).toBe('{"bytes":512}');
  });

  test('profile_id label becomes the span_id when there is no span_id label', () => {
    const rows = rowsOf({ ...base, samples: [{ locs: [3], values: [1, 1], labels: [{ key: 'profile_id', str: '0123456789abcdef' }] }] });
    expect(rows[0]!.span_id).toBe('0123456789abcdef');
    expect(rows[0]!.labels).toBeNull();
  });

  test('one row set per sample type; zero sums omitted', () => {
    const rows = rowsOf({ ...base, samples: [...base.samples, { locs: [2], values: [0, 7] }] });
    const byType = new Map<string, number>();
    for (const r of rows) byType.set(`${r.profile_type}:${r.unit}`, (byType.get(`${r.profile_type}:${r.unit}`) ?? 0) + r.value);
    expect(byType).toEqual(new Map([['samples:count', 9], ['cpu:nanoseconds', 90_000_007]]));
    expect(rows.filter((r) => r.profile_type === 'samples' && r.function === 'main')).toHaveLength(0);
  });

  test('packed and non-packed encodings give the same rows', () => {
    expect(rowsOf({ ...base, packed: false })).toEqual(rowsOf(base));
  });

  test('missing sample types: named from period_type, else samples/count', () => {
    const noTypes = { ...base, types: [] as [string, string][], samples: [{ locs: [2], values: [4] }] };
    expect(rowsOf(noTypes).map((r) => `${r.profile_type}:${r.unit}`)).toEqual(['cpu:nanoseconds']);
    const noPeriod: TinyProfile = { types: [], locations: { 2: ['main'] }, samples: [{ locs: [2], values: [4] }] };
    expect(rowsOf(noPeriod).map((r) => `${r.profile_type}:${r.unit}`)).toEqual(['samples:count']);
  });

  test('default_sample_type is decoded', () => {
    const d = decoder.decode(encodeProfile({ ...base, defaultType: 'cpu' }));
    expect(new StringReader(d).get(d.defaultSampleType)).toBe('cpu');
  });

  test('sampleRate scales samples/count to cpu nanoseconds when no time type exists', () => {
    const p: TinyProfile = { types: [['samples', 'count']], locations: { 2: ['main'] }, samples: [{ locs: [2], values: [7] }] };
    const [row] = rowsOf(p, { sampleRate: 100 });
    expect(row).toMatchObject({ profile_type: 'cpu', unit: 'nanoseconds', value: 70_000_000, sample_count: 7 });
    // a profile that already has time values is left alone
    expect(rowsOf(base, { sampleRate: 100 }).some((r) => r.profile_type === 'samples')).toBe(true);
  });

  test('timestamp/duration/attributes options win over the profile', () => {
    const [row] = rowsOf(base, { timestampUs: 42, durationNs: 5, attributes: { z: '1', a: '2' }, profileId: 'p1', source: 'pyroscope' });
    expect(row).toMatchObject({ timestamp: 42, duration_ns: 5, attributes: '{"a":"2","z":"1"}', profile_id: 'p1', source: 'pyroscope' });
  });
});

test('hotSpots sums per (function, type, unit), largest first', () => {
  const rows = pprofToRows(wasmDecoder.decode(encodeProfile(base)), { service: 's' });
  const hs = hotSpots(rows);
  const cpu = hs.filter((h) => h.profile_type === 'cpu');
  expect(cpu[0]).toEqual({ function: 'other', profile_type: 'cpu', unit: 'nanoseconds', sample_count: 6, total_value: 60_000_000 });
  expect(cpu[1]).toEqual({ function: 'inner', profile_type: 'cpu', unit: 'nanoseconds', sample_count: 3, total_value: 30_000_000 });
  expect(hotSpots(rows, 1)).toHaveLength(1);
  expect(hotSpots([])).toEqual([]);
});
