// OTLP profiles (v1development with the shared dictionary): the eBPF profiler capture decodes to
// rows whose totals match its JSON twin, computed independently here from the JSON.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { hotSpots, ingestOtlpProfiles, DecodeError } from '../../../../src/pipeline/decode/profiles/index.js';
import { HAVE_CORPORA, OTLP_DIR } from './helpers.js';
import { ERROR_STATUS } from '../../../../src/core/errors.js';

interface JsonSample { stackIndex?: number; values?: string[]; timestampsUnixNano?: string[] }
interface JsonProfile { sampleType?: { typeStrindex?: number; unitStrindex?: number }; periodType?: { typeStrindex?: number; unitStrindex?: number }; period?: string; samples?: JsonSample[] }
interface JsonDoc {
  resourceProfiles: { scopeProfiles: { profiles: JsonProfile[] }[] }[];
  dictionary: { stringTable: string[]; stackTable: { locationIndices?: number[] }[]; locationTable: { lines?: { functionIndex?: number }[] }[]; functionTable: { nameStrindex?: number }[] };
}

/** Per "type/unit" totals from the JSON twin, with the same count → time rule (count × period). */
function jsonTotals(doc: JsonDoc): { totals: Map<string, number>; samples: number; leaf: Map<string, number> } {
  const S = doc.dictionary.stringTable;
  const totals = new Map<string, number>();
  const leaf = new Map<string, number>();
  let samples = 0;
  for (const rp of doc.resourceProfiles) {
    for (const sp of rp.scopeProfiles) {
      for (const p of sp.profiles) {
        let type = S[p.sampleType?.typeStrindex ?? 0]!;
        let unit = S[p.sampleType?.unitStrindex ?? 0]!;
        let scale = 1;
        if (type === 'samples' && unit === 'count' && S[p.periodType?.unitStrindex ?? 0] === 'nanoseconds' && Number(p.period ?? 0) > 0) {
          type = S[p.periodType?.typeStrindex ?? 0] || 'cpu';
          unit = 'nanoseconds';
          scale = Number(p.period);
        }
        for (const s of p.samples ?? []) {
          samples++;
          const v = s.values?.length ? s.values.reduce((a, x) => a + Number(x), 0) : (s.timestampsUnixNano?.length ?? 0) || 1;
          const key = `${type}/${unit}`;
          totals.set(key, (totals.get(key) ?? 0) + v * scale);
          const locs = doc.dictionary.stackTable[s.stackIndex ?? 0]?.locationIndices ?? [];
          const fi = doc.dictionary.locationTable[locs[0] ?? 0]?.lines?.[0]?.functionIndex;
          if (key === 'off_cpu/nanoseconds' && fi) {
            const name = S[doc.dictionary.functionTable[fi]?.nameStrindex ?? 0]!;
            leaf.set(name, (leaf.get(name) ?? 0) + v);
          }
        }
      }
    }
  }
  return { totals, samples, leaf };
}

describe.skipIf(!HAVE_CORPORA)('OTLP eBPF profile corpus', () => {
  test('decodes; totals per type, sample count and top off-CPU leaf functions match the JSON twin', () => {
    const bin = readFileSync(`${OTLP_DIR}/otel-ebpf-profile.pb.bin`);
    const doc = JSON.parse(readFileSync(`${OTLP_DIR}/otel-ebpf-profile.pb.json`, 'utf8')) as JsonDoc;
    const want = jsonTotals(doc);
    const r = ingestOtlpProfiles(bin);
    expect(r.profiles).toBe(82);
    expect(r.samples).toBe(want.samples);
    const got = new Map<string, number>();
    for (const row of r.rows) got.set(`${row.profile_type}/${row.unit}`, (got.get(`${row.profile_type}/${row.unit}`) ?? 0) + row.value);
    expect(got).toEqual(want.totals);
    expect(got.get('off_cpu/nanoseconds')).toBe(267_302_249_331);
    expect(got.get('cpu/nanoseconds')).toBeGreaterThan(0); // samples/count × 50 ms period

    const hs = hotSpots(r.rows.filter((x) => x.profile_type === 'off_cpu'));
    const top = [...want.leaf.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5);
    for (const [name, value] of top) expect(hs.find((h) => h.function === name)?.total_value, name).toBe(value);

    // no service.name resource attribute in this capture: the default applies; resource attributes are kept
    expect(r.services).toEqual(['unknown_service']);
    const row = r.rows[0]!;
    expect(JSON.parse(row.attributes!)).toHaveProperty('process.pid');
    expect(row.source).toBe('otlp');
    expect(row.timestamp).toBe(1_774_910_497_545_532);
    expect(row.duration_ns).toBe(4_788_991_611);
    expect(JSON.parse(row.labels!)).toHaveProperty('thread.name');
    expect(row.stack.length).toBeGreaterThan(1);

    expect(ingestOtlpProfiles(bin, { defaultService: 'node-7' }).services).toEqual(['node-7']);
    expect(ingestOtlpProfiles(gzipSync(bin)).rows.length).toBe(r.rows.length);
  });

  test('truncations of the capture are MALFORMED, never another error', () => {
    const bin = readFileSync(`${OTLP_DIR}/otel-ebpf-profile.pb.bin`);
    for (const n of [1, 2, 3, 100, 5000, 50_000, bin.length - 1]) {
      let err: unknown;
      try {
        ingestOtlpProfiles(bin.subarray(0, n));
      } catch (e) {
        err = e;
      }
      expect(err, `prefix ${n}`).toBeInstanceOf(DecodeError);
      expect((err as DecodeError).code).toBe('MALFORMED');
    }
  });
});

test('an empty OTLP request is valid and yields no rows', () => {
  expect(ingestOtlpProfiles(new Uint8Array(0)).rows).toEqual([]);
});

test.skipIf(!HAVE_CORPORA)('OTLP element budget: TOO_LARGE instead of unbounded expansion', () => {
  const bin = readFileSync(`${OTLP_DIR}/otel-ebpf-profile.pb.bin`);
  let err: unknown;
  try {
    ingestOtlpProfiles(bin, { maxItems: 1000 });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(DecodeError);
  expect((err as DecodeError).code).toBe('TOO_LARGE');
  expect(err).toMatchObject({ code: 'TOO_LARGE' });
  expect(ERROR_STATUS[(err as DecodeError).code]).toBe(413);
});

test.skipIf(!HAVE_CORPORA)('100 random mutations of the capture: rows or DecodeError, nothing else', () => {
  const bin = readFileSync(`${OTLP_DIR}/otel-ebpf-profile.pb.bin`);
  let seed = 7;
  const rand = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
  let refused = 0;
  for (let i = 0; i < 100; i++) {
    const b = Uint8Array.from(bin);
    for (let e = 0; e < 3; e++) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
    try {
      ingestOtlpProfiles(b);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      refused++;
    }
  }
  expect(refused).toBeGreaterThan(0);
});
