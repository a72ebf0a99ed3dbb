// Every profile of ../shared/corpora/pprof: decodes with both decoders to identical arrays and rows,
// and its per-type totals and top leaf functions match what pprof-format (DataDog) reports; the
// legacy and non-profile files are refused with LEGACY_FORMAT and a hint.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { Profile } from 'pprof-format';
import { decodePprof, hotSpots, pprofToRows, DecodeError, referenceDecoder, wasmDecoder } from '../../../../src/pipeline/decode/profiles/index.js';
import { profileBytes } from '../../../../src/pipeline/decode/profiles/body.js';
import type { DecodedPprof } from '../../../../src/pipeline/decode/profiles/decoded.js';
import { HAVE_CORPORA, PPROF_DIR, walk } from './helpers.js';
import { ERROR_STATUS } from '../../../../src/core/errors.js';

/** Files that are not profile.proto by design: legacy pprof formats, golden text dumps, a JSON config, push requests. */
const REFUSED = [
  /google-pprof\/profile\/testdata\/cppbench\.contention$/,
  /google-pprof\/profile\/testdata\/(cppbench|go\.crc32)\.cpu$/,
  /google-pprof\/profile\/testdata\/(gobench|java)\.heap$/,
  /\.string$/,
  /req_2\.st\.json$/,
];
const NOT_PPROF = [/pyroscope-push-constructed\//, /LICENSE$/];

const files = HAVE_CORPORA ? walk(PPROF_DIR).map((f) => relative(PPROF_DIR, f)) : [];
const profiles = files.filter((f) => !REFUSED.some((r) => r.test(f)) && !NOT_PPROF.some((r) => r.test(f)));
const refused = files.filter((f) => REFUSED.some((r) => r.test(f)));

const num = (x: number | bigint): number => Number(x);

/** Per-type totals and leaf-function totals of type 0, computed from pprof-format's object model. */
function pprofFormatSummary(bytes: Uint8Array): { totals: number[]; leaf: Map<string, number>; samples: number } {
  const p = Profile.decode(bytes);
  const strs = p.stringTable.strings;
  const fns = new Map(p.function.map((f) => [num(f.id), strs[num(f.name)] || strs[num(f.systemName)] || '']));
  const locs = new Map(p.location.map((l) => [num(l.id), l]));
  const k = Math.max(p.sampleType.length, ...p.sample.map((s) => s.value.length));
  const totals = new Array<number>(k).fill(0);
  const leaf = new Map<string, number>();
  for (const s of p.sample) {
    s.value.forEach((v, j) => (totals[j]! += num(v)));
    const l = locs.get(num(s.locationId[0] ?? 0));
    const line = l?.line[0];
    const name = line ? fns.get(num(line.functionId)) : undefined;
    if (name) leaf.set(name, (leaf.get(name) ?? 0) + num(s.value[0] ?? 0));
  }
  return { totals, leaf, samples: p.sample.length };
}

/** Field-by-field equality; typed arrays compared as bytes (toEqual on 100k-element arrays is slow). */
function sameArrays(a: DecodedPprof, b: DecodedPprof): void {
  expect(Object.keys(b).sort()).toEqual(Object.keys(a).sort());
  for (const key of Object.keys(a) as (keyof DecodedPprof)[]) {
    if (key === 'bytes') continue;
    const x = a[key];
    const y = b[key];
    if (ArrayBuffer.isView(x) && ArrayBuffer.isView(y)) {
      expect(y.constructor, `field ${key}`).toBe(x.constructor);
      const bx = Buffer.from(x.buffer, x.byteOffset, x.byteLength);
      const by = Buffer.from(y.buffer, y.byteOffset, y.byteLength);
      expect(bx.equals(by), `field ${key}`).toBe(true);
    } else expect(y, `field ${key}`).toEqual(x);
  }
}

describe.skipIf(!HAVE_CORPORA)('pprof corpus', () => {
  test('the corpus has the expected kinds of files', () => {
    expect(profiles.length).toBeGreaterThanOrEqual(20);
    expect(refused.length).toBeGreaterThanOrEqual(5);
  });

  test.each(profiles)('%s decodes; WASM = reference; totals and top functions = pprof-format', (f) => {
    const bytes = profileBytes(readFileSync(`${PPROF_DIR}/${f}`));
    const w = wasmDecoder.decode(bytes);
    const r = referenceDecoder.decode(bytes);
    sameArrays(w, r);
    const opts = { service: 'svc', nowUs: () => 1_700_000_000_000_000 };
    const rowsW = pprofToRows(w, opts);
    expect(JSON.stringify(pprofToRows(r, opts))).toBe(JSON.stringify(rowsW));

    const pf = pprofFormatSummary(bytes);
    expect(w.sampleLocStart.length - 1).toBe(pf.samples);
    // totals per sample type: rows omit only zero sums, so the sums agree exactly
    const k = w.valuesPerSample;
    expect(k).toBe(pf.totals.length);
    const types = new Map<string, number>();
    for (const row of rowsW) types.set(`${row.profile_type}/${row.unit}`, (types.get(`${row.profile_type}/${row.unit}`) ?? 0) + row.value);
    const ours: number[] = [];
    for (let j = 0; j < k; j++) {
      let t = 0;
      for (let i = 0; i * k + j < w.values.length; i++) t += w.values[i * k + j]!;
      ours.push(t);
    }
    expect(ours).toEqual(pf.totals);
    expect([...types.values()].reduce((a, b) => a + b, 0)).toBe(pf.totals.reduce((a, b) => a + b, 0));

    // top leaf functions of the first sample type
    const first = rowsW.length ? `${rowsW[0]!.profile_type}/${rowsW[0]!.unit}` : '';
    const hs = hotSpots(rowsW.filter((x) => `${x.profile_type}/${x.unit}` === first));
    const top = [...pf.leaf.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5);
    for (const [name, value] of top) {
      if (value === 0) continue;
      const mine = hs.find((h) => h.function === name);
      expect(mine?.total_value, `leaf ${name}`).toBe(value);
    }
    if (top.length && top[0]![1] > 0) expect(hs[0]!.total_value).toBe(top[0]![1]);
  });

  test.each(refused)('%s is refused with LEGACY_FORMAT and a hint', (f) => {
    const body = readFileSync(`${PPROF_DIR}/${f}`);
    for (const decoder of [wasmDecoder, referenceDecoder]) {
      let err: unknown;
      try {
        decodePprof(body, { decoder });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DecodeError);
      expect((err as DecodeError).code).toBe('LEGACY_FORMAT');
      expect(ERROR_STATUS[(err as DecodeError).code]).toBe(400);
      expect((err as DecodeError).hint).not.toBe('');
    }
  });

  test('labels: span_id from the pyroscope span-profile fixture lands in the span_id column', () => {
    const d = decodePprof(readFileSync(`${PPROF_DIR}/grafana-pyroscope/pkg/pprof/testdata/single_group_with_optional_span_id.pb.gz`));
    const rows = pprofToRows(d, { service: 's' });
    const withSpan = rows.filter((r) => r.span_id);
    expect(withSpan.length).toBeGreaterThan(0);
    // the fixture's span_id label holds the literal "239"
    expect(new Set(withSpan.map((r) => r.span_id))).toEqual(new Set(['239']));
    expect(rows.some((r) => r.span_id === null)).toBe(true);
    for (const r of rows) expect(r.labels ?? '').not.toContain('span_id');
  });

  test('go.cpu.labels: string labels become a sorted JSON object; CPU types are cpu/nanoseconds and samples/count', () => {
    const d = decodePprof(readFileSync(`${PPROF_DIR}/grafana-pyroscope/pkg/pprof/testdata/go.cpu.labels.pprof`));
    const rows = pprofToRows(d, { service: 's' });
    expect(new Set(rows.map((r) => `${r.profile_type}:${r.unit}`))).toEqual(new Set(['samples:count', 'cpu:nanoseconds']));
    const labelled = rows.filter((r) => r.labels);
    expect(labelled.length).toBeGreaterThan(0);
    const obj = JSON.parse(labelled[0]!.labels!) as Record<string, unknown>;
    expect(Object.keys(obj)).toEqual(Object.keys(obj).sort());
    // sample_count is the samples/count value of the same stack
    const cpu = rows.filter((r) => r.profile_type === 'cpu');
    const cnt = rows.filter((r) => r.profile_type === 'samples');
    expect(cpu.reduce((a, r) => a + r.sample_count, 0)).toBe(cnt.reduce((a, r) => a + r.value, 0));
    expect(rows[0]!.period_type).toBe('cpu:nanoseconds');
    expect(rows[0]!.timestamp).toBeGreaterThan(1e15);
  });

  test('heap: four sample types (alloc/inuse × objects/space) become four row sets', () => {
    const d = decodePprof(readFileSync(`${PPROF_DIR}/grafana-pyroscope/pkg/pprof/testdata/heap`));
    const rows = pprofToRows(d, { service: 's' });
    expect(new Set(rows.map((r) => `${r.profile_type}:${r.unit}`))).toEqual(
      new Set(['alloc_objects:count', 'alloc_space:bytes', 'inuse_objects:count', 'inuse_space:bytes']),
    );
  });

  test('DataDog non-packed repeated fields decode like packed ones', () => {
    const d = decodePprof(readFileSync(`${PPROF_DIR}/datadog-pprof-format/testing/non-packed-repeated.pprof`));
    expect(d.sampleLocStart.length - 1).toBe(1);
    expect(d.valuesPerSample).toBe(2);
  });
});
